#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nbsim viewer test (label cpu): a private Xvfb with Mesa's software GL and the CPU backend.
#   1. without a display: one line on stderr and exit 1;
#   2. a scripted run (--exit-after, --screenshot, --log, --save-state): exit 0, a complete PNG
#      whose middle shows spheres (decoded with python3's zlib, no imaging library needed), one
#      log row per frame, a saved state that loads;
#   3. keys sent with xdotool: 'm' switches the pair map (bb -> ltm in the log's pair_map
#      column), 'p' writes a timestamped screenshot, 'q' quits cleanly;
#   4. 'k' (culling off), then the sweep key 's' on the falling pile: the summary's map
#      comparison (unculled) has one measured row per pair map, the panel / inset / log-graph /
#      pacing keys do not disturb it, and the pile's mean height (log column mean_height) goes
#      down;
#   5. --sweep exit (culling on, the default): the same table from the command line, and the
#      viewer quits by itself.
# Skips (77) only when Xvfb is not installed. Every wait is bounded.
set -uo pipefail
nbsim=${1:?usage: test_viewer.sh path/to/nbsim}

command -v Xvfb >/dev/null 2>&1 || { echo "SKIP: Xvfb is not installed"; exit 77; }
for tool in xdotool python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"; exit 77; }
done

work=$(mktemp -d)
xvfb_pid=
viewer_pid=
cleanup() {
  [ -n "$viewer_pid" ] && kill "$viewer_pid" 2>/dev/null
  [ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.err; do [ -e "$f" ] && { echo "--- $f"; cat "$f"; }; done; exit 1; }

# 1. No display: the message, nothing else, before any GL is touched.
env -u DISPLAY -u WAYLAND_DISPLAY "$nbsim" --backend cpu --n 16 >"$work/nodisplay.out" 2>"$work/nodisplay.err"
rc=$?
[ "$rc" -eq 1 ] || fail "no display: exit $rc, expected 1"
[ "$(wc -l <"$work/nodisplay.err")" -eq 1 ] || fail "no display: expected one line on stderr"
grep -q "cannot open a window (no display: DISPLAY is not set); use --frames N" "$work/nodisplay.err" ||
  fail "no display: unexpected message: $(cat "$work/nodisplay.err")"
echo "ok 1 - no display: one line, exit 1"

# A display number nobody uses: Xvfb picks it and writes it to fd 3 (-displayfd), so parallel
# tests cannot collide.
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$work/display" >"$work/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 100); do [ -s "$work/display" ] && break; sleep 0.1; done
[ -s "$work/display" ] || fail "Xvfb did not start: $(cat "$work/xvfb.log")"
export DISPLAY=":$(tr -d '\n' <"$work/display")"
export LIBGL_ALWAYS_SOFTWARE=1 # Mesa llvmpipe: the path of a machine without a GPU driver
unset __GLX_VENDOR_LIBRARY_NAME

# A sanitizer build (tests/CMakeLists.txt then sets LSAN_OPTIONS with tests/lsan.supp): Mesa
# unloads its driver when the window closes, before LeakSanitizer looks at the heap, so the
# driver's live memory looks leaked, allocated from an "<unknown module>" that no suppression can
# name. Preloading the driver (after the ASan runtime, which must come first) keeps it mapped:
# its memory stays reachable, and anything Mesa really leaks is named by module for lsan.supp.
windowed=()
asan=$(ldd "$nbsim" 2>/dev/null | awk '/libasan/ { print $3 }')
if [ -n "${LSAN_OPTIONS:-}" ] && [ -n "$asan" ]; then
  driver=$(ls /usr/lib/*/dri/swrast_dri.so /usr/lib/dri/swrast_dri.so 2>/dev/null | head -n 1)
  [ -n "$driver" ] && windowed=(env LD_PRELOAD="$asan $driver")
fi

# 2. Scripted run.
timeout 120 "${windowed[@]}" "$nbsim" --backend cpu --n 200 --exit-after 12 --screenshot "$work/shot.png" \
  --log "$work/run.csv" --save-state "$work/view.scene" --quiet >"$work/run.out" 2>"$work/run.err"
rc=$?
[ "$rc" -eq 0 ] || fail "scripted run: exit $rc"
[ -s "$work/shot.png" ] || fail "scripted run: no screenshot"
[ ! -e "$work/shot.png.tmp" ] || fail "scripted run: temporary screenshot left behind"
rows=$(($(wc -l <"$work/run.csv") - 1))
[ "$rows" -eq 12 ] || fail "scripted run: $rows log rows, expected 12"
"$nbsim" --backend cpu --scene "$work/view.scene" --frames 1 --quiet >/dev/null 2>"$work/state.err" ||
  fail "scripted run: --save-state wrote no state that loads"
# The middle of the window (away from the overlay panel and graph) must show spheres: the
# background is a grey-blue gradient with little chroma, the colormaps are saturated.
python3 - "$work/shot.png" <<'PY' || fail "scripted run: the screenshot shows no spheres"
import struct, sys, zlib

data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, color = struct.unpack(">IIBB", body[:10])
        assert depth == 8 and color == 2, "expected 8-bit RGB"
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw = zlib.decompress(idat)
stride, bpp = width * 3, 3
rows, prev = [], bytearray(stride)
for y in range(height):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
coloured = total = 0
for y in range(int(height * 0.3), int(height * 0.7)):
    line = rows[y]
    for x in range(int(width * 0.3), int(width * 0.7)):
        r, g, b = line[3 * x], line[3 * x + 1], line[3 * x + 2]
        total += 1
        coloured += max(r, g, b) - min(r, g, b) > 60
share = coloured / total
print(f"screenshot {width}x{height}: {100 * share:.2f}% of the middle is sphere-coloured")
sys.exit(0 if share > 0.01 else 1)
PY
echo "ok 2 - scripted run: exit 0, screenshot with spheres, $rows log rows, the state saved"

# 2b. Above --draw-max the viewer draws an even sample and says so; the run keeps every body.
timeout 120 "${windowed[@]}" "$nbsim" --backend cpu --n 1000 --draw-max 300 --exit-after 3 \
  --screenshot "$work/sample.png" --save-state "$work/sample.scene" >"$work/sample.out" \
  2>"$work/sample.err"
rc=$?
[ "$rc" -eq 0 ] || fail "--draw-max: exit $rc"
grep -q "the viewer draws 250 of the 1000 bodies: one in 4 (--draw-max)" "$work/sample.err" ||
  fail "--draw-max: no notice of the sample: $(cat "$work/sample.err")"
[ -s "$work/sample.png" ] || fail "--draw-max: no screenshot"
"$nbsim" --backend cpu --scene "$work/sample.scene" --frames 1 --summary "$work/sample.json" \
  --quiet >/dev/null 2>&1 || fail "--draw-max: the saved state does not load"
python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["n"] != 1000)' \
  "$work/sample.json" || fail "--draw-max: the saved state does not hold the 1000 bodies"
echo "ok 2b - --draw-max 300 of 1000 bodies: one in 4 drawn and named, all 1000 saved"

# 3. Keys. Start on the bb pair map, press m (next: ltm), p (screenshot), q (quit).
cd "$work" || fail "cannot enter $work"
timeout 120 "${windowed[@]}" "$nbsim" --backend cpu --n 64 --pair-map bb --log "$work/keys.csv" --quiet \
  >"$work/keys.out" 2>"$work/keys.err" &
viewer_pid=$!
wid=$(timeout 30 xdotool search --sync --onlyvisible --name '^nbsim' 2>/dev/null | head -n 1)
[ -n "$wid" ] || fail "keys: no nbsim window appeared"
sleep 1 # some frames on bb first
xdotool key --window "$wid" m || fail "keys: xdotool could not send m"
sleep 1
xdotool key --window "$wid" p
sleep 1
xdotool key --window "$wid" d # record a trajectory for a second
sleep 1
xdotool key --window "$wid" d
sleep 0.5
xdotool key --window "$wid" q
wait "$viewer_pid"
rc=$?
viewer_pid=
[ "$rc" -eq 0 ] || fail "keys: exit $rc after q"
traj=$(ls nbsim-*.xyz 2>/dev/null | head -n 1)
[ -n "$traj" ] || fail "keys: d wrote no trajectory"
frames=$(grep -c '^64$' "$traj")
[ "$frames" -ge 1 ] || fail "keys: the trajectory $traj holds no frame of 64 bodies"
col=$(head -n 1 keys.csv | tr ',' '\n' | grep -n '^pair_map$' | cut -d: -f1)
[ -n "$col" ] || fail "keys: the log has no pair_map column"
maps=$(tail -n +2 keys.csv | cut -d, -f"$col" | uniq | tr '\n' ' ')
[ "$maps" = "bb ltm " ] || fail "keys: pair_map column went '$maps', expected 'bb ltm '"
ls nbsim-*.png >/dev/null 2>&1 || fail "keys: p wrote no screenshot"
echo "ok 3 - keys: m switched the pair map (bb -> ltm), p wrote a screenshot, d recorded $frames trajectory frames, q quit"

# 4. The sweep key on the pile. Steps per frame are automatic, so even software GL moves it.
summary_rows() { # summary.json: prints "rows measured names" of the pair table
  python3 - "$1" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["map_comparison"]
rows = m["pair"]
measured = [r for r in rows if r["frames"] > 0 and r["median_ms"] and r["I"]]
print(len(rows), len(measured), ",".join(r["map"] for r in rows))
PY
}
pair_maps=$("$nbsim" --help | sed -n 's/^Pair maps: *//p' | sed 's/, full$//; s/, /,/g')
map_count=$(echo "$pair_maps" | tr ',' '\n' | wc -l)
timeout 120 "$nbsim" --backend cpu --scene pile --n 60 --log "$work/sweep.csv" --energy-every 1 \
  --summary "$work/sweep.json" --quiet >"$work/sweep.out" 2>"$work/sweep.err" &
viewer_pid=$!
wid=$(timeout 30 xdotool search --sync --onlyvisible --name '^nbsim' 2>/dev/null | head -n 1)
[ -n "$wid" ] || fail "sweep: no nbsim window appeared"
sleep 0.5
xdotool key --window "$wid" k || fail "sweep: xdotool could not send k" # culling off: every tile pair
sleep 0.3
xdotool key --window "$wid" s
for _ in $(seq 600); do grep -q "sweep done" "$work/sweep.err" && break; sleep 0.1; done
grep -q "sweep done" "$work/sweep.err" || fail "sweep: not done within 60 s"
for key in b b i i y 0 equal minus; do xdotool key --window "$wid" "$key"; sleep 0.15; done
sleep 0.5
xdotool key --window "$wid" q
wait "$viewer_pid"
rc=$?
viewer_pid=
[ "$rc" -eq 0 ] || fail "sweep: exit $rc after q"
read -r rows measured names < <(summary_rows "$work/sweep.json") || fail "sweep: no map_comparison in the summary"
[ "$names" = "$pair_maps" ] || fail "sweep: summary rows '$names', expected '$pair_maps'"
[ "$rows" -eq "$map_count" ] && [ "$measured" -eq "$map_count" ] ||
  fail "sweep: $measured of $rows pair maps measured, expected $map_count"
grep -q "culling off: every tile pair is swept" "$work/sweep.err" || fail "sweep: K did not turn culling off"
python3 -c "import json,sys; sys.exit(json.load(open('$work/sweep.json'))['map_comparison']['cull'] is not False)" ||
  fail "sweep: the comparison is not marked unculled"
python3 - "$work/sweep.csv" <<'PY' || fail "sweep: the pile's mean height did not go down"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["mean_height"]]
first, last = float(rows[0]["mean_height"]), float(rows[-1]["mean_height"])
steps = max(int(r["steps"]) for r in rows)
print(f"pile: mean height {first:.3f} -> {last:.3f} m over {rows[-1]['sim_time']} s, "
      f"{len(rows)} frames, up to {steps} steps/frame")
sys.exit(0 if len(rows) >= 10 and last < first - 0.05 and steps > 1 else 1)
PY
echo "ok 4 - sweep key: $measured pair maps in the summary's comparison, the pile fell"

# 5. --sweep exit: the viewer times every map and quits by itself.
timeout 120 "$nbsim" --backend cpu --n 40 --sweep exit --summary "$work/exit.json" \
  --screenshot "$work/exit.png" >"$work/exit.out" 2>"$work/exit.err"
rc=$?
[ "$rc" -eq 0 ] || fail "--sweep exit: exit $rc"
[ -s "$work/exit.png" ] || fail "--sweep exit: no screenshot"
read -r rows measured names < <(summary_rows "$work/exit.json") || fail "--sweep exit: no map_comparison"
[ "$measured" -eq "$map_count" ] || fail "--sweep exit: $measured of $map_count pair maps measured"
grep -q "map comparison (N = 40, tile 64, culling on)" "$work/exit.out" || fail "--sweep exit: no table on stdout"
echo "ok 5 - --sweep exit: $measured pair maps measured, quit by itself"
