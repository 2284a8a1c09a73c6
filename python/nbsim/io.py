# SPDX-License-Identifier: MIT
"""Files without a simulation: the built-in scenes, scene and state files, the last frame of a
trajectory, and writing a state file from arrays."""
import numpy as np

from . import params as _params
from ._lib import check, ffi, lib, new_error, path_bytes, struct_dict, text
from .state import cstate_from_arrays, take_state


def scenes():
    """The built-in scenes: [{"name", "description", "default_n"}]."""
    return [{"name": text(lib.sim_scene_builtin_name(i)),
             "description": text(lib.sim_scene_builtin_description(i)),
             "default_n": lib.sim_scene_builtin_default_n(i)}
            for i in range(lib.sim_scene_builtin_count())]


def read_state(path):
    """A scene file or saved state (or a trajectory's last frame): (State, params dict). Forces
    are not read (a saved state's fx fy fz columns are ignored on loading, as by the library)."""
    p = ffi.new("sim_params *", lib.sim_params_default())
    st = ffi.new("sim_state *")
    err = new_error()
    check(lib.sim_scene_load(path_bytes(path), p, st, err), err)
    return take_state(st), _params.as_dict(p[0])


def read_trajectory_last(path):
    """The last complete frame of a trajectory (.xyz, .lammpstrj, .nc): (State, params dict,
    info dict: format, frames, frame, step, time, truncated, ...). Values as the file holds them:
    a CPU run's .xyz and .lammpstrj its double state exactly, a CUDA run's its floats, .nc float32
    (docs/trajectories.md)."""
    p = ffi.new("sim_params *", lib.sim_params_default())
    st = ffi.new("sim_state *")
    info = ffi.new("sim_traj_info *")
    err = new_error()
    check(lib.sim_traj_read_last(path_bytes(path), p, st, info, err), err)
    d = struct_dict(info[0])
    d["format"] = text(lib.sim_traj_format_label(info.format))
    state = take_state(st, step=info.step, time=info.time)
    return state, _params.as_dict(p[0]), d


def write_state(path, positions, velocities=None, radii=None, densities=None, masses=None,
                forces=None, params=None, omega=None, contacts=None):
    """Writes bodies as a scene file (sim_state_save: full double precision, complete or absent):
    with omega (N, 3) [rad/s] and friction's contact histories (State.contacts) when given. The
    bodies must follow a scene file's rules, as in Simulation.from_arrays (a saved state's, with
    forces), so that the file reads back."""
    cs = cstate_from_arrays(positions, velocities, radii, densities, masses, omega, contacts)
    p = ffi.new("sim_params *", lib.sim_params_default())
    if params:
        _params.apply(p, dict(params))
    err = new_error()
    check(lib.sim_scene_check_bodies(cs.c, p, 1 if forces is not None else 0, err), err)
    f = ffi.NULL
    keep = None
    if forces is not None:
        keep = np.ascontiguousarray(np.asarray(forces, dtype=np.float64).reshape(cs.n, 3))
        f = ffi.cast("sim_vec3d *", ffi.from_buffer(keep))
    err = new_error()
    check(lib.sim_state_save(path_bytes(path), p, cs.c, f, err), err)


def netcdf_available():
    """Whether this build writes and reads .nc trajectories."""
    return bool(lib.sim_traj_netcdf_available())


def cuda_device_count():
    """Usable CUDA devices (0 without a device or driver)."""
    return int(lib.sim_cuda_device_count())
