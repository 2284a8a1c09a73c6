# SPDX-License-Identifier: MIT
"""Physics parameters by name: the keys of scene files (params.h's table, which are the fields of
sim_params), checked by the library's own rules, so Python accepts and refuses exactly the values
the command line and scene files do.

As a dict: every field of sim_params; gravity a tuple (gx, gy, gz) [m/s^2]; periodic the axes as
text ("xz", "none"); hertz and triplets bools; tangential_damping and skin None for auto. Values
are given as the dict has them, or as the command line's text: gravity also "gx,gy,gz", periodic
any spelling --periodic and scene files take ("xz", "x,z", "x z", "none"), so that a dict read
back is a dict that can be given (Simulation.from_state(sim.state(), params=sim.params))."""
from ._lib import check, ffi, lib, new_error, text, to_python
from .errors import BadArgumentError

# Parameters that are fields of sim_params without a row in the table.
FLAGS = ("hertz", "triplets")


def keys():
    """Every parameter's scene-file key, in the table's order."""
    out = []
    for i in range(ffi.typeof("sim_param_id").relements["SIM_PARAM_COUNT"]):
        out.append(text(lib.sim_param_info_of(i).key))
    return out + list(FLAGS)


def rule(key):
    """What a value of the parameter must be ("a time step in [0, 1000] s ...")."""
    pid = lib.sim_param_from_key(key.encode())
    if pid < 0:
        raise BadArgumentError("unknown parameter %r; known: %s" % (key, ", ".join(keys())))
    return text(lib.sim_param_info_of(pid).rule)


def as_dict(p):
    """A sim_params (cdata) as a dict."""
    out = {}
    for name, f in ffi.typeof("sim_params").fields:
        v = getattr(p, name)
        if name == "periodic":
            out[name] = periodic_text(v)
        elif name in FLAGS:
            out[name] = bool(v)
        elif f.type.cname == "sim_optional_value":
            out[name] = v.value if v.set else None
        else:
            out[name] = to_python(v, f.type)
    return out


def periodic_text(axes):
    """The periodic axes (sim_params.periodic's bits) as the library writes them: "xz", "none"."""
    buf = ffi.new("char[]", 8)
    return text(lib.sim_periodic_text(axes, b"", buf, len(buf)))


def _value_text(key, value):
    """A Python value as the text the library's parser takes (exact: repr of a float gives it
    back bit for bit). Text is passed as it is where the command line takes more than a number
    (gravity "gx,gy,gz", periodic axes): the library's parser decides, as for --gravity."""
    if key == "periodic":
        if not isinstance(value, str):
            raise TypeError("periodic must be the axes as text ('xz', 'x,z', 'y' or 'none'), "
                            "not %r" % (value,))
        return value
    if key == "gravity":
        if isinstance(value, str):
            return value
        try:
            parts = [float(v) for v in value]
        except (TypeError, ValueError):
            raise TypeError("gravity must be three numbers (gx, gy, gz) or their text "
                            "'gx,gy,gz', not %r" % (value,))
        if len(parts) != 3:
            raise BadArgumentError("gravity must be three numbers (gx, gy, gz), got %d"
                                   % len(parts))
        return ",".join(repr(v) for v in parts)
    if value is None or (isinstance(value, str) and value == "auto"):
        return "auto"
    if isinstance(value, bool) or isinstance(value, str):
        raise TypeError("%s must be a number, not %r" % (key, value))
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise TypeError("%s must be a number, not %s" % (key, type(value).__name__))
    if key == "steps_per_frame" and f.is_integer():
        return "%d" % int(f)
    return repr(f)


def _same(current, value):
    if isinstance(current, str) or isinstance(value, str):
        return False  # text goes through the library's parser, which reads it as it is meant
    try:
        if isinstance(current, tuple):
            return tuple(float(v) for v in value) == current
        if current is None or value is None:
            return current is None and value is None
        return not isinstance(value, (bool, str)) and float(value) == current
    except (TypeError, ValueError):
        return False


def apply(p, values):
    """Sets values (a dict by key) in the sim_params p through the library's rules. Returns the
    bits of the parameters set (SIM_GIVEN). Raises on an unknown key or a refused value, with the
    library's message after the key ("dt: '-1' must be a time step in [0, 1000] s ...")."""
    if ffi.typeof(p).kind == "struct":  # a field of a struct: its address
        p = ffi.addressof(p)
    bits = 0
    err = new_error()
    for key, value in values.items():
        if key == "hertz":
            p.hertz = 1 if value else 0
            bits |= lib.SIM_PARAM_BIT_HERTZ
            continue
        if key == "triplets":
            p.triplets = 1 if value else 0
            bits |= lib.SIM_PARAM_BIT_TRIPLETS
            continue
        pid = lib.sim_param_from_key(str(key).encode())
        if pid < 0:
            raise BadArgumentError("unknown parameter %r; known: %s" % (key, ", ".join(keys())))
        bits |= 1 << pid
        if _same(as_dict(p[0]).get(key), value):
            # What the struct holds already (sim.params given back whole, with zeros that mean
            # "the default", which no rule takes as text): nothing to check.
            continue
        st = lib.sim_param_set(p, pid, _value_text(key, value).encode(), err)
        if st != lib.SIM_OK:
            err.message = ("%s: " % key).encode() + ffi.string(err.message)[:400]
            check(st, err)
    return bits


def default():
    """The library's default parameters (sim_params_default)."""
    return as_dict(lib.sim_params_default())
