# SPDX-License-Identifier: MIT
"""The extension (generated from include/nbsim/ by python/gen_ffi.py) and the few helpers every
module of the package shares: C strings, structs as dicts, errors as exceptions, checked
arguments."""
import numbers

from ._nbsim import ffi, lib  # noqa: F401  (the binding itself)
from .errors import BadArgumentError, error_from

PATH_MAX = lib.SIM_PATH_MAX


def text(cstr):
    """A C string as str ("" for NULL)."""
    if cstr == ffi.NULL:
        return ""
    return ffi.string(cstr).decode("utf-8", "replace")


def path_bytes(path, what="path"):
    """A file system path as the bytes C takes, refused (BadArgumentError) when C could not."""
    try:
        import os
        raw = os.fsencode(path)
    except TypeError:
        raise TypeError("%s must be a str or os.PathLike, not %s" % (what, type(path).__name__))
    if b"\0" in raw:
        raise BadArgumentError("%s %r contains a NUL byte" % (what, path))
    if len(raw) >= PATH_MAX:
        raise BadArgumentError("%s is %d bytes long; at most %d" % (what, len(raw), PATH_MAX - 1))
    return raw


def new_error():
    return ffi.new("sim_error *")


def check(status, err):
    """Raises the exception of a failed call, carrying the library's message."""
    if status != lib.SIM_OK:
        raise error_from(status, text(lib.sim_status_string(status)),
                         ffi.string(err.message).decode("utf-8", "replace"))


def to_python(value, ctype=None):
    """A C value as plain Python: numbers stay, char arrays become str, small structs dicts
    (sim_vec3d a tuple), arrays lists, other pointers are left out (None)."""
    ctype = ctype or ffi.typeof(value)
    if ctype.kind == "primitive":
        return value
    if ctype.kind == "enum":
        return int(value)
    if ctype.kind == "array":
        if ctype.item.cname == "char":
            return ffi.string(value).decode("utf-8", "replace")
        return [to_python(v, ctype.item) for v in value]
    if ctype.kind == "struct":
        if ctype.cname == "sim_vec3d":
            return (value.x, value.y, value.z)
        return struct_dict(value, ctype)
    if ctype.kind == "pointer" and ctype.item.cname == "char":
        return text(value)
    return None


def struct_dict(value, ctype=None):
    """Every field of a struct, by the names the header gives them (no list kept here)."""
    ctype = ctype or ffi.typeof(value)
    out = {}
    for name, field in ctype.fields:
        v = to_python(getattr(value, name), field.type)
        if v is not None or field.type.kind != "pointer":
            out[name] = v
    return out


def as_uint(name, value, lo, hi):
    """An integer argument in [lo, hi]: TypeError for what is no integer, BadArgumentError for
    one out of range (before it reaches C, where it would wrap)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError("%s must be an integer, not %s" % (name, type(value).__name__))
    value = int(value)
    if value < lo or value > hi:
        raise BadArgumentError("%s = %d is out of range: %d..%d" % (name, value, lo, hi))
    return value


def map_names(dim):
    buf = ffi.new("char[]", 1024)
    return text(lib.sim_map_names(dim, buf, len(buf))).split(", ")
