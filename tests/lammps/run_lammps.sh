#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs tests/lammps/in.friction with LAMMPS in FOLDER (which holds the deck's data and model
# files; see in.friction), passing the remaining arguments to lmp (-var NAME VALUE ...):
#   run_lammps.sh FOLDER -var data case.data -var model case.model -var dump case.dump \
#                        -var steps 40 -var dt 1e-4 -var integrate 0 -var skin 0.1
#   run_lammps.sh --version      prints the LAMMPS version line ("29 Sep 2021 - Update 2")
# Exit status 77 (a skipped test) when there is no LAMMPS with the GRANULAR package: Debian's is
# `apt-get install lammps` (scripts/setup.sh installs it). The log is FOLDER/lammps.log.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
lmp=""
for candidate in ${NBSIM_LMP:-} lmp lmp_serial lmp_stable lmp_mpi; do
  if command -v "$candidate" >/dev/null 2>&1; then lmp="$candidate"; break; fi
done
if [ -z "$lmp" ]; then
  echo "run_lammps: no LAMMPS binary (lmp) on PATH; Debian: apt-get install lammps" >&2
  exit 77
fi
help="$("$lmp" -h 2>/dev/null)"
if ! grep -q "granular" <<<"$help"; then
  echo "run_lammps: $lmp has no GRANULAR package (pair_style granular)" >&2
  exit 77
fi
if [ "${1:-}" = "--version" ]; then
  grep -m1 -o "Large-scale Atomic/Molecular Massively Parallel Simulator - .*" <<<"$help" |
    sed 's/.*Simulator - //'
  exit 0
fi
folder="$1"
shift
cd "$folder" || exit 1
if ! OMP_NUM_THREADS=1 "$lmp" -in "$here/in.friction" -log lammps.log -screen none "$@"; then
  echo "run_lammps: $lmp failed in $folder:" >&2
  tail -5 lammps.log >&2
  exit 1
fi
