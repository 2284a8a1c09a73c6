#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nbsim — docs/reference.md from the built program's own tables: `nbsim --help-reference` (the
# flags' rows, the maps, the built-in scenes, the scene-file keys of params.h) and the help texts
# of `nbsim maps` and `nbsim bench`, so the page says what the program takes, nothing else.
#
#   scripts/gen_reference.sh [NBSIM]          write docs/reference.md (NBSIM: build/bin/nbsim)
#   scripts/gen_reference.sh --check [NBSIM]  exit 1 when docs/reference.md differs from it
#   cmake --build build --target reference    build nbsim, then write it (one command)
#
# tests/test_reference.sh runs the check (ctest test_reference).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
nbsim=${1:-$root/build/bin/nbsim}
target=$root/docs/reference.md
if [[ ! -x $nbsim ]]; then
  echo "gen_reference.sh: no program at '$nbsim' (build it: cmake --build build --target nbsim)" >&2
  exit 2
fi

tmp=$(mktemp "$root/docs/.reference.md.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
  "$nbsim" --help-reference
  for sub in maps bench; do
    printf '\n## `nbsim %s`\n\n```\n' "$sub"
    "$nbsim" "$sub" --help
    printf '```\n'
  done
} >"$tmp"

if ((check)); then
  if ! diff -u "$target" "$tmp" >&2; then
    echo "docs/reference.md is stale: the program's flags, scenes or scene keys changed." >&2
    echo "Regenerate it and commit it: cmake --build build --target reference" >&2
    echo "(or scripts/gen_reference.sh after building nbsim)" >&2
    exit 1
  fi
  exit 0
fi
chmod 644 "$tmp"
mv "$tmp" "$target"
trap - EXIT
echo "wrote $target"
