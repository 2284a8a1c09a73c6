#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# On a GPU machine: the Python package's CUDA check — the same state from Python as from the
# program, bit for bit, for one culled run (tests/python/test_cli.py: `nbsim --backend cuda
# --scene pile --n 65536 --frames 200 --save-state` against Simulation.run + save_state; N and
# frames from NBSIM_GPU_N / NBSIM_GPU_FRAMES) — then the rest of tests/python there. About a
# minute after the build. Everything lands in $OUT (default ./gpu_python_out): pytest_gpu.log,
# pytest_all.log, logs.tgz.
# The machine's python3 needs cffi: carried as wheels in .whl/ (git-ignored), fetched on a machine
# with PyPI for that python3 (3.12 on the workplace's image):
#   python3 -m pip download --only-binary=:all: --python-version 3.12 \
#     --platform manylinux2014_x86_64 -d .whl cffi pycparser
# Usage: scripts/gpu_python.sh [--budget SECONDS]   (with the device kit carried: it is sourced
# when present, for the stb headers the build needs)
# shellcheck source=gpu_prelude.sh
source "$(dirname "$0")/gpu_prelude.sh" python 600 "$@"
py=${NBSIM_PYTHON3:-python3}

device_info
"$py" --version

step cffi
if ! "$py" -c "import cffi, pycparser" 2>/dev/null; then
  if ! ls .whl/cffi-*.whl >/dev/null 2>&1; then
    echo "no cffi for $py and no wheels in .whl/ (this script's header says how to fetch them)"
    exit 1
  fi
  "$py" -m pip install -q --no-index --find-links .whl cffi pycparser >"$logs/pip.log" 2>&1 ||
    { tail -5 "$logs/pip.log"; exit 1; }
fi
"$py" -c "import cffi, numpy; print('cffi', cffi.__version__, 'numpy', numpy.__version__)"

build_targets -DNBSIM_PYTHON=ON -DPython3_EXECUTABLE="$(command -v "$py")" nbsim nbsim_python ||
  { tar -C "$OUT" -czf "$OUT/logs.tgz" logs; exit 1; }
export PYTHONPATH=$B/python NBSIM_BIN=$B/bin/nbsim MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1

step "the same state from Python as from nbsim, bit for bit (CPU, and CUDA: one culled run)"
timeout 600 "$py" -m pytest -q -rs -p no:cacheprovider tests/python/test_cli.py \
  >"$OUT/pytest_gpu.log" 2>&1 || status=1
tail -6 "$OUT/pytest_gpu.log"
if grep -q "SKIPPED.*no CUDA device" "$OUT/pytest_gpu.log"; then
  echo "the CUDA test was skipped: no CUDA device seen"; status=1
fi

if left; then
  step "tests/python, the whole suite on this machine"
  timeout 600 "$py" -m pytest -q -rs -p no:cacheprovider tests/python >"$OUT/pytest_all.log" 2>&1 ||
    status=1
  tail -4 "$OUT/pytest_all.log"
else
  skip "the whole suite"
fi

cp "$OUT"/pytest_*.log "$logs/" 2>/dev/null
tar -C "$OUT" -czf "$OUT/logs.tgz" logs
echo "gpu_python: exit $status"
exit $status
