# SPDX-License-Identifier: MIT
"""Bodies as numpy arrays, and the library's sim_state (pos = (x, y, z, r), vel = (vx, vy, vz, m),
spin = (wx, wy, wz, -), friction's contact histories) filled from them or read into them.

Every array this module hands out is a copy owned by Python: it stays valid for as long as Python
keeps it, whatever the simulation does next, and changing it changes nothing in the simulation.

Angular velocity: `omega`, (N, 3) [rad/s]; bodies turn only with friction (without it omega is
carried unchanged). Contact histories: `contacts`, a structured array of CONTACT_DTYPE, one row
per frictional contact (sim_state_contact in include/nbsim/state.h: bodies i > j, or body i and
wall j = WALL_BASE + k; the sliding spring xi and the rolling spring roll [m] as seen from i), so
that a state taken from a frictional run resumes it with its springs."""
import math
from dataclasses import dataclass, field

import numpy as np

from ._lib import ffi, lib
from .errors import BadArgumentError

# One frictional contact, laid out as sim_state_contact (checked against the library below).
CONTACT_DTYPE = np.dtype([("i", "<u4"), ("j", "<u4"), ("xi", "<f8", (3,)), ("roll", "<f8", (3,))],
                         align=True)
# Walls as partners: j = WALL_BASE + k, k = 2 axis + side (0: x at -box_half, 1: x at +box_half,
# 2, 3: y, 4, 5: z), as SIM_CONTACT_WALL(k).
WALL_BASE = 2 ** 32 - 1 - 5

if CONTACT_DTYPE.itemsize != ffi.sizeof("sim_state_contact") or \
        CONTACT_DTYPE.fields["xi"][1] != ffi.offsetof("sim_state_contact", "xi") or \
        CONTACT_DTYPE.fields["roll"][1] != ffi.offsetof("sim_state_contact", "roll"):
    raise ImportError("nbsim: CONTACT_DTYPE does not match the library's sim_state_contact")


def no_contacts():
    return np.zeros(0, dtype=CONTACT_DTYPE)


@dataclass
class State:
    """A snapshot of the bodies, in the scene's body order. SI units: m, m/s, kg, N, rad/s."""

    positions: np.ndarray           # (N, 3) float64 [m]
    velocities: np.ndarray          # (N, 3) [m/s]
    radii: np.ndarray               # (N,) [m]
    masses: np.ndarray              # (N,) [kg]
    forces: np.ndarray = None       # (N, 3) [N]: the last total force per body (None: unknown)
    omega: np.ndarray = None        # (N, 3) angular velocity [rad/s] (None: zero)
    contacts: np.ndarray = field(default_factory=no_contacts)  # CONTACT_DTYPE: friction's springs
    step: int = 0                   # integration steps since the scene was (re)loaded
    time: float = 0.0               # simulated time [s]

    @property
    def n(self):
        return len(self.radii)

    @property
    def densities(self):
        """mass / (4/3 pi r^3) [kg/m^3]."""
        return self.masses / (4.0 / 3.0 * math.pi * self.radii ** 3)


class CState:
    """A sim_state whose arrays are numpy arrays of this object's: what C reads from (a scene to
    open, a state to save). Keep it alive while C uses it. C must not resize it: states the
    library fills are read into arrays of numpy's (Simulation._read) or adopted (take_state)."""

    def __init__(self, n, contacts=None):
        self.n = n
        self.pos = np.zeros((n, 4))
        self.vel = np.zeros((n, 4))
        self.spin = np.zeros((n, 4))
        self.contacts = no_contacts() if contacts is None else contacts
        self.c = ffi.new("sim_state *")
        self.c.n = n
        self.c.pos = ffi.cast("sim_vec4d *", ffi.from_buffer(self.pos))
        self.c.vel = ffi.cast("sim_vec4d *", ffi.from_buffer(self.vel))
        self.c.spin = ffi.cast("sim_vec4d *", ffi.from_buffer(self.spin))
        if len(self.contacts):
            self.c.contacts = ffi.cast("sim_state_contact *", ffi.from_buffer(self.contacts))
        self.c.contact_count = len(self.contacts)
        self.saved = False  # a state a run reached (sim_scene_check_bodies' `saved`)


def state_of(pos, vel, spin=None, forces=None, contacts=None, step=0, time=0.0):
    """A State whose arrays are views of the (N, 4) arrays the library filled (pos = (x, y, z,
    r), vel = (vx, vy, vz, m), spin = (wx, wy, wz, -)): no copy. positions and radii share pos,
    velocities and masses vel, so a column kept alone keeps its whole (N, 4) array."""
    return State(positions=pos[:, :3], velocities=vel[:, :3], radii=pos[:, 3],
                 masses=vel[:, 3], forces=forces,
                 omega=np.zeros((len(pos), 3)) if spin is None else spin[:, :3],
                 contacts=no_contacts() if contacts is None else contacts, step=step,
                 time=time)


class _Adopted:
    """nbytes of the library's memory at ptr, as numpy sees an array (the array interface), held
    with `owner`: a cdata whose destructor frees that memory once the last array made from it is
    gone."""

    def __init__(self, owner, ptr, nbytes):
        self.owner = owner
        self.__array_interface__ = {"version": 3, "shape": (nbytes,), "typestr": "|u1",
                                    "data": (int(ffi.cast("uintptr_t", ptr)), False)}


def _adopt(owner, ptr, count, dtype, shape):
    """count items of dtype at ptr, shaped `shape`: an array over the library's memory, which
    `owner` frees (a zero-filled one of numpy's own where there is nothing to adopt)."""
    if count == 0 or ptr == ffi.NULL:
        return np.zeros(shape, dtype=dtype)
    raw = np.asarray(_Adopted(owner, ptr, count * np.dtype(dtype).itemsize))
    return raw.view(dtype).reshape(shape)


def _owner(loaded):
    """A sim_state * holding what `loaded` (a sim_state *) held, which frees it (sim_state_free)
    when collected; `loaded` is emptied, so that freeing it again frees nothing."""
    held = ffi.new("sim_state *", loaded[0])
    ffi.memmove(loaded, bytes(ffi.sizeof("sim_state")), ffi.sizeof("sim_state"))
    return ffi.gc(held, lib.sim_state_free)


def take_contacts(filled):
    """The contact histories the library allocated in `filled` (a sim_state * whose bodies are
    the caller's), as an array over that memory, freed with the array; filled.contacts is left
    NULL."""
    held = ffi.new("sim_state *")
    held.contacts, held.contact_count = filled.contacts, filled.contact_count
    filled.contacts, filled.contact_count = ffi.NULL, 0
    owner = ffi.gc(held, lib.sim_state_free)
    m = owner.contact_count
    return _adopt(owner, owner.contacts, m, CONTACT_DTYPE, (m,))


def take_state(loaded, step=0, time=0.0):
    """A sim_state the library allocated (a load: its N is known only once the file is read) as
    a State over the library's own arrays, no copy: they are freed (sim_state_free) once the
    last of the State's arrays is gone. `loaded` is emptied."""
    owner = _owner(loaded)
    n, m = owner.n, owner.contact_count
    pos = _adopt(owner, owner.pos, 4 * n, np.float64, (n, 4))
    vel = _adopt(owner, owner.vel, 4 * n, np.float64, (n, 4))
    spin = _adopt(owner, owner.spin, 4 * n, np.float64, (n, 4))
    contacts = _adopt(owner, owner.contacts, m, CONTACT_DTYPE, (m,))
    return state_of(pos, vel, spin, None, contacts, step, time)


def _array(name, value, n, width, dtype=np.float64):
    """value as a float64 array of shape (n,) (width 0) or (n, width); a scalar is broadcast
    where width is 0. TypeError for what is not real numbers, BadArgumentError for a shape."""
    a = np.asarray(value)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.integer) or
                                 np.issubdtype(a.dtype, np.floating) or a.dtype == bool):
        raise TypeError("%s must be real numbers, not an array of %s" % (name, a.dtype))
    a = a.astype(dtype, copy=False)  # read only: copied into the CState
    if width == 0 and a.ndim == 0:
        a = np.full(n, float(a))
    want = (n,) if width == 0 else (n, width)
    if a.shape != want:
        raise BadArgumentError("%s has shape %s; expected %s" % (
            name, tuple(a.shape), "(%d,) or a number" % n if width == 0 else "(%d, %d)" % want))
    return a


def sphere_mass(radii, densities):
    """density 4/3 pi r^3 [kg], computed as the library computes it (sim_sphere_mass: the same
    operations in the same order), so that masses agree bit for bit with a scene file's."""
    return densities * 4.0 / 3.0 * math.pi * radii * radii * radii


def _contacts(value, n):
    """value as a CONTACT_DTYPE array (a copy): a structured array with those fields, or rows
    (i, j, xi, roll). The library checks the indices when the state is used."""
    if value is None:
        return no_contacts()
    a = np.asarray(value)
    if a.dtype.names is None:
        try:
            a = np.array([tuple(row) for row in value], dtype=CONTACT_DTYPE)
        except (TypeError, ValueError) as e:
            raise BadArgumentError("contacts: rows (i, j, xi[3], roll[3]) expected (%s)" % e)
    missing = [f for f in CONTACT_DTYPE.names if f not in (a.dtype.names or ())]
    if missing or a.ndim != 1:
        raise BadArgumentError("contacts: a 1-D array with fields i, j, xi, roll expected")
    out = np.zeros(len(a), dtype=CONTACT_DTYPE)
    for f in CONTACT_DTYPE.names:
        out[f] = a[f]
    return out


def cstate_from_arrays(positions, velocities=None, radii=None, densities=None, masses=None,
                       omega=None, contacts=None):
    """A CState from the caller's arrays (copied): positions (N, 3) [m]; velocities (N, 3) [m/s],
    default zero; radii (N,) or one number [m]; densities (N,) or one number [kg/m^3] (default 1,
    the built-in scenes'), or masses instead [kg]; omega (N, 3) [rad/s], default zero; contacts:
    friction's histories (CONTACT_DTYPE rows, as State.contacts)."""
    pos = np.asarray(positions)
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise BadArgumentError("positions has shape %s; expected (N, 3)" % (tuple(pos.shape),))
    n = pos.shape[0]
    if n == 0:
        raise BadArgumentError("positions holds no bodies")
    if n >= 2 ** 32:
        raise BadArgumentError("%d bodies: at most 2^32 - 1" % n)
    pos = _array("positions", pos, n, 3)
    vel = np.zeros((n, 3)) if velocities is None else _array("velocities", velocities, n, 3)
    if radii is None:
        raise BadArgumentError("radii are needed: (N,) or one number [m]")
    r = _array("radii", radii, n, 0)
    if masses is not None and densities is not None:
        raise BadArgumentError("give densities or masses, not both")
    if masses is not None:
        m = _array("masses", masses, n, 0)
    else:
        m = sphere_mass(r, _array("densities", 1.0 if densities is None else densities, n, 0))
    cs = CState(n, _contacts(contacts, n))
    cs.pos[:, :3] = pos
    cs.pos[:, 3] = r
    cs.vel[:, :3] = vel
    cs.vel[:, 3] = m
    if omega is not None:
        cs.spin[:, :3] = _array("omega", omega, n, 3)
    return cs
