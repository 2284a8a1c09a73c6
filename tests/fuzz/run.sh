#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets (clang with AddressSanitizer and UBSan; no CUDA needed) into
# build-fuzz/ and runs each for SECONDS (default 20), starting from the seed corpus in
# tests/fuzz/corpus/. New inputs go to a scratch folder, never into the repository; an input that
# crashes is kept in build-fuzz/artifacts/ and the script fails. Reproduce one with
#   build-fuzz/tests/fuzz/fuzz_scene build-fuzz/artifacts/scene-crash-...
# Usage: tests/fuzz/run.sh [SECONDS]
set -euo pipefail
seconds=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${NBSIM_FUZZ_BUILD:-$root/build-fuzz}
cc=${NBSIM_FUZZ_CC:-$(command -v clang || command -v clang-14 || true)}
[ -n "$cc" ] || { echo "nbsim fuzz: clang not found (Debian: apt-get install clang)" >&2; exit 1; }

cmake -S "$root" -B "$build" -DNBSIM_FUZZ=ON -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null
mkdir -p "$build/artifacts"
status=0
for target in scene options; do
  scratch=$(mktemp -d)
  max_len=1024
  [ "$target" = scene ] && max_len=8192
  log="$build/fuzz_$target.log"
  # -close_fd_mask=3: the parsers' own messages go nowhere; libFuzzer and the sanitizers keep a
  # copy of stderr for their reports.
  if "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
       -rss_limit_mb=2048 -close_fd_mask=3 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$target-" "$scratch" "$root/tests/fuzz/corpus/$target" \
       >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "nbsim fuzz: fuzz_$target: ${runs:-?} inputs in $seconds s, no crash, no sanitizer report"
  else
    status=1
    echo "nbsim fuzz: fuzz_$target FAILED (input in $build/artifacts/):" >&2
    tail -n 60 "$log" >&2
  fi
  rm -rf "$scratch"
done
exit "$status"
