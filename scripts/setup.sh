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
packages=(cmake gcc make pkg-config libglfw3-dev libglew-dev libcglm-dev libstb-dev
          libgl-dev xvfb xauth xdotool python3-matplotlib
          libnetcdf-dev netcdf-bin python3-ase libopenmpi-dev openmpi-bin lammps)
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
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNBSIM_WERROR=$werror ${NBSIM_CMAKE_ARGS:-} >/dev/null
cmake --build build -j "$(nproc)"

prefix=${NBSIM_PREFIX-$HOME/.local}
if [ -n "$prefix" ]; then
  cmake --install build --prefix "$prefix" >/dev/null
  scripts/path_advice.sh "$prefix" >&2 # what to do when $prefix/bin is not on PATH
fi
