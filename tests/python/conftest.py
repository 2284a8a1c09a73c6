# SPDX-License-Identifier: MIT
"""The Python package's tests (ctest's test_python runs them with PYTHONPATH=build/python and
NBSIM_BIN=the program; by hand: PYTHONPATH=build/python python3 -m pytest tests/python)."""
import logging
import os
import shutil

import pytest

import nbsim

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

# The library's notices go to the "nbsim" logger; the tests read them from sim.notices.
logging.getLogger("nbsim").setLevel(logging.ERROR)


def pytest_report_header(config):
    return "nbsim %s from %s; CUDA devices: %d" % (
        nbsim.__version__, os.path.dirname(nbsim.__file__), nbsim.cuda_device_count())


@pytest.fixture(scope="session")
def nbsim_bin():
    """The nbsim program of the same build."""
    path = os.environ.get("NBSIM_BIN") or os.path.join(ROOT, "build", "bin", "nbsim")
    if not os.path.exists(path):
        path = shutil.which("nbsim")
    if not path:
        pytest.skip("the nbsim program was not found (set NBSIM_BIN)")
    return path


@pytest.fixture(scope="session")
def gpu():
    if nbsim.cuda_device_count() == 0:
        pytest.skip("no CUDA device")


def cpu_sim(scene="pile", n=300, **kw):
    """A small, deterministic CPU simulation (one thread)."""
    kw.setdefault("backend", "cpu")
    kw.setdefault("threads", 1)
    return nbsim.Simulation(scene, n=n, **kw)
