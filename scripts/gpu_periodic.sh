#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, unattended, in about 4-6 minutes on an H100: periodic boundaries (issue 22).
# First the tests on the device: test_gpu_periodic (CUDA against the CPU reference with periodic
# axes: every pair map, culled tiles, lists, trajectories, the ATM cut-off), test_gpu_nlist and
# test_gpu_cull (the walls' paths the periodic changes went through). Then the goal: periodic
# costs <= 10 % over walls at 262,144 bodies, culled, H100. Each timing is cull_timing --warmup 1
# --frames 30 --steps 10 (as scripts/gpu_nlist.sh): from the scene's start a warm-up frame of 10
# steps, then 300 steps in frames of 10, the mean whole step from CUDA events (host clock beside
# it). Walls and periodic alternate, each pair twice, in the same run on the same card, and the
# ratio is of their means over both repetitions.
#
# Workloads (262,144 bodies, tile 32, ltm, culled; default full neighbour lists with the
# automatic skin, and the culled tiles alone, skin 0):
#   gas      the `gas` scene, no gravity: periodic on x, y and z against six walls
#   dense    cull_timing's resting simple-cubic pack under gravity: periodic x and z (the floor
#            and ceiling stay walls)
#   lattice  the `lattice` scene (NVIDIA's particles configuration x32) falling along -y:
#            periodic x and z
#
# Outputs in $OUT (default ./gpu_periodic_out):
#   periodic.csv  cull_timing's rows (labels walls-N / periodic-N, N the repetition)
#   periodic.md   the tests' outcome, and per workload and path: walls and periodic mean step,
#                 the ratio against the 10 % goal, and the phases (sort+cull, neighbours, sweep,
#                 integrate incl. the WRAP phase)
#   logs.tgz      every log (device, build, tests, timings)
# Usage: scripts/gpu_periodic.sh [--budget SECONDS]   (the build folder: $NBSIM_BUILD, default
# /tmp/nbsim-periodic-build; an existing build is reused, only what changed is rebuilt)
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" periodic 420 "$@"
csv=$OUT/periodic.csv
tests=$OUT/tests.txt
rm -f "$csv" "$tests"

device_info

build_targets cull_timing test_gpu_periodic test_gpu_nlist test_gpu_cull ||
  { tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1; }

for t in test_gpu_periodic test_gpu_nlist test_gpu_cull; do
  gpu_test "$t" 300
  rc=$?
  if [ -n "${NBSIM_TESTS_RAN:-}" ]; then
    echo "$t: not run again ($NBSIM_TESTS_RAN)" >>"$tests"
  else
    echo "$t: exit $rc" >>"$tests"
  fi
done

# run LABEL SCENE SKIN [--periodic AXES]: 10 warm-up steps, then 30 frames of 10 steps
run() {
  local label=$1 scene=$2 skin=$3
  shift 3
  local dt=() # the lattice at the particles sample's step (its own is t_c / 50: sim/io/scene.c)
  [ "$scene" = lattice ] && dt=(--dt 0.5)
  if ! left; then skip "$label $scene"; return; fi
  timeout 120 "$bin/cull_timing" --backend cuda --scene "$scene" --n 262144 --tile 32 \
    --map ltm --cull 1 --warmup 1 --frames 30 --steps 10 --skin "$skin" --nlist default \
    "${dt[@]}" --csv "$csv" --label "$label" "$@" >>"$logs/timing.log" 2>&1 ||
    { echo "timing $label $scene: failed (see timing.log)"; status=1; }
  tail -2 "$logs/timing.log" | cut -c1-200
}

step "periodic against walls, 262,144 bodies, culled (lists, then tiles)"
for skin in auto 0; do
  for rep in 1 2; do
    run "walls-$rep" gas "$skin"
    run "periodic-$rep" gas "$skin" --periodic xyz
    run "walls-$rep" dense "$skin"
    run "periodic-$rep" dense "$skin" --periodic xz
    run "walls-$rep" lattice "$skin"
    run "periodic-$rep" lattice "$skin" --periodic xz
  done
done

step "summary"
PYTHONPATH="$root/scripts" python3 - "$csv" "$OUT/periodic.md" "$(head -2 "$logs/device.txt" | tail -1)" "$tests" <<'EOF'
import sys
from summary_md import Report, num as f, read_rows
path, md_path, device, tests_path = sys.argv[1:5]
rows = read_rows(path)
try:
    tests = open(tests_path).read().strip().splitlines()
except OSError:
    tests = []
GOAL = 0.10

line = Report()

line("# Periodic boundaries against walls (scripts/gpu_periodic.sh)")
line("")
line("Device: %s. Each row: the mean whole step over 300 steps after a warm-up frame of 10 "
     "(cull_timing, CUDA events), walls and periodic alternating, two repetitions each, same "
     "run; 262,144 bodies, tile 32, ltm, culled. Goal: periodic <= %.0f %% over walls." %
     (device, 100 * GOAL))
line("")
line("Tests on the device: " + ("; ".join(tests) if tests else "not run"))
line("")
line("| scene | path | walls ms | periodic ms | periodic / walls | goal | walls: sort+cull / "
     "neighbours / sweep / integrate ms | periodic: the same |")
line("|---|---|---|---|---|---|---|---|")
groups = {}
for r in rows:
    kind = r["label"].split("-")[0]
    path_ = "lists (%s)" % r["nlist"] if r["nlist"] != "off" else "tiles"
    groups.setdefault((r["scene"], path_), {}).setdefault(kind, []).append(r)
for (scene, path_), g in sorted(groups.items()):
    w, p = g.get("walls", []), g.get("periodic", [])
    if not w or not p:
        continue
    mw = sum(f(r, "mean_step_ms") for r in w) / len(w)
    mp = sum(f(r, "mean_step_ms") for r in p) / len(p)
    ratio = mp / mw if mw > 0 else 0.0
    def phases(rs):
        k = len(rs)
        return "%.4f / %.4f / %.4f / %.4f" % (
            sum(f(r, "sort_ms") + f(r, "cull_ms") for r in rs) / k,
            sum(f(r, "nlist_ms") / max(f(r, "timed_steps"), 1.0) for r in rs) / k,
            sum(f(r, "pair_ms") for r in rs) / k, sum(f(r, "integrate_ms") for r in rs) / k)
    line("| %s | %s | %.4f | %.4f | %.3f | %s | %s | %s |" % (
        scene, path_, mw, mp, ratio, "met" if ratio <= 1.0 + GOAL else "not met", phases(w),
        phases(p)))
line("")
line("Phases: medians per step (integrate holds the drift, the WRAP phase and the second half "
     "kick; neighbours: the lists' builds and checks, mean per step).")
line.write(md_path)
EOF
status_line "the tests" | tee -a "$OUT/periodic.md"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
exit "$status"
