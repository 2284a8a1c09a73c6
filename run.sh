#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets nbsim up (missing packages, build) and runs it; arguments go to nbsim.
set -euo pipefail
"$(dirname "$0")/scripts/setup.sh"
exec "$(dirname "$0")/build/bin/nbsim" "$@"
