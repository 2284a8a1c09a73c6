# SPDX-License-Identifier: MIT
"""Ctrl-C during a run: KeyboardInterrupt within a fraction of a second, the simulation holding
the state after its last complete step (a step cut short rolled back), and going on from there."""
import os
import signal
import threading
import time

import numpy as np
import pytest

import nbsim
from conftest import cpu_sim

pytestmark = pytest.mark.skipif(
    signal.getsignal(signal.SIGINT) is not signal.default_int_handler,
    reason="SIGINT does not have Python's default handler here")


def sigint_after(seconds):
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_between_steps():
    sim = cpu_sim("gas", 3000, cull=False)
    start = sim.state()
    timer = sigint_after(0.3)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sim.run(1_000_000)
    stopped_in = time.monotonic() - t0 - 0.3
    timer.join()
    assert stopped_in < 1.0
    steps = sim.steps
    assert steps > 0 and sim.frame == steps
    # the state is exactly `steps` steps from the start: a twin run as far agrees bit for bit
    twin = nbsim.Simulation.from_state(start, params=sim.params, backend="cpu", threads=1,
                                       cull=False)
    twin.run(steps)
    assert np.array_equal(twin.state().positions, sim.state().positions)
    assert np.array_equal(twin.state().velocities, sim.state().velocities)
    # and it goes on
    assert sim.run(3) == 3 and sim.steps == steps + 3
    twin.run(3)
    assert np.array_equal(twin.state().positions, sim.state().positions)
    # Python's handler is back
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_inside_a_long_step_rolls_it_back():
    """A step of ~0.4 s runs in slices of ~0.1 s: Ctrl-C in the middle of the first one leaves
    the state it started from, bit for bit."""
    sim = cpu_sim("gas", 16000, cull=False, triplets=False)
    start = sim.state()
    timer = sigint_after(0.15)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sim.step(10)
    timer.join()
    assert time.monotonic() - t0 < 0.15 + 0.6
    done = sim.steps
    after = sim.state()
    if done == 0:
        assert np.array_equal(after.positions, start.positions)
        assert np.array_equal(after.velocities, start.velocities)
    assert sim.params["steps_per_frame"] == 1  # step() put it back
    assert sim.step(1) == 1 and sim.steps == done + 1


def test_a_program_s_own_handler_is_kept():
    seen = []
    old = signal.signal(signal.SIGINT, lambda s, f: seen.append(s))
    try:
        sim = cpu_sim("gas", 200)
        timer = sigint_after(0.05)
        sim.run(200)  # not stopped: the program's handler gets the signal
        timer.join()
        time.sleep(0.05)
        assert sim.frame == 200
    finally:
        signal.signal(signal.SIGINT, old)
    assert seen == [signal.SIGINT]


def test_ctrl_c_while_opening():
    """Opening builds the scene and computes the initial forces: Ctrl-C in the middle of building
    a scene of 4M bodies (most of a second of the CPU's work before the forces) raises
    KeyboardInterrupt within a few of its chunks of 65,536 bodies, not once the scene is built
    and copied (issue 37: 3.1 s at 4M bodies on a GPU machine)."""
    timer = sigint_after(0.05)
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        nbsim.Simulation("gas", n=4_000_000, backend="cpu", threads=1, cull=False,
                         triplets=False)
    stopped_in = time.monotonic() - t0 - 0.05
    timer.join()
    assert stopped_in < 0.3, "KeyboardInterrupt %.2f s after the signal" % stopped_in
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    # nothing is left raised: the next simulation opens
    assert cpu_sim("gas", 100).n == 100
