#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nbsim's trajectories opened by real readers: the program itself (nbsim --dump ... --save-state,
# on the CPU backend) dumps every 10th frame to .xyz, .lammpstrj and .nc (when built with NetCDF)
# and saves its final state; then
#   ncdump -h (netcdf-bin)        the .nc header follows the AMBER convention,
#   ASE (Debian python3-ase)       reads every .xyz frame (velocities and masses through its own
#                                  accessors), the .lammpstrj (which needs a type column) with
#                                  units="si", and the .nc (with python3-netcdf4) in AMBER units,
#   OVITO (pip install ovito)      reads all three formats with radii,
#   MDAnalysis                     reads the .nc in AMBER units,
# each comparing the last frame with the saved state. A reader that is not installed is one
# "skip:" line; the test fails only on a check that ran and failed.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0 ran=0

frames=30 every=10 want=4 # frames 0, 10, 20, 30
# One run per format; the CPU reference is deterministic for a fixed thread count, so every run
# ends in the same state (the last one's is saved).
for fmt in xyz lammpstrj nc; do
  if ! OMP_NUM_THREADS=2 "$nbsim" --backend cpu --scene pile --n 300 --steps-per-frame 20 \
       --frames $frames --dump "$work/run.$fmt" --dump-every $every \
       --save-state "$work/final.scene" >"$work/run_$fmt.txt" 2>&1; then
    if [ "$fmt" = nc ] && grep -q "no NetCDF" "$work/run_$fmt.txt"; then
      rm -f "$work/run.nc"
      continue
    fi
    echo "FAIL: nbsim --dump run.$fmt: $(tail -3 "$work/run_$fmt.txt")"
    exit 1
  fi
  grep "dump:" "$work/run_$fmt.txt"
done

if [ -e "$work/run.nc" ]; then
  if command -v ncdump >/dev/null 2>&1; then
    header=$(ncdump -h "$work/run.nc")
    missing=""
    for want_text in ':Conventions = "AMBER"' ':ConventionVersion = "1.0"' 'frame = UNLIMITED' \
                     'float coordinates(frame, atom, spatial)' 'float radius(atom)' \
                     'double time(frame)' 'coordinates:scale_factor = 10000000000.' \
                     'int id(frame, atom)' \
                     'double cell_lengths(frame, cell_spatial)' 'cell_angles:units = "degree"' \
                     'double cell_origin(frame, cell_spatial)'; do
      grep -qF "$want_text" <<<"$header" || missing="$missing [$want_text]"
    done
    [ "$(ncdump -k "$work/run.nc")" = "64-bit offset" ] || missing="$missing [64-bit offset]"
    if [ -z "$missing" ]; then echo "ncdump: run.nc header ok"; ran=$((ran + 1))
    else echo "FAIL: ncdump -h run.nc lacks$missing"; fails=$((fails + 1)); fi
  else
    echo "skip: ncdump (Debian netcdf-bin) is not installed"
  fi
else
  echo "skip: .nc (this build has no NetCDF)"
fi

# The first python3 that imports the module: $NBSIM_PYTHON, python3 on PATH, Debian's.
python_with() {
  for py in "${NBSIM_PYTHON:-}" python3 /usr/bin/python3; do
    [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 && "$py" -c "import $1, numpy" 2>/dev/null \
      && { echo "$py"; return 0; }
  done
  return 1
}

for reader in ase:ase ovito:ovito mdanalysis:MDAnalysis; do
  name=${reader%%:*} module=${reader##*:}
  if ! py=$(python_with "$module"); then
    echo "skip: $name is not installed (python3 -c 'import $module' fails)"
    continue
  fi
  "$py" "$here/traj_check.py" "$name" "$work" $want
  rc=$?
  if [ $rc -eq 0 ]; then ran=$((ran + 1))
  elif [ $rc -ne 77 ]; then fails=$((fails + 1)); fi
done

# Dumps that carry the run's parameters (traj_demo writes them as sim_traj_writer_open_params
# does for the recorder): the readers still read them, and nbsim continues the run with its
# physics (the pile's gravity and restitution, no "not restored" notice).
# A periodic run (--periodic xz): the formats mark x and z periodic and y walled, as ASE reads
# them, and nbsim continues the run periodic (the scene file it saves says so).
mkdir "$work/periodic"
for fmt in xyz lammpstrj; do
  "$nbsim" --backend cpu --scene gas --n 200 --periodic xz --frames 3 \
    --dump "$work/periodic/run.$fmt" >/dev/null 2>&1 \
    || { echo "FAIL: nbsim --periodic xz --dump run.$fmt"; fails=$((fails + 1)); }
  "$nbsim" --backend cpu --scene "$work/periodic/run.$fmt" --frames 1 \
    --save-state "$work/periodic/resumed.$fmt" >/dev/null 2>&1 &&
    grep -q "^periodic = x,z$" "$work/periodic/resumed.$fmt" && ran=$((ran + 1)) ||
    { echo "FAIL: resuming the periodic run.$fmt"; fails=$((fails + 1)); }
done
grep -q "ITEM: BOX BOUNDS pp ff pp" "$work/periodic/run.lammpstrj" && ran=$((ran + 1)) ||
  { echo "FAIL: run.lammpstrj lacks BOX BOUNDS pp ff pp"; fails=$((fails + 1)); }
if py=$(python_with ase); then
  if "$py" - "$work/periodic" <<'PY'
import sys
import ase.io
d = sys.argv[1]
xyz = ase.io.read(d + "/run.xyz", index=-1)
assert list(xyz.pbc) == [True, False, True], xyz.pbc
lmp = ase.io.read(d + "/run.lammpstrj", index=-1, format="lammps-dump-text")
assert list(lmp.pbc) == [True, False, True], lmp.pbc
print(f"ase ({sys.executable}): pbc T F T in the periodic run's dumps")
PY
  then ran=$((ran + 1)); else echo "FAIL: ASE on the periodic dumps"; fails=$((fails + 1)); fi
fi
demo="$(dirname "$nbsim")/traj_demo"
if [ -x "$demo" ]; then
  mkdir "$work/params"
  "$demo" --write-only --keep --scene pile --n 300 --frames 3 --out "$work/params" >/dev/null \
    || { echo "FAIL: traj_demo --write-only --keep"; fails=$((fails + 1)); }
  for f in "$work"/params/write_only.*; do
    "$nbsim" --backend cpu --scene "$f" --frames 1 --save-state "$work/params/resumed" >/dev/null 2>"$work/params/err" \
      && grep -Eq "^gravity = 0, -9.81(0*5)?, 0$" "$work/params/resumed" && grep -q "^restitution = 0.5$" "$work/params/resumed" \
      && ! grep -q "not restored" "$work/params/err" && ran=$((ran + 1)) \
      || { echo "FAIL: resuming from $(basename "$f"): $(cat "$work/params/err")"; fails=$((fails + 1)); }
  done
  if py=$(python_with ase); then
    if "$py" - "$work/params" <<'PY'
import sys
import ase.io
d = sys.argv[1]
xyz = ase.io.read(d + "/write_only.xyz", index=":")
assert len(xyz) == 3, len(xyz)
assert list(xyz[-1].info["nbsim_gravity"]) == [0.0, -9.81, 0.0], xyz[-1].info
assert xyz[-1].info["nbsim_restitution"] == 0.5
lmp = ase.io.read(d + "/write_only.lammpstrj", index=":", format="lammps-dump-text")
assert len(lmp) == 3 and len(lmp[-1]) == 300, len(lmp)
print(f"ase ({sys.executable}): dumps with nbsim's parameters read")
PY
    then ran=$((ran + 1)); else echo "FAIL: ASE on dumps with parameters"; fails=$((fails + 1)); fi
  fi
  if py=$(python_with ovito); then
    if "$py" - "$work/params" <<'PY'
import sys
from ovito.io import import_file
for ext in ("xyz", "lammpstrj"):
    pipeline = import_file(f"{sys.argv[1]}/write_only.{ext}")
    assert pipeline.num_frames == 3, (ext, pipeline.num_frames)
    assert pipeline.compute(2).particles.count == 300
print("ovito: dumps with nbsim's parameters read")
PY
    then ran=$((ran + 1)); else echo "FAIL: OVITO on dumps with parameters"; fails=$((fails + 1)); fi
  fi
fi

# Past 357,913,941 bodies the .nc is CDF-5 (64-bit data; traj_netcdf.c: CDF-2 holds no frame's
# coordinates past 4 GiB). The same writer in that variant at 300 bodies (traj_demo --nc-version
# 5, the scene's initial state in each frame, beside an .xyz of it): ncdump sees cdf5, nbsim
# resumes from it with its parameters, ASE (netCDF4-python) reads it as the .xyz. MDAnalysis
# reads NetCDF through scipy's netcdf_file, which takes CDF-1 and CDF-2 only: smaller runs stay
# CDF-2 for it.
if [ -x "$demo" ] && [ -e "$work/run.nc" ]; then
  mkdir "$work/cdf5"
  if "$demo" --write-only --keep --scene pile --n 300 --frames 3 --formats xyz,nc --nc-version 5 \
       --out "$work/cdf5" >/dev/null; then
    if command -v ncdump >/dev/null 2>&1; then
      [ "$(ncdump -k "$work/cdf5/write_only.nc")" = cdf5 ] && ran=$((ran + 1)) ||
        { echo "FAIL: ncdump -k of the CDF-5 file: $(ncdump -k "$work/cdf5/write_only.nc")"
          fails=$((fails + 1)); }
    fi
    "$nbsim" --backend cpu --scene "$work/cdf5/write_only.nc" --frames 1 \
      --save-state "$work/cdf5/resumed" >/dev/null 2>"$work/cdf5/err" &&
      grep -q "^restitution = 0.5$" "$work/cdf5/resumed" && ran=$((ran + 1)) ||
      { echo "FAIL: nbsim resuming from a CDF-5 .nc: $(cat "$work/cdf5/err")"; fails=$((fails + 1)); }
    if py=$(python_with netCDF4) && "$py" -c "import ase" 2>/dev/null; then
      if "$py" - "$work/cdf5" <<'PY'
import sys
import ase.io
import numpy as np
d = sys.argv[1]
nc = ase.io.read(d + "/write_only.nc", index=":")
xyz = ase.io.read(d + "/write_only.xyz", index=-1)
assert len(nc) == 3 and len(nc[-1]) == 300, (len(nc), len(nc[-1]))
assert np.allclose(nc[-1].get_positions() * 1e-10, xyz.get_positions(), rtol=2e-7, atol=0)
assert np.allclose(nc[-1].arrays["radius"], xyz.arrays["radius"], rtol=2e-7, atol=0)
print(f"ase ({sys.executable}): the CDF-5 .nc read, as its .xyz")
PY
      then ran=$((ran + 1)); else echo "FAIL: ASE on the CDF-5 .nc"; fails=$((fails + 1)); fi
    else
      echo "skip: ASE with netCDF4 on the CDF-5 .nc (not installed)"
    fi
    if py=$(python_with ovito); then
      if "$py" - "$work/cdf5" <<'PY'
import sys
import numpy as np
from ovito.io import import_file
d = sys.argv[1]
nc, xyz = import_file(d + "/write_only.nc"), import_file(d + "/write_only.xyz")
assert nc.num_frames == 3, nc.num_frames
a, b = nc.compute(2).particles, xyz.compute(2).particles
assert np.allclose(a.positions[...], b.positions[...], rtol=2e-7, atol=0), "positions"
assert np.allclose(a["Radius"][...], b["Radius"][...], rtol=2e-7, atol=0), "radii"
print("ovito: the CDF-5 .nc read, as its .xyz")
PY
      then ran=$((ran + 1)); else echo "FAIL: OVITO on the CDF-5 .nc"; fails=$((fails + 1)); fi
    fi
  else
    echo "FAIL: traj_demo --nc-version 5"; fails=$((fails + 1))
  fi
fi

echo "$ran reader checks passed, $fails failed"
[ $fails -eq 0 ]
