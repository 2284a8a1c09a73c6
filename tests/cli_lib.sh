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

# start_run OUT ERR ARGS...: nbsim in the background, as from a terminal: a script's background
# job inherits SIGINT ignored (and nbsim keeps ignored signals ignored), so a small launcher sets
# SIGINT, SIGHUP and SIGTERM back to their defaults first. Sets run_pid.
start_run() {
  local out=$1 err=$2; shift 2
  python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$nbsim" "$@" >"$out" 2>"$err" </dev/null &
  run_pid=$!
}

# wait_for FILE TEXT: until FILE contains TEXT (at most 30 s); 1 if it never does.
wait_for() {
  for _ in $(seq 300); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# stop_run SIGNAL: sends SIGNAL to the run start_run began, waits for it to end (at most 10 s, then
# SIGKILL), and sets code (its exit status) and took_ms (from the signal to its end).
stop_run() {
  kill "-$1" "$run_pid"
  local signalled; signalled=$(date +%s%N)
  for _ in $(seq 100); do kill -0 "$run_pid" 2>/dev/null || break; sleep 0.1; done
  took_ms=$((($(date +%s%N) - signalled) / 1000000))
  kill -KILL "$run_pid" 2>/dev/null
  wait "$run_pid"
  code=$?
}

# leftovers: temporaries of sim_output (".NAME.nbsim-XXXXXX") in the working directory.
leftovers() { ls -A | grep -e '\.nbsim-' -e '\.part$'; }
