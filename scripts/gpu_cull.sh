#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, once: build, the culling tests (GPU and CPU), timings of the culled contact
# step (gas 65k..4M, pile, a resting pack, collide; tile sizes; one vs two culling passes; the
# re-sort interval K), `nbsim bench pairs --cull on` at N >= 1M, Nsight Compute on the culling
# and contact kernels at N = 1M, compute-sanitizer on the small case, and the regression tests of
# the map-placed pair kernel. Aims at ~4-5 minutes on an H100; later steps are skipped (and
# said so) once the time budget is spent. Everything lands in $OUT (default ./gpu_cull_out):
#   cull_timing.csv      one row per timing run (tests/cull_timing.c: per-step medians)
#   pairs_culled_1m.csv  `nbsim bench pairs --cull on`, N = 1,048,576, tile 64
#   pairs_culled_4m.csv  the same, N = 4,194,304, tile 128
#   ncu_cull.txt         Nsight Compute: SpeedOfLight, LaunchStats, Occupancy, ComputeWorkload
#   summary.txt          the table printed last
#   logs.tgz             every log (build, tests, sanitizers, timings, bench, ncu)
# Usage: scripts/gpu_cull.sh [--budget SECONDS]   (with the device kit carried: it is sourced
# when present, for the stb headers the build needs)
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" cull 300 "$@"
csv=$OUT/cull_timing.csv
rm -f "$csv"

device_info

build_targets nbsim test_gpu_cull test_cpu_cull cull_timing test_gpu_backend ||
  { tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1; }

step "test_gpu_cull (culled vs full sweep vs CPU: touching pairs, forces, order, overflow)"
timeout 180 "$bin/test_gpu_cull" >"$logs/test_gpu_cull.log" 2>&1
rc=$?; [ $rc = 0 ] || status=1
grep -E "^  |FAILED|failures|ENSURE" "$logs/test_gpu_cull.log" | head -40
echo "test_gpu_cull: exit $rc"

# name scene n tile map cull levels K frames steps
timing() {
  local label=$1 scene=$2 n=$3 tile=$4 map=$5 cull=$6 levels=$7 k=$8 frames=$9 steps=${10}
  timeout 120 "$bin/cull_timing" --backend cuda --scene "$scene" --n "$n" --tile "$tile" \
    --map "$map" --cull "$cull" --levels "$levels" --sort-every "$k" --frames "$frames" \
    --steps "$steps" --warmup 3 --csv "$csv" --label "$label" >>"$logs/timing.log" 2>&1 ||
    { echo "timing $label $scene $n: failed (see timing.log)"; status=1; }
}

step "timings: culled contact step (per-step medians)"
timing gas gas 65536 64 ltm 1 0 0 10 10
timing gas-full gas 65536 64 ltm 0 0 0 5 2
timing gas gas 262144 64 ltm 1 0 0 10 10
timing gas-full gas 262144 64 ltm 0 0 0 5 1
timing gas gas 1048576 64 ltm 1 0 0 10 10
timing gas gas 4194304 128 ltm 1 0 0 5 10
timing pile pile 1048576 64 ltm 1 0 0 10 10
timing dense dense 1048576 64 ltm 1 0 0 10 10
timing collide collide 1048576 64 ltm 1 0 0 10 10
tail -9 "$logs/timing.log"

if left; then
  step "timings: tile size, one vs two culling passes, the map on the whole step"
  timing tile gas 1048576 32 ltm 1 0 0 10 10
  timing tile gas 1048576 128 ltm 1 0 0 10 10
  timing tile dense 1048576 32 ltm 1 0 0 10 10
  timing tile dense 1048576 128 ltm 1 0 0 10 10
  timing levels gas 65536 64 ltm 1 2 0 10 10
  timing levels gas 262144 64 ltm 1 1 0 10 10
  timing levels gas 1048576 64 ltm 1 1 0 5 10
  timing levels gas 1048576 64 bb 1 1 0 5 10
  timing levels gas 1048576 64 rm 1 1 0 5 10
  timing levels gas 1048576 64 bb 1 2 0 10 10
  timing levels gas 1048576 64 rm 1 2 0 10 10
  tail -11 "$logs/timing.log"
else skip "tile / levels timings"; fi

if left; then
  step "timings: re-sort interval K (100 steps each)"
  for k in 1 5 20 100; do
    timing K gas 1048576 64 ltm 1 0 "$k" 5 20
    timing K dense 1048576 64 ltm 1 0 "$k" 5 20
    timing K collide 1048576 64 ltm 1 0 "$k" 5 20
  done
  tail -12 "$logs/timing.log"
else skip "K sweep"; fi

if left; then
  step "bench pairs --cull on (N = 1M tile 64, N = 4M tile 128)"
  timeout 150 "$bin/nbsim" bench pairs --cull on --n 1048576 --tile 64 --repeats 7 --warmup 1 \
    --no-plot --out "$OUT/bench1m" >"$logs/bench1m.log" 2>&1 || status=1
  tail -8 "$logs/bench1m.log"
  cp "$OUT/bench1m/pairs_culled.csv" "$OUT/pairs_culled_1m.csv" 2>/dev/null
  if left; then
    timeout 150 "$bin/nbsim" bench pairs --cull on --n 4194304 --tile 128 --repeats 5 \
      --warmup 1 --no-plot --out "$OUT/bench4m" >"$logs/bench4m.log" 2>&1 || status=1
    tail -6 "$logs/bench4m.log"
    cp "$OUT/bench4m/pairs_culled.csv" "$OUT/pairs_culled_4m.csv" 2>/dev/null
  else skip "bench at 4M"; fi
  mv "$OUT"/bench1m/meta.txt "$logs/bench_meta.txt" 2>/dev/null
  rm -rf "$OUT/bench1m" "$OUT/bench4m"
else skip "bench"; fi

if left && command -v ncu >/dev/null 2>&1; then
  step "Nsight Compute at N = 1M (gas, tile 64): boxes, culling passes, contact sweep"
  sections="--section SpeedOfLight --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis"
  {
    echo "## two passes (default at 1M), ltm"
    # shellcheck disable=SC2086
    timeout 120 ncu $sections -k regex:"tile_boxes|cull_map|cull_second|pair_list" -c 4 \
      "$bin/cull_timing" --scene gas --n 1048576 --tile 64 --map ltm --frames 1 --warmup 0 --steps 1
    for m in bb ltm; do
      echo "## one pass (flat), $m: the map-placed culling pass over 16384 tiles"
      # shellcheck disable=SC2086
      timeout 100 ncu $sections -k regex:cull_map -c 1 "$bin/cull_timing" --scene gas \
        --n 1048576 --tile 64 --map $m --levels 1 --frames 1 --warmup 0 --steps 1
    done
  } >"$OUT/ncu_cull.txt" 2>&1
  grep -E "^  [a-z_<>0-9, ]+kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per|Grid Size" \
    "$OUT/ncu_cull.txt" | head -60
else skip "Nsight Compute (or ncu not found)"; fi

if left; then
  for tool in memcheck racecheck; do
    step "compute-sanitizer $tool (test_gpu_cull sanitizer_small)"
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/test_gpu_cull" \
      sanitizer_small >"$logs/sanitizer_$tool.log" 2>&1
    rc=$?; tail -2 "$logs/sanitizer_$tool.log"; echo "$tool exit $rc"; [ $rc = 0 ] || status=1
  done
else skip "compute-sanitizer"; fi

if left; then
  step "regression: the map-placed pair kernel (test_gpu_backend), the CPU reference culling"
  for t in sanitizer_small pair_maps_vs_cpu trajectory_vs_cpu export_and_name instability; do
    timeout 120 "$bin/test_gpu_backend" $t >"$logs/test_gpu_backend_$t.log" 2>&1
    rc=$?; echo "test_gpu_backend $t: exit $rc"; [ $rc = 0 ] || status=1
  done
  timeout 120 "$bin/test_cpu_cull" >"$logs/test_cpu_cull.log" 2>&1
  rc=$?; grep -E "^  " "$logs/test_cpu_cull.log" | head -12; echo "test_cpu_cull: exit $rc"
  [ $rc = 0 ] || status=1
else skip "regression tests"; fi

step "summary"
{
  echo "per-step medians [ms] (contact = sort + cull + sweep; step = the whole step)"
  python3 - "$csv" <<'EOF'
import csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1])))
except OSError:
    rows = []
fmt = "{:<9} {:<8} {:>8} {:>4} {:<4} {:>2} {:>3} {:>7} {:>7} {:>8} {:>8} {:>8} {:>9} {:>6}"
print(fmt.format("label", "scene", "N", "tile", "map", "lv", "K", "sort", "cull", "sweep",
                 "contact", "step", "tilepairs", "frac%"))
for r in rows:
    tot = float(r["tile_pairs_total"] or 0)
    frac = 100.0 * float(r["tile_pairs"]) / tot if tot else 100.0
    print(fmt.format(r["label"], r["scene"], r["n"], r["tile"], r["map"], r["levels"],
                     r["sort_every"], "%.4f" % float(r["sort_ms"]), "%.4f" % float(r["cull_ms"]),
                     "%.4f" % float(r["pair_ms"]), "%.4f" % float(r["contact_step_ms"]),
                     "%.4f" % float(r["step_ms"]), r["tile_pairs"], "%.2f" % frac))
EOF
  for f in "$OUT"/pairs_culled_1m.csv "$OUT"/pairs_culled_4m.csv; do
    [ -f "$f" ] || continue
    echo "$(basename "$f"): map, passes, cull ms, I_cull, contact step ms, I_step"
    awk -F, 'NR > 1 { printf "  %-11s %s  %8.4f %6.2f  %8.4f %6.2f\n", $2, $7, $14, $17, $21, $24 }' "$f"
  done
  echo "status $status (0: every test and run passed)"
} | tee "$OUT/summary.txt"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
exit $status
