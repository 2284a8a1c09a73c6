#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, unattended, in about 3 minutes on an H100: friction on the CUDA backend
# (sim/gpu/friction.h, docs/friction.md). test_gpu_friction first (every enumeration against
# the CPU reference and the GPU's unculled sweep, save and resume, friction 0 bit for bit), then
# friction on (mu 0.5, mu_r 0.1) against off in the same run, on issue 21's workloads:
#   lattice 262,144   the `lattice` scene, tile 32, ltm
#   pile 1,048,576    cull_timing's `dense`: a resting simple-cubic pack under gravity (~6
#                     contacts per body, and the floor's), the stand-in for a settled pile
# each with the neighbour lists of the default kind (skin auto), and the pile with culled tiles
# (skin 0) beside them. Each timing is cull_timing --warmup 1 --frames 30 --steps 10: a warm-up
# frame of 10 steps, then 300 steps in frames of 10, every rebuild and re-sort included; the mean
# whole step from the CUDA events. Goal (issue 21): friction costs <= 35 % over friction off.
#
# Outputs in $OUT (default ./gpu_friction_out):
#   friction.csv  cull_timing's rows (label on / off)
#   friction.md   on against off per workload: the whole step, the contact sweep, the integration
#                 (walls and kicks), the cost in %, the goal met or not
#   logs.tgz      every log (device, build, test, timings)
# Usage: scripts/gpu_friction.sh [--budget SECONDS]   (the build folder: $NBSIM_BUILD, default
# /tmp/nbsim-friction-build; an existing build is reused, only what changed is rebuilt)
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" friction 240 "$@"
csv=$OUT/friction.csv
rm -f "$csv"

device_info

build_targets cull_timing test_gpu_friction || { tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1; }

gpu_test test_gpu_friction 200 # every enumeration against the CPU and the unculled sweep

# run LABEL SCENE N TILE SKIN MU MU_R: 10 warm-up steps, then 30 frames of 10 steps
run() {
  local label=$1 scene=$2 n=$3 tile=$4 skin=$5 mu=$6 mu_r=$7
  local dt=() # the lattice at the particles sample's step (its own is t_c / 50: sim/io/scene.c)
  [ "$scene" = lattice ] && dt=(--dt 0.5)
  if ! left; then skip "$label $scene $n"; return; fi
  timeout 150 "$bin/cull_timing" --backend cuda --scene "$scene" --n "$n" --tile "$tile" \
    --map ltm --cull 1 --warmup 1 --frames 30 --steps 10 --skin "$skin" --nlist default \
    --friction "$mu" --rolling-friction "$mu_r" "${dt[@]}" --csv "$csv" --label "$label" \
    >>"$logs/timing.log" 2>&1 ||
    { echo "timing $label $scene $n: failed (see timing.log)"; status=1; }
  tail -2 "$logs/timing.log" | cut -c1-220
}

step "friction off, then on, in the same run"
for w in "lattice 262144 32 auto" "dense 1048576 32 auto" "dense 1048576 32 0"; do
  read -r scene n tile skin <<<"$w"
  run off "$scene" "$n" "$tile" "$skin" 0 0
  run on "$scene" "$n" "$tile" "$skin" 0.5 0.1
done

step "summary"
PYTHONPATH="$root/scripts" python3 - "$csv" "$OUT/friction.md" "$(head -2 "$logs/device.txt" | tail -1)" <<'EOF'
import sys
from summary_md import Report, num as f, read_rows
path, md_path, device = sys.argv[1], sys.argv[2], sys.argv[3]
rows = read_rows(path)
GOAL = 0.35

line = Report()

line("# Friction on against off on the CUDA backend (scripts/gpu_friction.sh)")
line("")
line("Device: %s. Each row: cull_timing from the scene's start, a warm-up frame of 10 steps, "
     "then 300 steps in frames of 10; step = the mean whole step (CUDA events). Friction on: "
     "mu 0.5, mu_r 0.1. Goal: on costs <= %d %% over off." % (device, int(GOAL * 100)))
line("")
line("| scene | N | tile | lists | off ms | on ms | cost | goal | off sweep ms | on sweep ms | "
     "off integrate ms | on integrate ms | contacts/body |")
line("|" + "---|" * 13)
by = {}
for r in rows:
    by.setdefault((r["scene"], r["n"], r["tile"], r["nlist"]), {})[r["label"]] = r
for (scene, n, tile, nlist), d in by.items():
    if "on" not in d or "off" not in d:
        continue
    a, b = f(d["off"], "mean_step_ms"), f(d["on"], "mean_step_ms")
    cost = (b - a) / a if a > 0 else 0.0
    line("| %s | %s | %s | %s | %.4f | %.4f | %+.1f %% | %s | %.4f | %.4f | %.4f | %.4f | %.2f |" % (
        scene, n, tile, nlist, a, b, 100.0 * cost, "met" if cost <= GOAL else "not met",
        f(d["off"], "pair_ms"), f(d["on"], "pair_ms"), f(d["off"], "integrate_ms"),
        f(d["on"], "integrate_ms"), f(d["on"], "contacts_per_step") / max(int(n), 1)))
line("")
line("Per-phase columns are medians per step of the frame (cull_timing's columns).")
line.write(md_path)
EOF
status_line "the test" | tee -a "$OUT/friction.md"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
exit "$status"
