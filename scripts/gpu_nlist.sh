#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, unattended, in about 3-4 minutes on an H100: the neighbour lists (sim/nlist/)
# against today's culled tiles (--skin 0) on issue 20's workloads, half against full lists, the
# cost of counting touching pairs, a skin sweep, and the cost of the lists' launches that find
# nothing to do; test_gpu_nlist first (exactness on the device). Each timing is cull_timing
# --warmup 1 --frames 30 --steps 10 (as scripts/gpu_peers.sh times nbsim): from the scene's
# start, a warm-up frame of 10 steps, then 300 steps in frames of 10 (lists grow between frames,
# never inside one), every rebuild and re-sort included; the mean per step from the CUDA events
# around each step and from a host clock around the timed frames (their syncs included).
#
# Workloads (goals, H100, the whole step, mean over the 300 steps):
#   lattice 262,144   the `lattice` scene (NVIDIA's particles sample's configuration x32), tile
#                     32, ltm: <= 0.10 ms
#   lattice 65,536    the same: <= 0.04 ms
#   gas 1,048,576     the `gas` scene: <= 0.15 ms
#   dense 1,048,576   cull_timing's `dense`: a resting simple-cubic pack (pitch 1.2 m, radii
#                     0.60-0.61 m, ~6 contacts per body) under gravity, the stand-in for a
#                     settled pile used since scripts/gpu_cull.sh: <= 0.5 ms
# each with tiles (skin 0; tile 32, and 64 at 1M), half and full lists (skin auto) built from the
# cell grid (the default), and half and full lists built from the culled tile pairs (--build
# tiles: labels half-tiles, full-tiles); and the grid's five kernels as plain launches
# (NBSIM_UNCHAINED=1, label unchained-full) against the default programmatic dependent launches.
#
# Outputs in $OUT (default ./gpu_nlist_out):
#   nlist.csv   cull_timing's rows (per-step medians of each phase, the lists' rebuilds, skin,
#               bytes, tests and touching pairs per step, the means over the 300 steps)
#   nlist.md    the tables: step time against the goal, rebuild cadence, list bytes per body,
#               the bytes a step moves (a model, stated there) and the fraction of 3.35 TB/s;
#               half against full; counting on and off; chained against plain launches; the
#               skin sweep; the idle launches
#   logs.tgz    every log (device, build, test, timings)
# Usage: scripts/gpu_nlist.sh [--budget SECONDS]   (the build folder: $NBSIM_BUILD, default
# /tmp/nbsim-nlist-build; an existing build is reused, only what changed is rebuilt)
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" nlist 240 "$@"
csv=$OUT/nlist.csv
rm -f "$csv"

device_info

build_targets cull_timing test_gpu_nlist || { tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1; }

gpu_test test_gpu_nlist 150 # lists against the unculled sweep and the CPU; over time; overflow

# run LABEL SCENE N TILE SKIN NLIST [COUNT [BUILD]]: 10 warm-up steps, then 30 frames of 10 steps
run() {
  local label=$1 scene=$2 n=$3 tile=$4 skin=$5 nlist=$6 count=${7:-1} build=${8:-default}
  local dt=() # the lattice at the particles sample's step (its own is t_c / 50: sim/io/scene.c)
  [ "$scene" = lattice ] && dt=(--dt 0.5)
  if ! left; then skip "$label $scene $n"; return; fi
  timeout 120 "$bin/cull_timing" --backend cuda --scene "$scene" --n "$n" --tile "$tile" \
    --map ltm --cull 1 --warmup 1 --frames 30 --steps 10 --skin "$skin" --nlist "$nlist" \
    --count "$count" --build "$build" "${dt[@]}" --csv "$csv" --label "$label" >>"$logs/timing.log" 2>&1 ||
    { echo "timing $label $scene $n: failed (see timing.log)"; status=1; }
  tail -2 "$logs/timing.log" | cut -c1-220
}

step "the goal workloads: tiles, half and full lists from the cells and from the tile pairs"
for n in 262144 65536; do
  run tiles lattice $n 32 0 default
  run half lattice $n 32 auto half
  run full lattice $n 32 auto full
  run half-tiles lattice $n 32 auto half 1 tiles
  run full-tiles lattice $n 32 auto full 1 tiles
done
for scene in gas dense; do
  run tiles $scene 1048576 32 0 default
  run tiles64 $scene 1048576 64 0 default
  run half $scene 1048576 32 auto half
  run full $scene 1048576 32 auto full
  run half-tiles $scene 1048576 32 auto half 1 tiles
  run full-tiles $scene 1048576 32 auto full 1 tiles
done

step "counting touching pairs: off against on (lattice 262,144, gas 1M)"
run count0-tiles lattice 262144 32 0 default 0
run count0-half lattice 262144 32 auto half 0
run count0-full lattice 262144 32 auto full 0
run count0-full gas 1048576 32 auto full 0

step "the skin (lattice 65,536: rebuilt at nearly every step; dense 1M: at rest)"
for s in 0.05 0.1 0.4; do
  run "skin-$s" lattice 65536 32 $s full
done
for s in 0.03 0.3; do
  run "skin-$s" dense 1048576 32 $s full
done

step "the grid's five kernels as plain launches (NBSIM_UNCHAINED=1) against chained (the default)"
for n in 262144 65536; do
  NBSIM_UNCHAINED=1 run unchained-full lattice $n 32 auto full
done
NBSIM_UNCHAINED=1 run unchained-full dense 1048576 32 auto full

step "idle lists: a pack at rest at 65,536 (the culling and build launches find nothing to do)"
run idle-tiles dense 65536 32 0 default
run idle-half dense 65536 32 auto half
run idle-full dense 65536 32 auto full

step "summary"
PYTHONPATH="$root/scripts" python3 - "$csv" "$OUT/nlist.md" "$(head -2 "$logs/device.txt" | tail -1)" <<'EOF'
import sys
from summary_md import Report, num as f, read_rows
path, md_path, device = sys.argv[1], sys.argv[2], sys.argv[3]
rows = read_rows(path)
GOAL = {("lattice", 262144): 0.10, ("lattice", 65536): 0.04, ("gas", 1048576): 0.15,
        ("dense", 1048576): 0.5}
BW = 3.35e12  # H100 SXM HBM3 [B/s]

def bytes_per_body(r):
    """DRAM bytes per body and step, a model (gathers of neighbours assumed cache hits):
    tiles: first half kick + drift 80 (r pos vel force, w pos vel), boxes 16, forces cleared 16,
    sweep 32 (own position, force atomics; the tiles' positions from L2), second half kick 80;
    lists: drift 80 + build position 16 + forces cleared 16, sweep 36 + 4 per entry (count, own
    position, force, the entries), second half kick 80, and per rebuild boxes 16 + positions and
    counts 20 + 12 per entry (the entries written, their counts' atomics)."""
    n = f(r, "n") or 1.0
    steps = f(r, "timed_steps") or 1.0
    if r["nlist"] == "off":
        return 224.0
    c = f(r, "tests_per_step") / n
    rebuilt = f(r, "rebuilds") / steps
    return 112.0 + 36.0 + 4.0 * c + 80.0 + rebuilt * (36.0 + 12.0 * c)

line = Report()

line("# Neighbour lists against culled tiles (scripts/gpu_nlist.sh)")
line("")
line("Device: %s. Each row: cull_timing from the scene's start, a warm-up frame of 10 steps, "
     "then 300 steps in frames of 10, rebuilds and re-sorts included; step = the mean per step "
     "(CUDA events; host clock around the timed frames beside it)." % device)
line("")
line("| label | scene | N | tile | lists | skin [m] | step ms (events) | step ms (host) | goal | "
     "rebuilds / 300 | fallbacks | list B/body | tests/body | contacts/body | sort+cull ms | "
     "neighbours ms | sweep ms | B/body (model) | of 3.35 TB/s |")
line("|" + "---|" * 19)
for r in rows:
    n = int(f(r, "n"))
    step = f(r, "mean_step_ms")
    goal = GOAL.get((r["scene"], n))
    bpb = bytes_per_body(r)
    frac = n * bpb / BW / (step * 1e-3) if step > 0 else 0.0
    mark = "" if goal is None or r["label"] not in ("half", "full", "tiles") else \
        (" (met)" if step <= goal else " (not met)")
    line("| %s | %s | %d | %s | %s | %.3g | %.4f | %.4f | %s%s | %d | %d | %.1f | %.1f | %.2f | "
         "%.4f | %.4f | %.4f | %.0f | %.1f %% |" % (
             r["label"], r["scene"], n, r["tile"], r["nlist"], f(r, "skin"), step,
             f(r, "wall_step_ms"), "%.2f" % goal if goal else "", mark, int(f(r, "rebuilds")),
             int(f(r, "nlist_fallback_steps")), f(r, "nlist_bytes") / max(n, 1),
             f(r, "tests_per_step") / max(n, 1), f(r, "contacts_per_step") / max(n, 1),
             f(r, "sort_ms") + f(r, "cull_ms"), f(r, "nlist_ms"), f(r, "pair_ms"), bpb,
             100.0 * frac))
line("")
line("Per-phase columns are medians per step of the frame (one frame: the frame's mean). "
     "B/body (model): the DRAM bytes a step moves per body, neighbours' positions assumed "
     "cache hits (see bytes_per_body in scripts/gpu_nlist.sh); the last column is N x that / "
     "3.35 TB/s / the step.")
line("")
line("## Half against full lists (each pair once with atomics, or both directions without)")
line("")
line("| scene | N | half ms | full ms | faster |")
line("|---|---|---|---|---|")
by, phase = {}, {}
for r in rows:
    key = (r["label"], r["scene"], r["n"])
    by[key] = f(r, "mean_step_ms")
    phase[key] = (f(r, "nlist_ms"), f(r, "sort_ms") + f(r, "cull_ms"))

def pairs(partner):
    """(label, scene, n, its key, its partner's key), in the rows' order, for each row whose label
    partner maps to a label measured at the same scene and N."""
    for (label, scene, n) in by:
        if label in partner and (partner[label], scene, n) in by:
            yield label, scene, n, (label, scene, n), (partner[label], scene, n)

for _, scene, n, h, fl in pairs({"half": "full"}):
    line("| %s | %s | %.4f | %.4f | %s |" % (scene, n, by[h], by[fl],
                                              "half" if by[h] < by[fl] else "full"))
line("")
line("## Lists built from the cell grid (the default) against the culled tile pairs")
line("")
line("| lists | scene | N | cells ms | tile pairs ms | faster | cells: neighbours ms | tile pairs: sort+cull + neighbours ms |")
line("|---|---|---|---|---|---|---|---|")
for label, scene, n, c, t in pairs({"half": "half-tiles", "full": "full-tiles"}):
    line("| %s | %s | %s | %.4f | %.4f | %s | %.4f | %.4f |" % (
        label, scene, n, by[c], by[t], "cells" if by[c] < by[t] else "tile pairs",
        phase[c][0], phase[t][0] + phase[t][1]))
line("")
line("## Counting touching pairs (config.count_contacts): off against on")
line("")
line("| lists | scene | N | counted ms | not counted ms | cost |")
line("|---|---|---|---|---|---|")
counted = {l: l[len("count0-"):] for l, _, _ in by if l.startswith("count0-")}
for label, scene, n, off, on in pairs(counted):
    if by[on]:
        cost = 100.0 * (by[on] - by[off]) / by[off]
        line("| %s | %s | %s | %.4f | %.4f | %+.1f %% |" % (counted[label], scene, n, by[on],
                                                          by[off], cost))
line("")
line("## The cell grid's five kernels chained (programmatic dependent launches) or plain")
line("")
line("| scene | N | chained ms | plain ms | chained: neighbours ms | plain: neighbours ms |")
line("|---|---|---|---|---|---|")
for _, scene, n, c, p in pairs({"full": "unchained-full"}):
    line("| %s | %s | %.4f | %.4f | %.4f | %.4f |" % (scene, n, by[c], by[p], phase[c][0],
                                                      phase[p][0]))
line.write(md_path)
EOF
status_line "the test" | tee -a "$OUT/nlist.md"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs && rm -rf "$logs"
exit "$status"
