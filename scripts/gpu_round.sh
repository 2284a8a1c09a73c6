#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One GPU machine, one round of checks after a change (run from the repository root): `build`
# builds this tree's program and GPU tests (build-gpu/, kept between calls on a warm machine),
# `old` the program of a base tree from .old/base.tar.gz (build-old/), `suite` runs the GPU suite
# (ctest -L gpu; nccl_collectives, a two-GPU test, is not built), `phases` scripts/gpu_phases.sh with this build. OUT: logs/*.log, device.txt.
# `scale` runs past the pair maps' limit up to what the memory plan allows (issue 39).
# Usage: scripts/gpu_round.sh [build|old|suite|phases|scale]...   (default: build suite)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_round_out}
mkdir -p "$OUT/logs"
logs=$OUT/logs
status=0
t0=$(date +%s)
step() { echo "=== $* ($(( $(date +%s) - t0 )) s)"; }
what=("$@")
[ ${#what[@]} -gt 0 ] || what=(build suite)
for w in "${what[@]}"; do
  case $w in
    build)
      step build
      nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$logs/device.txt"
      cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DNBSIM_PYTHON=OFF >"$logs/configure.log" 2>&1 &&
        cmake --build build-gpu -j"$(nproc)" --target nbsim $(sed -n \
          's/^nbsim_add_test(\([a-z0-9_]*\) gpu .*/\1/p' tests/CMakeLists.txt) \
          >"$logs/build.log" 2>&1 || { status=1; tail -30 "$logs/build.log"; }
      [ -x build-gpu/bin/nbsim ] && echo "built: build-gpu/bin/nbsim" || status=1
      ;;
    old)
      step old
      (mkdir -p build-old && cd build-old && tar xzf ../.old/base.tar.gz &&
       cmake -S . -B b -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNBSIM_VIEWER=OFF -DNBSIM_PYTHON=OFF >/dev/null &&
       cmake --build b -j"$(nproc)" --target nbsim) >"$logs/build_old.log" 2>&1 || status=1
      [ -x build-old/b/bin/nbsim ] && echo "built: build-old/b/bin/nbsim" || tail -20 "$logs/build_old.log"
      ;;
    scale)
      # One GPU to its memory (issue 39): the plan at 200M, then runs past the pair maps' 8.4M
      # bodies and at the most the plan says fit, 100 steps each, with their logs and summaries.
      step scale
      nb=$PWD/build-gpu/bin/nbsim
      "$nb" --dry-run --n 200000000 >"$logs/dry_run_gas_200m.txt" 2>&1
      "$nb" --dry-run --scene pile --n 200000000 >"$logs/dry_run_pile_200m.txt" 2>&1
      cat "$logs/dry_run_gas_200m.txt"
      most=$(sed -n 's/.*at most \([0-9]*\) bodies fit.*/\1/p' "$logs/dry_run_gas_200m.txt")
      big=200000000
      [ -n "$most" ] && [ "$most" -lt "$big" ] && big=$most
      for run in "gas 16777216" "pile 16777216" "gas 67108864" "pile 67108864" \
                 "gas ${NBSIM_SCALE_GAS:-$big}" "pile ${NBSIM_SCALE_PILE:-$big}"; do
        set -- $run
        name=$1_$2
        start=$(date +%s.%N)
        "$nb" --scene "$1" --n "$2" --frames 10 --steps-per-frame 10 --energy-every 1 \
          --log "$logs/scale_$name.csv" --summary "$logs/scale_$name.json" --quiet \
          >"$logs/scale_$name.out" 2>&1
        rc=$?
        echo "$name: exit $rc, $(echo "$(date +%s.%N) - $start" | bc) s; $(tail -2 "$logs/scale_$name.out" | tr '\n' ' ')"
        [ $rc -eq 0 ] || status=1
      done
      echo "largest gas by the plan: $most"
      ;;
    phases)
      step phases
      OUT=$OUT/phases NBSIM_BIN=$PWD/build-gpu/bin/nbsim scripts/gpu_phases.sh || status=1
      ;;
    suite)
      step suite
      (cd build-gpu && ctest -L gpu -E nccl_collectives --timeout 300 -j3 --output-on-failure) >"$logs/ctest_gpu.log" 2>&1 || status=1
      grep -E "Test +#|tests passed|FAILED" "$logs/ctest_gpu.log"
      ;;
    *) echo "unknown step $w"; exit 2 ;;
  esac
done
step "done, status $status"
exit $status
