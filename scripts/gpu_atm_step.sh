#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, once, for issue 20 item 5 wired (the ATM cut-off over its neighbour lists as
# the CUDA step's default): build, the tests of the wiring (test_gpu_atm_list: the stepped lists
# against the tile triples and the CPU, an overflow, periodic keeping tiles; test_gpu_tcull: the
# tile triples, skin 0; the emulated kernels' test_atm_list_emu is CI's), then the whole step of
# `nbsim` on the `gas` and `triplets` scenes at N = 16,384 and 262,144 with the cut-off 3 m, the
# lists (the automatic skin) against the tile triples (--skin 0) in the same run. In $OUT (default ./gpu_atm_step_out):
#   atm_step.md    per scene and N: ms per step (means over the run, rebuilds included) of the
#                  step, the ATM phases (triplet_cull: the lists' checks and builds, or the
#                  tile-triple culling; triplet: the sweep) for both paths, the lists' rebuilds,
#                  the speed-up
#   summary.txt    tests and the table
#   logs.tgz       every log and summary JSON
# Usage: scripts/gpu_atm_step.sh [--budget SECONDS]
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" atm_step 300 "$@"
finish() {
  tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
  exit $status
}

device_info
build_targets nbsim test_gpu_atm_list test_gpu_tcull ||
  { echo "BUILD FAILED" | tee "$OUT/summary.txt"; finish; }
cuobjdump --dump-resource-usage "$B/sim/libnbsim_sim.a" 2>/dev/null |
  grep -A1 -E "atm_list_" | grep -E "Function|REG" >"$logs/resource_usage.txt"

for t in test_gpu_atm_list test_gpu_tcull; do
  step "$t"
  timeout 300 "$bin/$t" >"$logs/$t.log" 2>&1
  rc=$?
  tail -4 "$logs/$t.log"
  echo "$t exit $rc" | tee -a "$logs/tests.txt"
  [ $rc = 0 ] || status=1
done

for scene in gas triplets; do
  for n in 16384 262144; do
    for skin in auto 0; do
      if left; then
        step "nbsim --scene $scene --n $n --atm-cutoff 3 --skin $skin"
        timeout 240 "$bin/nbsim" --scene "$scene" --n "$n" --triplets on --atm-cutoff 3 \
          --skin "$skin" --frames 40 --quiet \
          --summary "$logs/${scene}_${n}_skin_${skin}.json" >"$logs/${scene}_${n}_${skin}.log" 2>&1
        rc=$?; [ $rc = 0 ] || { tail -3 "$logs/${scene}_${n}_${skin}.log"; status=1; }
      else skip "$scene $n skin $skin"; fi
    done
  done
done

step summary
python3 - "$logs" "$OUT/atm_step.md" <<'PY'
import json, os, sys
logs, out = sys.argv[1], sys.argv[2]
def load(scene, n, skin):
    try:
        with open(os.path.join(logs, f"{scene}_{n}_skin_{skin}.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
def ms(j, k):  # the mean per step over the whole run: rebuilds and re-sorts included
    try: return j["ms_per_step"][k]["mean"]
    except (TypeError, KeyError): return float("nan")
rows = ["# ATM cut-off 3 m, whole step: the CUDA step's lists (automatic skin) against its tile "
        "triples (--skin 0), means per step over 40 frames (rebuilds included)", "",
        "| scene | N | lists step ms | triplet_cull | triplet | rebuilds / steps | tiles step ms "
        "| triplet_cull | triplet | step speed-up | ATM speed-up |",
        "|---|---|---|---|---|---|---|---|---|---|---|"]
for scene in ("gas", "triplets"):
    for n in (16384, 262144):
        l, t = load(scene, n, "auto"), load(scene, n, "0")
        if l is None or t is None:
            rows.append(f"| {scene} | {n} | (missing) |||||||||"); continue
        a = l.get("atm_lists") or {}
        la, ta = ms(l, "triplet_cull") + ms(l, "triplet"), ms(t, "triplet_cull") + ms(t, "triplet")
        rows.append(f"| {scene} | {n} | {ms(l,'step'):.4g} | {ms(l,'triplet_cull'):.4g} | "
                    f"{ms(l,'triplet'):.4g} | {a.get('rebuilds','-')} / {a.get('steps','-')} | "
                    f"{ms(t,'step'):.4g} | {ms(t,'triplet_cull'):.4g} | {ms(t,'triplet'):.4g} | "
                    f"{ms(t,'step')/ms(l,'step'):.3g}x | {ta/la:.3g}x |")
with open(out, "w") as f:
    f.write("\n".join(rows) + "\n")
print("\n".join(rows))
PY
{ cat "$logs/tests.txt"; cat "$OUT/atm_step.md"; } >"$OUT/summary.txt"
finish
