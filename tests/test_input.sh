#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What nbsim refuses, and warns about, before any work starts: sizes beyond the maps' limits (the
# flag, the largest N, the tile that allows more), memory that cannot be had (exit 2 with the
# bytes), a --box that does not hold the bodies, scene files (a missing one, too many bodies,
# bodies outside the box, a byte order mark, control bytes, duplicate keys, coincident
# spheres), a saved state that always loads back, and misused --mesh flags.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

cpu=(--backend cpu --quiet)
header="x y z vx vy vz radius density"

# ---- sizes: refused in one line before anything is allocated ----
start=$(date +%s)
# without --tile the default tile grows with N, so the largest tile sets the limit
expect_error 2 "${cpu[@]}" --frames 1 --n 100000000
grep -q -- "--n 100000000 is above 8,388,480, the most bodies this run can take (the pair maps cover at most 65,535 tiles of 128 bodies per side)" err.txt \
  && ok || fail "--n too large: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --n 5000000 --tile 64
grep -q -- "--n 5000000 is above 4,194,240, the most bodies this run can take (the pair maps cover at most 65,535 tiles of 64 bodies per side; --tile 128 allows up to 8,388,480)" err.txt \
  && ok || fail "--n too large for --tile 64: $(cat err.txt)"
[ $(($(date +%s) - start)) -lt 3 ] && ok || fail "--n too large took $(($(date +%s) - start)) s"
expect_error 2 "${cpu[@]}" --frames 1 --n 200000 --triplets on
grep -q "above 131,072.*triplet maps cover at most 4,096 tiles of 32 bodies" err.txt && ok || fail "triplet limit: $(cat err.txt)"
# culled by a cut-off the triplets need no triplet map: the culling's limit, not the maps'
expect_error 2 "${cpu[@]}" --frames 1 --n 2097121 --triplets on --atm-cutoff 3
grep -q "above 2,097,120.*triplets culled by the ATM cut-off cover at most 65,535 tiles of 32 bodies" err.txt \
  && ok || fail "culled triplet limit: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --n 200000 --triplets on --atm-cutoff 3 --cull off
grep -q "above 131,072.*triplet maps cover" err.txt && ok || fail "cut-off without culling: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --n 8388481 --tile 128
grep -q "above 8,388,480.*tiles of 128 bodies per side)" err.txt && ok || fail "largest tile: $(cat err.txt)"

# A scene file is read only up to the limit: one body too many stops it at that line.
python3 - <<'PY'
with open("big.scene", "w") as f:
    f.write("box_half = 1000\nx y z vx vy vz radius density\n")
    for i in range(131073):
        f.write("%d %d %d 0 0 0 0.1 1\n" % (i % 50 * 2 - 50, i // 50 % 50 * 2 - 50, i // 2500 * 2 - 500))
PY
expect_error 2 "${cpu[@]}" --frames 1 --scene big.scene --triplets on
grep -q "big.scene:131075: more than 131072 bodies, the most this run can take (the triplet maps" err.txt \
  && ok || fail "scene file too large: $(cat err.txt)"

# Memory that cannot be had: exit 2, the bytes needed, no crash. (AddressSanitizer reserves
# terabytes of address space at start, so a sanitizer build cannot run under ulimit -v.)
if ! ldd "$nbsim" 2>/dev/null | grep -q libasan; then
  (ulimit -v 400000; "$nbsim" "${cpu[@]}" --frames 1 --n 8000000 --tile 128 >out.txt 2>err.txt)
  code=$?
  [ "$code" -eq 2 ] && grep -q "N = 8000000 bodies: cannot allocate 512000000 bytes of host memory" err.txt \
    && [ "$(wc -l <err.txt)" -eq 1 ] && ok || fail "out of memory: exit $code, $(cat err.txt)"
fi

# ---- --box against the bodies ----
expect_error 2 "${cpu[@]}" --frames 1 --box 1
grep -q -- "--box 1 is too small for the scene gas with 4096 bodies: its spheres reach 15.75 m from the centre; use --box 15.8 or more" err.txt \
  && ok || fail "box too small: $(cat err.txt)"
"$nbsim" "${cpu[@]}" --frames 1 --box 15.8 >/dev/null 2>err.txt && ok || fail "the suggested box: $(cat err.txt)"
printf 'box_half = 10\n%s\n0 0 0 0 0 0 0.5 1\n4 0 0 0 0 0 0.5 1\n' "$header" >wide.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene wide.scene --box 3
grep -q "wide.scene:4: body outside the box: body 2: centre (4, 0, 0) is beyond the walls at +-3 (--box)" err.txt \
  && ok || fail "file outside --box: $(cat err.txt)"
"$nbsim" "${cpu[@]}" --frames 1 --scene wide.scene --box 5 --save-state boxed.scene >/dev/null 2>err.txt \
  && grep -q "^box_half = 5$" boxed.scene && ok || fail "file inside --box: $(cat err.txt)"

# Whatever --save-state writes loads back, also after a run pushed bodies hard into the walls.
printf 'box_half = 2\nstiffness = 50\n%s\n1.4 0 0 10 0 0 0.5 1\n-1.4 0 0 -10 0 0 0.5 1\n0 1.4 0 0 10 0 0.5 1\n' "$header" >walls.scene
"$nbsim" "${cpu[@]}" --frames 1 --steps-per-frame 30 --scene walls.scene --save-state pushed.scene >/dev/null 2>err.txt \
  && ok || fail "wall run: $(cat err.txt)"
python3 -c "
import sys
rows = [l.split() for l in open('pushed.scene') if l[0] in '-0123456789']
sys.exit(0 if any(abs(float(c)) > 2 for r in rows for c in r[:3]) else 1)" \
  && ok || fail "the wall run did not push a centre beyond a wall (the test needs one)"
"$nbsim" "${cpu[@]}" --frames 1 --scene pushed.scene >/dev/null 2>err.txt && ok || fail "saved state refused: $(cat err.txt)"
for scene in gas pile collide triplets; do
  "$nbsim" "${cpu[@]}" --frames 2 --scene $scene --n 100 --save-state "$scene.state" >/dev/null 2>err.txt \
    && "$nbsim" "${cpu[@]}" --frames 1 --scene "$scene.state" >/dev/null 2>>err.txt && ok \
    || fail "round trip of $scene: $(cat err.txt)"
done

# ---- scene files ----
expect_error 2 "${cpu[@]}" --frames 1 --scene no-such.scene
grep -q "'no-such.scene': no such file, and not a built-in scene (gas, pile, collide, triplets, lattice, heap)" err.txt \
  && ok || fail "missing scene: $(cat err.txt)"
printf '\xef\xbb\xbfbox = 4\n%s\n0 0 0 0 0 0 0.5 1\n' "$header" >bom.scene
"$nbsim" "${cpu[@]}" --frames 1 --scene bom.scene >/dev/null 2>err.txt && ok || fail "byte order mark: $(cat err.txt)"
printf 'foo\033]0;pwned\007 = 1\n%s\n' "$header" >ctl.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene ctl.scene
! LC_ALL=C grep -q "$(printf '[\001-\037\177]')" err.txt && grep -q "unknown key 'foo?\]0;pwned?'" err.txt \
  && ok || fail "control bytes echoed: $(od -c err.txt | head -3)"
expect_error 2 "${cpu[@]}" --frames 1 --scene <(printf 'dt = 1e308\n%s\n0 0 0 0 0 0 0.5 1\n' "$header")
grep -q "bad value: dt: '1e308' must be a time step" err.txt && ok || fail "dt 1e308 in a file: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --dt 1e308
# A body so heavy that the default step would be beyond any step: the file, the line, the values.
printf '%s\n0 0 0 0 0 0 0.5 1e300\n' "$header" >heavy.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene heavy.scene
grep -q "heavy.scene:2: body 1, the lightest: radius 0.5 m and density 1e+300 kg/m^3 give a mass" err.txt \
  && ok || fail "density 1e300: $(cat err.txt)"
printf 'box_half = 1e9\n%s\n0 0 0 0 0 0 1e30 1\n' "$header" >huge.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene huge.scene
grep -q "huge.scene:3: sphere wider than the box: body 1: radius 1e+30 m" err.txt \
  && ok || fail "radius 1e30: $(cat err.txt)"
# Decimal numbers only, for every numeric flag as in files.
for flag in --n --seed --tile --threads --frames --energy-every --steps-per-frame --dt --stiffness \
            --box --atm-nu --atm-cutoff --restitution; do
  expect_error 2 "${cpu[@]}" --frames 1 "$flag" 0x10
done
expect_error 2 "${cpu[@]}" --frames 1 --gravity 0,0x1,0

# Resuming a pile from its dump keeps its physics (gravity, restitution ...), or one notice says
# which parameters were not restored: never gravity 0 and restitution 0.9 without a word.
for fmt in xyz lammpstrj nc; do
  if [ "$fmt" = nc ] && ! "$nbsim" --version | grep -q "NetCDF (.nc) yes"; then continue; fi
  "$nbsim" "${cpu[@]}" --scene pile --n 200 --frames 3 --dump "pile.$fmt" >/dev/null 2>err.txt \
    && "$nbsim" --backend cpu --scene "pile.$fmt" --frames 1 --save-state resumed.state >/dev/null 2>err.txt \
    && ok || fail "resume from pile.$fmt: $(cat err.txt)"
  if grep -Eq "^gravity = 0, -9.81(0*5)?, 0$" resumed.state && grep -q "^restitution = 0.5$" resumed.state; then
    ok # restored
  else
    [ "$(grep -c "not restored" err.txt)" -eq 1 ] && grep -q "pile.$fmt: warning: .*gravity.*not restored" err.txt \
      && grep "not restored" err.txt | grep -q restitution && ok \
      || fail "resume from pile.$fmt: physics dropped without a word: $(grep -E 'gravity|restitution' resumed.state) $(cat err.txt)"
  fi
done

# A cut-off or corrupt NetCDF dump as a scene (built with NetCDF): the complete frames load, as
# from the text formats (never zeros read past the end); a file with no complete frame and bytes
# that are no NetCDF are bad input, exit 2 like a bad text scene.
if "$nbsim" --version | grep -q "NetCDF (.nc) yes"; then
  "$nbsim" "${cpu[@]}" --scene pile --n 300 --frames 30 --dump whole.nc --dump-every 10 >/dev/null 2>err.txt \
    && ok || fail "dump for the cut: $(cat err.txt)"
  head -c 40000 whole.nc >cut.nc
  "$nbsim" --backend cpu --scene cut.nc --frames 1 --save-state cut.state >/dev/null 2>err.txt \
    && ! grep -q "share a centre" err.txt && ok || fail "a cut .nc: $(cat err.txt)"
  python3 -c "
import sys
rows = [l.split() for l in open('cut.state') if l[0] in '-0123456789']
sys.exit(0 if len(rows) == 300 and sum(float(r[1]) == 0.0 for r in rows) < 3 else 1)" \
    && ok || fail "a cut .nc loaded zeros"
  head -c 3000 whole.nc >early.nc
  expect_error 2 "${cpu[@]}" --frames 1 --scene early.nc
  grep -q "early.nc: truncated" err.txt && ok || fail "cut before a frame: $(cat err.txt)"
  printf 'CDF\001 and then garbage' >junk.nc
  expect_error 2 "${cpu[@]}" --frames 1 --scene junk.nc
  printf 'plain text, not NetCDF\n' >text.nc
  expect_error 2 "${cpu[@]}" --frames 1 --scene text.nc
  grep -q "not a readable NetCDF trajectory 'text.nc'" err.txt && ok || fail "text as .nc: $(cat err.txt)"
fi

# Warnings: one "nbsim:" line each; the run goes on.
printf 'box_half = 5\nbox = 6\n%s\n1 0 0 0 0 0 0.5 1\n1 0 0 0 0 0 0.4 1\n-2 0 0 0 0 0 0.5 1\n' "$header" >warn.scene
"$nbsim" --backend cpu --frames 1 --scene warn.scene --seed 7 >/dev/null 2>err.txt && ok || fail "warnings stopped the run"
grep -q "^nbsim: warn.scene:2: warning: box_half given again (first on line 1): the later value wins$" err.txt \
  && ok || fail "duplicate key: $(cat err.txt)"
grep -q "^nbsim: warn.scene: warning: 1 pair of spheres share a centre (first: bodies 1 and 2)" err.txt \
  && ok || fail "coincident spheres: $(cat err.txt)"
grep -q "^nbsim: --seed applies to built-in scenes; the scene file warn.scene does not use it$" err.txt \
  && ok || fail "--seed with a file: $(cat err.txt)"
# Every line nbsim writes to stderr says who wrote it.
! grep -v "^nbsim: " err.txt && ok || fail "stderr lines without the nbsim: prefix"
# --quiet hides progress and notices, never warnings: the same three lines, and nothing else.
"$nbsim" --backend cpu --frames 1 --scene warn.scene --seed 7 --quiet >/dev/null 2>quiet.txt \
  && grep -v -e "given again" -e "share a centre" -e "does not use it" err.txt | grep -q . \
  && [ "$(wc -l <quiet.txt)" -eq 3 ] && grep -q "box_half given again" quiet.txt \
  && grep -q "share a centre" quiet.txt && grep -q -- "--seed applies to built-in scenes" quiet.txt \
  && ok || fail "--quiet and warnings: $(cat quiet.txt)"
"$nbsim" --backend cpu --frames 1 --n 20 --dt 0.01 --quiet >/dev/null 2>quiet.txt \
  && [ "$(wc -l <quiet.txt)" -eq 1 ] && grep -q "^nbsim: warning: --dt 0.01 is more than" quiet.txt \
  && ok || fail "--quiet hid the --dt warning: $(cat quiet.txt)"
"$nbsim" --backend cpu --frames 1 --scene triplets --n 100 --quiet >/dev/null 2>quiet.txt \
  && [ ! -s quiet.txt ] && ok || fail "--quiet showed a notice: $(cat quiet.txt)"

# ---- periodic boundaries (issue 22): bad axes, and the refusals of a periodic box ----
expect_error 2 "${cpu[@]}" --frames 1 --n 20 --periodic xw
grep -q -- "--periodic: 'xw' must be periodic axes: x, y and z each at most once" err.txt \
  && ok || fail "--periodic xw: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --n 20 --periodic xx
expect_error 2 "${cpu[@]}" --frames 1 --n 20 --periodic ""
expect_error 2 "${cpu[@]}" --frames 1 --scene triplets --n 100 --triplets on --periodic xyz
grep -q "periodic xyz: ATM triplets need a cut-off.*the sum over images is not defined" err.txt \
  && ok || fail "ATM without a cut-off: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --scene triplets --n 100 --triplets on --periodic z \
  --atm-cutoff 1000
grep -q "periodic z: atm_cutoff 1000 m is more than half the box" err.txt \
  && ok || fail "ATM cut-off above half the box: $(cat err.txt)"
printf 'box_half = 2.5\n%s\n0 0 0 0 0 0 1.5 1000\n' "$header" >big_ball.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene big_ball.scene --periodic y
grep -q "periodic y: a contact diameter of 3 m is not below half the box (2.5 m)" err.txt \
  && ok || fail "diameter above half the box: $(cat err.txt)"
printf 'periodic = x, q\nbox_half = 5\n%s\n0 0 0 0 0 0 0.5 1000\n' "$header" >per.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene per.scene
grep -q "per.scene:1: bad value: periodic: ' x, q' must be periodic axes" err.txt \
  && ok || fail "periodic in a scene file: $(cat err.txt)"
printf 'periodic = x, z\nbox_half = 5\n%s\n4.9 0 -4.9 1 0 -1 0.5 1000\n' "$header" >per.scene
"$nbsim" "${cpu[@]}" --frames 2 --scene per.scene --save-state per_out.scene 2>err.txt \
  && grep -q "^periodic = x,z$" per_out.scene && ok || fail "periodic round trip: $(cat err.txt)"

# A device or a file without newlines is not read to the end of memory (issue 37): a line longer
# than 64 KiB is refused at once, in one line, whether NUL bytes (/dev/zero) or text.
start=$(date +%s)
timeout 20 "$nbsim" "${cpu[@]}" --frames 1 --scene /dev/zero >out.txt 2>err.txt
code=$?
[ "$code" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] \
  && grep -q "^nbsim: /dev/zero:1: a line longer than 65536 bytes: this is not a scene file" err.txt \
  && ok || fail "--scene /dev/zero: exit $code: $(head -c 300 err.txt)"
[ $(($(date +%s) - start)) -lt 5 ] && ok || fail "--scene /dev/zero took $(($(date +%s) - start)) s"
head -c 200000 /dev/zero | tr '\0' 'x' >long.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene long.scene
grep -q "long.scene:1: a line longer than 65536 bytes" err.txt && ok || fail "long line: $(cat err.txt)"

# Exit codes (issue 37): what the user typed and can mend is 2, also where only trying tells.
expect_error 2 "${cpu[@]}" --frames 1 --n 10 --log /proc/nbsim-test.csv
grep -q "^nbsim: --log: cannot write '/proc/nbsim-test.csv'" err.txt && ok || fail "/proc log: $(cat err.txt)"
ln -s loop.scene loop.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene loop.scene
grep -q "cannot open scene 'loop.scene': Too many levels of symbolic links" err.txt \
  && ok || fail "symlink loop: $(cat err.txt)"

# ---- insertion during the run (include/nbsim/insert.h): bad values in one line, exit 2 ----
expect_error 2 "${cpu[@]}" --frames 1 --insert box:1,0,0,0,1,1
grep -q -- "--insert: 'box:1,0,0,0,1,1' must be box:x0,y0,z0,x1,y1,z1" err.txt && ok || fail "--insert: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --insert-radius lognormal:0,-1
grep -q -- "--insert-radius: 'lognormal:0,-1' must be" err.txt && ok || fail "--insert-radius: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --insert-stop count:0
expect_error 2 "${cpu[@]}" --frames 1 --insert-rate 10
grep -q -- "--insert-rate: no insertion region" err.txt && ok || fail "rate alone: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --n 10 --insert box:0,0,0,30,1,1 --insert-rate 10
grep -q "beyond the box" err.txt && ok || fail "region outside: $(cat err.txt)"
printf 'box_half = 4\ngravity = 0,-9.81,0\ninsert = box:-3,0,-3,3,3,3\ninsert_rate = 100\ninsert_radius = uniform:0.2,0.3\n%s\n' "$header" >pour.scene
printf 'box_half = 4\ninsert = box:-3,0,-3,3,3,3\ninsert_rate = lots\n%s\n' "$header" >badpour.scene
expect_error 2 "${cpu[@]}" --frames 1 --scene badpour.scene
grep -q "badpour.scene:3: bad value: insert_rate: 'lots' must be" err.txt && ok || fail "file key: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --scene pour.scene --gpus 2
grep -q -- "--insert: insertion runs on one rank for now" err.txt && ok || fail "--gpus: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --scene pour.scene --decompose space
grep -q -- "--insert: insertion runs on one rank" err.txt && ok || fail "space: $(cat err.txt)"
# a run from no bodies: the summary says what was inserted, the saved state carries it on
"$nbsim" "${cpu[@]}" --frames 40 --steps-per-frame 20 --scene pour.scene --summary pour.json \
  --save-state pour.state >out.txt 2>err.txt
code=$?
[ "$code" -eq 0 ] && grep -q '"inserted": [1-9]' pour.json && grep -q '^insert_state = ' pour.state \
  && ok || fail "pour: exit $code: $(head -c 300 err.txt)"


# ---- mesh walls: misuse refused in one line (exit 2) ----
printf 'solid t\nfacet normal 0 0 1\nouter loop\n%s\n%s\n%s\nendloop\nendfacet\nendsolid t\n' \
  "vertex -1 -1 0" "vertex 1 -1 0" "vertex 0 1 0" >tri.stl
"$nbsim" "${cpu[@]}" --frames 1 --mesh tri.stl >/dev/null 2>err.txt && ok || fail "tri.stl: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --mesh-scale 2 --mesh tri.stl
grep -q -- "--mesh-scale.*give --mesh FILE before it" err.txt && ok || fail "scale: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --mesh-rotate 0,0,0,0,0,1,1
grep -q -- "--mesh-rotate.*give --mesh FILE before it" err.txt && ok || fail "rotate: $(cat err.txt)"
expect_error 2 "${cpu[@]}" --frames 1 --mesh no_such.stl
grep -q "mesh 'no_such.stl': cannot open" err.txt && ok || fail "missing mesh: $(cat err.txt)"
# the CUDA refusal needs a device to get that far; without one the missing device is the error
"$nbsim" --backend cuda --quiet --frames 1 --mesh tri.stl >out.txt 2>err.txt </dev/null
code=$?
if grep -q "no CUDA device found" err.txt; then
  ok
else
  [ "$code" -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] \
    && grep -q -- "--mesh: mesh walls run on the CPU reference of one process only" err.txt \
    && ok || fail "mesh on cuda: exit $code: $(cat err.txt)"
fi
finish
