#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine: build, run every test (GPU tests included), compute-sanitizer on the small
# case, headless CUDA runs with logs, the viewer with CUDA-GL interop (screenshots), and the
# benchmarks. Everything lands in $OUT (default ./gpu_validate_out), logs bundled into one tar.
# Usage: scripts/gpu_validate.sh [--no-bench] [--bench-args "..."] [--profile] [--no-viewer]
#   On the workplace's device machine, first: source .devkit/setup.sh (GL for the viewer).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
OUT=${OUT:-$root/gpu_validate_out}
B=${NBSIM_BUILD:-/tmp/nbsim-gpu-build}
bench=1
bench_args=""
profile=0
viewer=1
while [ $# -gt 0 ]; do
  case $1 in
    --no-bench) bench=0 ;;
    --bench-args) bench_args=$2; shift ;;
    --profile) profile=1 ;;
    --no-viewer) viewer=0 ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT" "$OUT/logs"
logs=$OUT/logs
status=0
step() { echo "=== $* ($(date +%T))"; }
run_logged() { # name command...: runs, keeps the output, reports the exit code
  local name=$1; shift
  "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc"
  return $rc
}

step device
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$logs/device.txt"

step build
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNBSIM_WERROR=OFF && cmake --build "$B" -j"$(nproc)"; } >"$logs/build.log" 2>&1; then
  tail -30 "$logs/build.log"; tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1
fi
grep -E "warning" "$logs/build.log" | head -5   # CI builds with -Werror on Debian's gcc
nbsim=$B/bin/nbsim

step "ctest (cpu and gpu)"
(cd "$B" && ctest --output-on-failure -j4 --timeout 600) >"$logs/ctest.log" 2>&1 || status=1
grep -E "tests passed|Failed|Skipped|\*\*\*" "$logs/ctest.log"

for tool in memcheck racecheck synccheck; do
  step "compute-sanitizer $tool"
  extra=""
  [ $tool = memcheck ] && extra="--leak-check full"
  timeout 200 compute-sanitizer --tool $tool $extra --error-exitcode 9 \
    "$B/bin/test_gpu_backend" sanitizer_small >"$logs/sanitizer_$tool.log" 2>&1
  rc=$?; tail -2 "$logs/sanitizer_$tool.log"; echo "$tool exit $rc"; [ $rc = 0 ] || status=1
done

step "headless runs"
run_logged headless_65536 env -u DISPLAY "$nbsim" --frames 100 --n 65536 --pair-map ltm \
  --log "$OUT/t65536.csv" --summary "$logs/s65536.json" --quiet || status=1
tail -8 "$logs/headless_65536.log"
run_logged headless_triplets env -u DISPLAY "$nbsim" --frames 50 --n 4096 --scene triplets \
  --triplets on --triplet-map rm --log "$logs/triplets4096.csv" --quiet || status=1
tail -6 "$logs/headless_triplets.log"
run_logged headless_auto "$nbsim" --frames 20 --n 131072 --pair-map auto --energy-every 0 || status=1
grep -i "auto\|chose" "$logs/headless_auto.log" | head -3
# A headless run must not load GL: count GL/GLFW libraries the loader opened.
LD_DEBUG=libs env -u DISPLAY "$nbsim" --frames 2 --n 1024 --quiet 2>&1 |
  grep -cE "libGL|libglfw|libGLEW" | sed 's/^/GL libraries loaded by a headless run: /'

step viewer
if [ $viewer = 1 ] && [ -n "${DISPLAY:-}" ]; then
  run_logged viewer_default "$nbsim" --exit-after 240 --vsync off \
    --screenshot "$OUT/viewer-default.png" --log "$logs/viewer_default.csv" || status=1
  run_logged viewer_1m "$nbsim" --n 1000000 --triplets off --exit-after 12 --vsync off \
    --screenshot "$OUT/viewer-1m.png" || status=1
  run_logged viewer_pile "$nbsim" --scene pile --n 20000 --steps-per-frame 8 --exit-after 400 \
    --vsync off --screenshot "$OUT/viewer-pile.png" || status=1
  grep -h "fps\|interop\|host copy" "$logs"/viewer_*.log | head -6
else
  echo "viewer skipped (--no-viewer, or no DISPLAY)"
fi

if [ $profile = 1 ]; then
  step "Nsight Compute: pair and triplet kernels"
  sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section Occupancy --section LaunchStats"
  # shellcheck disable=SC2086
  timeout 240 ncu $sections -k regex:pair_sym_kernel -c 1 "$nbsim" --frames 3 --n 131072 \
    --tile 128 --pair-map rm --energy-every 0 --quiet >"$logs/ncu_pair.log" 2>&1
  echo "ncu pair: exit $?"
  # shellcheck disable=SC2086
  timeout 240 ncu $sections -k regex:triplet_kernel -c 1 "$nbsim" --frames 3 --n 4096 \
    --triplets on --triplet-map rm --energy-every 0 --quiet >"$logs/ncu_triplet.log" 2>&1
  echo "ncu triplet: exit $?"
  grep -hE "^  [a-z_]+kernel|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|Achieved Occupancy|Registers Per|Memory Throughput" \
    "$logs/ncu_pair.log" "$logs/ncu_triplet.log"
fi

if [ $bench = 1 ]; then
  step bench
  # shellcheck disable=SC2086
  "$nbsim" bench --out "$OUT/bench" $bench_args >"$logs/bench.log" 2>&1 || status=1
  tail -40 "$logs/bench.log"
  tar -C "$OUT" -czf "$OUT/bench.tgz" bench && rm -rf "$OUT/bench"
fi

step "done: status $status"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
exit $status
