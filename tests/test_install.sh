#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `cmake --install` puts a working nbsim under a prefix: bin/nbsim with its viewer module beside
# it (when the build has one) and share/nbsim/plot.py, and the installed program runs a headless
# CPU run and `nbsim bench --help` from anywhere. Usage: test_install.sh CMAKE BUILD_DIR
set -u
cmake_cmd="$1"
build="$2"
nbsim="$build/bin/nbsim" # for cli_lib.sh's messages; the installed copy is tested below
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

prefix="$work/prefix"
"$cmake_cmd" --install "$build" --prefix "$prefix" >install.txt 2>&1 && ok || fail "cmake --install: $(cat install.txt)"
[ -x "$prefix/bin/nbsim" ] && ok || fail "no bin/nbsim"
[ -f "$prefix/share/nbsim/plot.py" ] && ok || fail "no share/nbsim/plot.py"
if [ -e "$build/bin/nbsim-viewer.so" ]; then
  [ -f "$prefix/bin/nbsim-viewer.so" ] && ok || fail "the viewer module is not beside the program"
fi
mkdir elsewhere && cd elsewhere || exit 1
PATH="$prefix/bin:$PATH" nbsim --frames 2 --backend cpu --n 100 --log t.csv --quiet >out.txt 2>err.txt \
  && [ "$(wc -l <t.csv)" -eq 3 ] && ok || fail "installed nbsim: $(cat err.txt)"
PATH="$prefix/bin:$PATH" nbsim bench --help >out.txt 2>&1 && grep -q "nbsim bench" out.txt && ok \
  || fail "installed nbsim bench --help: $(head -3 out.txt)"
PATH="$prefix/bin:$PATH" nbsim --version | grep -q "^nbsim [0-9]" && ok || fail "installed --version"

finish
