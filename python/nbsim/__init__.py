# SPDX-License-Identifier: MIT
"""nbsim for Python: N spheres with contact and ATM triplet forces, on the double-precision CPU
reference or CUDA, with the thread maps that place the GPU's blocks; and the maps inspector.

    import nbsim
    sim = nbsim.Simulation("pile", n=2000, backend="cpu")
    sim.run(100)                       # 100 frames; Ctrl-C raises KeyboardInterrupt, state kept
    x = sim.positions                  # (N, 3) numpy array, a copy
    sim.timing_summary()["step"]       # per-step ms: median, p95, min, max
    nbsim.maps.plan("rm", 1000).waste  # the maps inspector

The library's own calls are in nbsim.lib / nbsim.ffi (cffi, generated from include/nbsim/).
docs/python.md in the repository has the whole story and examples."""
from . import errors, io, maps, params
from ._lib import ffi, lib
from ._version import __version__
from .errors import (BadArgumentError, CudaError, Error, FileError, NoDeviceError,
                     OutOfMemoryError, ParseError, StoppedError, UnstableError, UnsupportedError)
from .io import (cuda_device_count, netcdf_available, read_state, read_trajectory_last, scenes,
                 write_state)
from .simulation import KERNELS, PHASES, Simulation
from .state import CONTACT_DTYPE, WALL_BASE, State

__all__ = [
    "Simulation", "State", "CONTACT_DTYPE", "WALL_BASE", "maps", "params", "errors", "io", "scenes", "read_state",
    "read_trajectory_last", "write_state", "cuda_device_count", "netcdf_available", "KERNELS",
    "PHASES",
    "Error", "BadArgumentError", "NoDeviceError", "OutOfMemoryError", "CudaError", "FileError",
    "ParseError", "UnstableError", "UnsupportedError", "StoppedError", "ffi", "lib",
    "__version__",
]
