#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a machine with 2 (or 4) GPUs, once, in about 5 minutes: build with NCCL (found under
# PyTorch's site-packages when the system has none), the multi-GPU tests (2 and 4 GPUs against
# one, ranks bit-identical, two processes against one process with two GPUs), the same through
# the command line (--rank/--world/--nccl-id, and mpirun with the id through MPI, against
# --gpus 2; with four GPUs, 4 processes x 1 GPU and 2 x 2 against --gpus 4), the NCCL
# collectives a step could use timed against each other (tests/nccl_collectives.c), then the
# scaling runs: ATM all triples N = 16,384; brute-force pairs N = 1,048,576 (--cull off); culled
# gas N = 4,194,304; on 1 and 2 GPUs (and 4 where there are four; then 2 processes x 2 GPUs
# against 1 x 4 on the same three), then one frame of ATM N = 32,768 on all of them; a table
# printed last. --budget 0 runs the tests and the command lines only.
# Exits 0 with a message when fewer than two GPUs are visible. NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0). Every run has a time limit: a rank waiting for a collective that another
# rank never joins would otherwise hang until the machine is taken back. The limit's SIGTERM is
# only a stop request to nbsim (it ends runs cleanly between frames), so -k 10 kills after it.
# Everything lands in $OUT (default ./gpu_multi_out):
#   summary.txt               the table printed last
#   scaling_*.csv, *.png      nbsim bench --gpus (also copied to bench/results/<gpu>/)
#   logs.tgz                  every log
# Usage: scripts/gpu_multi.sh [--budget SECONDS]
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" multi 300 "$@"
export NCCL_NVLS_ENABLE=0
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [ "${gpus:-0}" -lt 2 ]; then
  echo "gpu_multi.sh: ${gpus:-0} GPU(s) visible; the multi-GPU runs need two or more: skipped"
  exit 0
fi

step "device ($gpus GPUs)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$logs/device.txt"
nvidia-smi topo -m >"$logs/topo.txt" 2>&1 || true

step build
nccl_root=${NCCL_ROOT:-$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])" 2>/dev/null)}
echo "NCCL_ROOT=${nccl_root:-<system>}" | tee "$logs/nccl.txt"
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNBSIM_WERROR=OFF -DNBSIM_VIEWER=OFF -DNBSIM_NCCL=ON ${nccl_root:+-DNCCL_ROOT="$nccl_root"} &&
       cmake --build "$B" -j"$(nproc)" --target nbsim test_multi_gpu test_multi_cpu \
         test_work_split nccl_collectives; } >"$logs/build.log" 2>&1; then
  tail -30 "$logs/build.log"; tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1
fi
nbsim=$B/bin/nbsim

step "tests: 2 (and 4) GPUs against one, two processes against one with two GPUs"
if ! timeout -k 10 240 "$B/bin/test_multi_gpu" >"$logs/test_multi_gpu.log" 2>&1; then
  status=1; echo "FAILED: test_multi_gpu"
fi
tail -40 "$logs/test_multi_gpu.log"
"$B/bin/test_multi_cpu" >"$logs/test_multi_cpu.log" 2>&1 || { status=1; echo "FAILED: test_multi_cpu"; }
"$B/bin/test_work_split" >"$logs/test_work_split.log" 2>&1 || { status=1; echo "FAILED: test_work_split"; }

# Two saved states against each other: positions and forces after the same frames (float sums in
# another order only). Usage: same_states LABEL A B
same_states() { python3 "$root/tests/compare_states.py" "$@" --max-dx 1e-4 --max-df 1e-3; }

# Processes started by hand (--rank/--world/--nccl-id, a fresh id file per run), rank 0 saving
# its state unless STATE is "" (a big run's text state would outweigh every log). Usage:
# by_hand PROCESSES LABEL STATE nbsim-arguments...; sets hand: 0 when every process exited 0 and
# the id file is gone, else the first failing exit (or 1).
by_hand() {
  local procs=$1 label=$2 state=$3; shift 3
  local k pids=() id=$cli/id_$label
  for ((k = procs - 1; k >= 1; k--)); do
    timeout -k 10 180 "$nbsim" "$@" --rank $k --world "$procs" --nccl-id "$id" >"$logs/${label}_rank$k.log" 2>&1 &
    pids+=($!)
  done
  timeout -k 10 180 "$nbsim" "$@" --rank 0 --world "$procs" --nccl-id "$id" ${state:+--save-state "$state"} \
    >"$logs/${label}_rank0.log" 2>&1
  hand=$?
  for k in "${pids[@]}"; do wait "$k" || { [ $hand -ne 0 ] || hand=1; }; done
  if [ $hand -ne 0 ] || [ -e "$id" ]; then
    [ $hand -ne 0 ] || hand=1
    echo "FAILED: $procs processes ($label: exit $hand, id file left: $([ -e "$id" ] && echo yes || echo no))"
    tail -3 "$logs/${label}"_rank*.log
  fi
}

step "command line: two processes (--rank/--world/--nccl-id) against --gpus 2"
cli=$OUT/cli
rm -rf "$cli"; mkdir -p "$cli"
run=(--frames 2 --n 20000 --scene pile --pair-map ltm --quiet)
by_hand 2 two_procs "$cli/two_procs.txt" "${run[@]}"
timeout -k 10 90 "$nbsim" "${run[@]}" --gpus 2 --save-state "$cli/one_proc.txt" >"$logs/gpus2.log" 2>&1
g2=$?
if [ $hand -ne 0 ] || [ $g2 -ne 0 ]; then
  status=1; echo "FAILED: two processes (exit $hand) or --gpus 2 (exit $g2)"; tail -3 "$logs/gpus2.log"
else
  same_states "two processes vs one process with two GPUs" "$cli/two_procs.txt" "$cli/one_proc.txt" 2>&1 |
    tee "$logs/cli_compare.txt" || status=1
fi

# Under mpirun (the id through MPI): NP processes of G GPUs each, rank 0's state against the one
# process's REF (whose run exited REF_EXIT). Usage: under_mpirun NP G REF REF_EXIT WHAT
have_mpi=0
command -v mpirun >/dev/null && "$nbsim" --version | grep -q "MPI (NCCL id under mpirun) yes" &&
  have_mpi=1
under_mpirun() {
  local np=$1 g=$2 ref=$3 ref_exit=$4 what=$5 name=mpirun_${1}x$2
  # the machine runs as root; mpirun forwards NCCL_NVLS_ENABLE with the environment
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 120 \
    mpirun -np "$np" --bind-to none "$nbsim" "${run[@]}" --gpus "$g" --save-state "$cli/$name.txt" \
    >"$logs/$name.log" 2>&1
  local m=$?
  if [ $m -ne 0 ] || [ "$ref_exit" -ne 0 ]; then
    status=1; echo "FAILED: mpirun -np $np --gpus $g (exit $m)"; tail -5 "$logs/$name.log"
  else
    same_states "mpirun -np $np x $g GPUs vs $what" "$cli/$name.txt" "$ref" 2>&1 |
      tee -a "$logs/cli_compare.txt" || status=1
  fi
}

step "mpirun: two processes, the NCCL id through MPI, against --gpus 2"
if [ $have_mpi = 1 ]; then
  under_mpirun 2 1 "$cli/one_proc.txt" $g2 "one process with two GPUs"
else
  echo "skipped: no mpirun, or this build has no MPI ($("$nbsim" --version | tail -1))"
fi

# With four GPUs: four processes of one GPU each (--rank alone), and two
# processes of two GPUs each (--gpus 2 --rank), by hand and under mpirun, against one process
# with four: the same bits.
if [ "$gpus" -ge 4 ]; then
  step "four GPUs: processes of one and of two GPUs against one process with four"
  timeout -k 10 90 "$nbsim" "${run[@]}" --gpus 4 --save-state "$cli/one_proc4.txt" >"$logs/gpus4.log" 2>&1
  g4=$?
  [ $g4 -eq 0 ] || { status=1; echo "FAILED: --gpus 4 (exit $g4)"; tail -3 "$logs/gpus4.log"; }
  by_hand 2 two_by_two "$cli/two_by_two.txt" "${run[@]}" --gpus 2
  if [ $hand -ne 0 ] || [ $g4 -ne 0 ]; then status=1; else
    same_states "2 processes x 2 GPUs vs one process with four GPUs" "$cli/two_by_two.txt" \
      "$cli/one_proc4.txt" 2>&1 | tee -a "$logs/cli_compare.txt" || status=1
  fi
  if [ $have_mpi = 1 ]; then
    under_mpirun 4 1 "$cli/one_proc4.txt" $g4 "one process with four GPUs"
    under_mpirun 2 2 "$cli/one_proc4.txt" $g4 "one process with four GPUs"
  fi
fi

step "command line: SIGTERM to rank 1 alone stops both processes after the same frame"
long=(--frames 100000 --n 20000 --scene pile --pair-map ltm --quiet)
timeout -k 10 60 "$nbsim" "${long[@]}" --rank 1 --world 2 --nccl-id "$cli/id2" >"$logs/stop1.log" 2>&1 &
s1=$!
timeout -k 10 60 "$nbsim" "${long[@]}" --rank 0 --world 2 --nccl-id "$cli/id2" --log "$cli/stop.csv" \
  >"$logs/stop0.log" 2>&1 &
s0=$!
sleep 8
kill -TERM $s1 2>/dev/null
wait $s0; s0=$?
wait $s1; s1=$?
rows=$(($(grep -vc '^#' "$cli/stop.csv" 2>/dev/null || echo 1) - 1))
f0=$(grep -o 'after [0-9]* frame' "$logs/stop0.log" | tr -dc 0-9)
f1=$(grep -o 'after [0-9]* frame' "$logs/stop1.log" | tr -dc 0-9)
echo "rank 0 exit $s0 after ${f0:-?} frames (log: $rows rows), rank 1 exit $s1 after ${f1:-?} frames"
if [ $s0 -ne 143 ] || [ $s1 -ne 143 ] || [ "$rows" -lt 1 ] || [ "${f0:-x}" != "${f1:-y}" ]; then
  status=1; echo "FAILED: a signal to one process (expected both to exit 143)"
  tail -3 "$logs/stop0.log" "$logs/stop1.log"
fi

table=$OUT/summary.txt
: >"$table"
step "the collectives: all-reduce of the forces against reduce-scatter + all-gather of the state"
"$B/bin/nccl_collectives" "$gpus" 1048576 4194304 2>&1 | tee "$logs/nccl_collectives.txt" | tee -a "$table"
[ "${PIPESTATUS[0]}" -eq 0 ] || { status=1; echo "FAILED: nccl_collectives"; }
bench() { # name, then nbsim bench arguments
  local name=$1; shift
  if ! left; then skip "$name"; return; fi
  step "scaling: $name"
  if ! timeout -k 10 240 "$nbsim" bench "$@" --warmup 1 --no-plot --out "$OUT/bench_$name" >"$logs/bench_$name.log" 2>&1; then
    status=1; echo "FAILED: nbsim bench $*"; tail -5 "$logs/bench_$name.log"
  fi
  grep -A30 '^== ' "$logs/bench_$name.log" | grep -v '^$' | tee -a "$table"
}
# The ATM cut-off culled (each GPU lists and sweeps its rows' tile triples): headless runs, the
# summaries' per-phase medians on 1 GPU and on all of them (a few seconds: not budgeted).
step "ATM cut-off 3 culled, scene triplets, N = 262,144: 1 GPU against $gpus"
for g in 1 "$gpus"; do
  timeout -k 10 120 "$nbsim" --frames 30 --n 262144 --scene triplets --triplets on --atm-cutoff 3 \
    --energy-every 0 --gpus "$g" --summary "$OUT/tcut_g$g.json" >"$logs/tcut_g$g.log" 2>&1 ||
    { status=1; echo "FAILED: ATM cut-off on $g GPU(s)"; tail -3 "$logs/tcut_g$g.log"; }
done
python3 - "$OUT/tcut_g1.json" "$OUT/tcut_g$gpus.json" <<'PY' 2>&1 | tee -a "$table"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(f"ATM cut-off 3 culled, N = {a['n']:,}: median ms per step on 1 GPU / {b['gpus']} GPUs")
for k in ("triplet_cull", "triplet", "contact", "comm", "step"):
  x, y = a["ms_per_step"][k]["median"], b["ms_per_step"][k]["median"]
  print(f"  {k:13s} {x:9.3f} {y:9.3f}" + (f"   speed-up {x / y:.2f}x" if y > 0 and k != "comm" else ""))
PY
list=1,2
[ "$gpus" -ge 4 ] && list=1,2,4
bench atm16k triplets --gpus $list --n 16384 --maps bb,tetra,rm --repeats 3
bench pairs1m pairs --gpus $list --n 1048576 --cull off --maps bb,ltm,rm,rec --tile 128 --repeats 5
bench culled4m pairs --gpus $list --n 4194304 --cull on --maps ltm --tile 128 --repeats 5 --steps 10
# Two processes of two GPUs against one process of four, the same headless runs: the summaries'
# median step and all-reduce, rank 0's (a step waits for every rank at the all-reduce).
procs_row() { # label, then nbsim arguments
  local label=$1; shift
  if ! left; then skip "2 x 2 against 1 x 4: $label"; return; fi
  timeout -k 10 180 "$nbsim" "$@" --gpus 4 --energy-every 0 --quiet --summary "$cli/$label.1x4.json" \
    >"$logs/$label.1x4.log" 2>&1 || { status=1; echo "FAILED: $label on --gpus 4"; return; }
  by_hand 2 "$label.2x2" "" "$@" --gpus 2 --energy-every 0 --quiet \
    --summary "$cli/$label.2x2.json"
  [ $hand -eq 0 ] || { status=1; return; }
  python3 - "$label" "$cli/$label.1x4.json" "$cli/$label.2x2.json" <<'PY' | tee -a "$table"
import json, sys
label, a, b = sys.argv[1], *(json.load(open(p)) for p in sys.argv[2:4])
m = lambda j, k: j["ms_per_step"][k]["median"]
print(f"  {label:22s} {m(a, 'step'):10.4f} {m(b, 'step'):10.4f} {m(b, 'step') / m(a, 'step'):7.3f}"
      f" {m(a, 'comm'):9.4f} {m(b, 'comm'):9.4f}   ({a['device']} | {b['device']})")
PY
}
if [ "$gpus" -ge 4 ]; then
  step "2 processes x 2 GPUs against 1 process x 4 GPUs"
  echo "2 processes x 2 GPUs against 1 x 4 (headless, median ms per step; comm: the all-reduce)" | tee -a "$table"
  echo "  workload                1x4 step   2x2 step   ratio  1x4 comm  2x2 comm" | tee -a "$table"
  procs_row atm16k_tetra --frames 4 --n 16384 --scene gas --triplets on --triplet-map tetra
  procs_row pairs1m_ltm --frames 6 --n 1048576 --scene gas --cull off --pair-map ltm --tile 128
  procs_row culled4m --frames 30 --n 4194304 --scene gas --pair-map ltm --tile 128
fi
if left; then
  step "ATM all triples N = 32,768 on $gpus GPUs (one frame, no energies)"
  timeout -k 10 180 "$nbsim" --frames 1 --n 32768 --scene gas --triplets on --triplet-map tetra \
    --gpus "$gpus" --energy-every 0 --summary "$OUT/atm32k.json" >"$logs/atm32k.log" 2>&1 ||
    { status=1; echo "FAILED: N = 32768"; }
  { echo "ATM all triples N = 32,768 on $gpus GPUs, one frame:"; cat "$OUT/atm32k.json"; } | tee -a "$table"
else
  skip "ATM N = 32,768"
fi

# The scaling tables into the repository's results, beside the single-GPU ones.
slug=$(head -2 "$logs/device.txt" | tail -1 | cut -d, -f1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/-/g; s/^-//; s/-$//')
dest=$root/bench/results/${slug:-unknown}
mkdir -p "$dest"
for suite in triplets pairs; do
  out=$OUT/scaling_$suite.csv; rm -f "$out"
  for f in "$OUT"/bench_*/scaling_"$suite".csv; do
    [ -f "$f" ] || continue
    if [ -f "$out" ]; then tail -n +2 "$f" >>"$out"; else cp "$f" "$out"; fi
  done
  [ -f "$out" ] && cp "$out" "$dest/"
done
cp "$OUT"/bench_atm16k/meta.txt "$dest/meta_scaling.txt" 2>/dev/null || true
python3 "$root/bench/plot.py" "$OUT" >/dev/null 2>&1 && cp "$OUT"/scaling_*.png "$dest/" 2>/dev/null

step "summary ($gpus x $(head -2 "$logs/device.txt" | tail -1 | cut -d, -f1))"
cat "$table"
echo "results: $OUT (scaling CSVs and plots also in $dest)"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs
exit $status
