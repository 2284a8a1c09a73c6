#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# docs/reference.md is what the program's own tables print (scripts/gen_reference.sh --check:
# regenerate with `cmake --build build --target reference` when it fails), every flag that
# `nbsim --help` lists is a row of its tables, and every key the scene-file parser knows is a
# row of its scene-key table.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
ref="$root/docs/reference.md"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

bash "$root/scripts/gen_reference.sh" --check "$nbsim" && ok || fail "docs/reference.md is stale (above)"

# Every flag of --help (its rows start "  --flag" or "  -h, --help") as a row "| `FLAG` |".
"$nbsim" --help >help.txt 2>&1 || fail "nbsim --help failed"
grep -oE '^  (-[A-Za-z], )?--[a-z0-9-]*' help.txt | sed 's/^  //' >flags.txt
[ "$(wc -l <flags.txt)" -gt 30 ] && ok || fail "found only $(wc -l <flags.txt) flags in nbsim --help"
while read -r flag; do
  grep -qF "| \`$flag\` |" "$ref" && ok || fail "nbsim --help lists $flag; docs/reference.md does not"
done <flags.txt
for sub in maps bench; do
  "$nbsim" "$sub" --help 2>&1 | grep -oE '^  --[a-z0-9-]+' | sed 's/^  //' | while read -r flag; do
    grep -qF -- "$flag" "$ref" || echo "nbsim $sub --help lists $flag; docs/reference.md does not"
  done >missing.txt
  [ ! -s missing.txt ] && ok || fail "$(cat missing.txt)"
done

# Every scene-file key: the parser names them all when it meets an unknown one.
printf 'no_such_key = 1\nx y z vx vy vz radius density\n0 0 0 0 0 0 0.5 1\n' >unknown.scene
"$nbsim" --backend cpu --frames 1 --quiet --scene unknown.scene >out.txt 2>err.txt
code=$?
keys=$(sed -n 's/.*(known: \(.*\))$/\1/p' err.txt | tr -d ',')
[ "$code" -eq 2 ] && [ -n "$keys" ] && ok || fail "unknown scene key: exit $code, $(cat err.txt)"
for key in $keys; do
  grep -qF "| \`$key\` |" "$ref" && ok || fail "scene files take '$key'; docs/reference.md's keys lack it"
done
finish
