# SPDX-License-Identifier: MIT
"""Bodies as numpy arrays, and the library's sim_state (pos = (x, y, z, r), vel = (vx, vy, vz, m))
filled from them or read into them.

Every array this module hands out is a copy owned by Python: it stays valid for as long as Python
keeps it, whatever the simulation does next, and changing it changes nothing in the simulation.

Angular velocity (omega): the library's sim_state gets a per-body spin array with rotation
(friction). The binding needs no change for it to travel: every per-body array sim_state has
beyond pos and vel is allocated, read and passed by its field name (`State.extra`), and
`State.omega` is the one named like an angular velocity, None while the library has none."""
import math
from dataclasses import dataclass, field

import numpy as np

from ._lib import ffi
from .errors import BadArgumentError

# Names the library may give the angular velocity in sim_state (the first found is `omega`).
OMEGA_FIELDS = ("omega", "spin", "ang_vel", "angular_velocity", "angvel")


def _extra_fields():
    """sim_state's per-body arrays beyond pos and vel: name -> components per body (each a
    double, or a struct of doubles)."""
    out = {}
    for name, f in ffi.typeof("sim_state").fields:
        if name in ("n", "pos", "vel") or f.type.kind != "pointer":
            continue
        item = f.type.item
        if item.kind == "primitive" and item.cname == "double":
            out[name] = 1
        elif item.kind == "struct" and all(sub.type.cname == "double" for _, sub in item.fields):
            out[name] = len(item.fields)
        else:
            raise BadArgumentError("the library's sim_state has a per-body field '%s' of type %s "
                                   "that this binding does not know" % (name, item.cname))
    return out


EXTRA = _extra_fields()
OMEGA = next((name for name in OMEGA_FIELDS if name in EXTRA), None)


@dataclass
class State:
    """A snapshot of the bodies, in the scene's body order. SI units: m, m/s, kg, N, rad/s."""

    positions: np.ndarray           # (N, 3) float64 [m]
    velocities: np.ndarray          # (N, 3) [m/s]
    radii: np.ndarray               # (N,) [m]
    masses: np.ndarray              # (N,) [kg]
    forces: np.ndarray = None       # (N, 3) [N]: the last total force per body (None: unknown)
    extra: dict = field(default_factory=dict)  # the library's other per-body arrays, by name
    step: int = 0                   # integration steps since the scene was (re)loaded
    time: float = 0.0               # simulated time [s]

    @property
    def n(self):
        return len(self.radii)

    @property
    def omega(self):
        """(N, 3) angular velocity [rad/s], or None while the library's state has none."""
        return self.extra.get(OMEGA) if OMEGA else None

    @property
    def densities(self):
        """mass / (4/3 pi r^3) [kg/m^3]."""
        return self.masses / (4.0 / 3.0 * math.pi * self.radii ** 3)


class CState:
    """A sim_state whose arrays are numpy arrays of this object's (n x 4 doubles each): what C
    reads from or writes into. Keep it alive while C uses it."""

    def __init__(self, n):
        self.n = n
        self.pos = np.zeros((n, 4))
        self.vel = np.zeros((n, 4))
        self.extra = {name: np.zeros((n, k)) for name, k in EXTRA.items()}
        self.c = ffi.new("sim_state *")
        self.c.n = n
        self.c.pos = ffi.cast("sim_vec4d *", ffi.from_buffer(self.pos))
        self.c.vel = ffi.cast("sim_vec4d *", ffi.from_buffer(self.vel))
        fields = dict(ffi.typeof("sim_state").fields)
        for name, a in self.extra.items():
            setattr(self.c, name, ffi.cast(fields[name].type, ffi.from_buffer(a)))

    def state(self, forces=None, step=0, time=0.0):
        extra = {name: (a[:, 0].copy() if a.shape[1] == 1 else a.copy())
                 for name, a in self.extra.items()}
        return State(positions=self.pos[:, :3].copy(), velocities=self.vel[:, :3].copy(),
                     radii=self.pos[:, 3].copy(), masses=self.vel[:, 3].copy(), forces=forces,
                     extra=extra, step=step, time=time)


def _array(name, value, n, width, dtype=np.float64):
    """value as a float64 array of shape (n,) (width 0) or (n, width); a scalar is broadcast
    where width is 0. TypeError for what is not real numbers, BadArgumentError for a shape."""
    a = np.asarray(value)
    if a.dtype == object or not (np.issubdtype(a.dtype, np.integer) or
                                 np.issubdtype(a.dtype, np.floating) or a.dtype == bool):
        raise TypeError("%s must be real numbers, not an array of %s" % (name, a.dtype))
    a = a.astype(dtype)
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


def cstate_from_arrays(positions, velocities=None, radii=None, densities=None, masses=None,
                       omega=None):
    """A CState from the caller's arrays (copied): positions (N, 3) [m]; velocities (N, 3) [m/s],
    default zero; radii (N,) or one number [m]; densities (N,) or one number [kg/m^3] (default 1,
    the built-in scenes'), or masses instead [kg]; omega (N, 3) [rad/s] where the library's state
    has an angular velocity."""
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
    cs = CState(n)
    cs.pos[:, :3] = pos
    cs.pos[:, 3] = r
    cs.vel[:, :3] = vel
    cs.vel[:, 3] = m
    if omega is not None:
        if OMEGA is None:
            raise BadArgumentError("omega: this build's state has no angular velocity (rotation "
                                   "comes with friction in a later nbsim)")
        k = EXTRA[OMEGA]
        cs.extra[OMEGA][:] = _array("omega", omega, n, k) if k > 1 else \
            _array("omega", omega, n, 0)[:, None]
    return cs
