# SPDX-License-Identifier: MIT
"""Saving and loading states, trajectories recorded and read back."""
import numpy as np
import pytest

import nbsim
from conftest import cpu_sim


def test_save_load_round_trip(tmp_path):
    sim = cpu_sim("pile", 300)
    sim.run(20)
    path = tmp_path / "state.txt"
    sim.save_state(path)
    s = sim.state()
    back, params = nbsim.read_state(path)
    assert np.array_equal(back.positions, s.positions)  # %.17g: exact
    assert np.array_equal(back.velocities, s.velocities)
    assert np.array_equal(back.radii, s.radii) and np.array_equal(back.masses, s.masses)
    assert params["dt"] == sim.params["dt"] and params["gravity"] == sim.params["gravity"]
    twin = nbsim.Simulation.from_file(path, backend="cpu", threads=1)
    assert np.array_equal(twin.state().positions, s.positions)
    assert twin.params == sim.params
    # both go on the same way (the forces of the loaded state are those of the saved one)
    sim.run(10)
    twin.run(10)
    assert np.array_equal(twin.state().positions, sim.state().positions)


def test_load_state_replaces_the_bodies(tmp_path):
    small = cpu_sim("gas", 50)
    path = tmp_path / "small.txt"
    small.save_state(path)
    sim = cpu_sim("pile", 200, pair_map="rm", tile=32)
    sim.run(3)
    sim.load_state(path)
    assert sim.n == 50 and sim.frame == 0 and sim.pair_map == "rm" and sim.tile == 32
    assert np.array_equal(sim.positions, small.positions)
    sim.run(2)
    with pytest.raises(nbsim.BadArgumentError, match="no such file"):
        sim.load_state(tmp_path / "missing.txt")
    assert sim.n == 50  # unchanged by a refused load


def test_write_state(tmp_path):
    path = tmp_path / "w.txt"
    pos = np.array([[0.0, 0, 0], [1.5, 0, 0]])
    nbsim.write_state(path, pos, radii=0.5, densities=2.0, params={"box_half": 5})
    s, p = nbsim.read_state(path)
    assert np.array_equal(s.positions, pos) and p["box_half"] == 5.0
    assert np.allclose(s.densities, 2.0)


@pytest.mark.parametrize("ext", [".xyz", ".lammpstrj"])
def test_trajectory(tmp_path, ext):
    sim = cpu_sim("pile", 200)
    path = tmp_path / ("run" + ext)
    sim.record(path, every=2)
    assert sim.info()["recording"] == str(path)
    with pytest.raises(nbsim.BadArgumentError, match="recorded already"):
        sim.record(tmp_path / "other.xyz")
    sim.run(6)
    stats = sim.stop_recording()
    assert stats["frames"] == 4  # the first state, then frames 2, 4, 6
    assert sim.stop_recording() is None
    s = sim.state()
    last, params, info = nbsim.read_trajectory_last(path)
    assert info["frames"] == 4 and info["step"] == 6 and not info["truncated"]
    assert info["time"] == pytest.approx(s.time)
    # the CPU reference's double state, written at full precision: it comes back bit for bit
    # (issue 37: the text formats held it rounded to float, and nothing said so)
    assert np.array_equal(last.positions, s.positions)
    assert np.array_equal(last.velocities, s.velocities)
    assert np.array_equal(last.radii, s.radii) and np.array_equal(last.masses, s.masses)
    assert np.array_equal(last.omega, s.omega)
    assert params["box_half"] == pytest.approx(sim.params["box_half"])  # the cell
    again = nbsim.Simulation.from_file(path, backend="cpu")  # continue from the dump
    assert again.n == 200


@pytest.mark.parametrize("ext", [".xyz", ".lammpstrj"])
def test_trajectory_of_a_frictional_cpu_run_is_exact(tmp_path, ext):
    """With friction the frames carry the spin: also at full precision."""
    rng = np.random.default_rng(5)
    pos = np.stack([np.linspace(-8, 8, 30), rng.uniform(-8, 8, 30), rng.uniform(-8, 8, 30)], 1)
    sim = nbsim.Simulation.from_arrays(pos, rng.normal(size=(30, 3)), radii=0.25,
                                       omega=rng.normal(size=(30, 3)),
                                       params={"friction": 0.3, "gravity": (0, -9.81, 0)},
                                       backend="cpu", threads=1)
    path = tmp_path / ("spin" + ext)
    sim.record(path)
    sim.run(5)
    sim.stop_recording()
    s = sim.state()
    last, params, _ = nbsim.read_trajectory_last(path)
    assert np.array_equal(last.positions, s.positions)
    assert np.array_equal(last.velocities, s.velocities)
    assert np.array_equal(last.omega, s.omega) and np.any(s.omega != 0.0)
    assert params["friction"] == sim.params["friction"]


def test_paraview_series(tmp_path):
    """record("run.pvd"): a .vtu per frame in run/, listed by run.pvd, read by VTK's reader
    (tests/vtk_check.py checks the contacts and forces)."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLUnstructuredGridReader
    sim = cpu_sim("heap", 300)  # friction: the frames carry omega and tangential forces
    sim.record(tmp_path / "run.pvd", every=2)
    sim.run(4)
    assert sim.stop_recording()["frames"] == 3
    s = sim.state()
    text = (tmp_path / "run.pvd").read_text()
    assert text.count("<DataSet ") == 3 and 'file="run/run_000002.vtu"' in text
    r = vtkXMLUnstructuredGridReader()
    r.SetFileName(str(tmp_path / "run" / "run_000002.vtu"))
    r.Update()
    g = r.GetOutput()
    assert np.array_equal(vtk_to_numpy(g.GetPoints().GetData())[:300], s.positions)
    assert np.array_equal(vtk_to_numpy(g.GetPointData().GetArray("angular_velocity"))[:300],
                          s.omega)
    assert g.GetCellData().GetArray("tangential_force") is not None
    with pytest.raises(nbsim.UnsupportedError, match="does not read them back"):
        nbsim.read_trajectory_last(tmp_path / "run.pvd")


def test_trajectory_errors(tmp_path):
    sim = cpu_sim("gas", 20)
    with pytest.raises(nbsim.BadArgumentError, match="trajectory formats"):
        sim.record(tmp_path / "run.csv")
    with pytest.raises(nbsim.FileError):
        sim.record(tmp_path / "no" / "such" / "dir" / "run.xyz")
    with pytest.raises(nbsim.BadArgumentError):
        sim.record(tmp_path / "run.xyz", every=0)
    sim.run(1)


def test_close_completes_a_recording(tmp_path):
    sim = cpu_sim("gas", 30)
    path = tmp_path / "run.xyz"
    sim.record(path)
    sim.run(3)
    sim.close()
    _, _, info = nbsim.read_trajectory_last(path)
    assert info["frames"] == 4
