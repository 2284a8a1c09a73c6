#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nbsim's ParaView series (--dump run.pvd): VTK's own reader (Debian's python3-vtk9, which
# scripts/setup.sh installs) reads every frame of CPU runs with friction, and tests/vtk_check.py
# compares bodies, contact lines and forces with an independent computation; then the refusals:
# an unwritable path and a frames' folder that is a file are one line and exit 2 before any work,
# and a .pvd is no scene to continue from. Skips (77) only without a usable Python with numpy.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0 ran=0

py=""
for p in "${NBSIM_PYTHON:-}" /usr/bin/python3 python3; do
  [ -n "$p" ] && command -v "$p" >/dev/null 2>&1 && "$p" -c "import numpy" 2>/dev/null && {
    py=$p
    break
  }
done
if [ -z "$py" ]; then
  echo "skip: no python3 with numpy"
  exit 77
fi
if "$py" -c "import vtkmodules.vtkIOXML" 2>/dev/null; then
  "$py" "$here/vtk_check.py" "$nbsim" "$work" && ran=$((ran + 1)) || fails=$((fails + 1))
else
  echo "FAIL: $py has no VTK (Debian's python3-vtk9: scripts/setup.sh installs it)"
  fails=$((fails + 1))
fi

# refused: one line on stderr, exit 2, nothing written
refused() { # WHAT EXPECTED_TEXT ARGS...
  local what=$1 text=$2
  shift 2
  "$nbsim" --backend cpu --scene gas --n 20 --frames 1 "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ $rc -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "$text" "$work/err"; then
    ran=$((ran + 1))
  else
    echo "FAIL: $what: exit $rc, stderr: $(cat "$work/err")"
    fails=$((fails + 1))
  fi
}
refused "unwritable folder" "does not exist" --dump "$work/no/such/run.pvd"
touch "$work/taken"
refused "frames' folder is a file" "not a folder" --dump "$work/taken.pvd"
[ ! -e "$work/taken.pvd" ] || { echo "FAIL: taken.pvd was written"; fails=$((fails + 1)); }
if [ -e "$work/periodic/run.pvd" ]; then
  "$nbsim" --backend cpu --scene "$work/periodic/run.pvd" --frames 1 >/dev/null 2>"$work/err"
  rc=$?
  if [ $rc -ne 0 ] && grep -q "does not read them back" "$work/err"; then ran=$((ran + 1))
  else echo "FAIL: --scene run.pvd: exit $rc, $(cat "$work/err")"; fails=$((fails + 1)); fi
fi

echo "$ran checks passed, $fails failed"
[ $fails -eq 0 ]
