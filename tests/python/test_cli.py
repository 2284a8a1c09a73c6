# SPDX-License-Identifier: MIT
"""The same state from Python as from the command line, bit for bit: `nbsim --save-state` and
Simulation.save_state write the same bytes after the same run (the same library, the same
defaults). On the CPU here; on CUDA, one culled run, where a GPU is (skipped without)."""
import os
import subprocess

import numpy as np
import pytest

import nbsim


def same_run(nbsim_bin, tmp_path, backend, scene, n, frames, **settings):
    cli = tmp_path / "cli.txt"
    py = tmp_path / "py.txt"
    flags = []
    for key, value in settings.items():
        flags += ["--" + key.replace("_", "-"), str(value)]
    subprocess.run([nbsim_bin, "--backend", backend, "--scene", scene, "--n", str(n), "--frames",
                    str(frames), "--save-state", str(cli), "--quiet"] + flags, check=True,
                   stdout=subprocess.DEVNULL)
    with nbsim.Simulation(scene, n=n, backend=backend, **settings) as sim:
        assert sim.run(frames) == frames
        sim.save_state(py)
        info = sim.info()
    a, b = nbsim.read_state(cli)[0], nbsim.read_state(py)[0]
    moved = np.abs(a.positions - b.positions).max()
    assert cli.read_bytes() == py.read_bytes(), "states differ (max |dx| = %g m)" % moved
    return info


def test_cpu_same_state_as_the_command_line(nbsim_bin, tmp_path):
    info = same_run(nbsim_bin, tmp_path, "cpu", "pile", 800, 40)
    assert info["culls"] and info["backend"] == "cpu"


def test_cpu_unculled_other_map(nbsim_bin, tmp_path):
    same_run(nbsim_bin, tmp_path, "cpu", "collide", 500, 20, pair_map="rm", tile=32)


def test_gpu_same_state_as_the_command_line(nbsim_bin, tmp_path, gpu):
    """One culled CUDA run (the default: culling on, map ltm, tile 32), N and frames from
    NBSIM_GPU_N / NBSIM_GPU_FRAMES (default 65,536 bodies of the pile, 200 frames)."""
    n = int(os.environ.get("NBSIM_GPU_N", "65536"))
    frames = int(os.environ.get("NBSIM_GPU_FRAMES", "200"))
    info = same_run(nbsim_bin, tmp_path, "cuda", "pile", n, frames)
    assert info["backend"] == "cuda" and info["culls"]
