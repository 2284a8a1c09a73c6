# SPDX-License-Identifier: MIT
"""The binding against the headers: its declarations are generated from include/nbsim/ at build
time (python/gen_ffi.py), so these check that the build is the headers' own, that every name the
package uses is there, and that libnbsim.so exports the public functions alone."""
import os
import shutil
import subprocess
import sys

import pytest

import nbsim
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "python"))
import gen_ffi  # noqa: E402

BUILT = os.path.dirname(os.path.dirname(os.path.abspath(nbsim.__file__)))
CDEF = os.path.join(BUILT, "_nbsim_cdef.h")
LIBNBSIM = os.path.join(os.path.dirname(nbsim._lib.__file__), "..", "..", "bin", "libnbsim.so")
CC = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def test_every_name_the_package_uses_is_bound():
    for f in gen_ffi.FUNCTIONS:
        assert hasattr(nbsim.lib, f), f
    for c in gen_ffi.CONSTANTS:
        assert isinstance(getattr(nbsim.lib, c), int), c
    for t in gen_ffi.TYPES:
        assert nbsim.ffi.typeof(t) is not None


def test_every_struct_is_laid_out_by_the_compiler():
    structs, _, _ = nbsim.ffi.list_types()
    opaque = {"sim_session", "sim_backend", "sig_atomic_t", "sim_notice_fn", "FILE"}
    for name in structs:
        t = nbsim.ffi.typeof(name)
        if name in opaque or t.kind != "struct":
            continue
        assert nbsim.ffi.sizeof(t) > 0
        for field, f in t.fields:
            assert 0 <= f.offset < nbsim.ffi.sizeof(t)


@pytest.mark.skipif(not os.path.exists(CDEF), reason="not a build tree (pip-installed package)")
def test_the_build_is_the_headers_own():
    """Declarations generated now from include/nbsim/ equal those the extension was built from:
    a header changed since the build shows here (rebuild: cmake --build build)."""
    assert CC, "no C compiler"
    now = gen_ffi.cdef_text(CC, [os.path.join(ROOT, "include")])
    with open(CDEF) as f:
        assert f.read() == now


@pytest.mark.skipif(not shutil.which("nm") or not os.path.exists(LIBNBSIM),
                    reason="nm or the build tree's libnbsim.so missing")
def test_libnbsim_exports_the_public_functions_alone():
    out = subprocess.run(["nm", "-D", "--defined-only", LIBNBSIM], capture_output=True,
                         text=True, check=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if " T " in line}
    public = set()
    for line in gen_ffi.exports_text(CC, [os.path.join(ROOT, "include")]).splitlines():
        line = line.strip()
        if line.endswith(";") and line.startswith("sim_"):
            public.add(line[:-1])
    assert exported <= public
    assert set(gen_ffi.FUNCTIONS) - {f for f in gen_ffi.FUNCTIONS if f.startswith("nbsim_py")} \
        <= exported
    assert "sim_step_forces" not in exported  # the stepper is private to the library


def test_versions_agree():
    """pyproject.toml's version is the CMake project's, which the build gave the package."""
    import re
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        py = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        cm = re.search(r"project\(nbsim VERSION ([0-9.]+)", f.read()).group(1)
    assert py == cm == nbsim.__version__
