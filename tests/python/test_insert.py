# SPDX-License-Identifier: MIT
"""Insertion during the run from Python (Simulation(insert=...): the command line's --insert
settings by scene-file key): N grows as the run goes on, info() counts the bodies, bad settings
raise. The library's own tests: tests/test_insert.c."""
import pytest

import nbsim


def pour_scene(tmp_path):
    path = tmp_path / "pour.scene"
    path.write_text("box_half = 3\ngravity = 0, -9.81, 0\nstiffness = 1000\ndt = 1e-4\n"
                    "steps_per_frame = 100\nx y z vx vy vz radius density\n")
    return str(path)


def test_pour_grows(tmp_path):
    sim = nbsim.Simulation(pour_scene(tmp_path), backend="cpu", threads=1,
                           insert={"insert": "box:-2,0.5,-2,2,2.5,2", "insert_rate": 150,
                                   "insert_radius": "uniform:0.15,0.25",
                                   "insert_velocity": (0, -0.5, 0)})
    first = sim.info()["n"]
    assert first > 0 and sim.info()["inserted"] == first
    sim.run(130)
    info = sim.info()
    assert info["n"] > 2 * first and info["inserted"] == info["n"]
    assert "batches" in info["insertion"]
    assert sim.state().positions.shape == (info["n"], 3)


def test_bad_settings(tmp_path):
    with pytest.raises(nbsim.BadArgumentError, match="unknown insertion setting"):
        nbsim.Simulation(pour_scene(tmp_path), backend="cpu", insert={"insert_speed": 1})
    with pytest.raises(nbsim.BadArgumentError, match="must be"):
        nbsim.Simulation(pour_scene(tmp_path), backend="cpu",
                         insert={"insert": "box:0,0,0,1,1,1", "insert_rate": "fast"})
    with pytest.raises(nbsim.BadArgumentError, match="no bodies"):
        nbsim.Simulation(pour_scene(tmp_path), backend="cpu")
