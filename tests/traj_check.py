#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Opens nbsim's trajectories with a real reader and compares the last frame with the state the
run saved (the scene file --save-state writes, full double precision).

usage: traj_check.py ase|ovito|mdanalysis DIR FRAMES
  DIR holds run.xyz, run.lammpstrj, run.nc (those that exist are checked) and final.scene;
  FRAMES is the number of frames each trajectory must have.
Exit status: 0 checked, 1 a check failed, 77 the reader is not installed (skipped)."""
import os
import sys

FLOAT_TOL = 2e-7  # relative: the .nc carries float32 values (a CPU run's text formats its doubles)


def read_scene(path):
    """(positions, velocities, radii, masses, params) of a saved scene file."""
    params, rows, header = {}, [], None
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if header is None and "=" in line:
                key, value = line.split("=", 1)
                params[key.strip()] = value.strip()
            elif header is None:
                header = line.split()
            else:
                rows.append([float(x) for x in line.split()])
    cols = {name: i for i, name in enumerate(header)}
    pos = [[r[cols["x"]], r[cols["y"]], r[cols["z"]]] for r in rows]
    vel = [[r[cols["vx"]], r[cols["vy"]], r[cols["vz"]]] for r in rows]
    radius = [r[cols["radius"]] for r in rows]
    import math
    mass = [r[cols["density"]] * 4.0 / 3.0 * math.pi * r[cols["radius"]] ** 3 for r in rows]
    return pos, vel, radius, mass, params


class Checker:
    def __init__(self, name):
        self.name, self.failures, self.checks = name, 0, 0

    def ensure(self, cond, what):
        self.checks += 1
        if not cond:
            self.failures += 1
            print(f"FAIL ({self.name}): {what}")

    def near(self, got, want, what, scale=1.0):
        """Every component within FLOAT_TOL of the reference (relative, floor 1 m)."""
        import numpy as np
        got = np.asarray(got, dtype=float) / scale
        want = np.asarray(want, dtype=float)
        if got.shape != want.shape:
            self.ensure(False, f"{what}: shape {got.shape}, want {want.shape}")
            return
        err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
        self.ensure(float(err.max()) <= FLOAT_TOL,
                    f"{what}: worst relative difference {float(err.max()):.3g}")


def check_ase(d, frames, ref, c):
    import ase.io
    path = os.path.join(d, "run.xyz")
    traj = ase.io.read(path, index=":")
    c.ensure(len(traj) == frames, f"run.xyz: {len(traj)} frames, want {frames}")
    last = traj[-1]
    pos, vel, radius, mass, params = ref
    c.near(last.get_positions(), pos, "run.xyz positions")
    # ASE's own accessors: velocities are momenta / masses to it (a velo column alone read as 0)
    c.near(last.get_velocities(), vel, "run.xyz velocities (ASE get_velocities)")
    c.near(last.get_masses(), mass, "run.xyz masses (ASE get_masses)")
    c.near(last.arrays["velo"], vel, "run.xyz velo column")
    c.near(last.arrays["radius"], radius, "run.xyz radii")
    c.ensure(list(last.get_chemical_symbols()[:2]) == ["X", "X"], "run.xyz species X")
    c.ensure(list(last.arrays["id"][:3]) == [1, 2, 3], "run.xyz ids 1..N")
    box = 2.0 * float(params["box_half"])
    c.near(last.cell.lengths(), [box, box, box], "run.xyz Lattice")
    c.ensure(not any(last.pbc), "run.xyz pbc is F F F")
    c.ensure(int(last.info["Step"]) > 0, "run.xyz Step")
    seen = ["run.xyz"]
    from ase import units
    # The LAMMPS dump, as docs/trajectories.md tells ASE to read it: it needs a type column, and
    # units="si" (the dump's ITEM: UNITS; ASE assumes metal unless told): ASE's own units, right.
    path = os.path.join(d, "run.lammpstrj")
    if os.path.exists(path):
        with open(path) as f:
            c.ensure(f.readline() == "ITEM: UNITS\n" and f.readline() == "si\n",
                     "run.lammpstrj starts with ITEM: UNITS si")
        traj = ase.io.read(path, index=":", format="lammps-dump-text", units="si")
        c.ensure(len(traj) == frames, f"run.lammpstrj: {len(traj)} frames, want {frames}")
        last = traj[-1]
        c.near(last.get_positions(), pos, "run.lammpstrj positions (ASE, units='si')",
               scale=units.m)
        c.near(last.get_velocities(), vel, "run.lammpstrj velocities (ASE, units='si')",
               scale=units.m / units.s)
        c.near(last.cell.lengths(), [box, box, box], "run.lammpstrj box (ASE, units='si')",
               scale=units.m)
        c.ensure(not any(last.pbc), "run.lammpstrj boundaries ff ff ff")
        seen.append("run.lammpstrj")
    # The AMBER NetCDF file through ASE's reader (netCDF4-python: Debian's python3-netcdf4),
    # which applies the convention's scale factors: angstrom, angstrom/picosecond; the bodies in
    # the order of the per-frame id (ASE's index variable), radius and mass as arrays.
    path = os.path.join(d, "run.nc")
    if os.path.exists(path):
        try:
            import netCDF4  # noqa: F401
        except ImportError:
            print(f"skip: ASE on run.nc: netCDF4 is not installed for {sys.executable} "
                  "(Debian: python3-netcdf4)")
            return seen
        try:
            traj = ase.io.read(path, index=":")
        except Exception as e:  # ASE 3.22 failed with IndexError on a per-atom id
            c.ensure(False, f"run.nc: ASE cannot read it: {type(e).__name__}: {e}")
            return seen
        c.ensure(len(traj) == frames, f"run.nc: ASE sees {len(traj)} frames, want {frames}")
        last = traj[-1]
        c.near(last.get_positions(), pos, "run.nc positions (ASE, angstrom)", scale=1e10)
        c.near(last.get_velocities(), vel, "run.nc velocities (ASE, angstrom/ps)", scale=1e-2)
        c.near(last.arrays["radius"], radius, "run.nc radius (ASE array, m)")
        c.near(last.arrays["mass"], mass, "run.nc mass (ASE array, kg)")
        seen.append("run.nc")
    return seen


def check_ovito(d, frames, ref, c):
    from ovito.io import import_file
    pos, vel, radius, mass, params = ref
    seen = []
    for name in ("run.xyz", "run.lammpstrj", "run.nc"):
        path = os.path.join(d, name)
        if not os.path.exists(path):
            continue
        pipeline = import_file(path)
        c.ensure(pipeline.num_frames == frames,
                 f"{name}: OVITO sees {pipeline.num_frames} frames, want {frames}")
        data = pipeline.compute(pipeline.num_frames - 1)
        p = data.particles
        c.ensure("Radius" in p, f"{name}: OVITO has no Radius property ({list(p.keys())})")
        c.near(p.positions[...], pos, f"{name} positions (OVITO)")
        if "Radius" in p:
            c.near(p["Radius"][...], radius, f"{name} radii (OVITO)")
        if "Velocity" in p:
            c.near(p["Velocity"][...], vel, f"{name} velocities (OVITO)")
        else:
            c.ensure(False, f"{name}: OVITO has no Velocity property")
        c.ensure("Mass" in p and "Force" in p, f"{name}: OVITO lacks Mass or Force")
        ids = p["Particle Identifier"][...] if "Particle Identifier" in p else None
        c.ensure(ids is not None and int(ids[0]) == 1 and int(ids[-1]) == len(pos),
                 f"{name}: particle identifiers 1..N")
        seen.append(name)
    return seen


def check_mdanalysis(d, frames, ref, c):
    import warnings
    import MDAnalysis as mda
    path = os.path.join(d, "run.nc")
    if not os.path.exists(path):
        return []
    pos, vel, radius, mass, params = ref
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u = mda.Universe.empty(len(pos), trajectory=False)
        u.load_new(path, format="NCDF")
    c.ensure(u.trajectory.n_frames == frames,
             f"run.nc: MDAnalysis sees {u.trajectory.n_frames} frames, want {frames}")
    ts = u.trajectory[-1]
    # MDAnalysis applies the AMBER scale factors: angstrom and angstrom/picosecond.
    c.near(ts.positions, pos, "run.nc positions (MDAnalysis, angstrom)", scale=1e10)
    c.near(ts.velocities, vel, "run.nc velocities (MDAnalysis, angstrom/ps)", scale=1e-2)
    c.ensure(ts.has_forces, "run.nc has forces for MDAnalysis")
    return ["run.nc"]


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    reader, d, frames = argv[1], argv[2], int(argv[3])
    module = {"ase": "ase.io", "ovito": "ovito.io", "mdanalysis": "MDAnalysis"}[reader]
    try:
        __import__(module)
        import numpy  # noqa: F401
    except ImportError:
        print(f"skip: {reader} is not installed for {sys.executable}")
        return 77
    ref = read_scene(os.path.join(d, "final.scene"))
    c = Checker(reader)
    check = {"ase": check_ase, "ovito": check_ovito, "mdanalysis": check_mdanalysis}[reader]
    seen = check(d, frames, ref, c)
    print(f"{reader} ({sys.executable}): {', '.join(seen) or 'nothing'} read, {c.checks} checks, "
          f"{c.failures} failures")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
