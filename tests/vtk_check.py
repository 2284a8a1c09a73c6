#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nbsim's ParaView series (--dump run.pvd) read back by VTK's own XML reader (Debian's
python3-vtk9: the reader ParaView runs), checked against an independent computation.

For each scene, CPU backend, two runs of the same frames (the reference is deterministic for a
fixed thread count): one dumps run.pvd, the other run.xyz (full double precision). Then, every
frame of the series:
  * the .pvd lists it with its time, and the .vtu's TimeValue and step agree with the .xyz's;
  * positions, radii, masses, velocities, forces and angular velocities equal the .xyz's bit for
    bit (both hold the double state);
  * one poly-vertex of the N bodies, then line cells: the contact lines are exactly the pairs
    whose centres are closer than their radii's sum (minimum images on periodic axes), found here
    by brute force, a contact across a periodic face drawn as two half segments ending at the
    contact's middle in each body's image;
  * each contact's overlap, a normal force along the line of centres and a tangential one across
    it within the Coulomb limit;
  * the balance: for every body touching no wall, the contact forces on it plus m g equal the
    force the run computed (point data `force`), to rounding without dashpots (restitution 1),
    within the half step's damping with them (trajectory docs);
and a run killed mid-way leaves a .pvd whose every frame reads.

With --backend cuda (test_vtk_gpu.sh) the runs are the GPU's, whose frames with friction come from
a read of the state (the springs): the same checks against the series' own bodies (a second GPU
run need not repeat the first bit for bit, so there is no .xyz), the balance within float
rounding.

usage: vtk_check.py NBSIM WORKDIR [--backend cuda] [--write-only | --check-only]
  --write-only: run and write the series, check nothing (a GPU machine without VTK); then
  --check-only on a machine with VTK reads those series from WORKDIR (NBSIM unused).
Exit status: 0 every check passed, 1 a check failed."""
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np

VTK_POLY_VERTEX, VTK_LINE = 2, 3


def scene_text(periodic, restitution, gravity, seed):
    """A dense frictional scene: a jittered lattice of overlapping spheres, 8 a side, whose
    outer layers touch across the faces when they are periodic."""
    rng = np.random.default_rng(seed)
    side, half = 8, 2.5
    a = 2 * half / side
    lines = [f"box_half = {half}", "friction = 0.5", "rolling_friction = 0.1",
             f"restitution = {restitution}", f"gravity = {gravity[0]}, {gravity[1]}, {gravity[2]}",
             "steps_per_frame = 5"]
    if periodic:
        lines.append("periodic = xyz")
    lines.append("x y z vx vy vz radius density")
    for k in range(side ** 3):
        c = np.array([k % side, k // side % side, k // side // side]) + 0.5
        x = -half + a * c + rng.uniform(-0.02, 0.02, 3)
        if not periodic:  # off the walls at the start
            x = np.clip(x, -half + 0.36, half - 0.36)
        v = rng.uniform(-0.5, 0.5, 3)
        r = rng.uniform(0.30, 0.34)
        lines.append(" ".join(f"{q:.17g}" for q in (*x, *v, r, 1.0)))
    return "\n".join(lines) + "\n"


def read_xyz(path):
    """Per frame: dict of time, step and the body columns (arrays in id order)."""
    frames = []
    with open(path) as f:
        while True:
            head = f.readline()
            if not head:
                break
            n = int(head)
            comment = f.readline()
            info = dict(kv.split("=", 1) for kv in comment.split() if "=" in kv)
            rows = np.array([[float(x) for x in f.readline().split()[1:]] for _ in range(n)])
            # id pos(3) velo(3) momenta(3) radius mass masses forces(3) omega(3)
            frames.append({"time": float(info["Time"]), "step": int(info["Step"]),
                           "pos": rows[:, 1:4], "vel": rows[:, 4:7], "radius": rows[:, 10],
                           "mass": rows[:, 11], "force": rows[:, 13:16], "spin": rows[:, 16:19]})
    return frames


def read_vtu(path):
    # imported here: --write-only runs where VTK is not installed
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader

    r = vtkXMLUnstructuredGridReader()
    r.SetFileName(path)
    r.Update()
    g = r.GetOutput()
    if g is None or g.GetNumberOfPoints() == 0:
        raise AssertionError(f"{path}: VTK read no points")
    pd, cd, fd = g.GetPointData(), g.GetCellData(), g.GetFieldData()
    out = {"points": vtk_to_numpy(g.GetPoints().GetData()),
           "types": np.array([g.GetCellType(c) for c in range(g.GetNumberOfCells())]),
           "cells": [[g.GetCell(c).GetPointId(k) for k in range(g.GetCell(c).GetNumberOfPoints())]
                     for c in range(g.GetNumberOfCells())]}
    for data in (pd, cd, fd):
        for k in range(data.GetNumberOfArrays()):
            out[data.GetArrayName(k)] = vtk_to_numpy(data.GetAbstractArray(k))
    return out


def touching_pairs(pos, radius, half, periodic):
    """{(i, j): image separation x_i - x_j} over i > j, by brute force."""
    d = pos[:, None, :] - pos[None, :, :]
    if periodic:
        d -= 2 * half * np.rint(d / (2 * half))
    dist = np.linalg.norm(d, axis=2)
    i, j = np.nonzero(np.tril(dist < radius[:, None] + radius[None, :], k=-1))
    return {(a, b): d[a, b] for a, b in zip(i, j)}


class Check:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def ok(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL:", what)
        return cond


def own_bodies(v, n):
    """The frame's bodies as the .vtu holds them (the GPU's check has no .xyz)."""
    return {"time": v["TimeValue"][0], "step": v["step"][0], "pos": v["points"][:n],
            "vel": v["velocity"][:n], "radius": v["radius"][:n], "mass": v["mass"][:n],
            "force": v["force"][:n], "spin": v["angular_velocity"][:n]}


def check_frame(ck, name, k, v, x, half, periodic, gravity, force_tol):
    n = len(x["radius"])
    where = f"{name} frame {k}"
    ck.ok(v["TimeValue"][0] == x["time"] and v["step"][0] == x["step"],
          f"{where}: TimeValue {v['TimeValue'][0]} step {v['step'][0]}, .xyz {x['time']} "
          f"{x['step']}")
    ck.ok(np.array_equal(v["id"][:n], np.arange(1, n + 1)) and not v["id"][n:].any(),
          f"{where}: ids 1..N, 0 on the half segments' ends")
    for key, vk in (("pos", "points"), ("vel", "velocity"), ("radius", "radius"),
                    ("mass", "mass"), ("force", "force"), ("spin", "angular_velocity")):
        ck.ok(np.array_equal(v[vk][:n], x[key]), f"{where}: {vk} differs from the .xyz's "
              f"by {np.max(np.abs(v[vk][:n] - x[key]))}")
    ck.ok(np.all(np.abs(v["points"][:n]) <= half * 1.5) and np.all(v["radius"][:n] > 0),
          f"{where}: bodies outside the box or without a radius")
    ck.ok(v["types"][0] == VTK_POLY_VERTEX and v["cells"][0] == list(range(n))
          and (v["types"][1:] == VTK_LINE).all(), f"{where}: a poly-vertex, then lines")

    pairs = touching_pairs(x["pos"], x["radius"], half, periodic)
    ids = v["body_ids"][1:] - 1
    lines = [tuple(p) for p in ids]
    seen = set(lines)
    wrapped = {p for p, d in pairs.items() if not np.allclose(d, x["pos"][p[0]] - x["pos"][p[1]])}
    ck.ok(seen == set(pairs) and len(lines) == len(pairs) + len(wrapped)
          and v["contacts"][0] == len(pairs),
          f"{where}: {len(seen)} contacts drawn in {len(lines)} lines, {len(pairs)} pairs touch "
          f"({len(wrapped)} across a face)")
    if periodic:
        ck.ok(len(wrapped) > 0, f"{where}: some contact crosses a periodic face")
    pts = v["points"]
    net = np.zeros((n, 3))
    scale = np.zeros(n)
    mu = 0.5
    for c, (i, j) in enumerate(lines, start=1):
        d = pairs.get((i, j))
        if d is None:
            continue
        dist = np.linalg.norm(d)
        nrm = d / dist
        a, b = v["cells"][c]
        if (i, j) in wrapped:  # two half segments: body to its end at the middle
            end = pts[i] - d / 2 if a == i else pts[j] + d / 2
            ck.ok(a in (i, j) and b >= n and np.allclose(pts[b], end, atol=1e-12),
                  f"{where}: half segment of {i + 1}-{j + 1}")
            if a == j:
                continue  # the contact's forces once
        else:
            ck.ok((a, b) == (i, j), f"{where}: line {c} joins {a + 1}-{b + 1}, not {i + 1}-{j + 1}")
        fn, ft = v["normal_force"][c], v["tangential_force"][c]
        ck.ok(abs(v["overlap"][c] - (x["radius"][i] + x["radius"][j] - dist)) < 1e-12,
              f"{where}: overlap of {i + 1}-{j + 1}")
        fnm, ftm = np.linalg.norm(fn), np.linalg.norm(ft)
        # a GPU frame's springs are floats: the tangential force recomputed from one leaves the
        # tangent plane by the float's rounding (a few 1e-6 of the force), the CPU's by 1e-16
        along = 1e-9 if force_tol < 1e-6 else 1e-5
        ck.ok(np.linalg.norm(np.cross(fn, nrm)) <= along * fnm
              and abs(ft @ nrm) <= along * max(fnm, ftm)
              and abs(v["normal_force_magnitude"][c] - fnm) <= 1e-12 * fnm
              and abs(v["tangential_force_magnitude"][c] - ftm) <= 1e-12 * max(ftm, 1e-300)
              and ftm <= mu * abs(fn @ nrm) * (1 + along),
              f"{where}: contact {i + 1}-{j + 1}: F_n {fn}, F_t {ft}, n {nrm}")
        f = fn + ft
        net[i] += f
        net[j] -= f
        scale[i] += np.linalg.norm(f)
        scale[j] += np.linalg.norm(f)
    net += x["mass"][:, None] * np.asarray(gravity)[None, :]
    free = np.ones(n, bool) if periodic else (np.abs(x["pos"]) + x["radius"][:, None] < half).all(1)
    err = np.linalg.norm(net - x["force"], axis=1)
    bad = free & (err > force_tol * (scale + x["mass"] * np.linalg.norm(gravity)) + 1e-12)
    ck.ok(not bad.any(), f"{where}: {bad.sum()} bodies' contact forces do not add up to their "
          f"force (worst {np.max(err[free] / np.maximum(scale[free], 1e-300))} of their sum)")
    return max(np.max(v["tangential_force_magnitude"]), 0.0), free.sum()


def run(nbsim, backend, scene, out, frames, every):
    env = dict(os.environ, OMP_NUM_THREADS="2")
    p = subprocess.run([nbsim, "--backend", backend, "--scene", scene, "--frames", str(frames),
                        "--dump", out, "--dump-every", str(every)], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError(f"nbsim --dump {out}: exit {p.returncode}: {p.stderr[-500:]}")


def check_scene(ck, nbsim, backend, work, name, periodic, restitution, gravity, force_tol,
                mode=""):
    d = os.path.join(work, name)
    scene = os.path.join(d, "scene.txt")
    if mode != "--check-only":
        os.makedirs(d)
        with open(scene, "w") as f:
            f.write(scene_text(periodic, restitution, gravity, seed=len(name)))
        run(nbsim, backend, scene, os.path.join(d, "run.pvd"), 20, 4)
    if mode == "--write-only":
        return
    sets = ET.parse(os.path.join(d, "run.pvd")).getroot().find("Collection").findall("DataSet")
    if backend == "cpu":
        run(nbsim, backend, scene, os.path.join(d, "run.xyz"), 20, 4)
        xyz = read_xyz(os.path.join(d, "run.xyz"))
    else:
        xyz = [None] * len(sets)
    ck.ok(len(sets) == len(xyz) == 6, f"{name}: {len(sets)} frames listed, .xyz has {len(xyz)}")
    ft_max, free = 0.0, 0
    for k, (ds, x) in enumerate(zip(sets, xyz)):
        v = read_vtu(os.path.join(d, ds.get("file")))
        x = x if x is not None else own_bodies(v, 512)
        ck.ok(ds.get("file") == f"run/run_{k:06d}.vtu" and float(ds.get("timestep")) == x["time"],
              f"{name}: DataSet {k}: {ds.attrib}")
        t, fr = check_frame(ck, name, k, v, x, 2.5, periodic, gravity, force_tol)
        ft_max, free = max(ft_max, t), free + fr
    ck.ok(ft_max > 0.0, f"{name}: no tangential force in any frame")
    ck.ok(free > 0, f"{name}: no body free of the walls to balance")
    leftovers = [f for f in os.listdir(os.path.join(d, "run")) if not f.endswith(".vtu")]
    ck.ok(not leftovers, f"{name}: left in run/: {leftovers}")
    print(f"{name} ({backend}): {len(sets)} frames read by VTK, contacts and forces checked")


def check_killed(ck, nbsim, work):
    """A run killed mid-way (SIGKILL: nothing is finished) leaves a valid series."""
    d = os.path.join(work, "killed")
    os.makedirs(d)
    scene = os.path.join(d, "scene.txt")
    with open(scene, "w") as f:
        f.write(scene_text(True, 1.0, (0, 0, 0), seed=3))
    p = subprocess.Popen([nbsim, "--backend", "cpu", "--scene", scene, "--frames", "100000",
                          "--dump", os.path.join(d, "run.pvd"), "--dump-every", "1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, OMP_NUM_THREADS="1"))
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(os.path.join(d, "run", "run_000003.vtu")):
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    sets = ET.parse(os.path.join(d, "run.pvd")).getroot().find("Collection").findall("DataSet")
    ck.ok(len(sets) >= 3, f"killed: {len(sets)} frames listed")
    for ds in sets:
        v = read_vtu(os.path.join(d, ds.get("file")))
        ck.ok(len(v["radius"]) >= 512, f"killed: {ds.get('file')}: {len(v['radius'])} points")
    print(f"killed: the .pvd lists {len(sets)} frames, each reads")


def main():
    nbsim, work = sys.argv[1], sys.argv[2]
    backend = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--backend" else "cpu"
    mode = sys.argv[-1] if sys.argv[-1] in ("--write-only", "--check-only") else ""
    ck = Check()
    # restitution 1: no dashpot, so the frame's forces are the step's to rounding (the GPU's:
    # float sums, recomputed here in double)
    tol = 1e-9 if backend == "cpu" else 1e-4
    try:
        check_scene(ck, nbsim, backend, work, "periodic", True, 1.0, (0, 0, 0), tol, mode)
        check_scene(ck, nbsim, backend, work, "walls", False, 1.0, (0, -9.81, 0), tol, mode)
        if backend == "cpu" and not mode:
            # damped: the dashpots see the step's end velocities, the step the half-kicked ones
            check_scene(ck, nbsim, backend, work, "damped", True, 0.7, (0, 0, 0), 2e-2)
            check_killed(ck, nbsim, work)
    except Exception as e:  # a reader or a run that failed: one line, not a traceback
        ck.ok(False, f"{type(e).__name__}: {e}")
    print(f"{ck.passed} passed, {ck.failed} failed")
    return 1 if ck.failed else 0


if __name__ == "__main__":
    sys.exit(main())
