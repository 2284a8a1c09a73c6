#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, once (~3 minutes): builds what the trajectory work needs, runs its tests (the
# CUDA capture included) and times dumping from the CUDA backend at N = 100,000 and 1,000,000 in
# each format: frame time without and after a dump, the simulation thread's cost per dumped
# frame, the writer thread's, and the writers alone. Logs go to $OUT/traj_logs.tgz (no
# trajectory is kept: they are written under /tmp and removed); a table is printed last.
# Usage: OUT=/some/dir scripts/gpu_traj.sh
#   (NBSIM_TRAJ_BACKEND=cpu NBSIM_TRAJ_SIZES="2000 4000" try the script's plumbing without a GPU)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_traj_out}
B=${NBSIM_BUILD:-/tmp/nbsim-traj-build}
T=$(mktemp -d /tmp/nbsim-traj-XXXXXX)
logs=$OUT/traj_logs
mkdir -p "$logs"
trap 'rm -rf "$T"; tar -C "$OUT" -czf "$OUT/traj_logs.tgz" traj_logs 2>/dev/null' EXIT
step() { echo "=== $* ($(date +%T))"; }
status=0

step device
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$logs/device.txt"
nproc | sed 's/^/host cores: /' | tee -a "$logs/device.txt"
df -h /tmp | tail -1 | sed 's/^/tmp: /' | tee -a "$logs/device.txt"

step build
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNBSIM_WERROR=OFF &&
       cmake --build "$B" -j"$(nproc)" --target traj_demo test_dump_gpu test_traj test_dump; } \
       >"$logs/build.log" 2>&1; then
  tail -30 "$logs/build.log"
  exit 1
fi
grep -E "NetCDF trajectories" "$logs/build.log" | head -1
demo=$B/bin/traj_demo

step tests
for t in test_dump_gpu test_traj test_dump; do
  timeout 300 "$B/bin/$t" >"$logs/$t.log" 2>&1
  rc=$?
  echo "$t: exit $rc ($(tail -1 "$logs/$t.log"))"
  grep -E "capture of|FAILED|failed:" "$logs/$t.log" | head -5
  [ $rc -eq 0 ] || status=1
done
timeout 120 bash tests/test_traj_readers.sh "$demo" >"$logs/test_traj_readers.log" 2>&1
echo "test_traj_readers: exit $? ($(tail -1 "$logs/test_traj_readers.log"))"

# run NAME ARGS...: a traj_demo run on the CUDA backend, output kept in the logs.
run() {
  local name=$1; shift
  rm -f "$T"/run.*
  timeout 240 "$demo" --backend "$backend" --scene gas --no-state --out "$T" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  [ $rc -eq 0 ] || { echo "$name: exit $rc: $(tail -2 "$logs/$name.log")"; status=1; }
  rm -f "$T"/run.*
}
field() { # field FILE KEY: the number after KEY on the frame_ms line
  awk -v k="$2" '/^frame_ms/ { for (i = 1; i < NF; ++i) if ($i == k) print $(i + 1) }' "$1"
}

step "timings"
backend=${NBSIM_TRAJ_BACKEND:-cuda}
sizes=${NBSIM_TRAJ_SIZES:-100000 1000000}
formats="xyz lammpstrj nc"
for n in $sizes; do
  if [ $n -lt 500000 ]; then args=(--n $n --frames 41 --every 4); else args=(--n $n --frames 9 --every 2); fi
  run "base_$n" "${args[@]}" --formats none
  for f in $formats; do
    run "dump_${f}_$n" "${args[@]}" --formats "$f"
  done
  timeout 240 "$demo" --write-only --scene gas --n $n --frames 3 --out "$T" \
    >"$logs/write_only_$n.log" 2>&1 || status=1
  grep -h "^dump:" "$logs"/dump_*_"$n".log
done

step "table"
{
  printf "%-8s %-10s %10s %12s %14s %12s %10s %12s\n" N format frame_ms after_dump_ms \
    sim_thread_ms writer_ms MB/frame write_only_ms
  for n in $sizes; do
    base=$(field "$logs/base_$n.log" plain)
    printf "%-8s %-10s %10s %12s %14s %12s %10s %12s\n" $n none "$base" - - - - -
    for f in $formats; do
      log=$logs/dump_${f}_$n.log
      if grep -q "^skip:" "$log" 2>/dev/null; then
        printf "%-8s %-10s %s\n" $n $f "skipped: $(grep -m1 '^skip:' "$log")"
        continue
      fi
      writer=$(awk '/^writer_ms/ { print $3 }' "$log")
      mb=$(awk -v f="$f" '$1 == "write_only" && $2 == f { print $5 }' "$logs/write_only_$n.log")
      wo=$(awk -v f="$f" '$1 == "write_only" && $2 == f { print $4 }' "$logs/write_only_$n.log")
      printf "%-8s %-10s %10s %12s %14s %12s %10s %12s\n" $n $f "$(field "$log" plain)" \
        "$(field "$log" after_dump)" "$(field "$log" sim_thread_dump_ms)" "${writer:--}" \
        "${mb:--}" "${wo:--}"
    done
  done
  echo "frame_ms: frames that follow no dump; after_dump_ms: frames that follow one (the GPU runs"
  echo "the copies before their kernels); sim_thread_ms: the capture call per dumped frame;"
  echo "writer_ms: writer thread per frame (copy landing + format + write); write_only_ms: the"
  echo "writer alone on this host. Backend $backend, 1 step per frame, gas scene, pair map ltm,"
  echo "tile 64; all times in ms."
} | tee "$logs/table.txt"
exit $status
