# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# The start the GPU-machine scripts with a time budget share (gpu_cull.sh, gpu_tcut.sh,
# gpu_multi.sh): strict mode, the repository root as the working folder, OUT (default
# ./gpu_NAME_out) with its logs/ folder, the build folder B (NBSIM_BUILD, default
# /tmp/nbsim-NAME-build), the argument --budget SECONDS (default DEFAULT; anything else is
# refused with exit 2), the workplace's .devkit when present, status=0, and the helpers step
# (a heading with the seconds so far), left (budget not yet spent), skip (says so), and
# device_info, build_targets and gpu_test (the card, the build, a test: below).
# Usage, sourced: source "$(dirname "$0")/gpu_prelude.sh" NAME DEFAULT "$@"
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
root=$PWD
OUT=${OUT:-$root/gpu_$1_out}
B=${NBSIM_BUILD:-/tmp/nbsim-$1-build}
budget=$2
shift 2
while [ $# -gt 0 ]; do
  case $1 in
    --budget) budget=$2; shift ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
  shift
done
# shellcheck disable=SC1091
[ -f .devkit/setup.sh ] && source .devkit/setup.sh >/dev/null 2>&1
logs=$OUT/logs
mkdir -p "$logs"
status=0
t0=$(date +%s)
step() { echo "=== $* ($(( $(date +%s) - t0 )) s)"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$budget" ]; }
skip() { echo "skipped (time budget of $budget s spent): $*"; }

# device_info: the card (name, driver, memory, clock) into logs/device.txt and on screen, and the
# commit into logs/commit.txt.
device_info() {
  step device
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 |
    tee "$logs/device.txt"
  git rev-parse --short HEAD >"$logs/commit.txt" 2>/dev/null
}

# build_targets [-DNAME=VALUE]... TARGET...: configures $B (RelWithDebInfo for sm_90, warnings not
# fatal, no viewer unless a -D turns it on) and builds the targets, the log in logs/build.log;
# bin=$B/bin. On failure shows the log's tail, sets status=1 and returns 1 (the caller stops in
# its own way); else shows the build's first warnings.
build_targets() {
  local defs=()
  while [ $# -gt 0 ] && [[ $1 == -D* ]]; do defs+=("$1"); shift; done
  step build
  bin=$B/bin
  if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
           -DNBSIM_WERROR=OFF -DNBSIM_VIEWER=OFF "${defs[@]}" &&
         cmake --build "$B" -j"$(nproc)" --target "$@"; } >"$logs/build.log" 2>&1; then
    tail -30 "$logs/build.log"
    status=1
    return 1
  fi
  grep -E "warning" "$logs/build.log" | head -5
  return 0 # (the grep's status is not the build's)
}

# status_line TESTS: the summary's last line, the status and what it covers (TESTS, e.g. "the
# test", or that they were not run again here when NBSIM_TESTS_RAN says the caller ran them).
status_line() {
  if [ -n "${NBSIM_TESTS_RAN:-}" ]; then
    echo "status $status (0: every run passed; $1 not run again here: $NBSIM_TESTS_RAN)"
  else
    echo "status $status (0: $1 and every run passed)"
  fi
}

# gpu_test NAME SECONDS [ARG]...: runs $bin/NAME into logs/NAME.log, shows its detail lines (those
# indented, failures) and its exit code, and sets status=1 when it fails; with NBSIM_TESTS_RAN set
# (what ran them) it says so and runs nothing: the caller ran the GPU suite on this build.
gpu_test() {
  local name=$1 limit=$2
  shift 2
  step "$name"
  if [ -n "${NBSIM_TESTS_RAN:-}" ]; then # the caller ran the GPU suite on this build already
    echo "$name: not run again ($NBSIM_TESTS_RAN)"
    return 0
  fi
  timeout "$limit" "$bin/$name" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || status=1
  grep -E "^  |FAILED|failures|ENSURE" "$logs/$name.log" | head -80
  echo "$name: exit $rc"
  return $rc
}
