#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nbsim's CPU reference against serial LAMMPS on the same frictional pile, one core each
# (issue 41, item 2). The pile: nbsim's `heap` (friction 0.5, rolling friction 0.1) poured for
# --settle steps on the CPU and saved; tests/lammps/pile_from_state.py turns that state into
# LAMMPS's data and model (tests/lammps/in.pile_bench) and into an nbsim scene without the
# springs, so both codes start from the same bodies with every spring at zero. Both use the same
# skin, binned lists rebuilt when a body has moved half of it, one thread
# (OMP_NUM_THREADS=1, --threads 1), pinned with taskset to one core.
#
# Each repetition runs, interleaved, nbsim and LAMMPS for --steps steps, then each for its setup
# alone (nbsim: one step; LAMMPS: run 0): the user CPU time per step is the median of the runs
# less the median of the setups, over the steps between (getrusage through /usr/bin/time, so a
# busy machine's other work does not count; wall time is reported beside it). Each code's own
# loop time and phase times come from its logs (nbsim --log, LAMMPS's timing breakdown).
#
#   scripts/cpu_vs_lammps.sh [--n N] [--settle STEPS] [--steps S] [--repeat R] [--skin M]
#                            [--cpu C] [--label TEXT] [--out DIR]
# Defaults: --n 1400 (heap's own: 1,400 bodies with its carpet), --settle 20000 (the heap at rest,
# ~5 s), --steps 2000, --repeat 3, --skin 0.05 m, --cpu 1, --out bench/results/cpu. Appends rows
# to OUT/cpu_vs_lammps.csv and prints the medians (scripts/cpu_vs_lammps.py); the states and logs
# stay in $WORK (default /tmp/nbsim-cpu-vs-lammps). NBSIM: the nbsim binary (default
# build/bin/nbsim); NBSIM_LMP: the LAMMPS binary (default lmp). Exit 77: no LAMMPS with GRANULAR.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n=1400 settle=20000 steps=2000 repeat=3 skin=0.05 cpu=1 label="" out="$root/bench/results/cpu"
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n="$2" ;;
    --settle) settle="$2" ;;
    --steps) steps="$2" ;;
    --repeat) repeat="$2" ;;
    --skin) skin="$2" ;;
    --cpu) cpu="$2" ;;
    --label) label="$2" ;;
    --out) out="$2" ;;
    *) echo "cpu_vs_lammps: unknown option $1 (see the script's header)" >&2; exit 2 ;;
  esac
  shift 2
done
if [ $((steps % 100)) -ne 0 ] || [ $((settle % 100)) -ne 0 ]; then
  echo "cpu_vs_lammps: --steps and --settle must be multiples of 100" >&2
  exit 2
fi
nbsim="${NBSIM:-$root/build/bin/nbsim}"
lmp="${NBSIM_LMP:-lmp}"
if ! command -v "$lmp" >/dev/null 2>&1 || ! grep -q granular <<<"$("$lmp" -h 2>/dev/null)"; then
  echo "cpu_vs_lammps: no LAMMPS with GRANULAR ($lmp); Debian: apt-get install lammps" >&2
  exit 77
fi
work="${WORK:-/tmp/nbsim-cpu-vs-lammps}/heap$n-$settle"
mkdir -p "$work" "$out"
csv="$out/cpu_vs_lammps.csv"
[ -n "$label" ] || label="heap $n"
pin=(taskset -c "$cpu" env OMP_NUM_THREADS=1)

if [ ! -s "$work/state.scene" ]; then
  echo "cpu_vs_lammps: pouring the heap of $n for $settle steps ..." >&2
  "$nbsim" --scene heap --n "$n" --backend cpu --frames $((settle / 100)) --steps-per-frame 100 \
    --energy-every 0 --quiet --save-state "$work/state.scene.tmp" >/dev/null
  mv "$work/state.scene.tmp" "$work/state.scene"
fi
read -r bodies dt < <(python3 "$root/tests/lammps/pile_from_state.py" "$work/state.scene" "$work")

# One run of either code; appends its CSV row. $1 code, $2 kind (run|setup), $3 repetition.
run_one() {
  local code="$1" kind="$2" rep="$3" t="$work/time.txt" s loop neigh pair builds
  s=$([ "$kind" = run ] && echo "$steps" || echo 0)
  if [ "$code" = nbsim ]; then
    local frames=$((steps / 100)) per=100
    [ "$kind" = run ] || { frames=1; per=1; }
    /usr/bin/time -f "%U %S %e" -o "$t" "${pin[@]}" "$nbsim" --scene "$work/pile.scene" \
      --backend cpu --threads 1 --skin "$skin" --frames "$frames" --steps-per-frame "$per" \
      --energy-every 0 --quiet --log "$work/nbsim.csv" >/dev/null
    read -r loop neigh pair builds < <(python3 - "$work/nbsim.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tot = lambda k: sum(float(r[k] or 0) for r in rows) / 1e3
print(tot('step_ms'), tot('nlist_ms'), tot('pair_ms'), 'na')
EOF
)
    [ "$kind" = run ] || s=1
  else
    (cd "$work" && /usr/bin/time -f "%U %S %e" -o "$t" "${pin[@]}" "$lmp" \
      -in "$root/tests/lammps/in.pile_bench" -var data pile.data -var model pile.model \
      -var steps "$s" -var dt "$dt" -var skin "$skin" -log lammps.log -screen none)
    loop=$(awk '/^Loop time of/ {print $4}' "$work/lammps.log")
    neigh=$(awk -F'|' '/^Neigh /{gsub(/ /,"",$3); print $3}' "$work/lammps.log")
    pair=$(awk -F'|' '/^Pair /{gsub(/ /,"",$3); print $3}' "$work/lammps.log")
    builds=$(awk '/^Neighbor list builds/ {print $5}' "$work/lammps.log")
  fi
  read -r user sys wall <"$t"
  [ -s "$csv" ] ||
    echo "label,code,n,kind,steps,rep,user_s,sys_s,wall_s,loop_s,neigh_s,pair_s,lmp_builds" >"$csv"
  echo "$label,$code,$bodies,$kind,$s,$rep,$user,$sys,$wall,$loop,$neigh,$pair,$builds" >>"$csv"
}

for rep in $(seq 1 "$repeat"); do
  for kind in run setup; do
    run_one nbsim "$kind" "$rep"
    run_one lammps "$kind" "$rep"
  done
done
python3 "$root/scripts/cpu_vs_lammps.py" "$csv" --label "$label"
