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

# plot.py by hand: a format matplotlib does not write is one line, exit 2; a write error (here a
# file size limit, the full-disk path) one line, exit 1, and the old picture kept.
"$py" "$plot" t.csv --out t.abc >out.txt 2>err.txt
[ $? -eq 2 ] && [ "$(wc -l <err.txt)" -eq 1 ] && [ ! -e t.abc ] && ok || fail "plot.py --out t.abc: $(cat err.txt)"
cp t.png kept.png
python3 -c 'import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
os.execv(sys.argv[1], sys.argv[1:])' "$py" "$plot" t.csv --out t.png >out.txt 2>err.txt
[ $? -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "t.png.*File too large" err.txt && cmp -s t.png kept.png \
  && [ -z "$(leftovers)" ] && ok || fail "plot.py on a full disk: $(head -c 300 err.txt)"

# --plot follows the rules of every output. Checked before the run, in one line: not a PNG name
# (exit 2; never "myplot.png" written beside "myplot"), no plot script (exit 1).
for bad in x.abc myplot; do
  expect_error 2 --backend cpu --n 50 --frames 3 --plot "$bad"
  grep -q -- "^nbsim: --plot: '$bad'" err.txt && [ ! -e "$bad" ] && [ ! -e "$bad.png" ] && ok \
    || fail "--plot $bad: $(cat err.txt)"
done
echo old >myplot.png
expect_error 2 --backend cpu --n 50 --frames 3 --plot myplot
[ "$(cat myplot.png)" = old ] && ok || fail "--plot myplot replaced myplot.png"
NBSIM_PLOT_SCRIPT=/no/such/plot.py expect_error 1 --backend cpu --n 50 --frames 3 --plot p.png
grep -q -- "^nbsim: --plot: the plot script /no/such/plot.py is missing" err.txt && ok || fail "no script: $(cat err.txt)"
# A log nobody can read back cannot be drawn: refused before the run.
expect_error 2 --backend cpu --n 50 --frames 3 --plot p.png --log -
grep -q -- "^nbsim: --plot draws the log from its file, and --log '-' is no file" err.txt && ok \
  || fail "--plot with --log -: $(cat err.txt)"
# A script that fails is one line (its last: a traceback's exception), exit 1, no picture.
printf 'import sys\nprint("noise")\nraise ValueError("the script broke")\n' >broken.py
NBSIM_PLOT_SCRIPT=$PWD/broken.py "$nbsim" --backend cpu --n 50 --frames 3 --plot b.png --quiet >/dev/null 2>err.txt
code=$?
[ $code -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^nbsim: --plot: ValueError: the script broke$" err.txt \
  && [ ! -e b.png ] && [ -z "$(leftovers)" ] && ok || fail "a failing script: exit $code, $(cat err.txt)"
# A run with a plot: the picture, nothing else left.
"$nbsim" --backend cpu --n 50 --frames 10 --plot p.png --quiet >/dev/null 2>err.txt && is_png p.png \
  && [ ! -s err.txt ] && [ -z "$(leftovers)" ] && ok || fail "--plot p.png: $(cat err.txt)"
# A write error (RLIMIT_FSIZE: the full-disk path): one line with the cause and what is complete
# (only what is: without --log the CSV was a temporary), exit 1, no picture, no temporary.
for logged in "" "--log full.csv"; do
  rm -f full.png full.csv
  # shellcheck disable=SC2086 # two words on purpose
  python3 -c 'import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
os.execv(sys.argv[1], sys.argv[1:])' "$nbsim" --backend cpu --n 50 --frames 10 --plot full.png $logged --quiet \
    >/dev/null 2>err.txt
  code=$?
  if [ -z "$logged" ]; then complete=; else complete=" (complete: log full.csv)"; fi
  [ $code -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] \
    && grep -q "^nbsim: --plot: cannot write 'full.png': File too large$complete$" err.txt \
    && [ ! -e full.png ] && [ -z "$(leftovers)" ] && ok || fail "--plot on a full disk ($logged): exit $code, $(head -c 400 err.txt)"
done
# A device is written directly, never given a .png of its own: /dev/full, through a link here.
ln -s /dev/full devfull
"$nbsim" --backend cpu --n 50 --frames 3 --plot devfull --quiet >/dev/null 2>err.txt
code=$?
[ $code -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] \
  && grep -q "^nbsim: --plot: cannot write 'devfull': No space left on device$" err.txt && [ ! -e devfull.png ] \
  && [ -L devfull ] && ok || fail "--plot to /dev/full: $(cat err.txt)"
# A FIFO: the picture goes through it, whole.
mkfifo plot.fifo
cat plot.fifo >fifo.png &
reader=$!
timeout 60 "$nbsim" --backend cpu --n 50 --frames 3 --plot plot.fifo --quiet >/dev/null 2>err.txt && ok \
  || fail "--plot to a FIFO: $(cat err.txt)"
timeout 10 tail --pid="$reader" -f /dev/null
kill "$reader" 2>/dev/null # a reader never written to would hold the test's output open
is_png fifo.png && [ -p plot.fifo ] && [ ! -e plot.fifo.png ] && ok || fail "--plot through a FIFO: no PNG"
# Standard output: the picture there, the summary table on stderr.
"$nbsim" --backend cpu --n 50 --frames 3 --plot - >stdout.png 2>err.txt && is_png stdout.png \
  && grep -q "per step" err.txt && ok || fail "--plot -: $(cat err.txt)"

# The bench-directory mode is unchanged.
mkdir empty
"$py" "$plot" empty >out.txt 2>&1 && grep -q "no results" out.txt && ok || fail "bench mode: $(cat out.txt)"

finish
