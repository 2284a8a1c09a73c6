#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""nbsim's Python binding, generated from the library's public headers at build time.

The declarations cffi gets are never written by hand: this script runs the C preprocessor over
nbsim_ffi.h (the public headers, include/nbsim/, and the binding's own nbsim_py.h), parses the
result with pycparser (cffi's own parser), keeps the functions named in FUNCTIONS and TYPES with
every type they use, in the headers' order, and hands that text to cffi in API mode. The module
cffi writes includes the same headers, so the C compiler checks every call and every field
against them, and takes every struct's layout from them: a header that changes changes the
binding with it, and a name the binding needs that a header no longer has fails the build here,
naming it.

    gen_ffi.py module  --cc CC -I include/ --out build/python/_nbsim.c   the extension's C source
    gen_ffi.py cdef    --cc CC -I include/ --out cdef.h                  the declarations alone
    gen_ffi.py exports --cc CC -I include/ --out libnbsim.map            every public function, as
                                                                        a linker version script
"""
import argparse
import os
import subprocess
import sys

import pycparser
from pycparser import c_ast, c_generator

HERE = os.path.dirname(os.path.abspath(__file__))

# What the Python layer calls. A name missing from the headers fails the build.
FUNCTIONS = """
sim_status_string
sim_choose
sim_session_config_default sim_session_resolve_launch sim_session_open sim_session_close
sim_session_info sim_session_take_notices sim_session_energy sim_session_save_state
sim_session_read_state sim_session_mean_height sim_session_dump_start sim_session_dump_stop
sim_session_reset sim_session_set_maps sim_session_set_triplets sim_session_set_params
sim_session_set_cull sim_session_set_steps_per_frame sim_session_tile_pairs sim_session_cull_info
sim_run_frame sim_run_stats_get sim_run_stats_free sim_run_stats_write_json
sim_frame_phase_count sim_frame_phase_field
sim_timing_log_open sim_timing_log_close sim_timing_log_abandon
sim_backend_config_default sim_pair_choice_name sim_pair_choice_from_name sim_pair_tile_valid
sim_config_culls sim_cuda_device_count sim_multi_have_nccl sim_phase_timing_from_name
sim_pair_map_plan sim_triplet_map_plan sim_map_count sim_map_name sim_map_from_name sim_map_names
sim_pair_map_label sim_triplet_map_label sim_pair_map_is_paper_float
sim_triplet_map_is_paper_float sim_map_plan_block_at sim_map_run_block sim_map_check
sim_map_check_describe sim_map_cover_build
sim_scene_builtin_count sim_scene_builtin_name sim_scene_builtin_description
sim_scene_builtin_default_n sim_scene_is_builtin sim_scene_load sim_state_save sim_sphere_mass
sim_scene_check_bodies
sim_state_alloc sim_state_free
sim_params_default sim_param_from_key sim_param_set sim_param_info_of sim_params_check
sim_periodic_text
sim_insert_from_key sim_insert_set sim_insert_key_name
sim_traj_read_last sim_traj_format_from_path sim_traj_netcdf_available sim_traj_format_list
sim_traj_format_label
sim_backend_max_bodies
nbsim_py_sigint_begin nbsim_py_sigint_end nbsim_py_map_assign
""".split()

# Types the Python layer names itself (the functions' own come with them).
TYPES = """
sim_run sim_frame_timing sim_energy sim_run_kernel sim_stats sim_dump_stats sim_cull_info
sim_map_plan sim_map_check_result sim_map_cover sim_traj_info sim_param_id sim_triplets_mode
sim_state_contact sim_backend_choice sim_backend_kind sim_pair_map sim_triplet_map sim_traj_format sim_tile3 sim_run_end
sim_insert_key
""".split()

# Macros the Python layer reads (their values come from the compiler, in API mode).
CONSTANTS = """
SIM_PATH_MAX SIM_ERROR_MESSAGE_MAX SIM_PAIR_FULL SIM_PAIR_CHOICE_COUNT SIM_GPUS_ALL
SIM_TRIPLET_TILE SIM_MAX_TILES_2D SIM_MAX_TILES_3D SIM_MAX_LAUNCHES SIM_MAP_CHECK_FULL_DEFAULT
SIM_MAP_COVER_SIDE SIM_PARAM_BIT_HERTZ SIM_PARAM_BIT_TRIPLETS
SIM_AUTOTUNE_PAIR SIM_AUTOTUNE_TRIPLET SIM_AUTOTUNE_TILE
""".split()

# The C library's names, which cffi knows by itself (python/fake_libc/ gives them to pycparser).
LIBC_TYPES = {"int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
              "uint64_t", "intptr_t", "uintptr_t", "size_t", "ptrdiff_t", "FILE"}
LIBC_EXTRA = "typedef int... sig_atomic_t;\n"
LIBC_SKIP = LIBC_TYPES | {"sig_atomic_t"}

# Called back from C with the session's notices.
CALLBACKS = 'extern "Python" void nbsim_py_notice(void *ctx, const char *line);\n'


def preprocess(cc, includes, header, flags=()):
    """The header through the C preprocessor, with the binding's stand-in C library headers: plain
    C that pycparser reads (no GNU attributes, no SIM_HD map functions)."""
    cmd = [cc, "-E", "-P", "-nostdinc", "-U__GNUC__", "-U__GNUC_MINOR__",
           "-I", os.path.join(HERE, "fake_libc"), "-I", HERE]
    for inc in includes:
        cmd += ["-I", inc]
    # The map functions are static inline bodies for kernels: no business of a binding.
    cmd += ["-DSIM_MAPS_PAIR_H", "-DSIM_MAPS_TRIPLET_H"]
    cmd += list(flags)
    cmd.append(header)
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("gen_ffi: the preprocessor failed on %s:\n%s" % (header, res.stderr))
    return res.stdout


def macros(cc, includes, header):
    """The names of the macros the header defines (the preprocessor's -dM)."""
    text = preprocess(cc, includes, header, flags=("-dM",))
    return {line.split()[1].split("(")[0] for line in text.splitlines()
            if line.startswith("#define ")}


def parse(text, name):
    try:
        return pycparser.CParser().parse(text, name)
    except pycparser.plyparser.ParseError as e:
        sys.exit("gen_ffi: cannot parse the preprocessed headers (%s): %s" % (name, e))


class Names(c_ast.NodeVisitor):
    """The typedef names and struct tags a declaration uses."""

    def __init__(self):
        self.types, self.tags = set(), set()

    def visit_IdentifierType(self, node):
        for n in node.names:
            self.types.add(n)

    def visit_Struct(self, node):
        if node.name:
            self.tags.add(node.name)
        self.generic_visit(node)


def evaluate(node, known):
    """An integer constant expression of the headers (array sizes, enum values), folded, so that
    cffi reads plain numbers."""
    if isinstance(node, c_ast.Constant):
        text = node.value.lower().rstrip("ul")
        return int(text, 0) if not (len(text) > 1 and text[0] == "0" and text[1].isdigit()) \
            else int(text, 8)
    if isinstance(node, c_ast.ID):
        if node.name not in known:
            raise ValueError("unknown constant %s" % node.name)
        return known[node.name]
    if isinstance(node, c_ast.Cast):
        return evaluate(node.expr, known)
    if isinstance(node, c_ast.UnaryOp):
        v = evaluate(node.expr, known)
        return {"-": -v, "+": v, "~": ~v}[node.op]
    if isinstance(node, c_ast.BinaryOp):
        a, b = evaluate(node.left, known), evaluate(node.right, known)
        ops = {"+": a + b, "-": a - b, "*": a * b, "<<": a << b if b >= 0 else 0,
               ">>": a >> b if b >= 0 else 0, "|": a | b, "&": a & b, "^": a ^ b}
        if node.op == "/":
            return int(a / b)
        return ops[node.op]
    raise ValueError("not a constant: %s" % type(node).__name__)


class Fold(c_ast.NodeVisitor):
    """Folds array sizes and enum values into numbers, in place."""

    def __init__(self):
        self.known = {}

    def visit_ArrayDecl(self, node):
        if node.dim is not None:
            node.dim = c_ast.Constant("int", str(evaluate(node.dim, self.known)))
        self.generic_visit(node)

    def visit_Enumerator(self, node):
        value = evaluate(node.value, self.known) if node.value is not None else \
            self.next_value
        node.value = c_ast.Constant("int", str(value))
        self.known[node.name] = value
        self.next_value = value + 1

    def visit_EnumeratorList(self, node):
        self.next_value = 0
        for e in node.enumerators:
            self.visit(e)


def declarations(ast):
    """Top-level nodes with what each defines: function names, typedef names, struct tags, enum
    constants."""
    out = []
    for node in ast.ext:
        if isinstance(node, c_ast.FuncDef):
            continue  # static inline helpers (map_cover.h): C's business
        entry = {"node": node, "func": None, "typedef": None, "tag": None, "enums": set(),
                 "struct": False}
        if isinstance(node, c_ast.Typedef):
            entry["typedef"] = node.name
        elif isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl):
            entry["func"] = node.name
        inner = node.type
        while isinstance(inner, (c_ast.TypeDecl, c_ast.PtrDecl)):
            inner = inner.type
        if isinstance(inner, c_ast.Struct) and inner.decls is not None:
            entry["tag"] = inner.name
            entry["struct"] = True
        if isinstance(inner, c_ast.Enum) and inner.values is not None:
            entry["enums"] = {e.name for e in inner.values.enumerators}
        out.append(entry)
    return out


def select(decls, functions, types, constants):
    """The declarations of the named functions and types and of every type they use, in the
    headers' order."""
    by_typedef = {d["typedef"]: d for d in decls if d["typedef"]}
    by_tag = {d["tag"]: d for d in decls if d["tag"]}
    by_func = {d["func"]: d for d in decls if d["func"]}
    missing = [f for f in functions if f not in by_func] + \
        [t for t in types if t not in by_typedef and t not in by_tag]
    if missing:
        sys.exit("gen_ffi: the public headers (include/nbsim/) no longer declare %s, which the "
                 "Python binding uses (python/gen_ffi.py)" % ", ".join(missing))
    wanted = []
    seen = set()

    def need(d):
        if id(d) in seen:
            return
        seen.add(id(d))
        names = Names()
        names.visit(d["node"])
        for t in sorted(names.types - LIBC_SKIP):
            if t in by_typedef:
                need(by_typedef[t])
        for tag in sorted(names.tags):
            if tag in by_tag:
                need(by_tag[tag])
        wanted.append(d)

    for f in functions:
        need(by_func[f])
    for t in types:
        need(by_typedef.get(t) or by_tag[t])
    # Anonymous enums whose constants the layer names (autotune.h's flags).
    for d in decls:
        if d["enums"] & set(constants) and not d["typedef"]:
            need(d)
    order = {id(d["node"]): k for k, d in enumerate(decls)}
    wanted.sort(key=lambda d: order[id(d["node"])])
    return wanted


def cdef_text(cc, includes):
    text = preprocess(cc, includes, os.path.join(HERE, "nbsim_ffi.h"))
    ast = parse(text, "nbsim_ffi.h")
    Fold().visit(ast)
    decls = declarations(ast)
    enum_constants = set().union(*(d["enums"] for d in decls))
    constants = [c for c in CONSTANTS if c not in enum_constants]
    gone = set(constants) - macros(cc, includes, os.path.join(HERE, "nbsim_ffi.h"))
    if gone:
        sys.exit("gen_ffi: the public headers (include/nbsim/) no longer define %s, which the "
                 "Python binding uses (python/gen_ffi.py)" % ", ".join(sorted(gone)))
    wanted = select(decls, FUNCTIONS, TYPES, CONSTANTS)
    gen = c_generator.CGenerator()
    lines = ["/* generated by python/gen_ffi.py from include/nbsim/ and python/nbsim_py.h */",
             LIBC_EXTRA]
    for d in wanted:
        if d["typedef"] in LIBC_SKIP:
            continue
        text = gen.visit(d["node"])
        if d["struct"]:
            # "...;": cffi takes the struct's size, alignment and every offset from the compiler
            # (GNU attributes such as sim_vec4f's alignment are gone from the preprocessed text).
            end = text.rindex("}")
            text = text[:end] + "  ...;\n" + text[end:]
        lines.append(text + ";")
    lines += ["#define %s ..." % c for c in constants]
    lines.append(CALLBACKS)
    return "\n".join(lines) + "\n"


def exports_text(cc, includes):
    """Every function the public headers declare (not the static inline ones), as a version script
    for libnbsim.so: the library's private functions stay inside it."""
    inc = includes[0]
    folder = os.path.join(inc, "nbsim")
    headers = sorted(h for h in os.listdir(folder) if h.endswith(".h") and h != "cuda_check.h")
    umbrella = "".join('#include "nbsim/%s"\n' % h for h in headers)
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "nbsim_exports_%d.h" % os.getpid())
    with open(tmp, "w") as f:
        f.write(umbrella)
    try:
        text = preprocess(cc, includes, tmp)
    finally:
        os.remove(tmp)
    funcs = sorted(d["func"] for d in declarations(parse(text, "include/nbsim")) if d["func"])
    return ("/* generated by python/gen_ffi.py: the functions of include/nbsim/ */\n"
            "{\n  global:\n" + "".join("    %s;\n" % f for f in funcs) + "  local: *;\n};\n")


def module_source(cdef):
    import cffi
    ffi = cffi.FFI()
    ffi.cdef(cdef)
    ffi.set_source("nbsim._nbsim", '#include "nbsim_ffi.h"\n')
    return ffi


def write_if_changed(path, text):
    """Leaves an unchanged file alone, so that make does not rebuild what depends on it."""
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["module", "cdef", "exports"])
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("-I", dest="includes", action="append", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.what == "exports":
        write_if_changed(a.out, exports_text(a.cc, a.includes))
        return
    cdef = cdef_text(a.cc, a.includes)
    if a.what == "cdef":
        write_if_changed(a.out, cdef)
        return
    write_if_changed(os.path.splitext(a.out)[0] + "_cdef.h", cdef)
    ffi = module_source(cdef)
    tmp = a.out + ".new.c"
    ffi.emit_c_code(tmp)
    with open(tmp) as f:
        text = f.read()
    os.remove(tmp)
    write_if_changed(a.out, text)


if __name__ == "__main__":
    main()
