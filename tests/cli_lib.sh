# SPDX-License-Identifier: MIT
# Shared by the shell tests of the nbsim program: a scratch directory, pass/fail counting and
# expect_error. Source it after setting nbsim=path/to/nbsim.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0 passes=0

ok()   { passes=$((passes + 1)); }
fail() { fails=$((fails + 1)); echo "FAIL: $*"; }

# expect_error CODE ARGS...: exit status CODE, exactly one line on stderr, nothing on stdout.
expect_error() {
  local want=$1; shift
  "$nbsim" "$@" >out.txt 2>err.txt </dev/null
  local got=$?
  local lines; lines=$(wc -l <err.txt)
  if [ "$got" -ne "$want" ] || [ "$lines" -ne 1 ] || [ -s out.txt ]; then
    fail "nbsim $* -> exit $got (want $want), $lines stderr lines: $(head -c 300 err.txt)"
  else
    ok
  fi
}

# The closing line ctest and CI read; exit status 0 only if nothing failed.
finish() {
  echo "$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
