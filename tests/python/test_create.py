# SPDX-License-Identifier: MIT
"""Creating a simulation from each source, and every way of getting it wrong: an exception with
the library's message, never a crash."""
import numpy as np
import pytest

import nbsim
from conftest import cpu_sim


def test_builtin_scenes():
    names = [s["name"] for s in nbsim.scenes()]
    assert {"gas", "pile", "collide", "triplets", "lattice"} <= set(names)
    for name in names:
        with nbsim.Simulation(name, n=64, backend="cpu", threads=1, triplets=False) as sim:
            assert sim.n == 64 and sim.scene == name and sim.backend == "cpu"
            assert sim.frame == 0 and sim.time == 0.0


def test_seed_changes_the_scene():
    a = cpu_sim("gas", 100, seed=1).positions
    b = cpu_sim("gas", 100, seed=1).positions
    c = cpu_sim("gas", 100, seed=2).positions
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_scene_file(tmp_path):
    path = tmp_path / "two.txt"
    path.write_text("box_half = 3\ngravity = 0, 0, 0\nx y z vx vy vz radius density\n"
                    "-1 0 0  1 0 0  0.5 1\n1 0 0  -1 0 0  0.5 2\n")
    sim = nbsim.Simulation.from_file(path, backend="cpu")
    assert sim.n == 2 and sim.params["box_half"] == 3.0
    s = sim.state()
    assert np.array_equal(s.positions, [[-1, 0, 0], [1, 0, 0]])
    assert np.allclose(s.densities, [1, 2])


def test_arrays():
    pos = [[-1.0, 0, 0], [1.0, 0, 0]]
    vel = [[2.0, 0, 0], [-2.0, 0, 0]]
    sim = nbsim.Simulation.from_arrays(pos, vel, radii=0.5, densities=[1.0, 1.0],
                                       params={"box_half": 4, "restitution": 1.0},
                                       backend="cpu", name="pair")
    assert sim.n == 2 and sim.scene == "pair" and sim.params["box_half"] == 4.0
    s = sim.state()
    assert np.array_equal(s.masses, nbsim.state.sphere_mass(np.array([0.5, 0.5]), 1.0))
    p0 = (s.masses[:, None] * s.velocities).sum(axis=0)
    sim.run(3000)  # they meet and part again
    s = sim.state()
    assert s.velocities[0, 0] < 0 < s.velocities[1, 0]
    assert np.allclose((s.masses[:, None] * s.velocities).sum(axis=0), p0, atol=1e-9)
    sim.reset()  # the arrays again
    assert np.array_equal(sim.positions, pos)


def test_arrays_masses_and_from_state():
    sim = cpu_sim("gas", 50)
    twin = nbsim.Simulation.from_state(sim.state(), params=sim.params, backend="cpu", threads=1)
    assert np.array_equal(twin.state().positions, sim.state().positions)
    assert np.array_equal(twin.state().masses, sim.state().masses)
    assert twin.params == sim.params


def test_bad_arguments():
    with pytest.raises(nbsim.BadArgumentError, match="not a built-in scene"):
        nbsim.Simulation("no-such-scene", backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="is not a pair map; valid: auto, full, bb"):
        nbsim.Simulation("gas", n=10, backend="cpu", pair_map="ltm2")
    with pytest.raises(nbsim.BadArgumentError, match="is not a triplet map"):
        nbsim.Simulation("gas", n=10, backend="cpu", triplet_map="ltm")
    with pytest.raises(nbsim.BadArgumentError, match="must be 32, 64 or 128"):
        nbsim.Simulation("gas", n=10, backend="cpu", tile=48)
    with pytest.raises(nbsim.BadArgumentError, match="backend"):
        nbsim.Simulation("gas", n=10, backend="gpu")
    with pytest.raises(nbsim.BadArgumentError, match="phase_times must be sampled or every"):
        nbsim.Simulation("gas", n=10, backend="cpu", phase_times="some")
    with pytest.raises(nbsim.BadArgumentError, match="CUDA"):
        nbsim.Simulation("gas", n=10, backend="cpu", pair_map="full")
    with pytest.raises(nbsim.BadArgumentError, match="out of range"):
        nbsim.Simulation("gas", n=0, backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="out of range"):
        nbsim.Simulation("gas", n=-5, backend="cpu")
    with pytest.raises(TypeError):
        nbsim.Simulation("gas", n=10.5, backend="cpu")
    # the library's own limit, with its reason
    with pytest.raises(nbsim.BadArgumentError, match="the most bodies this run can take"):
        nbsim.Simulation("gas", n=4_000_000_000, backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="--n applies to built-in scenes"):
        nbsim.Simulation(__file__, n=10, backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="NUL"):
        nbsim.Simulation("ga\0s", backend="cpu")


def test_bad_files(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("x y z vx vy vz radius density\n0 0 0 0 0 0 -1 1\n")
    with pytest.raises(nbsim.Error, match="bad.txt:2") as e:
        nbsim.Simulation.from_file(bad, backend="cpu")
    assert e.value.status in ("parse error", "bad argument")
    with pytest.raises(nbsim.BadArgumentError, match="no such file"):
        nbsim.Simulation.from_file(tmp_path / "missing.txt")


def test_bad_arrays():
    ok = np.zeros((3, 3))
    ok[:, 0] = [-2, 0, 2]
    with pytest.raises(nbsim.BadArgumentError, match=r"shape \(3, 2\); expected \(N, 3\)"):
        nbsim.Simulation.from_arrays(np.zeros((3, 2)), radii=0.5)
    with pytest.raises(nbsim.BadArgumentError, match="velocities has shape"):
        nbsim.Simulation.from_arrays(ok, np.zeros((2, 3)), radii=0.5)
    with pytest.raises(nbsim.BadArgumentError, match="radii has shape"):
        nbsim.Simulation.from_arrays(ok, radii=[0.5, 0.5])
    with pytest.raises(TypeError, match="real numbers"):
        nbsim.Simulation.from_arrays(ok, radii=["a", "b", "c"])
    with pytest.raises(TypeError, match="real numbers"):
        nbsim.Simulation.from_arrays(ok, radii=np.ones(3) * 1j)
    with pytest.raises(nbsim.BadArgumentError, match="no bodies"):
        nbsim.Simulation.from_arrays(np.zeros((0, 3)), radii=0.5)
    with pytest.raises(nbsim.BadArgumentError, match="densities or masses"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, densities=1, masses=1)
    # the library's checks: a radius, a mass, the name
    with pytest.raises(nbsim.BadArgumentError, match="radius"):
        nbsim.Simulation.from_arrays(ok, radii=[0.5, -0.5, 0.5], backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="mass"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, masses=[1, 0, 1], backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="name of their own"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, name="gas", backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="omega has shape"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, omega=np.zeros((3, 2)))


def test_arrays_follow_the_scene_file_rules():
    """NaN, inf and a body far outside the walls are refused up front (issue 37: they were taken,
    and the first frame blew up), by the library's rules for scene files, naming the body."""
    ok = np.array([[-2.0, 0, 0], [0, 0, 0], [2, 0, 0]])
    for bad, why in ((np.nan, r"body 1: position \(nan, 0, 0\) is not finite"),
                     (np.inf, r"body 1: position \(inf, 0, 0\) is not finite"),
                     (1e6, r"body 1: centre \(1e\+06, 0, 0\) m is beyond the walls at \+-20 m")):
        pos = ok.copy()
        pos[1, 0] = bad
        with pytest.raises(ValueError, match=why) as e:
            nbsim.Simulation.from_arrays(pos, radii=0.5, backend="cpu")
        assert isinstance(e.value, nbsim.BadArgumentError)
    vel = np.zeros((3, 3))
    vel[2, 1] = -np.inf
    with pytest.raises(nbsim.BadArgumentError, match=r"body 2: velocity \(0, -inf, 0\)"):
        nbsim.Simulation.from_arrays(ok, vel, radii=0.5, backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="body 0: angular velocity"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, omega=[[np.nan, 0, 0], [0] * 3, [0] * 3],
                                     backend="cpu")
    # the box is the one given: 5 m fits a box of 6, not one of 4
    pos = ok.copy()
    pos[0, 0] = 5.0
    nbsim.Simulation.from_arrays(pos, radii=0.5, params={"box_half": 6}, backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="beyond the walls at \\+-4 m"):
        nbsim.Simulation.from_arrays(pos, radii=0.5, params={"box_half": 4}, backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="radius 5 m is larger than the box"):
        nbsim.Simulation.from_arrays(ok, radii=5.0, params={"box_half": 4}, backend="cpu")
    # a state a run reached may hold a body pushed into a wall, as a saved state may
    state = cpu_sim("gas", 20).state()
    state.positions[0] = [10.5, 0, 0]
    nbsim.Simulation.from_state(state, params={"box_half": 10}, backend="cpu")
    state.positions[0] = [15.5, 0, 0]
    with pytest.raises(nbsim.BadArgumentError, match="farther than a run can push"):
        nbsim.Simulation.from_state(state, params={"box_half": 10}, backend="cpu")
    # and a state file is refused as a scene file would be
    with pytest.raises(nbsim.BadArgumentError, match="not finite"):
        nbsim.write_state("never-written.txt", [[np.nan, 0, 0]], radii=0.5)


def test_a_blow_up_is_unstable():
    pos = np.array([[0.0, 0, 0], [2.0, 0, 0]])
    vel = np.array([[0.0, 0, 0], [1e6, 0, 0]])  # 1000 m in the first step: far through the wall
    sim = nbsim.Simulation.from_arrays(pos, vel, radii=0.1, params={"dt": 1e-3}, backend="cpu")
    with pytest.raises(nbsim.UnstableError) as e:
        sim.run(1)
    assert e.value.status == "simulation unstable" and e.value.message


def test_params():
    sim = cpu_sim("gas", 50)
    assert set(nbsim.params.keys()) <= set(sim.params)
    sim.set_params(restitution=0.8, gravity=(0, 0, -1), hertz=True, tangential_damping=0.5)
    p = sim.params
    assert p["restitution"] == 0.8 and p["gravity"] == (0.0, 0.0, -1.0) and p["hertz"]
    assert p["tangential_damping"] == 0.5
    sim.set_params(tangential_damping=None)
    assert sim.params["tangential_damping"] is None
    with pytest.raises(nbsim.BadArgumentError, match=r"^dt: '-1.0' must be a time step"):
        sim.set_params(dt=-1)
    with pytest.raises(nbsim.BadArgumentError, match="restitution"):
        sim.set_params(restitution=float("nan"))
    with pytest.raises(nbsim.BadArgumentError, match="unknown parameter 'stifness'"):
        sim.set_params(stifness=1)
    with pytest.raises(nbsim.BadArgumentError, match="three numbers"):
        sim.set_params(gravity=(0, 1))
    with pytest.raises(TypeError):
        sim.set_params(dt="fast")
    assert sim.params["restitution"] == 0.8  # a refused value changed nothing
    with pytest.raises(nbsim.BadArgumentError, match="stiffness"):
        nbsim.Simulation("gas", n=10, backend="cpu", params={"stiffness": 0})
    given = nbsim.Simulation("pile", n=50, backend="cpu", params={"gravity": (0, -1, 0)})
    assert given.params["gravity"] == (0.0, -1.0, 0.0)  # over the scene's


def test_gravity_as_the_command_line_takes_it():
    """--gravity's text (issue 37: '0,-9.8,0' failed on ','), and any 3 numbers."""
    sim = cpu_sim("gas", 50, params={"gravity": "0,-9.8,0"})
    assert sim.params["gravity"] == (0.0, -9.8, 0.0)
    sim.set_params(gravity=" 1.5 , 0, -2 ")  # blanks around the numbers, as in scene files
    assert sim.params["gravity"] == (1.5, 0.0, -2.0)
    sim.set_params(gravity=np.array([0, 0, -3.5]))
    assert sim.params["gravity"] == (0.0, 0.0, -3.5)
    sim.set_params(gravity=[0, -1, 0])
    assert sim.params["gravity"] == (0.0, -1.0, 0.0)
    for bad in ("0 -9.8 0", "0,-9.8", "0,x,0", "0,2e6,0"):
        with pytest.raises(nbsim.BadArgumentError, match=r"^gravity: '.*' must be three numbers"):
            sim.set_params(gravity=bad)
    with pytest.raises(nbsim.BadArgumentError, match="three numbers"):
        sim.set_params(gravity=(0, 1))
    with pytest.raises(TypeError, match="gravity must be three numbers"):
        sim.set_params(gravity=("a", "b", "c"))
    assert sim.params["gravity"] == (0.0, -1.0, 0.0)  # a refused value changed nothing


def test_periodic():
    """periodic as --periodic and scene files spell it, read back as text, and a periodic run
    reopened from its state and parameters (issue 37: TypeError, and params["periodic"] was 5)."""
    for given, axes in (("xz", "xz"), ("x,z", "xz"), ("z x", "xz"), ("y", "y"), ("xyz", "xyz"),
                        ("none", "none")):
        sim = cpu_sim("gas", 60, params={"periodic": given, "atm_nu": 0})
        assert sim.params["periodic"] == axes
    sim = cpu_sim("gas", 60, params={"periodic": "xz", "atm_nu": 0})
    sim.run(3)
    twin = nbsim.Simulation.from_state(sim.state(), params=sim.params, backend="cpu", threads=1)
    assert twin.params == sim.params and twin.params["periodic"] == "xz"
    sim.run(2)
    twin.run(2)
    assert np.array_equal(twin.state().positions, sim.state().positions)
    sim.set_params(periodic="none")
    assert sim.params["periodic"] == "none"
    assert nbsim.params.default()["periodic"] == "none"
    for bad in ("xx", "w", ""):
        with pytest.raises(nbsim.BadArgumentError, match="^periodic: .* must be periodic axes"):
            sim.set_params(periodic=bad)
    with pytest.raises(TypeError, match="periodic must be the axes as text"):
        sim.set_params(periodic=5)


def test_maps_tile_cull_settings():
    sim = cpu_sim("gas", 200, pair_map="rm", triplet_map="tetra", tile=32, cull=False)
    i = sim.info()
    assert (i["pair_map"], i["triplet_map"], i["tile"], i["cull"]) == ("rm", "tetra", 32, False)
    sim.set_maps(pair="bb")
    assert sim.pair_map == "bb" and sim.triplet_map == "tetra"
    sim.set_maps(triplet="rm")
    assert sim.triplet_map == "rm"
    with pytest.raises(nbsim.BadArgumentError):
        sim.set_maps(pair="nope")
    with pytest.raises(nbsim.UnsupportedError):
        sim.set_maps(pair="full")
    assert sim.pair_map == "bb"
    sim.set_cull(True)
    assert sim.info()["culls"]
    sim.set_triplets(True)
    assert sim.triplets
    sim.set_steps_per_frame(3)
    assert sim.params["steps_per_frame"] == 3
    with pytest.raises(nbsim.BadArgumentError):
        sim.set_steps_per_frame(0)


def test_gpus_over_cpu_threads():
    sim = nbsim.Simulation("gas", n=300, backend="cpu", gpus=2)
    assert sim.info()["gpus"] == 2
    sim.run(2)


def test_cuda_without_device():
    if nbsim.cuda_device_count() > 0:
        pytest.skip("a CUDA device is present")
    with pytest.raises(nbsim.NoDeviceError, match="no CUDA device"):
        nbsim.Simulation("gas", n=10, backend="cuda")
    sim = nbsim.Simulation("gas", n=10, triplets=False)  # auto: the CPU, with a notice
    assert sim.backend == "cpu"
    assert any("no CUDA device" in line for line in sim.notices)


def test_closed():
    sim = cpu_sim("gas", 20)
    sim.close()
    sim.close()
    with pytest.raises(nbsim.Error, match="closed"):
        sim.run(1)
    with pytest.raises(nbsim.Error, match="closed"):
        sim.positions
    assert "closed" in repr(sim)
