#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Peak resident memory of the spatial split (issue 40, item 6): one process against R MPI ranks
# of `nbsim --backend cpu --decompose space` on the same scene. Each process's peak is its
# VmHWM (/proc/self/status): GNU time's %M (getrusage's ru_maxrss, the same figure) around every
# process, and for the split the largest rank's, which its summary also reports. The run is one
# frame of --steps steps (the peak is reached as the backends are built; later cuts hold less).
#
#   scripts/space_memory.sh [--n N] [--ranks R] [--steps S] [--scene NAME] [--label TEXT]
#                           [--out DIR]
# Defaults: --n 4000000, --ranks 4, --steps 1, --scene gas, --out bench/results/cpu. Appends a row
# to OUT/space_memory.csv and prints it. NBSIM: the nbsim binary (default build/bin/nbsim).
# Exit 77: no mpiexec or no GNU time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
n=4000000 ranks=4 steps=1 scene=gas label="" out="$root/bench/results/cpu"
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n="$2" ;;
    --ranks) ranks="$2" ;;
    --steps) steps="$2" ;;
    --scene) scene="$2" ;;
    --label) label="${2//,/;}" ;; # a CSV field
    --out) out="$2" ;;
    *) echo "space_memory.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
nbsim="${NBSIM:-$root/build/bin/nbsim}"
if ! command -v mpiexec >/dev/null || [ ! -x /usr/bin/time ]; then
  echo "space_memory.sh: needs mpiexec and GNU time (/usr/bin/time): skipped" >&2
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=(--backend cpu --threads 1 --quiet --scene "$scene" --n "$n" --triplets off --frames 1
      --steps-per-frame "$steps")
/usr/bin/time -f "%M" -o "$work/one.kib" "$nbsim" "${args[@]}" >/dev/null
mpiexec -n "$ranks" /usr/bin/time -f "%M" -a -o "$work/split.kib" "$nbsim" "${args[@]}" \
  --decompose space --summary "$work/split.json" >/dev/null
one=$(cat "$work/one.kib")
most=$(sort -n "$work/split.kib" | tail -1)
balance=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ranks"])' \
  "$work/split.json")
per_body=$(awk -v k="$most" -v n="$n" -v r="$ranks" 'BEGIN { printf "%.0f", k * 1024 / (n / r) }')
one_per_body=$(awk -v k="$one" -v n="$n" 'BEGIN { printf "%.0f", k * 1024 / n }')
share=$(awk -v a="$most" -v b="$one" 'BEGIN { printf "%.1f", 100 * a / b }')
mkdir -p "$out"
csv="$out/space_memory.csv"
[ -f "$csv" ] || echo "date,commit,label,scene,n,ranks,steps,one_rank_kib,one_rank_bytes_per_body,\
largest_rank_kib,largest_rank_bytes_per_own_body,share_pct" >"$csv"
row="$(date -u +%F),$(git -C "$root" rev-parse --short HEAD),$label,$scene,$n,$ranks,$steps,$one,\
$one_per_body,$most,$per_body,$share"
echo "$row" >>"$csv"
echo "$row"
echo "one rank: $one KiB ($one_per_body B/body); $ranks ranks: at most $most KiB per rank" \
  "($per_body B per own body), $share % of one rank's"
echo "summary: $balance"
