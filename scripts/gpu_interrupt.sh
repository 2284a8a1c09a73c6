#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine, for "Ctrl-C is honoured within a second at any N" (issue 9, item 4): build,
# the GPU test of stopping (test_gpu_interrupt: long steps in slices, rolled back), then nbsim
# itself, headless, SIGINT sent after a delay and the seconds to its exit printed:
#   - N = 4,194,240 without culling (seconds per step): SIGINT after 2 s (the initial forces) and
#     after 12 s (inside the first frames), the ltm map and the full sweep;
#   - the tetra triplet map at N = 32,768 without a cut-off (~8 s a step): SIGINT after 20 s;
#   - a run with every output (--log, --summary, --save-state, 10 steps per frame): SIGINT after
#     15 s, the outputs checked and the state loaded back.
# Each line says the exit status (want 130), the seconds from the signal to the exit (want < 1)
# and nbsim's last line. About 2-3 minutes on an H100. Everything lands in $OUT (default
# ./gpu_interrupt_out): summary.txt (the lines), logs/ (build, test, each run's stderr).
# Usage: scripts/gpu_interrupt.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
OUT=${OUT:-$root/gpu_interrupt_out}
B=${NBSIM_BUILD:-/tmp/nbsim-interrupt-build}
# shellcheck disable=SC1091
[ -f .devkit/setup.sh ] && source .devkit/setup.sh >/dev/null 2>&1
mkdir -p "$OUT/logs"
logs=$OUT/logs
status=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$logs/device.txt"
git rev-parse --short HEAD >"$logs/commit.txt" 2>/dev/null

echo "=== build"
if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
         -DNBSIM_WERROR=OFF -DNBSIM_VIEWER=OFF &&
       cmake --build "$B" -j"$(nproc)" --target nbsim test_gpu_interrupt; } >"$logs/build.log" 2>&1; then
  tail -30 "$logs/build.log"
  echo "BUILD FAILED" | tee "$OUT/summary.txt"
  exit 1
fi
bin=$B/bin

echo "=== test_gpu_interrupt"
"$bin/test_gpu_interrupt" 2>&1 | tee "$logs/test_gpu_interrupt.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# interrupt NAME DELAY ARGS...: nbsim ARGS in the background with SIGINT at its default (a
# script's background job would inherit it ignored, and nbsim keeps ignored signals ignored),
# SIGINT after DELAY seconds; one line: exit status, seconds from the signal to the exit.
interrupt() {
  local name=$1 delay=$2; shift 2
  python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$bin/nbsim" "$@" >"$logs/$name.out" 2>"$logs/$name.err" </dev/null &
  local pid=$!
  sleep "$delay"
  local sent; sent=$(date +%s.%N)
  kill -INT "$pid" 2>/dev/null
  wait "$pid"
  local code=$?
  local took; took=$(echo "$(date +%s.%N) - $sent" | bc)
  local verdict=ok
  if [ "$code" -ne 130 ] || [ "$(echo "$took > 1.0" | bc)" -eq 1 ]; then
    verdict=SLOW_OR_WRONG
    status=1
  fi
  printf '%-32s exit %3d  %6.2f s after SIGINT  %-13s %s\n' "$name" "$code" "$took" "$verdict" \
    "$(tail -1 "$logs/$name.err")" | tee -a "$OUT/summary.txt"
}

: >"$OUT/summary.txt"
big=(--backend cuda --cull off --n 4194240 --frames 3 --quiet)
echo "=== SIGINT"
interrupt ltm-4M-setup 2 "${big[@]}"
interrupt ltm-4M-frame 12 "${big[@]}"
interrupt full-4M-setup 2 "${big[@]}" --pair-map full
interrupt full-4M-frame 15 "${big[@]}" --pair-map full
interrupt tetra-32k-frame 20 --backend cuda --cull off --n 32768 --triplets on --frames 3 --quiet

cd "$OUT" || exit 1
rm -f int.csv int.json int.scene
interrupt outputs-4M 15 --backend cuda --cull off --n 4194240 --steps-per-frame 10 --frames 3 \
  --log int.csv --summary int.json --save-state int.scene
if [ -s int.csv ] && [ -s int.json ] && [ -s int.scene ] && ! ls -A | grep -q -e '\.nbsim-'; then
  echo "outputs: complete ($(($(wc -l <int.csv) - 1)) log rows); $(grep -o '"stop_detail": "[^"]*"' int.json)" |
    tee -a "$OUT/summary.txt"
else
  echo "outputs: MISSING OR PARTIAL: $(ls -A)" | tee -a "$OUT/summary.txt"
  status=1
fi
if "$bin/nbsim" --backend cuda --cull off --scene int.scene --frames 1 --quiet >/dev/null \
     2>"$logs/reload.err"; then
  echo "the saved state loads and runs" | tee -a "$OUT/summary.txt"
else
  echo "the saved state does NOT load: $(cat "$logs/reload.err")" | tee -a "$OUT/summary.txt"
  status=1
fi
rm -f int.csv int.json int.scene
echo "=== summary"
cat "$OUT/summary.txt"
exit $status
