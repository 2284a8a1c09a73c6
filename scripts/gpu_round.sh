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
      # One GPU to its memory (issue 39). The plans at 200M; then a periodic touching lattice
      # (N = m^3 fills its box exactly, so with every axis periodic and no gravity each body sees
      # the same neighbourhood at any N) at 2.1M, 16.8M, 64M and the plan's largest cube, with and
      # without friction: contacts and energies per body must match the 2.1M run's (0.5 %);
      # then the gas at 100M for its particle-steps per second. 100 steps each.
      step scale
      OUT=$OUT/scale NBSIM_BIN=$PWD/build-gpu/bin/nbsim scripts/gpu_scale.sh || status=1
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
