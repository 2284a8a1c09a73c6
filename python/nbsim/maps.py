# SPDX-License-Identifier: MIT
"""The maps inspector (`nbsim maps` for Python): a thread map's launch plan at n tiles per side,
its waste, its exactness check, and which tile pair / triple each block owns, as numpy arrays.

    >>> p = nbsim.maps.plan("ltm", 1000)          # 2-D; plan("rm", 64, dim=3) for triples
    >>> p.blocks, p.useful, p.waste               # launched, useful, wasted share of launched
    >>> p.check().exact                            # every tile exactly once, nothing else
    >>> a = p.assignment(0, 100)                   # blocks 0..99 in launch order
    >>> a.tile                                     # (100, 2): (I, J) per block, -1 for none

Blocks are numbered as `nbsim maps --dump` numbers them: launch 0 first, then launch 1, ...;
inside a launch bx fastest, then by, then bz."""
from dataclasses import dataclass

import numpy as np

from ._lib import as_uint, check, ffi, lib, map_names, new_error, struct_dict, text
from .errors import BadArgumentError

# The most blocks one assignment() returns (40 bytes each): ask for a range beyond it.
ASSIGNMENT_MAX = 1 << 24


def names(dim=2):
    """Every map of the dimension (2: pair maps, 3: triplet maps), in the table's order."""
    return map_names(_dim(dim))


def _dim(dim):
    if dim not in (2, 3):
        raise BadArgumentError("dim must be 2 (tile pairs) or 3 (tile triples), not %r" % (dim,))
    return dim


def max_tiles(dim=2):
    """The largest n (tiles per side) the maps of the dimension cover."""
    return lib.SIM_MAX_TILES_2D if _dim(dim) == 2 else lib.SIM_MAX_TILES_3D


@dataclass
class Check:
    """sim_map_check's result: exact (every tile exactly once, nothing else; for a sample, every
    sampled block right), full (every block run), the counts, and the line `nbsim maps` prints."""

    exact: bool
    full: bool
    checked: int
    produced: int
    wasted: int
    duplicates: int
    outside: int
    missing: int
    mismatched: int
    description: str
    details: dict


@dataclass
class Assignment:
    """Blocks first .. first + count - 1 of a plan: index (count,), launch (count,), block
    (count, 3) = (bx, by, bz), tile (count, dim) = (I, J[, K]) or -1 where the block owns none,
    owns (count,) bool."""

    index: np.ndarray
    launch: np.ndarray
    block: np.ndarray
    tile: np.ndarray

    @property
    def owns(self):
        return self.tile[:, 0] >= 0


class Plan:
    """A map's launch plan at n tiles per side (sim_pair_map_plan / sim_triplet_map_plan)."""

    def __init__(self, map, n, dim=2):
        dim = _dim(dim)
        if not isinstance(map, str):
            raise TypeError("map must be a name (str), not %s" % type(map).__name__)
        m = lib.sim_map_from_name(dim, map.encode())
        if m < 0:
            raise BadArgumentError("%r is not a %d-D map; valid: %s"
                                   % (map, dim, ", ".join(names(dim))))
        n = as_uint("n", n, 0, 2 ** 32 - 1)
        self._plan = ffi.new("sim_map_plan *")
        err = new_error()
        fn = lib.sim_pair_map_plan if dim == 2 else lib.sim_triplet_map_plan
        check(fn(m, n, self._plan, err), err)

    dim = property(lambda self: self._plan.dim)
    n = property(lambda self: self._plan.n, doc="tiles per side")
    blocks = property(lambda self: self._plan.blocks, doc="blocks launched, all launches")
    useful = property(lambda self: self._plan.useful, doc="T2(n) or T3(n): blocks with work")
    wasted = property(lambda self: self._plan.blocks - self._plan.useful)
    concurrent = property(lambda self: bool(self._plan.concurrent),
                          doc="the launches may overlap on streams")

    @property
    def map(self):
        return text(lib.sim_map_name(self.dim, self._plan.map))

    @property
    def label(self):
        f = lib.sim_pair_map_label if self.dim == 2 else lib.sim_triplet_map_label
        return text(f(self._plan.map))

    @property
    def paper_float(self):
        """One of the papers' float variants, kept for study (wrong for large n)."""
        f = lib.sim_pair_map_is_paper_float if self.dim == 2 else \
            lib.sim_triplet_map_is_paper_float
        return bool(f(self._plan.map))

    @property
    def waste(self):
        """Wasted blocks as a share of those launched (0 .. 1), as `nbsim maps` prints it."""
        return self.wasted / self.blocks if self.blocks else 0.0

    @property
    def launches(self):
        """Each launch's grid (gx, gy, gz), n and map parameters p, in order."""
        p = self._plan
        return [{"grid": tuple(p.launch[k].grid), "n": p.launch[k].n, "p": tuple(p.launch[k].p)}
                for k in range(p.launch_count)]

    def check(self, full_limit=None):
        """Runs the map on every block (or, above full_limit blocks, on a sample) and checks it
        covers every tile exactly once and nothing else (`nbsim maps`' check column)."""
        limit = lib.SIM_MAP_CHECK_FULL_DEFAULT if full_limit is None else \
            as_uint("full_limit", full_limit, 0, 2 ** 64 - 1)
        res = ffi.new("sim_map_check_result *")
        err = new_error()
        check(lib.sim_map_check(self._plan, limit, res, err), err)
        buf = ffi.new("char[]", 512)
        lib.sim_map_check_describe(self._plan, res, buf, len(buf))
        d = struct_dict(res[0])
        return Check(exact=bool(res.exact), full=bool(res.full), checked=res.checked,
                     produced=res.produced, wasted=res.wasted, duplicates=res.duplicates,
                     outside=res.outside, missing=res.missing, mismatched=res.mismatched,
                     description=text(buf), details=d)

    def assignment(self, start=0, stop=None):
        """Blocks start .. stop - 1 (default: all of them) with the tile each owns."""
        total = self.blocks
        start = as_uint("start", start, 0, total)
        stop = total if stop is None else as_uint("stop", stop, start, total)
        count = stop - start
        if count > ASSIGNMENT_MAX:
            raise BadArgumentError("%d blocks asked for (%d..%d); at most %d at once: ask for a "
                                   "range" % (count, start, stop, ASSIGNMENT_MAX))
        launch = np.zeros(count, dtype=np.int32)
        block = np.zeros((count, 3), dtype=np.uint32)
        tile = np.zeros((count, 3), dtype=np.int64)
        got = lib.nbsim_py_map_assign(self._plan, start, count,
                                      ffi.cast("int32_t *", ffi.from_buffer(launch)),
                                      ffi.cast("uint32_t *", ffi.from_buffer(block)),
                                      ffi.cast("int64_t *", ffi.from_buffer(tile)))
        return Assignment(index=np.arange(start, start + got, dtype=np.uint64),
                          launch=launch[:got], block=block[:got],
                          tile=tile[:got, :self.dim].copy())

    def cover(self):
        """Which launch and block cover each cell of the tile-pair triangle (2-D) or of the
        largest layer of the tetrahedron (3-D), on a grid of at most 128 x 128 cells (the
        viewer's inset): a dict of (side, side) arrays launch (-1: none), hits, order (0 .. 1),
        block, and the grid's facts (side, per_cell, exact, ...)."""
        c = ffi.new("sim_map_cover *")
        err = new_error()
        check(lib.sim_map_cover_build(c, self._plan, err), err)
        side = c.side
        cells = ffi.buffer(c.cell, ffi.sizeof("sim_map_cover_cell") * side * side)
        dtype = np.dtype({"names": ["launch", "hits", "order", "block"],
                          "formats": ["<i4", "<u4", "<f4", "<u8"],
                          "offsets": [ffi.offsetof("sim_map_cover_cell", f)
                                      for f in ("launch", "hits", "order", "block")],
                          "itemsize": ffi.sizeof("sim_map_cover_cell")})
        arr = np.frombuffer(cells, dtype=dtype).reshape(side, side).copy()
        out = {k: arr[k].copy() for k in ("launch", "hits", "order", "block")}
        for k in ("n", "span", "layer", "side", "per_cell", "launches", "blocks", "useful"):
            out[k] = int(getattr(c, k))
        for k in ("exact", "per_block", "waste"):
            out[k] = bool(getattr(c, k))
        return out

    def __repr__(self):
        return "<nbsim.maps.Plan %s %d-D n=%d: %d launches, %d blocks, %d useful, waste %.2f%%>" % (
            self.map, self.dim, self.n, self._plan.launch_count, self.blocks, self.useful,
            100.0 * self.waste)


def plan(map, n, dim=2):
    """The launch plan of map at n tiles per side (dim 2: tile pairs, 3: tile triples)."""
    return Plan(map, n, dim)


def compare(ns, dim=2, maps=None):
    """Every map's (or those named) blocks, useful blocks and waste at each n: a dict
    {map: {"n", "blocks", "useful", "waste", "launches"} of numpy arrays over ns}."""
    ns = [int(n) for n in ns]
    out = {}
    for m in (maps or names(dim)):
        plans = [plan(m, n, dim) for n in ns]
        out[m] = {"n": np.array(ns),
                  "blocks": np.array([p.blocks for p in plans], dtype=np.uint64),
                  "useful": np.array([p.useful for p in plans], dtype=np.uint64),
                  "waste": np.array([p.waste for p in plans]),
                  "launches": np.array([p._plan.launch_count for p in plans])}
    return out
