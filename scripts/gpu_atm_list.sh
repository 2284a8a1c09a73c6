#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, once, for issue 20 item 5 (the ATM cut-off over neighbour lists): build,
# test_gpu_atm_list (the lists' kernels against the CPU reference over lists, which
# test_cpu_atm_list holds equal to the culled tile sweep), then atm_list_timing on the `triplets`
# and `gas` scenes at N = 16,384 and 262,144 with the cut-off 3 m (as scripts/gpu_tcut.sh):
# today's tile triples (culling + sweep, the backend's phase timings) against the lists (half
# with atomics, full without; build amortised over the steps the fastest body needs to cross
# half the skin, skins 0.1, 0.3 and 0.5 m). Aims at ~2-3 minutes on an H100. In $OUT (default
# ./gpu_atm_list_out):
#   atm_list.csv   one row per scene, N and skin (atm_list_timing's columns)
#   atm_list.md    the table: tile ms, list build / sweep / amortised ms, the faster, speed-up
#   summary.txt    tests and the table
#   logs.tgz       every log (device, build, test, timings, sanitizer)
# Usage: scripts/gpu_atm_list.sh [--budget SECONDS]
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" atm_list 180 "$@"
finish() {
  tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
  exit $status
}
csv=$OUT/atm_list.csv
rm -f "$csv"

device_info

build_targets test_gpu_atm_list atm_list_timing || { echo "BUILD FAILED" | tee "$OUT/summary.txt"; finish; }
cuobjdump --dump-resource-usage "$B/sim/libnbsim_sim.a" 2>/dev/null |
  grep -A1 -E "atm_list_" | grep -E "Function|REG" >"$logs/resource_usage.txt"

step "test_gpu_atm_list (lists on the device vs the CPU reference)"
timeout 120 "$bin/test_gpu_atm_list" >"$logs/test.log" 2>&1
test_rc=$?
tail -4 "$logs/test.log"
[ $test_rc = 0 ] || status=1

for scene in triplets gas; do
  if left; then
    step "atm_list_timing --scene $scene --n 16384,262144 --cutoff 3 --skins 0.1,0.3,0.5"
    timeout 200 "$bin/atm_list_timing" --scene "$scene" --n 16384,262144 --cutoff 3 \
      --skins 0.1,0.3,0.5 --repeats 20 --csv "$csv" 2>&1 | tee "$logs/timing_$scene.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
  else skip "timing $scene"; fi
done

if left && command -v compute-sanitizer >/dev/null 2>&1; then
  step "compute-sanitizer memcheck (test_gpu_atm_list gas)"
  timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/test_gpu_atm_list" gas \
    >"$logs/sanitizer.log" 2>&1
  rc=$?; tail -2 "$logs/sanitizer.log"; echo "memcheck exit $rc"; [ $rc = 0 ] || status=1
else skip "compute-sanitizer"; fi

step summary
python3 - "$csv" "$OUT/atm_list.md" <<'PY'
import csv, sys
src, out = sys.argv[1], sys.argv[2]
try:
    rows = list(csv.DictReader(open(src)))
except OSError:
    rows = []
lines = ["# ATM cut-off 3 m: tile triples against neighbour lists (per step, medians)", "",
         "rebuild_every: steps the fastest body needs to cross skin/2 (a lower bound on the real "
         "interval); half/full ms = sweep + build / rebuild_every.", "",
         "| scene | N | skin m | every | tile triples | tiles ms | half build | half sweep | "
         "half ms | full build | full sweep | full ms | faster | speed-up | triples | "
         "entries/body | list B/body |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    lines.append("| %s | %s | %s | %s | %s | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %s "
                 "| %.2f | %s | %s | %s |" % (
        r["scene"], r["N"], r["skin_m"], r["rebuild_every"], r["tile_triples"],
        float(r["tile_ms"]), float(r["half_build_ms"]), float(r["half_sweep_ms"]),
        float(r["half_ms"]), float(r["full_build_ms"]), float(r["full_sweep_ms"]),
        float(r["full_ms"]), r["faster"], float(r["speedup"]), r["triples"],
        r["half_entries_per_body"], r["half_bytes_per_body"]))
if rows:
    lines += ["", "contacts' automatic skin per scene: " + ", ".join(sorted(
        {"%s %s: %s m" % (r["scene"], r["N"], r["contact_auto_skin_m"]) for r in rows}))]
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
{
  echo "device: $(sed -n 2p "$logs/device.txt"), commit $(cat "$logs/commit.txt" 2>/dev/null)"
  echo "test_gpu_atm_list: exit $test_rc  $(grep -E "tests, [0-9]+ checks" "$logs/test.log" | tail -1)"
  cat "$OUT/atm_list.md"
  echo "status $status (0: every test and run passed)"
} >"$OUT/summary.txt"
finish
