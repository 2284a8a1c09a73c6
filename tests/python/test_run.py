# SPDX-License-Identifier: MIT
"""Running: step(k), run(frames), stop(); state arrays (copies), energies, timings and summary."""
import json
import threading

import numpy as np
import pytest

import nbsim
from conftest import cpu_sim


def test_run_and_step_counts():
    sim = cpu_sim("pile", 200)
    assert sim.run(4) == 4
    assert (sim.frame, sim.steps) == (4, 4)
    assert sim.time == pytest.approx(4 * sim.dt)
    assert sim.step(5) == 5
    assert (sim.frame, sim.steps) == (5, 9)
    assert sim.params["steps_per_frame"] == 1  # step() puts it back
    sim.set_steps_per_frame(3)
    sim.run(2)
    assert (sim.frame, sim.steps) == (7, 15)
    assert sim.run(0) == 0
    with pytest.raises(nbsim.BadArgumentError):
        sim.run(-1)
    with pytest.raises(nbsim.BadArgumentError):
        sim.step(0)


def test_step_equals_run():
    """k steps as one frame or as k frames: the same state, bit for bit."""
    a, b = cpu_sim("pile", 300), cpu_sim("pile", 300)
    a.step(7)
    b.run(7)
    assert np.array_equal(a.state().positions, b.state().positions)
    assert np.array_equal(a.state().velocities, b.state().velocities)


def test_state_arrays_are_copies():
    sim = cpu_sim("gas", 100)
    s = sim.state()
    assert s.positions.shape == (100, 3) and s.velocities.shape == (100, 3)
    assert s.radii.shape == (100,) and s.masses.shape == (100,) and s.forces.shape == (100, 3)
    assert s.positions.dtype == np.float64 and s.positions.flags.owndata or s.positions.base is not None
    keep = s.positions.copy()
    s.positions[:] = 0.0  # changes the copy only
    assert np.array_equal(sim.positions, keep)
    sim.run(3)
    assert np.array_equal(s.radii, sim.radii)  # radii do not move
    assert not np.array_equal(keep, sim.positions)  # the old copy did not follow
    sim.close()
    assert s.positions.sum() == 0.0 and keep.shape == (100, 3)  # still valid after close
    assert (s.step, s.time) == (0, 0.0)


def test_forces_are_the_last_step_s():
    sim = cpu_sim("pile", 300)
    sim.run(5)
    s = sim.state()
    # under gravity, at rest or falling: the force has the weight in it
    g = np.array(sim.params["gravity"])
    assert np.allclose(s.forces.sum(axis=0)[1], (s.masses.sum() * g)[1], rtol=0.2) or \
        np.any(s.forces != 0)


def test_energies_elastic_gas():
    sim = cpu_sim("gas", 300, params={"restitution": 1.0})
    e0 = sim.energy()
    assert set(e0) == {"kinetic", "rotational", "contact", "atm", "gravity", "total"}
    assert e0["kinetic"] > 0
    sim.run(50)
    e1 = sim.energy()
    assert e1["total"] == pytest.approx(e0["total"], rel=1e-3)
    assert np.isfinite(sim.mean_height())


def test_phase_times():
    # The CPU's marks cost nothing: every phase of every step is timed, sampled or not. The
    # phases (each a field) add up to the step, and integrate is drift + kick.
    for mode in ("sampled", "every"):
        sim = nbsim.Simulation("pile", n=400, backend="cpu", threads=1, sort_every=1000,
                               phase_times=mode, params={"steps_per_frame": 8})
        sim.run(3)
        t = sim.last_timing
        assert t["steps"] == 8 and t["phase_steps"] == 8
        phases = sum(t[k] for k in nbsim.PHASES)
        assert phases == pytest.approx(t["step_ms"], rel=1e-9)
        assert t["integrate_ms"] == pytest.approx(t["drift_ms"] + t["kick_ms"], rel=1e-12)


def test_timings_and_summary(tmp_path):
    sim = cpu_sim("pile", 400)
    assert sim.last_timing is None
    sim.run(6)
    t = sim.last_timing
    assert t["steps"] == 1 and t["step_ms"] > 0 and t["pair_ms"] >= 0 and t["culled"] == 1
    assert t["tile_pairs"] > 0 and t["tile_pairs_total"] >= t["tile_pairs"]
    s = sim.timing_summary()
    assert s["frames"] == 6
    assert set(nbsim.KERNELS) <= set(s)
    assert {"median", "p95", "min", "max"} == set(s["step"])
    assert s["step"]["min"] <= s["step"]["median"] <= s["step"]["max"]
    path = tmp_path / "summary.json"
    sim.write_summary(path)
    j = json.loads(path.read_text())
    assert j["n"] == 400 and j["frames_done"] == 6 if "frames_done" in j else j["n"] == 400
    log = tmp_path / "t.csv"
    sim.start_log(log)
    sim.run(3)
    sim.stop_log()
    rows = log.read_text().splitlines()
    assert len(rows) == 4 and rows[0].startswith("frame")
    assert sim.cull_info()["active"] and sim.tile_pairs().shape[1] == 2


def test_tile_pairs_unculled_is_empty():
    sim = cpu_sim("gas", 100, cull=False)
    assert sim.tile_pairs().shape == (0, 2)


def test_maps_give_the_same_physics():
    """The CPU reference runs the tiling each map gives: the forces agree to rounding."""
    ref = cpu_sim("gas", 300, cull=False, pair_map="bb")
    ref.run(5)
    for m in ("ltm", "rb", "utm", "rec", "rm"):
        sim = cpu_sim("gas", 300, cull=False, pair_map=m)
        sim.run(5)
        assert np.allclose(sim.positions, ref.positions, rtol=0, atol=1e-12), m


def test_stop_from_another_thread():
    sim = cpu_sim("gas", 3000, cull=False)
    timer = threading.Timer(0.3, sim.stop)
    timer.start()
    done = sim.run(100000)
    timer.join()
    assert 0 < done < 100000
    steps = sim.steps
    assert sim.run(2) == 2  # usable afterwards, the flag down again
    assert sim.steps == steps + 2


def test_stop_before_run():
    sim = cpu_sim("gas", 100)
    sim.stop()
    assert sim.run(5) == 0
    assert sim.run(5) == 5


def test_threads_share_one_simulation():
    sim = cpu_sim("gas", 200)
    errors = []

    def work():
        try:
            for _ in range(5):
                sim.run(2)
                sim.state()
        except Exception as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sim.frame == 30
