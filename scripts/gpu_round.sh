#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One GPU machine, one round of checks after a change (run from the repository root): `build`
# builds this tree's program and GPU tests (build-gpu/, kept between calls on a warm machine),
# `old` the program of a base tree from .old/base.tar.gz (build-old/), `suite` runs the GPU suite
# (ctest -L gpu; nccl_collectives, a two-GPU test, is not built), `phases` scripts/gpu_phases.sh with this build. OUT: logs/*.log, device.txt.
# `scale` runs past the pair maps' limit up to what the memory plan allows (issue 39).
# `bits` and `compare`: this tree against the base's program, for bits and for step times.
# `vtk` writes test_vtk_gpu's series (GPU, friction) for tests/vtk_check.py --check-only.
# Usage: scripts/gpu_round.sh [build|old|suite|phases|scale|bits|compare|vtk]...   (default: build suite)
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
      # a base packed without bench/, assets/ and docs/ (to fit a call's carry) takes this
      # tree's: the build configures from them, the program does not depend on them
      (mkdir -p build-old && cd build-old && tar xzf ../.old/base.tar.gz &&
       { [ -d docs ] || cp -r ../docs .; } && { [ -d assets ] || cp -r ../assets .; } &&
       { [ -e bench/plot.py ] || { mkdir -p bench && cp ../bench/plot.py bench/; }; } &&
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
    bits)
      # A change that must not change bits (issue 38's moves): this tree's program against the
      # base tree's (old) on workloads that cross every path the moves touched, each saved at the
      # end. A program run twice first: where the base itself is not bit for bit repeatable (float
      # atomics summed in another order) the new one is held to the base's own spread instead.
      step bits
      bits_out=$OUT/bits
      mkdir -p "$bits_out"
      while IFS='|' read -r name args; do
        [ -n "$name" ] || continue
        for who in old old2 new; do
          prog=build-gpu/bin/nbsim
          [ "$who" = new ] || prog=build-old/b/bin/nbsim
          # shellcheck disable=SC2086
          "$prog" $args --quiet --save-state "$bits_out/$name.$who.txt" >"$bits_out/$name.$who.out" 2>&1 ||
            { echo "$name $who failed: $(tail -2 "$bits_out/$name.$who.out")"; status=1; }
        done
        # the bodies' rows, every number equal (a save's parameter lines may gain new keys)
        same() { python3 tests/compare_states.py "$name $1" "$bits_out/$name.$2.txt" \
                   "$bits_out/$name.$3.txt" --max-dx 0 --max-any 0 >/dev/null 2>&1; }
        if same "base vs new" old new; then
          echo "$name: bit for bit"
        elif same "base twice" old old2; then
          echo "$name: DIFFERS (the base repeats itself bit for bit)"; status=1
          python3 tests/compare_states.py "$name base vs new" "$bits_out/$name.old.txt" "$bits_out/$name.new.txt"
        else
          python3 tests/compare_states.py "$name base twice" "$bits_out/$name.old.txt" "$bits_out/$name.old2.txt"
          python3 tests/compare_states.py "$name base vs new" "$bits_out/$name.old.txt" "$bits_out/$name.new.txt"
        fi
      done <<'W'
gas_262k|--scene gas --n 262144 --frames 20 --steps-per-frame 10
pile_262k|--scene pile --n 262144 --frames 20 --steps-per-frame 10
lattice_cells_262k|--scene lattice --n 262144 --frames 20 --steps-per-frame 10
lattice_friction_262k|--scene lattice --n 262144 --friction 0.5 --rolling-friction 0.1 --frames 20 --steps-per-frame 10
heap_20k|--scene heap --n 20000 --frames 20 --steps-per-frame 20
pile_friction_tiles|--scene pile --n 65536 --friction 0.5 --skin 0 --frames 10 --steps-per-frame 10
periodic_friction|--scene gas --n 65536 --periodic xyz --friction 0.3 --frames 10 --steps-per-frame 10
atm_cutoff|--scene triplets --n 4096 --triplets on --atm-cutoff 3 --frames 5 --steps-per-frame 5
brute_ltm|--scene collide --n 16384 --cull off --pair-map ltm --frames 5 --steps-per-frame 5
W
      ;;
    compare)
      # Step times of this tree against the base tree's, interleaved in one run (gpu_compare.sh).
      step compare
      NBSIM_COMPARE_WORKLOADS=$(cat <<'W'
culled_gas_1m|--scene gas --n 1048576 --triplets off --frames 320 --energy-every 0
culled_pile_262k|--scene pile --n 262144 --triplets off --frames 320 --energy-every 0
lattice_262k|--scene lattice --n 262144 --dt 0.5 --frames 320 --energy-every 0
lattice_friction_262k|--scene lattice --n 262144 --dt 0.5 --friction 0.5 --rolling-friction 0.1 --frames 320 --energy-every 0
pack_friction_1m|--scene pile --n 1048576 --friction 0.5 --frames 320 --energy-every 0
atm_cutoff_32k|--scene triplets --n 32768 --triplets on --atm-cutoff 3 --frames 40 --energy-every 0
brute_pairs_262k|--scene gas --n 262144 --cull off --pair-map ltm --tile 128 --triplets off --frames 25 --energy-every 0
W
)
      export NBSIM_COMPARE_WORKLOADS
      scripts/gpu_compare.sh build-old/b/bin/nbsim build-gpu/bin/nbsim "$OUT/compare" "${NBSIM_COMPARE_REPEATS:-3}" || status=1
      ;;
    vtk)
      step vtk
      python3 tests/vtk_check.py build-gpu/bin/nbsim "$OUT/vtk" --backend cuda --write-only ||
        status=1
      ;;
    phases)
      step phases
      OUT=$OUT/phases NBSIM_BIN=$PWD/build-gpu/bin/nbsim scripts/gpu_phases.sh || status=1
      ;;
    suite)
      step suite
      # test_vtk_gpu needs VTK's Python reader, which the device machine lacks: its series are
      # written there by `vtk` below and checked where VTK is (tests/vtk_check.py --check-only)
      (cd build-gpu && ctest -L gpu -E 'nccl_collectives|test_vtk_gpu' --timeout 300 -j3 --output-on-failure) >"$logs/ctest_gpu.log" 2>&1 || status=1
      grep -E "Test +#|tests passed|FAILED" "$logs/ctest_gpu.log"
      ;;
    *) echo "unknown step $w"; exit 2 ;;
  esac
done
step "done, status $status"
exit $status
