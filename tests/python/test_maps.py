# SPDX-License-Identifier: MIT
"""The maps inspector: plans of every map at several n in 2-D and 3-D, exactness, and block ->
tile arrays equal to what `nbsim maps` reports."""
import subprocess

import numpy as np
import pytest

import nbsim
from nbsim import maps


def t2(n):
    return n * (n + 1) // 2


def t3(n):
    return n * (n + 1) * (n + 2) // 6


@pytest.mark.parametrize("dim,ns", [(2, [1, 2, 5, 13, 16, 100, 1000]), (3, [1, 2, 4, 7, 8, 33])])
def test_every_map_plans_and_checks(dim, ns):
    assert maps.names(2)[:2] == ["bb", "ltm"] and "tetra" in maps.names(3)
    for m in maps.names(dim):
        for n in ns:
            p = maps.plan(m, n, dim)
            assert (p.map, p.dim, p.n) == (m, dim, n)
            assert p.useful == (t2(n) if dim == 2 else t3(n))
            assert p.blocks >= p.useful and p.wasted == p.blocks - p.useful
            assert 0.0 <= p.waste < 1.0
            assert sum(np.prod(launch["grid"]) for launch in p.launches) == p.blocks
            c = p.check()
            assert c.full and c.checked == p.blocks and c.description.startswith("exact: ")
            if not p.paper_float:
                assert c.exact, (m, n, c.description)
                assert c.produced == p.useful and c.missing == 0 and c.duplicates == 0


def test_paper_float_variant_goes_wrong():
    p = maps.plan("tetra-float", 140, dim=3)
    assert p.paper_float
    c = p.check()
    assert not c.exact and "NO" in c.description


def test_assignment_covers_every_tile_once():
    for dim, n in ((2, 37), (3, 9)):
        for m in maps.names(dim):
            p = maps.plan(m, n, dim)
            a = p.assignment()
            assert len(a.index) == p.blocks and a.tile.shape == (p.blocks, dim)
            assert a.owns.sum() == p.wasted + p.useful - p.wasted
            tiles = a.tile[a.owns]
            if not p.paper_float:
                assert len({tuple(t) for t in tiles}) == p.useful
                assert np.all(tiles[:, 0] < n) and np.all(np.diff(tiles, axis=1) <= 0)
            assert np.all(a.tile[~a.owns] == -1)
            assert np.all(a.launch < len(p.launches))


def test_assignment_ranges():
    p = maps.plan("bb", 10)
    whole = p.assignment()
    part = p.assignment(17, 42)
    assert np.array_equal(part.index, np.arange(17, 42))
    assert np.array_equal(part.tile, whole.tile[17:42])
    assert len(p.assignment(p.blocks).index) == 0
    with pytest.raises(nbsim.BadArgumentError):
        p.assignment(5, 3)
    with pytest.raises(nbsim.BadArgumentError, match="ask for a range"):
        maps.plan("bb", 65535).assignment()


def _cli_dump(nbsim_bin, dim, m, n, last):
    out = subprocess.run([nbsim_bin, "maps", "--dim", str(dim), "--map", m, "--tiles", str(n),
                          "--dump", "0:%d" % last], capture_output=True, text=True, check=True)
    rows = []
    for line in out.stdout.splitlines():
        f = line.split()
        rows.append([int(f[0])] + ([-1] * dim if f[1] == "none" else [int(v) for v in f[1:]]))
    return np.array(rows)


@pytest.mark.parametrize("dim,m,n", [(2, "bb", 6), (2, "ltm", 9), (2, "rb", 7), (2, "utm", 8),
                                     (2, "rec", 13), (2, "rm", 13), (2, "ltm-newton", 11),
                                     (3, "bb", 4), (3, "tetra", 6), (3, "rm", 7),
                                     (3, "tetra-float", 5)])
def test_assignment_equals_nbsim_maps_dump(nbsim_bin, dim, m, n):
    p = maps.plan(m, n, dim)
    a = p.assignment()
    cli = _cli_dump(nbsim_bin, dim, m, n, p.blocks - 1)
    assert np.array_equal(cli[:, 0], a.index.astype(np.int64))
    assert np.array_equal(cli[:, 1:], a.tile)


@pytest.mark.parametrize("dim,n", [(2, 1000), (3, 40)])
def test_plans_equal_nbsim_maps_table(nbsim_bin, dim, n):
    out = subprocess.run([nbsim_bin, "maps", "--dim", str(dim), "--tiles", str(n)],
                         capture_output=True, text=True, check=True).stdout
    seen = 0
    for line in out.splitlines():
        f = line.replace("*", " ").split()
        if f and f[0] in maps.names(dim):
            p = maps.plan(f[0], n, dim)
            assert [int(f[1]), int(f[2]), int(f[3]), int(f[4])] == \
                [len(p.launches), p.blocks, p.useful, p.wasted]
            assert float(f[5].rstrip("%")) == pytest.approx(100 * p.waste, abs=0.006)
            assert ("exact: yes" in line) == p.check().exact
            seen += 1
    assert seen == len(maps.names(dim))


def test_compare_and_cover():
    c = maps.compare([8, 64, 512], dim=2)
    assert set(c) == set(maps.names(2))
    assert np.array_equal(c["bb"]["blocks"], [64, 4096, 262144])
    assert c["bb"]["waste"][-1] > 0.49 and c["utm"]["waste"].max() == 0.0
    cov = maps.plan("rec", 16).cover()
    assert cov["side"] == 16 and cov["launch"].shape == (16, 16)
    assert np.all(cov["launch"][np.triu_indices(16, 1)] == -1)
    assert np.all(cov["hits"][np.tril_indices(16)] == 1)
    cov3 = maps.plan("rm", 8, dim=3).cover()
    assert cov3["layer"] == 7


def test_bad_maps_arguments():
    with pytest.raises(nbsim.BadArgumentError, match="not a 2-D map; valid: bb, ltm"):
        maps.plan("tetra", 10)
    with pytest.raises(nbsim.BadArgumentError, match="dim"):
        maps.plan("bb", 10, dim=4)
    with pytest.raises(nbsim.BadArgumentError, match="65535"):
        maps.plan("bb", 70000)
    with pytest.raises(nbsim.BadArgumentError):
        maps.plan("rm", 5000, dim=3)
    with pytest.raises(nbsim.BadArgumentError):
        maps.plan("bb", -1)
    with pytest.raises(TypeError):
        maps.plan(3, 10)
    assert maps.max_tiles(2) == 65535 and maps.max_tiles(3) == 4096
