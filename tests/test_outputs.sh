#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What nbsim's outputs do to the paths they name, as a user meets it: a symbolic link is written
# through (the link stays), a FIFO and "-" are written directly, a replaced file keeps its
# permissions; every output is checked before the run (a directory, a missing folder, two
# outputs on one file: one line, exit 2, no run); SIGTERM, SIGHUP and SIGINT end a run with
# every output complete and exit 128 + signal; a blow-up and a write error say so once and keep
# what is complete. The real /dev files are never touched: FIFOs and links live in a temporary
# folder.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

run=(--backend cpu --n 60 --quiet)
csv_rows() { tail -n +2 "$1" | wc -l; }
# Every row of a CSV log has as many fields as its header.
csv_complete() { awk -F, 'NR == 1 { c = NF } NF != c { bad = 1 } END { exit bad || NR < 1 }' "$1"; }
json() { python3 -c "import json, sys; d = json.load(open('$1')); sys.exit(0 if ($2) else 1)"; }

# ---- 1. what a path is decides how it is written ----

# A symbolic link (here dangling, into another folder): the target is written, the link stays.
mkdir target
ln -s target/real.csv link.csv
"$nbsim" "${run[@]}" --frames 3 --log link.csv >/dev/null 2>err.txt && ok || fail "log to a link: $(cat err.txt)"
[ -L link.csv ] && ok || fail "the link was replaced"
[ -f target/real.csv ] && [ "$(csv_rows target/real.csv)" -eq 3 ] && ok || fail "the link's target was not written"
[ -z "$(cd target && leftovers)" ] && [ -z "$(leftovers)" ] && ok || fail "temporaries left beside the link"

# A FIFO with a reader: written directly (a rename would leave the reader waiting forever).
mkfifo pipe.csv
cat pipe.csv >copy.csv &
reader=$!
timeout 60 "$nbsim" "${run[@]}" --frames 4 --log pipe.csv >/dev/null 2>err.txt && ok || fail "log to a FIFO: $(cat err.txt)"
timeout 10 tail --pid="$reader" -f /dev/null && ok || fail "the FIFO's reader never saw the end"
[ -p pipe.csv ] && ok || fail "the FIFO was replaced"
[ "$(csv_rows copy.csv)" -eq 4 ] && csv_complete copy.csv && ok || fail "FIFO reader got $(csv_rows copy.csv) rows"

# "-": the log on standard output, the summary table moves to standard error.
"$nbsim" "${run[@]}" --frames 2 --log - >stdout.csv 2>err.txt && ok || fail "log to stdout: $(cat err.txt)"
head -1 stdout.csv | grep -q "^frame,sim_time" && [ "$(csv_rows stdout.csv)" -eq 2 ] && ok \
  || fail "log on stdout: $(head -c 200 stdout.csv)"
! grep -q median stdout.csv && ok || fail "the summary table mixed into the log on stdout"

# A regular file is replaced whole and keeps its permissions.
echo old >kept.csv
chmod 600 kept.csv
"$nbsim" "${run[@]}" --frames 2 --log kept.csv >/dev/null 2>&1 && ok || fail "replacing a log"
[ "$(stat -c %a kept.csv)" = 600 ] && head -1 kept.csv | grep -q "^frame," && ok || fail "replaced log: mode $(stat -c %a kept.csv)"

# ---- 2. every output is checked before the run: one line, exit 2, nothing run ----
echo precious >x
mkdir adir
expect_error 2 "${run[@]}" --frames 1 --log adir
grep -q -- "--log: cannot write 'adir': it is a directory" err.txt && ok || fail "directory: $(cat err.txt)"
expect_error 2 "${run[@]}" --frames 1 --summary missing/s.json
grep -q -- "--summary: .*folder 'missing' does not exist" err.txt && ok || fail "missing folder: $(cat err.txt)"
expect_error 2 "${run[@]}" --frames 1 --log x --summary x
grep -q -- "--log and --summary name the same file" err.txt && ok || fail "same file: $(cat err.txt)"
expect_error 2 "${run[@]}" --frames 1 --log link.csv --save-state target/real.csv
grep -q -- "--log and --save-state name the same file" err.txt && ok || fail "same file through a link: $(cat err.txt)"
expect_error 2 "${run[@]}" --frames 1 --summary ./x --save-state x
[ "$(cat x)" = precious ] && ok || fail "a refused run touched x"
if [ "$(id -u)" -ne 0 ]; then # root writes anywhere
  mkdir locked && chmod 555 locked
  expect_error 2 "${run[@]}" --frames 1 --log locked/t.csv
  grep -q "not writable" err.txt && ok || fail "unwritable folder: $(cat err.txt)"
fi
# A directory found only after the run would lose the run: the refusal comes before any frame.
start=$(date +%s)
expect_error 2 --backend cpu --n 3000 --frames 100000 --quiet --save-state adir
[ $(($(date +%s) - start)) -lt 5 ] && ok || fail "the directory was found only after running"
# A path ending in '/' names a folder, existing or not (or a file used as one): refused before the
# first frame (one line: no banner), not after the run with its log lost; nothing created.
for bad in newdir/ x/ adir/; do
  expect_error 2 --backend cpu --n 100 --frames 3 --log "$bad"
  grep -q -- "^nbsim: --log: cannot write '$bad': " err.txt && ok || fail "--log $bad: $(cat err.txt)"
done
expect_error 2 "${run[@]}" --frames 1 --summary newdir/
[ ! -e newdir ] && [ -z "$(leftovers)" ] && ok || fail "a refused path left $(ls -A)"

# ---- 3. SIGTERM, SIGHUP and SIGINT end a run cleanly ----
for sig in TERM HUP INT; do
  rm -f s.csv s.json s.scene
  start_run out.txt err.txt --backend cpu --n 300 --frames 100000000 --log s.csv --summary s.json \
    --save-state s.scene
  wait_for err.txt "bodies, scene gas" || fail "SIG$sig: the run did not start: $(cat err.txt)"
  sleep 1
  kill -s "$sig" "$run_pid"
  wait "$run_pid"
  code=$?
  want=$((128 + $(kill -l "$sig")))
  [ "$code" -eq "$want" ] && ok || fail "SIG$sig: exit $code, want $want: $(cat err.txt)"
  grep -q "stopped by SIG$sig.*complete: log s.csv, summary s.json, state s.scene" err.txt && ok \
    || fail "SIG$sig: which files are complete? $(tail -2 err.txt)"
  csv_complete s.csv && ok || fail "SIG$sig: ragged log"
  frames=$(csv_rows s.csv)
  [ "$frames" -ge 1 ] && json s.json "d['stop'] == 'interrupted' and d['frames'] == $frames and d['frames_requested'] == 100000000 and 'SIG$sig' in d['stop_detail'] and d['stop_frame'] is None" \
    && ok || fail "SIG$sig: summary $(cat s.json | head -20)"
  "$nbsim" --backend cpu --scene s.scene --frames 1 --quiet >/dev/null 2>err2.txt && ok \
    || fail "SIG$sig: the saved state does not load: $(cat err2.txt)"
  [ -z "$(leftovers)" ] && ok || fail "SIG$sig: left $(leftovers)"
done

# SIGTERM while nbsim waits on a FIFO (a log nobody reads, a scene nobody writes): 143 like any
# stop by SIGTERM, one line, no "Interrupted system call" and no exit 1.
mkfifo unread.csv unwritten.scene
for what in "--log unread.csv" "--scene unwritten.scene"; do
  # shellcheck disable=SC2086 # two words on purpose
  start_run out.txt err.txt --backend cpu --frames 3 --quiet $what
  sleep 1
  kill -TERM "$run_pid"
  wait "$run_pid"
  code=$?
  [ "$code" -eq 143 ] && [ "$(wc -l <err.txt)" -eq 1 ] && ! grep -q "Interrupted system call" err.txt \
    && ok || fail "SIGTERM waiting on a FIFO ($what): exit $code, $(cat err.txt)"
done
[ -p unread.csv ] && [ -p unwritten.scene ] && ok || fail "a FIFO was replaced"
rm -f unread.csv unwritten.scene

# Ctrl-C in the middle of a long frame (20 steps of ~0.3 s at N = 20,000 on two threads, no
# culling): out within a second or two, not at the frame's end; exit 130; the steps done are
# said and kept in the state (the frame gets no log row: the log holds its header alone); every
# output complete and the state loadable. A frame once ran to its end first (minutes at larger N).
# Two threads on any machine: on 16 the frame is too short to be announced as long.
rm -f m.csv m.json m.scene
start_run out.txt err.txt --backend cpu --threads 2 --cull off --n 20000 --steps-per-frame 20 --frames 3 \
  --log m.csv --summary m.json --save-state m.scene
# after the initial forces (announced with the frame's length) and a few steps of ~0.3 s: on a
# loaded machine the signal once came before the first step
wait_for err.txt "the initial forces took" || fail "mid-frame Ctrl-C: the run did not start: $(cat err.txt)"
# a step lasts about as long as the initial forces took (the announcement says): wait for two,
# at least 1.5 s, so that a loaded machine (CI under ctest -j) has finished one before the signal
took=$(sed -n 's/.*the initial forces took \([0-9.]*\) \(m\{0,1\}s\).*/\1 \2/p' err.txt | head -1)
wait_s=$(awk -v t="${took% *}" -v u="${took#* }" 'BEGIN { s = (u == "ms") ? t / 1000 : t;
  w = 2 * s + 0.5; if (w < 1.5) w = 1.5; if (w > 20) w = 20; print w }')
sleep "$wait_s"
stop_run INT
[ "$code" -eq 130 ] && [ "$took_ms" -lt 2000 ] && ok \
  || fail "mid-frame Ctrl-C: exit $code after $took_ms ms (want 130 within 2 s): $(tail -2 err.txt)"
grep -q "stopped by SIGINT (Ctrl-C) after 0 frames, and [0-9]* of the 20 steps of frame 1 (kept in the state); complete: log m.csv, summary m.json, state m.scene" err.txt \
  && ok || fail "mid-frame Ctrl-C: what was kept? $(tail -1 err.txt)"
grep -q "the initial forces took .*, so a frame of 20 steps should take about .*; Ctrl-C stops within a second" err.txt \
  && ok || fail "mid-frame Ctrl-C: the long frame was not announced: $(cat err.txt)"
csv_complete m.csv && [ "$(csv_rows m.csv)" -eq 0 ] && ok || fail "mid-frame Ctrl-C: log $(cat m.csv)"
json m.json "d['stop'] == 'interrupted' and d['frames'] == 0 and 'of the 20 steps of frame 1' in d['stop_detail'] and d['stop_frame'] is None" \
  && ok || fail "mid-frame Ctrl-C: summary $(head -12 m.json)"
"$nbsim" --backend cpu --cull off --scene m.scene --frames 1 --quiet >/dev/null 2>err2.txt && ok \
  || fail "mid-frame Ctrl-C: the saved state does not load: $(cat err2.txt)"
[ -z "$(leftovers)" ] && ok || fail "mid-frame Ctrl-C: left $(leftovers)"

# A signal ignored when nbsim starts stays ignored (nohup): SIGHUP does not stop this run.
python3 -c 'import os, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$nbsim" --backend cpu --n 300 --frames 100000000 >/dev/null 2>err.txt &
pid=$!
wait_for err.txt "bodies, scene gas" || fail "nohup run did not start"
kill -HUP "$pid"
sleep 1
kill -0 "$pid" 2>/dev/null && ok || fail "SIGHUP stopped a run that ignored it"
kill -TERM "$pid"
wait "$pid"
[ $? -eq 143 ] && ok || fail "nohup run: SIGTERM did not end it with 143"

# SIGKILL cannot be handled: the log's temporary keeps a row per completed frame (docs/guide.md's
# promise), every row flushed as its frame ends, not 4 KB at a time. Four frames of ~0.5 s write
# ~1 KB, which a buffered log would hold back until its end.
rm -f k.csv
start_run out.txt err.txt --backend cpu --threads 2 --n 400 --cull off --triplets off \
  --steps-per-frame 500 --frames 4 --log k.csv --quiet
temp=""
for _ in $(seq 300); do
  temp=$(ls -A | grep '^\.k\.csv\.nbsim-' | head -1)
  [ -n "$temp" ] && [ "$(csv_rows "$temp")" -ge 2 ] && break
  kill -0 "$run_pid" 2>/dev/null || break
  sleep 0.1
done
kill -KILL "$run_pid" 2>/dev/null
wait "$run_pid" 2>/dev/null
[ -n "$temp" ] && [ -f "$temp" ] && [ "$(csv_rows "$temp")" -ge 2 ] && csv_complete "$temp" && ok \
  || fail "SIGKILL: the log's temporary holds $( [ -f "$temp" ] && csv_rows "$temp") rows: $(ls -A)"
rm -f .k.csv.nbsim-*

# ---- 4. a blow-up and a write error: said once, what is complete is kept ----
"$nbsim" --backend cpu --n 20 --frames 5 --dt 1000 --log b.csv --summary b.json >/dev/null 2>err.txt
code=$?
[ "$code" -eq 1 ] && grep -q "simulation stopped at frame 1: .*left the box" err.txt && ok \
  || fail "blow-up: exit $code, $(cat err.txt)"
json b.json "d['stop'] == 'unstable' and d['stop_frame'] == 1 and 'left the box' in d['stop_detail'] and d['frames'] == 0 and d['ms_per_step'] is None" \
  && ok || fail "blow-up summary: $(cat b.json)"
grep -q "complete: log b.csv, summary b.json" err.txt && csv_complete b.csv && ok || fail "blow-up: outputs $(cat err.txt)"

# A log that cannot grow (RLIMIT_FSIZE: the disk-full path without a full disk): one message.
python3 -c 'import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
os.execv(sys.argv[1], sys.argv[1:])' "$nbsim" --backend cpu --n 20 --frames 400 --log full.csv >/dev/null 2>err.txt
code=$?
[ "$code" -eq 1 ] && [ "$(grep -c "cannot write log 'full.csv'" err.txt)" -eq 1 ] && ok \
  || fail "write error: exit $code, $(cat err.txt)"
[ ! -e full.csv ] && [ -z "$(leftovers)" ] && ok || fail "write error: a partial log was left"

# A trajectory that cannot grow: its error said once (not again when the dump is closed), in
# every format this build writes, and the frames before it kept.
formats="xyz lammpstrj"
"$nbsim" --version 2>&1 | grep -q "NetCDF (.nc) yes" && formats="$formats nc"
for fmt in $formats; do
  python3 -c 'import os, resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (30000, 30000))
os.execv(sys.argv[1], sys.argv[1:])' "$nbsim" --backend cpu --n 200 --frames 100 --dump-every 1 \
    --dump "full.$fmt" >/dev/null 2>err.txt
  code=$?
  [ "$code" -eq 1 ] && [ "$(grep -c "cannot write trajectory 'full.$fmt'" err.txt)" -eq 1 ] && ok \
    || fail "$fmt write error: exit $code, $(cat err.txt)"
  rm -f "full.$fmt"
done

finish
