#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Timings that add up, on a GPU (issue 37). For each workload (the lattice swept from the cells,
# a gas and a pile over neighbour lists, the ATM cut-off over its lists) at 1, 10, 100 and
# 1,000 steps a frame: one run with --phase-times sampled and one with every, each at least 3,000
# steps; from their summaries (JSON, mean per step over every step, rebuilds and re-sorts
# included) the phases' sum against the step, and each phase sampled against every step's.
# OUT/phases.csv (one row per workload, steps a frame, mode and phase) and OUT/phases.md.
# Usage: scripts/gpu_phases.sh [--budget SECONDS]   (NBSIM_BIN: a built nbsim, else it builds)
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" phases 600 "$@"
device_info
if [ -n "${NBSIM_BIN:-}" ]; then
  bin=$(dirname "$NBSIM_BIN")
else
  build_targets nbsim || exit 1
fi
workloads=(
  "lattice_262k|--scene lattice --dt 0.5 --n 262144" # the particles sample's step: swept from the cells
  "gas_1m|--scene gas --n 1048576 --triplets off"
  "pile_1m|--scene pile --n 1048576"
  "atm_cutoff_65k|--scene triplets --n 65536 --triplets on --atm-cutoff 3"
)
step runs
for w in "${workloads[@]}"; do
  name=${w%%|*} args=${w#*|}
  for spf in 1 10 100 1000; do
    frames=$(( 3000 / spf > 3 ? 3000 / spf : 3 ))
    for mode in sampled every; do
      left || { skip "$name $spf $mode"; continue; }
      # shellcheck disable=SC2086
      if ! env -u DISPLAY "$bin/nbsim" $args --frames "$frames" --steps-per-frame "$spf" \
          --energy-every 0 --phase-times "$mode" --quiet \
          --summary "$logs/$name.$spf.$mode.json" >"$logs/$name.$spf.$mode.out" 2>&1; then
        echo "$name $spf $mode failed:"; tail -3 "$logs/$name.$spf.$mode.out"; status=1
      fi
    done
  done
done
step summary
python3 - "$logs" "$OUT" <<'PY'
import json, os, sys
logs, out = sys.argv[1], sys.argv[2]
phases = ["drift", "sort", "cull", "lists", "cells", "pair", "atm_lists", "triplet_cull",
          "triplet", "comm", "kick"]
rows, md = [], ["| workload | steps a frame | step ms (sampled / every) | phases' sum / step "
                "(sampled) | phases >= 5 % of the step: sampled / every |", "|---|---|---|---|---|"]
runs = sorted({f.rsplit(".", 3)[0] + "." + f.rsplit(".", 3)[1] for f in os.listdir(logs)
               if f.endswith(".json")})
for run in runs:
    name, spf = run.rsplit(".", 1)
    got = {}
    for mode in ("sampled", "every"):
        p = os.path.join(logs, f"{run}.{mode}.json")
        if os.path.exists(p):
            got[mode] = json.load(open(p))["ms_per_step"]
    if len(got) < 2 or got["every"] is None or got["sampled"] is None:
        continue
    s, e = got["sampled"], got["every"]
    for mode, d in got.items():
        for p in phases + ["step"]:
            rows.append(f"{name},{spf},{mode},{p},{d[p]['mean']:.6g}")
    total = sum(s[p]["mean"] for p in phases)
    big = [p for p in phases if e[p]["mean"] >= 0.05 * e["step"]["mean"]]
    cmp = ", ".join(f"{p} {s[p]['mean']:.4g}/{e[p]['mean']:.4g} "
                    f"({100 * (s[p]['mean'] / e[p]['mean'] - 1):+.0f} %)" for p in big)
    md.append(f"| {name} | {spf} | {s['step']['mean']:.4g} / {e['step']['mean']:.4g} | "
              f"{total / s['step']['mean']:.4f} | {cmp} |")
open(os.path.join(out, "phases.csv"), "w").write("workload,steps_per_frame,mode,phase,ms_per_step\n"
                                                  + "\n".join(rows) + "\n")
open(os.path.join(out, "phases.md"), "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
echo "status $status"
exit $status
