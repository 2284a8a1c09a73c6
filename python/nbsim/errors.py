# SPDX-License-Identifier: MIT
"""The library's failures as Python exceptions. Each carries the library's one-line message (the
text `nbsim` prints after "nbsim: "), its status as `status` (the text of sim_status_string) and
`code` (the sim_status value). The class follows the status, and also derives from the Python
exception a Python programmer would catch for it (ValueError for a bad argument, OSError for a
file, MemoryError for memory)."""


class Error(RuntimeError):
    """A failure of the nbsim library."""

    status = "error"
    code = None

    def __init__(self, message, status=None, code=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code


class BadArgumentError(Error, ValueError):
    """An argument the library refuses (SIM_BAD_ARGUMENT): a bad name, size or value."""


class NoDeviceError(Error):
    """No CUDA device, or too few (SIM_NO_DEVICE)."""


class OutOfMemoryError(Error, MemoryError):
    """Memory ran out, on the host or the GPU (SIM_OUT_OF_MEMORY)."""


class CudaError(Error):
    """A CUDA call failed (SIM_CUDA)."""


class FileError(Error, OSError):
    """A file could not be read or written (SIM_IO)."""


class ParseError(Error, ValueError):
    """A scene, state or trajectory file that does not parse (SIM_PARSE)."""


class UnstableError(Error):
    """The simulation blew up (SIM_UNSTABLE): NaN, or a body outside the box."""


class UnsupportedError(Error):
    """Not available in this build or on this backend (SIM_UNSUPPORTED)."""


class StoppedError(Error):
    """Work stopped by the simulation's stop flag (SIM_INTERRUPTED) outside a run."""


# By the status's enum name in base.h (SIM_STATUS_LIST), so that a new status gets Error.
_BY_NAME = {
    "SIM_BAD_ARGUMENT": BadArgumentError,
    "SIM_NO_DEVICE": NoDeviceError,
    "SIM_OUT_OF_MEMORY": OutOfMemoryError,
    "SIM_CUDA": CudaError,
    "SIM_IO": FileError,
    "SIM_PARSE": ParseError,
    "SIM_UNSTABLE": UnstableError,
    "SIM_UNSUPPORTED": UnsupportedError,
    "SIM_INTERRUPTED": StoppedError,
}
_BY_CODE = {}


def _classes():
    if not _BY_CODE:
        from ._nbsim import ffi
        for name, value in ffi.typeof("sim_status").relements.items():
            _BY_CODE[value] = _BY_NAME.get(name, Error)
    return _BY_CODE


def error_from(code, status, message):
    """The exception for a failed call: its class by status, the library's message."""
    cls = _classes().get(int(code), Error)
    return cls(message or status, status=status, code=int(code))
