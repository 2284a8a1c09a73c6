#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A tiny `nbsim bench` on a GPU: every suite runs, writes its CSV with rows for every map (pairs
# also culled), every exact map passes its exactly-once check, and meta.txt names the GPU. Exit 77 (skipped) without
# a GPU.
set -u
nbsim="$1"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi >/dev/null 2>&1; then
  echo "no GPU: skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() { fails=$((fails + 1)); echo "FAIL: $*"; }

"$nbsim" bench maps pairs triplets --quick --repeats 3 --no-plot --out "$work/res" \
  >"$work/out.txt" 2>&1
code=$?
[ "$code" -eq 0 ] || fail "exit $code: $(tail -5 "$work/out.txt")"
for f in maps.csv pairs.csv pairs_culled.csv triplets.csv meta.txt; do
  [ -s "$work/res/$f" ] || fail "$f missing"
done
grep -q "^GPU: " "$work/res/meta.txt" || fail "meta.txt names no GPU"
# Every map in every suite and evaluation (thread-t: the transposed launch), and no exact map
# failing its check.
for e in thread block thread-t; do
  for m in bb ltm rb utm rec rm; do
    grep -q ",$m,0,$e,16,256," "$work/res/maps.csv" || fail "maps.csv: no 2-D $e row for $m"
  done
  for m in bb tetra rm; do
    grep -q ",$m,0,$e,4,64," "$work/res/maps.csv" || fail "maps.csv: no 3-D $e row for $m"
  done
done
bad=$(awk -F, 'NR > 1 && $6 == 0 && $23 ~ /FAIL/' "$work/res/maps.csv" | head -3)
[ -z "$bad" ] || fail "an exact map failed its check: $bad"
grep -q ",pairs,full," "$work/res/pairs.csv" || fail "pairs.csv: no full row"
grep -q ",triplets,tetra," "$work/res/triplets.csv" || fail "triplets.csv: no tetra row"
# Culled rows: every exact map with one and two passes, no list overflow.
for m in bb ltm rb utm rec rm; do
  for lv in 1 2; do
    awk -F, -v m="$m" -v lv="$lv" 'NR > 1 && $2 == m && $7 == lv { found = 1 } END { exit !found }' \
      "$work/res/pairs_culled.csv" || fail "pairs_culled.csv: no $m row with $lv passes"
  done
done
bad=$(awk -F, 'NR > 1 && $25 != 0' "$work/res/pairs_culled.csv" | head -3)
[ -z "$bad" ] || fail "a culled row overflowed its list: $bad"
[ ! -e "$work/res/maps.csv.tmp" ] || fail "temporary file left behind"
echo "$fails failed"
[ "$fails" -eq 0 ]
