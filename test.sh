#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets nbsim up (missing packages, build) and runs the test suite. GPU tests skip without a GPU.
# The long tests (ctest label `long`: the kernels' CPU emulations, the periodic and ATM-list
# references, the heap's pours; minutes on two cores) run with --long, as CI runs them; other
# arguments go to ctest (e.g. -R test_cli).
set -euo pipefail
long=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--long" ]; then long=1; else args+=("$arg"); fi
done
"$(dirname "$0")/scripts/setup.sh"
cd "$(dirname "$0")/build"
if [ "$long" -eq 1 ]; then
  ctest --output-on-failure -j "$(nproc)" "${args[@]}"
else
  echo "test.sh: the long tests are left out (ctest label long); ./test.sh --long runs them too"
  ctest --output-on-failure -j "$(nproc)" -LE long "${args[@]}"
fi
