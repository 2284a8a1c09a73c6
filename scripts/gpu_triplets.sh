#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, for the ATM triplet kernel (issue 11): build, the triplet GPU tests (every map
# against the CPU reference, exact cut-off, the list source) and the physics CPU tests,
# compute-sanitizer on the kernel test, `nbsim bench triplets` at N = 4096 and 8192 (every map,
# no cut-off), headless runs, and Nsight Compute on the N = 4096 step (executed instructions per
# triple). Prints a short table last. Results in $OUT (default ./gpu_triplets_out): summary.txt,
# triplets.csv, meta.txt, ncu_triplet_kernel.txt, logs.tgz. Runs in about 4 minutes on an H100.
# Usage: scripts/gpu_triplets.sh [--no-ncu] [--no-sanitizer]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=$PWD
OUT=${OUT:-$root/gpu_triplets_out}
B=${NBSIM_BUILD:-/tmp/nbsim-triplets-build}
ncu_on=1
sanitizer_on=1
while [ $# -gt 0 ]; do
  case $1 in
    --no-ncu) ncu_on=0 ;;
    --no-sanitizer) sanitizer_on=0 ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
  shift
done
mkdir -p "$OUT" "$OUT/logs"
logs=$OUT/logs
status=0
summary=$OUT/summary.txt
: >"$summary"
step() { echo "=== $* ($(date +%T))"; }
note() { echo "$*" | tee -a "$summary"; }
finish() {
  step "done: status $status"
  tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
  exit $status
}

device_info
note "device: $(sed -n 2p "$logs/device.txt")"
note "commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

build_targets nbsim test_physics test_gpu_backend test_triplet_kernels_gpu ||
  { note "BUILD FAILED (logs/build.log)"; finish; }
nbsim=$B/bin/nbsim
# The kernels' resource use, as built (registers, spills, shared memory).
cuobjdump --dump-resource-usage "$B/sim/libnbsim_sim.a" 2>/dev/null |
  grep -A1 "triplet_kernel" | grep -E "REG|SHARED" | sort | uniq -c >"$logs/resource_usage.txt"
head -4 "$logs/resource_usage.txt"

step tests
tests_line=""
run_test() { # name binary [filter]: runs, keeps the log, records pass/fail
  local name=$1; shift
  timeout 300 "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  local line
  line=$(grep -E "tests, [0-9]+ checks" "$logs/$name.log" | tail -1)
  echo "$name: exit $rc  $line"
  tests_line="$tests_line $name=$rc"
  [ $rc = 0 ] || status=1
}
run_test physics "$B/bin/test_physics"
run_test kernels "$B/bin/test_triplet_kernels_gpu"
run_test backend_triplet "$B/bin/test_gpu_backend" triplet
run_test backend_tiny "$B/bin/test_gpu_backend" tiny_and_hertz
run_test backend_energy "$B/bin/test_gpu_backend" energy
run_test backend_mid_run "$B/bin/test_gpu_backend" set_maps_and_params
run_test backend_sanitizer_case "$B/bin/test_gpu_backend" sanitizer_small
grep -hE "^  N=|ATM energy|E [0-9-]|float pair form" "$logs"/kernels.log "$logs"/backend_triplet.log \
  "$logs"/physics.log | head -40
note "tests:$tests_line"

if [ $sanitizer_on = 1 ] && command -v compute-sanitizer >/dev/null; then
  for tool in racecheck memcheck; do
    step "compute-sanitizer $tool (test_triplet_kernels_gpu)"
    timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$B/bin/test_triplet_kernels_gpu" >"$logs/sanitizer_$tool.log" 2>&1
    rc=$?
    tail -2 "$logs/sanitizer_$tool.log"
    note "compute-sanitizer $tool: exit $rc"
    [ $rc = 0 ] || status=1
  done
fi

step "bench: nbsim bench triplets, N = 4096 and 8192"
"$nbsim" bench triplets --n 4096,8192 --tile 32 --repeats 7 --warmup 2 --no-plot \
  --out "$OUT/bench" >"$logs/bench.log" 2>&1 || status=1
tail -12 "$logs/bench.log"
cp "$OUT/bench/triplets.csv" "$OUT/bench/meta.txt" "$OUT/" 2>/dev/null
rm -rf "$OUT/bench"

step "headless runs"
for n in 4096 8192; do
  for m in rm bb; do
    timeout 120 env -u DISPLAY "$nbsim" --frames 10 --n "$n" --triplets on --triplet-map "$m" \
      --energy-every 0 --quiet --summary "$logs/headless_${n}_$m.json" \
      >"$logs/headless_${n}_$m.log" 2>&1 || status=1
    grep -hE '"triplet":|"triples_per_s"' "$logs/headless_${n}_$m.json" 2>/dev/null |
      tr -s ' ' | tr '\n' ' ' | sed "s/^/  N=$n $m:/; s/$/\n/"
  done
done
timeout 120 env -u DISPLAY "$nbsim" --frames 20 --scene triplets --n 4096 --triplets on \
  --triplet-map rm --energy-every 10 --quiet --log "$logs/triplets_scene_4096.csv" \
  >"$logs/headless_triplets_scene.log" 2>&1 || status=1
tail -4 "$logs/headless_triplets_scene.log"

ncu_ipt=""
if [ $ncu_on = 1 ] && command -v ncu >/dev/null; then
  # tetra: the whole simplex in one launch, so one profiled kernel is the whole step (rm launches
  # its parts separately, and -c 1 would count only the first).
  step "Nsight Compute: triplet kernel, N = 4096 (gas, tetra)"
  timeout 240 ncu --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section InstructionStats --section Occupancy --section LaunchStats \
    -k regex:triplet_kernel -c 1 "$nbsim" --frames 3 --n 4096 --triplets on \
    --triplet-map tetra --energy-every 0 --quiet >"$OUT/ncu_triplet_kernel.txt" 2>&1
  echo "ncu: exit $?"
  grep -E "triplet_kernel|Duration|Issue Slots Busy|Executed Ipc Active|Executed Instructions  |Registers Per|Achieved Occupancy|Theoretical Occupancy" \
    "$OUT/ncu_triplet_kernel.txt" | head -12
  executed=$(grep -E "^\s+Executed Instructions\s+inst" "$OUT/ncu_triplet_kernel.txt" |
    awk '{gsub(",", "", $NF); print $NF}' | head -1)
  if [ -n "$executed" ]; then
    ncu_ipt=$(awk -v e="$executed" 'BEGIN { printf "%.1f", e * 32 / 11444858880 }')
    note "ncu N=4096: $executed warp instructions executed = $ncu_ipt thread instructions per unique triple (before: 120.6)"
  fi
fi

step table
{
  echo "ATM triplet step, gas scene, no cut-off (nbsim bench triplets: median ms, unique triples/s)"
  printf "%-6s %-12s %10s %12s\n" N map ms triples/s
  awk -F, 'NR > 1 { printf "%-6s %-12s %10.3f %12.3e\n", $6, $3, $11, $16 }' "$OUT/triplets.csv" \
    2>/dev/null
  echo "targets (H100): N=4096 >= 4.0e11 triples/s (<= 29 ms), N=8192 >= 4.2e11"
  [ -n "$ncu_ipt" ] && echo "instructions per triple (ncu, N=4096 tetra): $ncu_ipt (before: 120.6)"
  echo "tests:$tests_line"
} | tee -a "$summary"
finish
