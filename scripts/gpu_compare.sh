#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Times two nbsim programs on the same workloads in one run on one GPU, interleaved (A, B, A, B,
# ...) so that clock and thermal drift touch both alike: the before/after check of a change that
# must not slow a step down. Each run is headless with a timing log; per run the whole-step time
# per step is taken over the frames after the warm-up (mean, which includes re-sorts and list
# rebuilds, and median); per workload the median over the repeats of each. Prints a table and
# writes OUT/compare.csv with the ratio B / A (> 1: B slower).
# Usage: scripts/gpu_compare.sh A_PROGRAM B_PROGRAM OUT [REPEATS] [-- workload file]
#   The workloads are lines "name|arguments" (default: the list below).
set -uo pipefail
a=$1 b=$2 out=$3 reps=${4:-3}
mkdir -p "$out"
workloads=${NBSIM_COMPARE_WORKLOADS:-$(cat <<'W'
brute_pairs_262k|--scene gas --n 262144 --cull off --pair-map ltm --tile 128 --triplets off --frames 25 --energy-every 0
culled_gas_1m|--scene gas --n 1048576 --triplets off --frames 320 --energy-every 0
culled_pile_262k|--scene pile --n 262144 --triplets off --frames 320 --energy-every 0
atm_4096|--scene triplets --n 4096 --triplets on --triplet-map tetra --frames 25 --energy-every 0
W
)}
warm=5
stat() { # log.csv -> "mean median" of step_ms / steps over frames after the warm-up
  python3 - "$1" "$warm" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))[int(sys.argv[2]):]
v = [float(r["step_ms"]) / max(1, int(r["steps"])) for r in rows]
print(f"{statistics.fmean(v):.6f} {statistics.median(v):.6f}" if v else "nan nan")
PY
}
echo "workload,program,repeat,mean_ms,median_ms" >"$out/compare_runs.csv"
while IFS='|' read -r name args; do
  [ -n "$name" ] || continue
  for r in $(seq 1 "$reps"); do
    for which in A B; do
      prog=$a; [ $which = B ] && prog=$b
      log="$out/$name.$which.$r.csv"
      # shellcheck disable=SC2086
      if ! env -u DISPLAY "$prog" $args --quiet --log "$log" >"$out/$name.$which.$r.out" 2>&1; then
        echo "$name $which run $r failed:"; tail -3 "$out/$name.$which.$r.out"; continue
      fi
      read -r mean med < <(stat "$log")
      echo "$name,$which,$r,$mean,$med" >>"$out/compare_runs.csv"
    done
  done
done <<<"$workloads"
python3 - "$out" <<'PY'
import csv, statistics, sys, collections
out = sys.argv[1]
d = collections.defaultdict(lambda: collections.defaultdict(list))
for r in csv.DictReader(open(f"{out}/compare_runs.csv")):
    d[r["workload"]][r["program"]].append((float(r["mean_ms"]), float(r["median_ms"])))
with open(f"{out}/compare.csv", "w") as f:
    f.write("workload,A_mean_ms,B_mean_ms,B_over_A_mean,A_median_ms,B_median_ms,B_over_A_median\n")
    print(f"{'workload':20} {'A mean':>10} {'B mean':>10} {'B/A':>6} {'A median':>10} {'B median':>10} {'B/A':>6}")
    for w, p in d.items():
        if not p["A"] or not p["B"]:
            continue
        am = statistics.median(x[0] for x in p["A"]); bm = statistics.median(x[0] for x in p["B"])
        ad = statistics.median(x[1] for x in p["A"]); bd = statistics.median(x[1] for x in p["B"])
        f.write(f"{w},{am:.5f},{bm:.5f},{bm/am:.4f},{ad:.5f},{bd:.5f},{bd/ad:.4f}\n")
        print(f"{w:20} {am:10.4f} {bm:10.4f} {bm/am:6.3f} {ad:10.4f} {bd:10.4f} {bd/ad:6.3f}")
PY
