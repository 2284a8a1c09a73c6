# SPDX-License-Identifier: MIT
"""Rotation and friction from Python: omega and the contact histories as arrays, a sliding sphere
that starts to roll, a frictional run resumed from its State, and the arrays' checks."""
import numpy as np
import pytest

import nbsim

G = 9.81
BOX = 2.0
R = 0.5


def sliding_sphere(v0, **params):
    """One sphere resting on the floor (its overlap under its weight), sliding along +x at v0."""
    p = {"gravity": (0.0, -G, 0.0), "box_half": BOX, "friction": 0.3, "restitution": 0.5,
         "stiffness": 1e5}
    p.update(params)
    m = 4.0 / 3.0 * np.pi * R ** 3
    y = -BOX + R - m * G / p["stiffness"]
    return nbsim.Simulation.from_arrays([[-1.5, y, 0.0]], velocities=[[v0, 0.0, 0.0]], radii=R,
                                        params=p, backend="cpu")


def test_a_sliding_sphere_rolls():
    """Coulomb friction at the floor turns sliding into rolling: v = 5/7 v0 and omega_z = -v / r
    (a solid sphere, I = 2/5 m r^2), after t = 2 v0 / (7 mu g)."""
    v0, mu = 1.0, 0.3
    sim = sliding_sphere(v0, friction=mu)
    t_roll = 2.0 * v0 / (7.0 * mu * G)
    sim.step(int(2.0 * t_roll / sim.dt) + 1)
    st = sim.state()
    v, w = st.velocities[0], st.omega[0]
    assert v[0] == pytest.approx(5.0 / 7.0 * v0, rel=2e-3)
    assert w[2] == pytest.approx(-v[0] / R, rel=2e-3)
    assert abs(w[0]) < 1e-9 and abs(w[1]) < 1e-9
    # the floor's contact keeps a history: body 0 with the wall at -box_half on y (k = 2)
    assert len(st.contacts) == 1
    c = st.contacts[0]
    assert c["i"] == 0 and c["j"] == nbsim.WALL_BASE + 2
    # rotational energy is reported
    e = sim.energy()
    assert e["rotational"] == pytest.approx(0.5 * 0.4 * st.masses[0] * R ** 2 * w[2] ** 2,
                                            rel=1e-12)


def test_without_friction_nothing_turns():
    sim = sliding_sphere(1.0, friction=0.0)
    sim.step(200)
    st = sim.state()
    assert np.all(st.omega == 0.0) and len(st.contacts) == 0
    assert st.velocities[0, 0] == pytest.approx(1.0, rel=1e-12)


def test_spin_given_is_kept_without_friction():
    w = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, 0.0]])
    sim = nbsim.Simulation.from_arrays([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]], radii=0.5, omega=w,
                                       backend="cpu")
    sim.step(10)
    assert np.array_equal(sim.omega, w)


def test_a_frictional_run_resumes_from_its_state():
    """The heap's run split in two through a State (positions, velocities, omega, histories)
    follows the whole run; the same bodies with the histories dropped do not. The resumed run is
    not the same bits: its first forces see the velocities of a whole step where the run's saw
    those of a half kick (the dashpots), as a restart from a file does (test_friction_run.c)."""
    whole = nbsim.Simulation("heap", n=300, backend="cpu", threads=1)
    whole.step(4000)  # ~1 s: the pour has slumped onto the rough floor
    st = whole.state()
    between = st.contacts["j"] < nbsim.WALL_BASE
    assert between.sum() > 100, "the heap's bodies should be touching by now"
    assert np.abs(st.omega).max() > 0.0 and np.abs(st.contacts["xi"]).max() > 0.0
    resumed = nbsim.Simulation.from_state(st, params=whole.params, backend="cpu", threads=1)
    assert np.array_equal(resumed.state().contacts, st.contacts)
    fresh = nbsim.Simulation.from_arrays(st.positions, st.velocities, st.radii, masses=st.masses,
                                         omega=st.omega, params=whole.params, backend="cpu",
                                         threads=1)
    for sim in (whole, resumed, fresh):
        sim.step(200)
    a = whole.state()
    d_resumed = np.abs(resumed.state().positions - a.positions).max()
    d_fresh = np.abs(fresh.state().positions - a.positions).max()
    assert d_resumed < 1e-4 * R, d_resumed
    assert d_fresh > 30.0 * d_resumed, (d_fresh, d_resumed)


def test_states_round_trip_through_a_file(tmp_path):
    sim = nbsim.Simulation("heap", n=300, backend="cpu")
    sim.step(4000)
    st = sim.state()
    path = tmp_path / "heap.scene"
    sim.save_state(path)
    back, params = nbsim.read_state(path)
    assert params["friction"] == pytest.approx(0.5) and params["rolling_friction"] > 0.0
    assert np.array_equal(back.omega, st.omega)
    assert len(back.contacts) == len(st.contacts)
    order = np.lexsort((st.contacts["j"], st.contacts["i"]))
    back_order = np.lexsort((back.contacts["j"], back.contacts["i"]))
    assert np.array_equal(back.contacts[back_order], st.contacts[order])
    # write_state writes them too
    again = tmp_path / "again.scene"
    nbsim.write_state(again, st.positions, st.velocities, st.radii, masses=st.masses,
                      omega=st.omega, contacts=st.contacts, params=params)
    twice, _ = nbsim.read_state(again)
    assert np.array_equal(twice.omega, st.omega) and len(twice.contacts) == len(st.contacts)


def test_bad_arrays_raise():
    ok = np.zeros((3, 3))
    ok[:, 0] = [0.0, 2.0, 4.0]
    with pytest.raises(nbsim.BadArgumentError, match="omega has shape"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, omega=np.zeros((2, 3)), backend="cpu")
    with pytest.raises(TypeError, match="real numbers"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, omega=[["a"] * 3] * 3, backend="cpu")
    with pytest.raises(nbsim.BadArgumentError, match="contacts"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, contacts=[1, 2, 3], backend="cpu")
    # the library checks the indices: a partner must be a lower body or a wall
    bad = np.zeros(1, dtype=nbsim.CONTACT_DTYPE)
    bad["i"], bad["j"] = 0, 2
    with pytest.raises(nbsim.BadArgumentError, match="contact"):
        nbsim.Simulation.from_arrays(ok, radii=0.5, contacts=bad, backend="cpu",
                                     params={"friction": 0.5})
