#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The built-in scenes named in the documents are exactly the program's (nbsim --help, in its
# order): docs/python.md's list of nbsim.scenes(), assets/README.md's table (with each scene's
# default N), and the viewer's scene keys (1 to the number of scenes) in README.md and
# docs/guide.md.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

# "Built-in scenes (...):" then "  NAME      description (default N 4096)" up to a blank line.
"$nbsim" --help >help.txt 2>&1 || fail "nbsim --help failed"
sed -n '/^Built-in scenes/,/^$/p' help.txt | sed -n 's/^  \([a-z][a-z0-9_-]*\) .*(default N \([0-9]*\))$/\1 \2/p' \
  >program.txt
count=$(wc -l <program.txt)
[ "$count" -ge 6 ] && ok || fail "found $count built-in scenes in nbsim --help"
cut -d' ' -f1 program.txt | paste -sd' ' >names.txt

# docs/python.md: "(`nbsim.scenes()`: gas, pile, ...)"
sed -n 's/.*`nbsim\.scenes()`: \([^)]*\)).*/\1/p' "$root/docs/python.md" | head -1 | tr -d ',' \
  | tr -s ' ' >python.txt
diff -q names.txt python.txt >/dev/null && ok \
  || fail "docs/python.md lists the scenes '$(cat python.txt)'; the program has '$(cat names.txt)'"

# assets/README.md: the rows "| `NAME` (N) | ..." of its "Built-in scenes" table.
sed -n '/^## Built-in scenes/,/^## /p' "$root/assets/README.md" \
  | sed -n 's/^| `\([a-z][a-z0-9_-]*\)` (\([0-9]*\)) |.*/\1 \2/p' >assets.txt
diff -q program.txt assets.txt >/dev/null && ok \
  || fail "assets/README.md's scenes (name, default N): $(paste -sd, assets.txt); the program's: $(paste -sd, program.txt)"

# README.md and docs/guide.md: the viewer's scene keys, `1`–`COUNT`.
for doc in README.md docs/guide.md; do
  grep -qF "\`1\`–\`$count\`" "$root/$doc" && ok \
    || fail "$doc does not give the viewer's scene keys as \`1\`–\`$count\` ($count built-in scenes)"
done
finish
