#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what nbsim needs from Debian's packages (only what is missing), configures and builds
# into build/, and installs nbsim into a user prefix so that `nbsim ...` works as the README types
# it: ~/.local by default (Debian's ~/.profile puts ~/.local/bin on PATH when it exists, root's
# does not: scripts/path_advice.sh says what to do),
# NBSIM_PREFIX=/some/prefix for another, NBSIM_PREFIX= (empty) for none. Used by ./run.sh and
# ./test.sh; safe to run again. `--fuzz` also installs clang (tests/fuzz/run.sh; CI).
set -euo pipefail
cd "$(dirname "$0")/.."

# lammps: the reference the friction model is checked against (tests/lammps, test_friction_lammps).
# python3-cffi python3-dev python3-numpy python3-pytest python3-venv: the Python package (python/)
# for Debian's python3, and its tests. python3-netcdf4: ASE's reader of .nc trajectories
# (tests/test_traj_readers.sh). python3-vtk9: VTK's reader of the ParaView series
# (tests/test_vtk.sh).
packages=(cmake gcc make pkg-config ccache libglfw3-dev libglew-dev libcglm-dev libstb-dev
          libgl-dev xvfb xauth xdotool python3-matplotlib
          libnetcdf-dev netcdf-bin python3-ase python3-netcdf4 libopenmpi-dev openmpi-bin lammps
          python3-cffi python3-dev python3-numpy python3-pytest python3-venv python3-vtk9)
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang) ;;
    *) echo "nbsim setup: unknown argument '$arg' (known: --fuzz)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "nbsim setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
command -v nvcc >/dev/null 2>&1 || { echo "nbsim setup: nvcc not found; install the CUDA toolkit" >&2; exit 1; }

werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
# The Python package is built for Debian's python3 (its numpy, cffi, matplotlib), whatever
# python3 comes first on PATH (a pyenv one, say).
# The GPU code's architectures: CMakeLists.txt decides (this machine's GPU, or sm_90 with PTX
# without one); NBSIM_CUDA_ARCHS in the environment overrides ("all": every supported family).
# ccache keeps every compiled object: a second build, or one in another checkout of the same
# tree, recompiles only what changed (the device code is most of a build).
launcher=()
if command -v ccache >/dev/null 2>&1; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  # paths inside the tree hash the same from any checkout (the debug info's build folder too)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNBSIM_WERROR=$werror \
  -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" ${NBSIM_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$(nproc)"

# `import nbsim`: .venv, Debian's python3 with its packages (--system-site-packages) and the
# package in the build tree (build/python, through a .pth file): `.venv/bin/python`, or
# `source .venv/bin/activate` and then `python`. Rebuilding updates it; nothing is copied.
if [ -d build/python/nbsim ]; then
  [ -x .venv/bin/python ] || /usr/bin/python3 -m venv --system-site-packages .venv
  site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  echo "$PWD/build/python" >"$site/nbsim-build.pth"
fi

prefix=${NBSIM_PREFIX-$HOME/.local}
if [ -n "$prefix" ]; then
  cmake --install build --prefix "$prefix" >/dev/null
  scripts/path_advice.sh "$prefix" >&2 # what to do when $prefix/bin is not on PATH
fi
