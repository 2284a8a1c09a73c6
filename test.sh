#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Sets nbsim up (missing packages, build) and runs the test suite. GPU tests skip without a GPU.
set -euo pipefail
"$(dirname "$0")/scripts/setup.sh"
cd "$(dirname "$0")/build"
ctest --output-on-failure -j "$(nproc)" "$@"
