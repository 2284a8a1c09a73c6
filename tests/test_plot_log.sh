#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/plot.py on timing logs: a real CPU run's log, a log with map switches and a dump_ms
# column, the one-line message without matplotlib, and the bench-directory mode still working.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
plot="$here/../bench/plot.py"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

py=""
for candidate in "${NBSIM_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$candidate" ] && command -v "$candidate" >/dev/null 2>&1 &&
    "$candidate" -c "import matplotlib" 2>/dev/null && { py=$candidate; break; }
done

# Without matplotlib (python3 -S: no site packages): one line, exit 1, no picture.
"$nbsim" --backend cpu --frames 20 --n 200 --triplets off --log t.csv --quiet >/dev/null 2>run.err \
  && ok || fail "headless run: $(cat run.err)"
python3 -S "$plot" t.csv --out none.png >out.txt 2>err.txt
code=$?
[ $code -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q matplotlib err.txt && [ ! -e none.png ] \
  && ok || fail "no matplotlib: exit $code, $(cat err.txt)"
# It names the interpreter that ran it and, where one has matplotlib (a pyenv python3 first on
# PATH, Debian's /usr/bin/python3 with python3-matplotlib), that one, instead of telling the user
# to install a package that is installed.
ran=$(python3 -S -c 'import sys; print(sys.executable)')
grep -qF "by $ran, the python3 that ran this" err.txt && ok || fail "no matplotlib: which python? $(cat err.txt)"
if [ -n "$py" ]; then
  grep -q "has it: run .*plot.py t.csv --out none.png" err.txt && ! grep -q "install" err.txt && ok \
    || fail "no matplotlib here, but $py has it: $(cat err.txt)"
fi

if [ -z "$py" ]; then
  echo "skip: no python3 with matplotlib (Debian: python3-matplotlib)"
  finish
  exit 77
fi

is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

"$py" "$plot" t.csv --out t.png >out.txt 2>&1 && is_png t.png && ok || fail "plot of a log: $(cat out.txt)"
"$py" "$plot" t.csv >out.txt 2>&1 && is_png t.png && grep -q "t.png" out.txt && ok \
  || fail "default output name: $(cat out.txt)"

# A viewer-style log: the pair map switches at frame 10 and the tile at 15; dump_ms every 5th.
awk -F, -v OFS=, 'NR == 1 { print $0, "dump_ms"; next }
  { if (NR > 11) $6 = "rm"; if (NR > 16) $8 = "128"; print $0, ((NR - 2) % 5 == 0 ? "0.05" : "0") }' \
  t.csv >switch.csv
"$py" "$plot" switch.csv --out switch.png >out.txt 2>&1 && is_png switch.png && ok \
  || fail "plot with switches: $(cat out.txt)"

# Not a log: one line, exit 1.
printf 'a,b\n1,2\n' >bad.csv
"$py" "$plot" bad.csv --out bad.png >out.txt 2>err.txt
[ $? -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && [ ! -e bad.png ] && ok || fail "bad log: $(cat err.txt)"

# The bench-directory mode is unchanged.
mkdir empty
"$py" "$plot" empty >out.txt 2>&1 && grep -q "no results" out.txt && ok || fail "bench mode: $(cat out.txt)"

finish
