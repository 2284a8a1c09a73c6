#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `nbsim bench` as a user meets it without a GPU: --help, bad options (one line, exit 2, nothing
# written), no device (the one line, exit 1); and bench/plot.py on small made-up results when a
# python3 with matplotlib is present.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

"$nbsim" bench --help >help.txt 2>&1 && grep -q -- "--quick" help.txt && grep -q "I = t_BB" help.txt \
  && grep -q "^2-D maps: bb" help.txt && ok || fail "bench --help"

expect_error 2 bench --bogus
expect_error 2 bench frobnicate
expect_error 2 bench maps --n abc
expect_error 2 bench maps --n 1
expect_error 2 bench maps --n 1024,,2048
expect_error 2 bench maps --tile 48
expect_error 2 bench maps --repeats 0
expect_error 2 bench --maps nope
expect_error 2 bench --kernels fft
expect_error 2 bench --dim 4
expect_error 2 bench --n
expect_error 2 bench --quick=yes
"$nbsim" bench --maps nope 2>&1 | grep -q "nope" && ok || fail "bad map not named"
[ -z "$(ls -A "$work" | grep -v -e out.txt -e err.txt -e help.txt)" ] && ok \
  || fail "bad options left files: $(ls -A "$work")"

# Without a GPU: the one line, exit 1, and no result folder.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi >/dev/null 2>&1; then
  for args in "bench" "bench maps --quick" "bench pairs" "bench triplets --n 256"; do
    # shellcheck disable=SC2086
    expect_error 1 $args
    grep -qx "nbsim bench: no CUDA device found; benchmarks need a GPU" err.txt && ok \
      || fail "nbsim $args: wrong message: $(cat err.txt)"
  done
  [ ! -e bench ] && ok || fail "bench without a GPU created bench/"
fi

# The plot script on made-up results, when matplotlib is there (Debian python3-matplotlib).
py=""
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import matplotlib" >/dev/null 2>&1; then
    py=$cand; break
  fi
done
if [ -n "$py" ]; then
  mkdir res
  {
    echo "gpu,dim,kernel,features,map,paper_float,eval,rho,threads,N,tiles,launches,blocks,wasted_blocks,inner,repeats,median_ms,min_ms,max_ms,I,interactions,interactions_per_s,check"
    for e in thread block; do
      for k in map accum edm1; do for m in bb ltm ltm-rsqrt; do for n in 1024 2048; do
        echo "Test GPU,2,$k,1,$m,$([ $m = ltm-rsqrt ] && echo 1 || echo 0),$e,16,256,$n,$((n/16)),1,100,10,1,10,0.5,0.4,0.6,1.2,523776,1e9,ok"
      done; done; done
      for m in bb tetra; do for n in 64 128; do
        echo "Test GPU,3,accum,0,$m,0,$e,4,64,$n,$((n/4)),1,100,10,1,10,0.5,0.4,0.6,1.9,41664,1e8,FAIL:3"
      done; done
    done
  } >res/maps.csv
  {
    echo "gpu,kernel,map,paper_float,tile,N,tiles,blocks,wasted_blocks,repeats,median_ms,min_ms,max_ms,I,interactions,interactions_per_s,flops_per_interaction,gflops,ceiling_fraction"
    for m in bb ltm full; do for n in 1024 2048; do
      echo "Test GPU,pairs,$m,0,64,$n,$((n/64)),10,1,10,0.1,0.09,0.2,1.1,523776,5e9,10,50,0.01"
    done; done
  } >res/pairs.csv
  if "$py" "$here/../bench/plot.py" res >plot.txt 2>&1 && ls res/*.png >/dev/null 2>&1 \
      && [ -s res/maps_I_2d_accum.png ] && [ -s res/pairs_throughput.png ]; then
    ok
  else
    fail "bench/plot.py: $(tail -5 plot.txt) $(ls res)"
  fi
  # Missing or empty result files are fine (a run of one suite); garbage is reported, not a crash.
  mkdir empty && "$py" "$here/../bench/plot.py" empty >/dev/null 2>&1 && ok || fail "plot.py on empty dir"
fi

finish
