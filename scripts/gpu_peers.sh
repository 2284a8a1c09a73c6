#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nbsim against its peers on one GPU, in one run: NVIDIA's cuda-samples `particles` (uniform grid,
# contacts) against nbsim's `lattice` scene (the sample's benchmark configuration scaled x32,
# culled contacts), and `nbody` (all N^2 gravity, brute force) against nbsim's unculled sweep
# (`full`, every ordered pair as nbody does, and the symmetric maps, every unordered pair once),
# at N = 16,384, 65,536 and 262,144 (the particles sample's 64^3 grid holds 262,144 at most).
# Whole step against whole step: the mean per step over >= 300 steps, re-sorts included.
#
#   scripts/gpu_peers.sh --samples DIR [--out DIR] [--budget SECONDS] [--steps S] [--sizes "N ..."]
#   scripts/gpu_peers.sh --samples DIR --pack DEST
#
# About 5-6 minutes on an H100 with the build (the budget, default 420 s, skips what is left once
# spent, and says so); without a GPU it builds everything, says so and exits 1.
#
# DIR is a checkout of https://github.com/NVIDIA/cuda-samples (or what --pack made of one): the
# script finds the particles and nbody sources and Common/ in it wherever they are. Nothing of
# it enters this repository: --pack copies the few sources the run needs (about 1 MB: the two
# samples' .cu/.cpp/.h files, Common/*.h, Common/GL/freeglut*.h) into DEST, e.g. an ignored
# .peers/cuda-samples to carry to the GPU machine (.gitignore lists /.peers/).
#
# Building (sm_90 only, nvcc, into $B/peers): the samples are GLUT programs (their CMake builds
# nothing without freeglut), but -benchmark never opens a window. Each sample's sources are
# compiled against their own headers (Common/GL/freeglut*.h and the system's GL/gl.h, GL/glx.h),
# and every gl*, glu*, glut* and glX* symbol the objects need is linked to a generated stub that
# exits with a message if ever called (glXGetProcAddress returns NULL: helper_gl.h calls it while
# starting up); nothing links libGL or libglut.
#
# Timing, each peer as it times itself and nbsim the same way:
#   particles  -benchmark -n=N -i=S: a host clock around S calls of update() (integrate, hash,
#              a full radix sort of the hashes every step, reorder, collide), synchronised at both
#              ends, no warm-up; mean = N / its KParticles/s figure (its "Time" has 10 us steps).
#   nbsim      cull_timing --scene lattice --dt 0.5 --tile 32 --warmup 1 --frames S/10 --steps 10: a
#              warm-up frame of 10 steps, then a host clock around S steps in frames of 10 (their
#              syncs included), every Morton re-sort and list rebuild included; beside it the
#              mean of the CUDA events
#              around each step, and the program itself (nbsim --scene lattice --log: sum of the
#              log's step_ms over its steps), which must agree.
#   nbody      -benchmark -numbodies=N -i=S: CUDA events around S steps after one untimed step;
#              N^2 body-body interactions per step (self included, no symmetry).
#   nbsim      cull_timing --cull 0 --map full|ltm|rm|bb: the same host clock; full evaluates
#              N(N-1) ordered pairs (as nbody does), the symmetric maps N(N-1)/2 unordered pairs,
#              each applied to both bodies (Newton's third law). The interaction differs: a
#              contact test (~10 instructions for a pair that does not touch) against nbody's
#              softened gravity (20 flops, an rsqrt).
#
# The physics of the particles sample against nbsim's lattice (scaled x32 in length, time not
# scaled, so the per-step dynamics carry over at the sample's step, which the runs pass as
# --dt 0.5: the scene's own is t_c / 50; see sim/io/scene.c):
#   spheres        r = 1/64, unit mass                 r = 0.5 m, 1 kg
#   start          touching lattice, ceil(cbrt N) per side from the corner (-1,-1,-1), x, y, z
#                  order, uniform jitter +-1 % of r (srand(1973))      the same (jitter from --seed)
#   box            [-1, 1]^3                           [-32, 32]^3 m (wider above 262,144)
#   step           0.5, symplectic Euler (v += g dt, x += v dt, then the contacts' dv)
#                                                      0.5 s, velocity Verlet
#   gravity        0.0003 along -y                     0.0096 m/s^2 along -y
#   normal spring  dv = 0.5 overlap per step (k/m = 1) stiffness 1 N/m on 1 kg
#   normal damping dv = 0.02 v_rel per step (damping ratio 0.028)   restitution 0.915 (the same ratio)
#   tangential     shear 0.1 and damping 0.02 on the tangential velocity (viscous, no Coulomb
#                  limit, no rotation)             none: the lattice runs with friction off
#                                                  (nbsim's Coulomb friction with history and
#                                                  rotation, docs/friction.md, is another model)
#   walls          position clamped at 1 - r, velocity x -0.5       the contact law against a plane
#                                                                   (spring 1 N/m, e = 0.915)
#   collider       a static sphere r = 0.2 at (-1.2, -0.8, 0.8), touching the box at one point
#                                                      none
#   neighbours     64^3 cells of 2r (hash wraps beyond), every step a full sort, 27 cells per
#                  sphere, each touching pair computed twice (once for each sphere)
#                                                      bodies re-sorted along a Morton curve every
#                                                      50 steps; neighbour lists with a skin, built
#                                                      from a cell grid (27 cells) when a body has
#                                                      moved half the skin (full lists: each
#                                                      touching pair computed from both ends); as
#                                                      the lattice rebuilds them at every step,
#                                                      after 10 steps no lists: every step bins the
#                                                      bodies into cells 2r wide (one atomic per
#                                                      body, no sort) and sweeps the cells around
#                                                      each that can hold a contact (of 27), each
#                                                      touching pair once (the reaction by a vector
#                                                      atomic on the other sphere)
#   precision      float                               float
#
# Output in $OUT (default ./gpu_peers_out), for bench/results/<gpu>/ (the script prints <gpu>):
#   peers.csv   one row per (workload, N, program, configuration): mean ms per step and how timed
#   peers.md    the tables, the timing method and the physics above
#   nbsim_timing.csv  cull_timing's rows (per-phase medians too)
#   logs.tgz    every log (device, builds, runs)
# shellcheck disable=SC2016
set -uo pipefail
samples="" pack="" steps=300 sizes="16384 65536 262144" prelude_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --samples) samples=${2:-}; shift ;;
    --out) OUT=${2:-}; export OUT; shift ;;
    --pack) pack=${2:-}; shift ;;
    --steps) steps=${2:-}; shift ;;
    --sizes) sizes=${2:-}; shift ;;
    --budget) prelude_args+=(--budget "${2:-}"); shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_peers.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$samples" ] || [ ! -d "$samples" ]; then
  echo "gpu_peers.sh: --samples DIR: a checkout of NVIDIA's cuda-samples (got '${samples}')" >&2
  exit 2
fi
case $steps in ''|*[!0-9]*) echo "gpu_peers.sh: --steps $steps: a whole number" >&2; exit 2 ;; esac
[ "$steps" -ge 300 ] || { echo "gpu_peers.sh: --steps $steps: at least 300 (the sample's own)" >&2; exit 2; }
samples=$(cd "$samples" && pwd)

# The sources, wherever the checkout keeps them (Samples/2_Concepts_and_Techniques/particles and
# Samples/5_Domain_Specific/nbody today).
find_dir() { # FILE: the folder of the first FILE under the samples
  local hit
  hit=$(find "$samples" -type f -name "$1" -not -path '*/.git/*' 2>/dev/null | sort | head -1)
  [ -n "$hit" ] && dirname "$hit"
}
particles_src=$(find_dir particleSystem_cuda.cu) || true
nbody_src=$(find_dir bodysystemcuda.cu) || true
common=$(find_dir helper_cuda.h) || true
for what in particles_src nbody_src common; do
  [ -n "${!what}" ] || { echo "gpu_peers.sh: no ${what%_src} sources under $samples" >&2; exit 2; }
done

if [ -n "$pack" ]; then # copy what the run needs, keeping the checkout's layout
  mkdir -p "$pack" && pack=$(cd "$pack" && pwd)
  copy() { # FOLDER PATTERN...: FOLDER's files matching the patterns, to the same place in $pack
    local rel=${1#"$samples"/} dir=$1; shift
    mkdir -p "$pack/$rel"
    for pat in "$@"; do
      find "$dir" -maxdepth 1 -type f -name "$pat" -exec cp {} "$pack/$rel/" \;
    done
  }
  copy "$particles_src" '*.cu' '*.cuh' '*.cpp' '*.h' CMakeLists.txt README.md
  copy "$nbody_src" '*.cu' '*.cpp' '*.h' CMakeLists.txt README.md
  copy "$common" '*.h'
  copy "$common/GL" 'freeglut*.h'
  [ -f "$samples/LICENSE" ] && cp "$samples/LICENSE" "$pack/"
  if [ -f "$samples/COMMIT" ]; then cp "$samples/COMMIT" "$pack/"
  else (cd "$samples" && git rev-parse HEAD 2>/dev/null) >"$pack/COMMIT" || rm -f "$pack/COMMIT"; fi
  echo "gpu_peers.sh: packed into $pack: $(du -sh "$pack" | cut -f1), $(find "$pack" -type f | wc -l) files"
  exit 0
fi

# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" peers 420 "${prelude_args[@]}"

step device
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 |
  tee "$logs/device.txt"
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu=$(echo "${gpu_name:-unknown gpu}" | tr '[:upper:]' '[:lower:]' | awk '{print $1 "-" $2}')
echo "results for bench/results/$gpu/"

step "build nbsim (nbsim, cull_timing)"
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNBSIM_WERROR=OFF -DNBSIM_VIEWER=OFF &&
       cmake --build "$B" -j"$(nproc)" --target nbsim cull_timing; } >"$logs/build_nbsim.log" 2>&1; then
  tail -30 "$logs/build_nbsim.log"; tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1
fi
bin=$B/bin
# nvcc on PATH, else the one CMake found for nbsim
nvcc=$(command -v nvcc ||
  sed -n 's/^set(CMAKE_CUDA_COMPILER "\(.*\)")$/\1/p' "$B"/CMakeFiles/*/CMakeCUDACompiler.cmake | head -1)

# build_peer NAME SRC: the sample's .cu and .cpp files for sm_90, its GL and GLUT symbols stubbed.
build_peer() {
  local name=$1 src=$2 dir=$B/peers/$1 f
  rm -rf "$dir" && mkdir -p "$dir"
  for f in "$src"/*.cu "$src"/*.cpp; do
    [ -e "$f" ] || continue
    "$nvcc" -O3 -std=c++17 -arch=sm_90 --extended-lambda -w -I"$common" -I"$src" \
      -c "$f" -o "$dir/$(basename "$f").o" >"$dir/$(basename "$f").log" 2>&1 &
  done
  wait
  cat "$dir"/*.log
  {
    echo '#include <stdio.h>'
    echo '#include <stdlib.h>'
    echo "/* generated by gpu_peers.sh: $name -benchmark opens no window and calls none of these */"
    echo 'static void stub(const char *f) {'
    printf '  fprintf(stderr, "gpu_peers.sh: %%s called: %s is built without GL/GLUT (use -benchmark)\\n", f);\n' "$name"
    echo '  exit(3);'
    echo '}'
    nm -u "$dir"/*.o | awk '{print $NF}' | grep -E '^(gl|glu|glut|glX|glew|__glew)[A-Z0-9_]' | sort -u |
      while read -r sym; do
        case $sym in
          glutBitmap*|glutStroke*) echo "char ${sym}[256]; /* a GLUT font's address */" ;;
          glXGetProcAddress*) echo "void *$sym(const unsigned char *f) { (void)f; return NULL; }" ;;
          *) echo "void $sym(void) { stub(\"$sym\"); }" ;;
        esac
      done
  } >"$dir/gl_stubs.c"
  gcc -O2 -c "$dir/gl_stubs.c" -o "$dir/gl_stubs.o" &&
    "$nvcc" -arch=sm_90 "$dir"/*.o -o "$dir/$name"
}

step "build the peers from $samples (sm_90, GL stubbed)"
build_peer particles "$particles_src" >"$logs/build_particles.log" 2>&1 &
build_peer nbody "$nbody_src" >"$logs/build_nbody.log" 2>&1 &
wait
for p in particles nbody; do
  if [ -x "$B/peers/$p/$p" ]; then echo "$p: built"
  else echo "$p: build failed"; tail -20 "$logs/build_$p.log"; status=1; fi
done

if ! nvidia-smi -L >/dev/null 2>&1; then # the builds are checked; the timings need the GPU
  echo "no NVIDIA GPU here: built, nothing timed"
  tar -C "$OUT" -czf "$OUT/logs.tgz" logs
  exit $((status ? status : 1))
fi

csv=$OUT/peers.csv
nbsim_csv=$OUT/nbsim_timing.csv
rm -f "$nbsim_csv"
echo "gpu,workload,n,program,configuration,steps,mean_step_ms,timed_by,evaluations_per_step,body_pairs_per_s" >"$csv"
row() { # workload n program configuration steps ms timed_by evaluations
  local rate
  rate=$(awk -v n="$2" -v ms="$6" -v e="$8" 'BEGIN { if (ms > 0 && e != "") printf "%.4g", n * n / (ms * 1e-3) }')
  echo "$gpu,$1,$2,$3,$4,$5,$6,$7,$8,$rate" >>"$csv"
}
# nbsim_run LABEL ARGS...: cull_timing, a warm-up frame of 10 steps, then $steps steps in frames of
# 10 (as a run that logs every 10 steps: the lists grow between frames, never inside one, so a
# single frame of 300 steps from the start would sweep every tile pair once a list outgrew its
# first size); the host clock around the timed frames (their syncs included), and the events;
# sets wall, events
nbsim_run() {
  local label=$1; shift
  wall="" events=""
  if timeout 600 "$bin/cull_timing" --backend cuda --warmup 1 --frames $((steps / 10)) --steps 10 \
       --csv "$nbsim_csv" --label "$label" "$@" >>"$logs/nbsim.log" 2>&1; then
    # by the header's names: cull_timing may add columns
    wall=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next } END { print $c["wall_step_ms"] }' "$nbsim_csv")
    events=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next } END { print $c["mean_step_ms"] }' "$nbsim_csv")
  else
    echo "nbsim $label $*: failed (see nbsim.log)"; status=1
  fi
}

for n in $sizes; do
  if ! left; then skip "contacts at N = $n"; continue; fi
  step "contacts, N = $n: particles against nbsim's lattice"
  if [ -x "$B/peers/particles/particles" ]; then
    timeout 600 "$B/peers/particles/particles" -benchmark -n="$n" -i="$steps" >"$logs/particles_$n.log" 2>&1
    kps=$(sed -n 's/.*Throughput = \([0-9.]*\) KParticles.*/\1/p' "$logs/particles_$n.log")
    if [ -n "$kps" ]; then
      ms=$(awk -v n="$n" -v k="$kps" 'BEGIN { printf "%.6f", n / k }')
      row contacts "$n" particles "uniform grid 64^3; sort every step" "$steps" "$ms" "host clock" ""
      echo "particles  N=$n  $ms ms per step"
    else
      echo "particles N=$n: no result"; tail -5 "$logs/particles_$n.log"; status=1
    fi
  fi
  nbsim_run lattice --scene lattice --dt 0.5 --n "$n" --tile 32 --map ltm --cull 1
  if [ -n "$wall" ]; then
    row contacts "$n" nbsim "lattice tile 32 ltm culled" "$steps" "$wall" "host clock" ""
    row contacts "$n" nbsim "lattice tile 32 ltm culled" "$steps" "$events" "CUDA events" ""
    echo "nbsim      N=$n  $wall ms per step (host clock), $events ms (events)"
  fi
  # The program itself: the mean of its log's step_ms over every step (events), frames of 10.
  if timeout 600 "$bin/nbsim" --backend cuda --scene lattice --dt 0.5 --n "$n" --tile 32 --pair-map ltm \
       --frames $((steps / 10)) --steps-per-frame 10 --log "$logs/nbsim_lattice_$n.csv" \
       --quiet >"$logs/nbsim_program_$n.log" 2>&1; then
    ms=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
                  { t += $c["step_ms"]; s += $c["steps"] } END { if (s) printf "%.6f", t / s }' \
           "$logs/nbsim_lattice_$n.csv")
    row contacts "$n" "nbsim program" "--scene lattice --tile 32 --log" "$steps" "$ms" "CUDA events" ""
    echo "nbsim (the program's log) N=$n  $ms ms per step"
  else
    echo "nbsim --scene lattice N=$n: failed"; tail -3 "$logs/nbsim_program_$n.log"; status=1
  fi
done

for n in $sizes; do
  if ! left; then skip "brute force at N = $n"; continue; fi
  step "brute force, N = $n: nbody against nbsim --cull off"
  if [ -x "$B/peers/nbody/nbody" ]; then
    timeout 600 "$B/peers/nbody/nbody" -benchmark -numbodies="$n" -i="$steps" >"$logs/nbody_$n.log" 2>&1
    total=$(sed -n 's/.*total time for \([0-9]*\) iterations: \([0-9.]*\) ms.*/\2/p' "$logs/nbody_$n.log")
    if [ -n "$total" ]; then
      ms=$(awk -v t="$total" -v s="$steps" 'BEGIN { printf "%.6f", t / s }')
      row brute-force "$n" nbody "all N^2; tile 256; float" "$steps" "$ms" "CUDA events" "$((n * n))"
      echo "nbody      N=$n  $ms ms per step"
    else
      echo "nbody N=$n: no result"; tail -5 "$logs/nbody_$n.log"; status=1
    fi
  fi
  for map in full ltm rm bb; do
    left || { skip "nbsim --pair-map $map at N = $n"; continue; }
    nbsim_run "brute-$map" --scene lattice --dt 0.5 --n "$n" --tile 64 --map "$map" --cull 0
    [ -n "$wall" ] || continue
    evals=$((n * (n - 1) / 2))
    [ "$map" = full ] && evals=$((n * (n - 1)))
    row brute-force "$n" nbsim "--cull off --pair-map $map; tile 64" "$steps" "$wall" "host clock" "$evals"
    echo "nbsim $map N=$n  $wall ms per step"
  done
done

step "tables"
{
  echo "# nbsim against its peers on $gpu_name"
  echo
  echo "Whole step against whole step, the mean over $steps steps (re-sorts included), each program"
  echo "timed as it times itself (scripts/gpu_peers.sh says how). Device: $(tail -1 "$logs/device.txt")."
  echo
  echo "## Contacts: NVIDIA's particles sample, its benchmark configuration (nbsim: --scene lattice, x32)"
  echo
  echo "| N | particles [ms/step] | nbsim, host clock [ms/step] | nbsim, events | nbsim program (--log) | particles / nbsim |"
  echo "|---|---|---|---|---|---|"
  for n in $sizes; do
    awk -F, -v n="$n" '
      $3 == n && $2 == "contacts" && $4 == "particles" { p = $7 }
      $3 == n && $2 == "contacts" && $4 == "nbsim" && $8 == "host clock" { w = $7 }
      $3 == n && $2 == "contacts" && $4 == "nbsim" && $8 == "CUDA events" { e = $7 }
      $3 == n && $2 == "contacts" && $4 == "nbsim program" { g = $7 }
      END { printf "| %d | %s | %s | %s | %s | %s |\n", n, p ? sprintf("%.4f", p) : "-",
                   w ? sprintf("%.4f", w) : "-", e ? sprintf("%.4f", e) : "-",
                   g ? sprintf("%.4f", g) : "-", p && w ? sprintf("%.2fx", p / w) : "-" }' "$csv"
  done
  echo
  echo "## Brute force: NVIDIA's nbody sample against nbsim --cull off"
  echo
  echo "nbody computes N^2 gravitational interactions per step (no symmetry); nbsim's \`full\` N(N-1)"
  echo "contact tests (no symmetry), its maps N(N-1)/2 (each pair once, applied to both bodies). The"
  echo "rate column is N^2 / time for every row: body pairs covered per second."
  echo
  echo "| N | program | configuration | ms/step | evaluations/step | N^2/s |"
  echo "|---|---|---|---|---|---|"
  awk -F, '$2 == "brute-force" { printf "| %d | %s | %s | %.4f | %s | %s |\n", $3, $4, $5, $7, $9, $10 }' "$csv"
  echo
  echo "## What differs in the physics (particles sample against nbsim's lattice)"
  echo
  echo '```'
  sed -n '/^# The physics of the particles sample/,/^#   precision/p' "$0" | sed 's/^# \{0,1\}//'
  echo '```'
} >"$OUT/peers.md"
cat "$OUT/peers.md"
tar -C "$OUT" -czf "$OUT/logs.tgz" logs
echo "status $status; copy peers.csv, peers.md and nbsim_timing.csv to bench/results/$gpu/"
exit "$status"
