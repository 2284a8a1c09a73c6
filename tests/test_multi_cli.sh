#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The multi-GPU flags of nbsim without a GPU: one-line refusals (exit 2), the CPU reference split
# over threads with --gpus (the log's gpus column, the summary's gpus field), rank and world from
# a launcher's variables, the wait for rank 0's NCCL id.
nbsim=$1
. "$(dirname "$0")/cli_lib.sh"
export -n OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS \
  SLURM_STEP_NUM_TASKS 2>/dev/null
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS \
  SLURM_STEP_NUM_TASKS

expect_error 2 --gpus 2                               # the viewer runs on one GPU
expect_error 2 --gpus 0 --frames 1
expect_error 2 --gpus many --frames 1
expect_error 2 --world 2 --frames 1                   # no rank
grep -q "^nbsim: --world: give --rank R too" err.txt && ok || fail "--world alone: $(cat err.txt)"
expect_error 2 --rank 1 --frames 1                    # no world: the flag given is named
grep -q "^nbsim: --rank: give --world W too" err.txt && ok || fail "--rank alone: $(cat err.txt)"
expect_error 2 --rank 2 --world 2 --frames 1 --nccl-id id
expect_error 2 --rank 0 --world 2 --frames 1          # no id file
expect_error 2 --rank 0 --world 2 --frames 1 --nccl-id id --backend cpu
expect_error 2 --gpus all --world 2 --rank 0 --frames 1 --nccl-id id   # each process names its GPUs
grep -q "^nbsim: --gpus all: a run over processes names the GPUs of each process" err.txt && ok \
  || fail "--gpus all over processes: $(cat err.txt)"
expect_error 2 --gpus 64 --world 1000 --rank 0 --frames 1 --nccl-id id
grep -q "^nbsim: --gpus 64: 1000 processes of 64 GPUs each are more than 1024 ranks" err.txt && ok \
  || fail "too many ranks: $(cat err.txt)"
expect_error 2 --gpus 2 --frames 1 --pair-map auto
expect_error 2 --nccl-id id --frames 1                # rank and world from nowhere
SLURM_PROCID=5 SLURM_NTASKS=2 expect_error 2 --nccl-id id --frames 1
# GPUs asked for on a machine without one: refused, not run on CPU threads behind the user's back
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  expect_error 1 --gpus 2 --frames 1 --n 64
  grep -q -- "--gpus 2: no CUDA device found" err.txt && ok || fail "--gpus 2 without a GPU: $(cat err.txt)"
fi
# Ranks of a run over processes on a machine without a GPU (the default backend would be the CPU
# reference, which cannot span processes): refused in one line before any wait for the others or
# for the id (rank 0 waited --nccl-id-wait, 120 s by default, rank 1 as long and blamed the path).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
  for r in 0 1 "1 --gpus 2"; do # (a process of two GPUs the same)
    start=$(date +%s)
    expect_error 1 --rank $r --world 2 --nccl-id id --nccl-id-wait 20 --frames 1 --n 64
    [ $(($(date +%s) - start)) -lt 10 ] && grep -q "run over 2 processes needs a CUDA device in each, and none was found" err.txt \
      && [ ! -e id ] && [ -z "$(ls -A | grep '^id\.')" ] && ok || fail "rank $r without a GPU: $(cat err.txt)"
  done
fi
# Under mpirun, without --nccl-id, in a build with NCCL and MPI: one run over two processes (the
# id through MPI), which on a machine without a GPU each rank refuses in one line, rather than
# two single-GPU runs side by side.
if command -v mpiexec >/dev/null && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU ' &&
   "$nbsim" --version | grep -q "NCCL (several GPUs) yes; MPI (NCCL id under mpirun) yes"; then
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
    timeout 60 mpiexec -n 2 "$nbsim" --frames 1 --n 64 --quiet >out.txt 2>err.txt
  code=$?
  [ $code -ne 0 ] && [ $code -ne 124 ] && grep -q "needs a CUDA device in each" err.txt && ok \
    || fail "mpiexec -n 2 without a GPU: exit $code: $(head -3 err.txt)"
fi
expect_error 2 --rank 0 --world 2 --frames 1
if "$nbsim" --version | grep -q "MPI (NCCL id under mpirun) yes"; then
  grep -q "needs --nccl-id FILE, a new file on a path every rank sees, or mpirun" err.txt && ok \
    || fail "no id, MPI build: $(cat err.txt)"
fi
# rank 1 of 2 from Slurm's variables waits for rank 0's id, then says what to check
if "$nbsim" --help | grep -q -- "--nccl-id"; then ok; else fail "--help lacks --nccl-id"; fi
SLURM_PROCID=1 SLURM_NTASKS=2 expect_error 1 --nccl-id id --nccl-id-wait 1 --frames 1 --n 64 \
  --backend cuda
grep -q "NCCL id\|CUDA device\|NCCL" err.txt && ok || fail "rank 1: $(cat err.txt)"

# the CPU reference split over 3 threads: same run, log and summary name the ranks
if "$nbsim" --backend cpu --gpus 3 --threads 1 --frames 3 --n 400 --scene pile --quiet \
     --log log.csv --summary sum.json --save-state three.txt >out.txt 2>err.txt &&
   "$nbsim" --backend cpu --threads 1 --frames 3 --n 400 --scene pile --quiet \
     --save-state one.txt >/dev/null 2>&1; then
  ok
else
  fail "--backend cpu --gpus 3: $(head -c 300 err.txt)"
fi
col=$(head -1 log.csv | tr ',' '\n' | grep -n '^gpus$' | cut -d: -f1)
[ -n "$col" ] && [ "$(tail -1 log.csv | cut -d, -f"$col")" = 3 ] && ok || fail "log gpus column"
grep -q '"gpus": 3' sum.json && ok || fail "summary gpus"
grep -q 'comm ' out.txt && ok || fail "summary table lacks comm: $(cat out.txt)"
# the final states agree (forces and positions to the printed digits, up to summation order)
python3 "$(dirname "$0")/compare_states.py" "3 ranks vs 1" three.txt one.txt --max-any 1e-9 >cmp.txt \
  && ok || fail "3 ranks and 1 differ: $(cat cmp.txt)"
finish
