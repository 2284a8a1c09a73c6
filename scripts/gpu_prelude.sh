# SPDX-License-Identifier: MIT
# The start the GPU-machine scripts with a time budget share (gpu_cull.sh, gpu_tcut.sh,
# gpu_multi.sh): strict mode, the repository root as the working folder, OUT (default
# ./gpu_NAME_out) with its logs/ folder, the build folder B (NBSIM_BUILD, default
# /tmp/nbsim-NAME-build), the argument --budget SECONDS (default DEFAULT; anything else is
# refused with exit 2), the workplace's .devkit when present, status=0, and the helpers step
# (a heading with the seconds so far), left (budget not yet spent) and skip (says so).
# Usage, sourced: source "$(dirname "$0")/gpu_prelude.sh" NAME DEFAULT "$@"
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
root=$PWD
OUT=${OUT:-$root/gpu_$1_out}
B=${NBSIM_BUILD:-/tmp/nbsim-$1-build}
budget=$2
shift 2
while [ $# -gt 0 ]; do
  case $1 in
    --budget) budget=$2; shift ;;
    *) echo "unknown argument $1"; exit 2 ;;
  esac
  shift
done
# shellcheck disable=SC1091
[ -f .devkit/setup.sh ] && source .devkit/setup.sh >/dev/null 2>&1
logs=$OUT/logs
mkdir -p "$logs"
status=0
t0=$(date +%s)
step() { echo "=== $* ($(( $(date +%s) - t0 )) s)"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$budget" ]; }
skip() { echo "skipped (time budget of $budget s spent): $*"; }
