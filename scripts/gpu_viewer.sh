#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine with a display (the workplace's device machine: first `source
# .devkit/setup.sh`, which starts an X server with GL on the GPU): the viewer's map study
# screenshots for the README and docs/guide.md and the checks of issue 14, all into $OUT (default
# ./gpu_viewer_out):
#   sweep-262k.png / .json / .out   N = 262,144: every pair map timed by the sweep, the map
#                                   comparison panel and the map inset (brute-force contacts)
#   sweep-262k-cull.*               the same with culled contacts (the map places the culling
#                                   pass; the inset lights the interacting tile pairs)
#   sweep-triplets-4096.*           pair and triplet maps at N = 4,096 with ATM triplets on
#   keys-262k.png / .out            the same sweep started by pressing S (only with xdotool)
#   pile-20k.png / .csv / .out      the pile at N = 20,000 for 3 s from launch: its mean height
#   collide.png / .csv / .out       the default collide scene for 5 s: kinetic energy
# Usage: scripts/gpu_viewer.sh [--no-build]   (NBSIM_BUILD: build folder, default as
#        scripts/gpu_validate.sh)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
root=$PWD
OUT=${OUT:-$root/gpu_viewer_out}
B=${NBSIM_BUILD:-/tmp/nbsim-gpu-build}
build=1
[ "${1:-}" = "--no-build" ] && build=0
mkdir -p "$OUT"
status=0
step() { echo "=== $* ($(date +%T))"; }

if [ -z "${DISPLAY:-}" ]; then
  echo "no DISPLAY: source .devkit/setup.sh first (it starts an X server with GL on the GPU)"
  exit 1
fi
if [ $build = 1 ]; then
  step build
  if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
           -DNBSIM_WERROR=OFF && cmake --build "$B" -j"$(nproc)"; } >"$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"; exit 1
  fi
fi
nbsim=$B/bin/nbsim
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
common=(--size 1920x1080 --vsync off)

# A viewer run with its output kept; prints the map comparison table it ends with.
sweep() { # name args...
  local name=$1; shift
  step "$name"
  timeout 300 "$nbsim" "${common[@]}" --sweep exit --screenshot "$OUT/$name.png" \
    --summary "$OUT/$name.json" "$@" >"$OUT/$name.out" 2>&1
  local rc=$?
  echo "$name: exit $rc"
  [ $rc = 0 ] || status=1
  grep -E "^nbsim viewer|^map comparison|^  (pair|triplet) |sweep done|maps and tile|autotune" \
    "$OUT/$name.out"
}

sweep sweep-262k --n 262144 --cull off
sweep sweep-262k-cull --n 262144 --cull on
sweep sweep-triplets-4096 --scene triplets --n 4096 --triplets on

# The sweep key itself, where xdotool exists (the device machine may have no package manager).
if command -v xdotool >/dev/null 2>&1; then
  step "keys-262k (S pressed with xdotool)"
  (cd "$OUT" && timeout 300 "$nbsim" "${common[@]}" --n 262144 --cull off \
    >"$OUT/keys-262k.out" 2>&1) &
  pid=$!
  wid=$(timeout 60 xdotool search --sync --onlyvisible --name '^nbsim' 2>/dev/null | head -n 1)
  if [ -n "$wid" ]; then
    sleep 2
    xdotool key --window "$wid" s
    for _ in $(seq 1200); do grep -q "sweep done" "$OUT/keys-262k.out" && break; sleep 0.1; done
    xdotool key --window "$wid" p
    sleep 1
    xdotool key --window "$wid" q
  else
    echo "keys-262k: no window found"; kill "$pid" 2>/dev/null
  fi
  wait "$pid"; echo "keys-262k: exit $?"
  for f in "$OUT"/nbsim-*.png; do [ -e "$f" ] && mv "$f" "$OUT/keys-262k.png"; done
  grep -E "sweep done|^  pair " "$OUT/keys-262k.out" | head -12
else
  echo "=== keys-262k skipped: no xdotool here (the --sweep runs above are the same sweep)"
fi

# Scenes that move: Ctrl-C (SIGINT) after a fixed wall time from launch closes the viewer like
# Esc, with the log complete and the screenshot of the last frame; exit status 130.
timed() { # name seconds args...
  local name=$1 seconds=$2; shift 2
  step "$name ($seconds s from launch)"
  timeout --preserve-status -s INT "$seconds" "$nbsim" --size 1920x1080 --screenshot "$OUT/$name.png" \
    --log "$OUT/$name.csv" --energy-every 5 "$@" >"$OUT/$name.out" 2>&1
  echo "$name: exit $? (130 expected)"
}
timed pile-20k 3 --scene pile --n 20000
python3 - "$OUT/pile-20k.csv" <<'PY' || status=1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
h = [(float(r["sim_time"]), float(r["mean_height"])) for r in rows if r["mean_height"]]
steps = [int(r["steps"]) for r in rows]
print(f"pile: {len(rows)} frames, steps/frame up to {max(steps)}, simulated {h[-1][0]:.3f} s; "
      f"mean height {h[0][1]:.3f} -> {h[-1][1]:.3f} m (drop {h[0][1] - h[-1][1]:.3f} m)")
sys.exit(0 if h[0][1] - h[-1][1] > 0.5 else 1)
PY
timed collide 5 --scene collide
python3 - "$OUT/collide.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["kinetic"]]
k0, k1 = float(rows[0]["kinetic"]), float(rows[-1]["kinetic"])
print(f"collide: simulated {float(rows[-1]['sim_time']):.3f} s; kinetic energy {k0:.4g} -> "
      f"{k1:.4g} J ({100 * (1 - k1 / k0):.1f} % lost in contacts: the clusters "
      f"{'met' if k1 < 0.97 * k0 else 'have not met yet'})")
PY

step "done: status $status"
ls -la "$OUT"
exit $status
