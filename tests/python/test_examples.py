# SPDX-License-Identifier: MIT
"""docs/examples/ run as a user runs them (small sizes), with a non-interactive matplotlib,
their PNGs written to a temporary folder."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = os.path.join(ROOT, "docs", "examples")

pytest.importorskip("matplotlib")


def run_example(name, tmp_path, *args):
    # one OpenMP thread: two busy-wait for each other on a machine of two shared cores
    env = dict(os.environ, MPLBACKEND="Agg", MPLCONFIGDIR=str(tmp_path / "mpl"),
               OMP_NUM_THREADS="1")
    out = tmp_path / (name + ".png")
    res = subprocess.run([sys.executable, os.path.join(EXAMPLES, name + ".py"), "--out", str(out)]
                         + list(args), env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    assert out.stat().st_size > 10_000 and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return res.stdout


def test_compare_maps(tmp_path):
    out = run_example("compare_maps", tmp_path, "--max2", "2000", "--max3", "200")
    assert "ltm-sqrt" in out and "exact: yes" in out and "wrote" in out


def test_pile_height(tmp_path):
    out = run_example("pile_height", tmp_path, "--n", "300", "--seconds", "0.3", "--samples",
                      "15", "--backend", "cpu")
    assert "mean height" in out
