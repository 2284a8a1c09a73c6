#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ParaView series of GPU runs with friction (the recorder reads the state for the springs):
# VTK's reader reads every frame, and tests/vtk_check.py --backend cuda checks the contact lines
# against the pairs that touch and each body's contact forces against its force, within float
# rounding. Exit 77 (skipped) without a GPU.
set -u
nbsim="$1"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi >/dev/null 2>&1; then
  echo "no GPU: skipped"
  exit 77
fi
py=/usr/bin/python3
"$py" -c "import numpy, vtkmodules.vtkIOXML" 2>/dev/null || {
  echo "FAIL: $py has no numpy or VTK (Debian's python3-vtk9: scripts/setup.sh installs it)"
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" "$(cd "$(dirname "$0")" && pwd)/vtk_check.py" "$nbsim" "$work" --backend cuda
