#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, once, for the ATM cut-off culled (issue 11, part 2): build, the GPU tests of
# the culled triplets (test_gpu_tcull: culled vs unculled vs CPU, brute-force counts, overflow,
# N beyond the 3-D maps) and of the restructured triplet kernel, the `triplets` scene with a
# cut-off of 3 diameters (3.0 m: its spheres have radius 0.5 m) headless at N = 16,384, 65,536 and
# 262,144, `nbsim bench triplets --atm-cutoff 3.0` over the same N, Nsight Compute on the culled
# ATM kernel and the culling kernels, compute-sanitizer on the small case. Aims at ~3-4 minutes on
# an H100; later steps are skipped (and said so) once the time budget is spent. The table of the
# headless runs is printed last. Everything lands in $OUT (default ./gpu_tcut_out):
#   summary.txt            the tables printed last
#   headless.csv           one row per N: tile triples, triplet ms (cull + kernel), steps/s, ratio
#   triplets_cutoff.csv    `nbsim bench triplets --atm-cutoff 3.0`
#   ncu_tcull.txt          Nsight Compute: the culled ATM kernel (N = 65,536) and culling kernels
#   logs.tgz               every log (build, tests, sanitizers, runs, summaries, bench)
# Usage: scripts/gpu_tcut.sh [--budget SECONDS]
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" tcut 190 "$@"
finish() {
  tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
  exit $status
}

device_info

build_targets nbsim test_gpu_tcull test_triplet_kernels_gpu test_gpu_backend ||
  { echo "BUILD FAILED" | tee "$OUT/summary.txt"; finish; }
# The kernels' resource use, as built (registers, spills, shared memory).
cuobjdump --dump-resource-usage "$B/sim/libnbsim_sim.a" 2>/dev/null |
  grep -A1 -E "triplet_culled_kernel|tcull_" | grep -E "Function|REG" >"$logs/resource_usage.txt"
grep -A1 "triplet_culled_kernel" "$logs/resource_usage.txt" | head -4

tests_line=""
run_test() { # name timeout binary [filter]
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc  $(grep -E "tests, [0-9]+ checks" "$logs/$name.log" | tail -1)"
  tests_line="$tests_line $name=$rc"
  [ $rc = 0 ] || status=1
}

step "test_gpu_tcull (culled vs unculled vs CPU, brute-force counts, overflow, large N)"
run_test tcull 170 "$bin/test_gpu_tcull"
grep -E "^  |FAILED|failures|ENSURE" "$logs/tcull.log" | head -40

step "regression: the triplet kernel (map and list sources), the backend's triplets"
run_test kernels 90 "$bin/test_triplet_kernels_gpu"
run_test backend_triplet 90 "$bin/test_gpu_backend" triplet

step "headless: triplets scene, cut-off 3.0 m, 20 frames, tile triples (--skin 0; a skin takes the lists on one GPU)"
csv=$OUT/headless.csv
echo "n,tile_triples,tile_triples_total,neighbour_pairs,triplet_cull_ms,triplet_kernel_ms,triplet_ms,step_ms,steps_per_s,ratio,fallback" >"$csv"
for n in 16384 65536 262144; do
  timeout 120 env -u DISPLAY "$bin/nbsim" --frames 20 --scene triplets --n "$n" --triplets on \
    --atm-cutoff 3.0 --skin 0 --energy-every 0 --summary "$logs/headless_$n.json" \
    --log "$logs/headless_$n.csv" >"$logs/headless_$n.log" 2>&1 || {
    status=1; echo "headless N=$n failed:"; tail -3 "$logs/headless_$n.log"; }
done
python3 - "$logs" "$csv" <<'EOF'
import csv, json, sys
logs, out = sys.argv[1], sys.argv[2]
rows, first = [], None
for n in (16384, 65536, 262144):
    try:
        s = json.load(open(f"{logs}/headless_{n}.json"))
        log = list(csv.DictReader(open(f"{logs}/headless_{n}.csv")))
    except (OSError, ValueError):
        continue
    ms = s["ms_per_step"]
    cull, kern, step = ms["triplet_cull"]["median"], ms["triplet"]["median"], ms["step"]["median"]
    last = log[-1]
    tri = cull + kern
    first = first or tri
    rows.append([n, last["tile_triples"], last["tile_triples_total"], "",
                 "%.4f" % cull, "%.4f" % kern, "%.4f" % tri, "%.4f" % step,
                 "%.1f" % (1e3 / step if step > 0 else 0), "%.2f" % (tri / first), ""])
with open(out, "a") as f:
    for r in rows:
        f.write(",".join(str(x) for x in r) + "\n")
EOF

if left; then
  step "bench: nbsim bench triplets --atm-cutoff 3.0 (N = 16384, 65536, 262144)"
  timeout 150 "$bin/nbsim" bench triplets --atm-cutoff 3.0 --n 16384,65536,262144 --repeats 7 \
    --warmup 2 --no-plot --out "$OUT/bench" >"$logs/bench.log" 2>&1 || status=1
  tail -6 "$logs/bench.log"
  cp "$OUT/bench/triplets_cutoff.csv" "$OUT/" 2>/dev/null
  mv "$OUT/bench/meta.txt" "$logs/bench_meta.txt" 2>/dev/null
  rm -rf "$OUT/bench"
else skip "bench"; fi

ncu_line=""
if left && command -v ncu >/dev/null 2>&1; then
  step "Nsight Compute: the culled ATM kernel at N = 65536, the culling kernels at N = 262144"
  {
    echo "## triplet_culled_kernel, N = 65536 (the first launch: set-up, the bench's state)"
    timeout 70 ncu --section SpeedOfLight --section InstructionStats --section Occupancy \
      --section LaunchStats --section WarpStateStats -k regex:triplet_culled_kernel -c 1 \
      "$bin/nbsim" bench triplets --atm-cutoff 3.0 --n 65536 --repeats 1 --warmup 0 --no-plot \
      --out "$OUT/ncu_bench"
    echo "## culling kernels, N = 262144"
    timeout 50 ncu --section SpeedOfLight -k regex:"tcull_" -c 7 "$bin/nbsim" bench triplets \
      --atm-cutoff 3.0 --n 262144 --repeats 1 --warmup 0 --no-plot --out "$OUT/ncu_bench2"
  } >"$OUT/ncu_tcull.txt" 2>&1
  grep -E "triplet_culled_kernel|tcull_[a-z]+_kernel|Duration|Issue Slots Busy|Executed Instructions  |Registers Per|Achieved Occupancy" \
    "$OUT/ncu_tcull.txt" | head -40
  executed=$(grep -E "^\s+Executed Instructions\s+inst" "$OUT/ncu_tcull.txt" |
    awk '{gsub(",", "", $NF); print $NF}' | head -1)
  evaluated=$(awk -F, 'NR == 2 { print $10 }' "$OUT/ncu_bench/triplets_cutoff.csv" 2>/dev/null)
  if [ -n "$executed" ] && [ -n "$evaluated" ]; then
    ncu_line=$(awk -v e="$executed" -v t="$evaluated" \
      'BEGIN { printf "ncu N=65536: %s warp instructions = %.1f thread instructions per evaluated triple (%.3g evaluated)", e, e * 32 / t, t }')
    echo "$ncu_line"
  fi
  rm -rf "$OUT/ncu_bench" "$OUT/ncu_bench2"
else skip "Nsight Compute (or ncu not found)"; fi

if left && command -v compute-sanitizer >/dev/null 2>&1; then
  for tool in memcheck racecheck; do
    left || { skip "compute-sanitizer $tool"; continue; }
    step "compute-sanitizer $tool (test_gpu_tcull sanitizer_small)"
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/test_gpu_tcull" \
      sanitizer_small >"$logs/sanitizer_$tool.log" 2>&1
    rc=$?; tail -2 "$logs/sanitizer_$tool.log"; echo "$tool exit $rc"; [ $rc = 0 ] || status=1
    tests_line="$tests_line $tool=$rc"
  done
else skip "compute-sanitizer"; fi

step summary
{
  echo "device: $(sed -n 2p "$logs/device.txt"), commit $(cat "$logs/commit.txt" 2>/dev/null)"
  echo "tests:$tests_line"
  [ -n "$ncu_line" ] && echo "$ncu_line"
  if [ -f "$OUT/triplets_cutoff.csv" ]; then
    echo "nbsim bench triplets --atm-cutoff 3.0 (medians of 7): N, tile triples, cull ms, kernel ms, triplet ms, steps/s, t/t(16384), evaluated triples/s, issue share"
    awk -F, 'NR > 1 { printf "  %7s %9s %8.4f %8.4f %8.4f %7.1f %6.2f %10.3g %5.1f%%\n", $3, $7, $12, $13, $14, $18, $19, $20, 100 * $22 }' \
      "$OUT/triplets_cutoff.csv"
  fi
  echo "headless: nbsim --frames 20 --scene triplets --n N --triplets on --atm-cutoff 3.0 (per-step medians)"
  printf "  %7s %12s %12s %10s %10s %10s %8s %7s\n" N tile_triples of cull_ms kernel_ms triplet_ms steps/s ratio
  awk -F, 'NR > 1 { printf "  %7s %12s %12s %10s %10s %10s %8s %7s\n", $1, $2, $3, $5, $6, $7, $9, $10 }' "$csv"
  echo "targets (H100): ratio at 262144 <= 24, steps/s at 262144 >= 10; viewer at 65536 >= 30 fps"
  echo "status $status (0: every test and run passed)"
} | tee "$OUT/summary.txt"
finish
