#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The nbsim program as a user meets it: --help, bad input (one line, exit 2, nothing written),
# a headless CPU run with log / summary / saved state, Ctrl-C, no display, bench without a GPU.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

"$nbsim" --help >help.txt 2>&1 && grep -q -- "--pair-map" help.txt && grep -q "Viewer keys" help.txt \
  && ok || fail "--help"
"$nbsim" --version | grep -q "^nbsim [0-9]" && ok || fail "--version"
# --help says what each row of the summary includes and what the counts are.
grep -q "^  contact  *sum: sort + cull + lists + cells + pair" help.txt \
  && grep -q "^  pair  *the contact sweep alone" help.txt && grep -q "^  particle steps/s  N x steps" help.txt \
  && grep -q "^  pair tests  *the candidate pairs" help.txt && grep -q "^  contacts  *the pairs among them that touch" help.txt \
  && ok || fail "--help does not explain the summary"
"$nbsim" --version | grep -q "^built with: NCCL (several GPUs) \(yes\|no\); MPI (NCCL id under mpirun) \(yes\|no\); NetCDF (.nc) \(yes\|no\)$" \
  && ok || fail "--version: what the build has: $("$nbsim" --version)"

expect_error 2 --frames 1 --bogus
expect_error 2 --frames 1 --n abc
expect_error 2 --frames 1 --n 0
expect_error 2 --frames 1 --n -5
expect_error 2 --frames 0
expect_error 2 --frames 1 --tile 48
expect_error 2 --frames 1 --pair-map nope
expect_error 2 --frames 1 --triplet-map nope
expect_error 2 --frames 1 --backend gpu
expect_error 2 --frames 1 --restitution 1.5
expect_error 2 --frames 1 --gravity 1,2
expect_error 2 --frames 1 --dt
expect_error 2 --frames 1 --scene no-such-scene
expect_error 2 --frames 1 --log /no/such/dir/t.csv
expect_error 2 --frames 1 --summary /no/such/dir/s.json
expect_error 2 --frames 1 extra-argument
# A trajectory's extension is checked with the other outputs, before the banner and any frame.
expect_error 2 --backend cpu --frames 1 --n 10 --dump x.txt
grep -q "^nbsim: --dump: 'x.txt': unknown trajectory extension; use .xyz (extended XYZ), .lammpstrj (LAMMPS text dump), .nc (AMBER NetCDF trajectory) or .pvd (ParaView VTK series)$" err.txt \
  && ok || fail "--dump x.txt: $(cat err.txt)"
expect_error 2 maps --dim 2 --map rm --tiles 16 --png /no/such/dir/rm.png
expect_error 2 maps --dim 3 --tiles 5000
grep -q "valid:.*ltm" <("$nbsim" --frames 1 --pair-map nope 2>&1) && ok || fail "map list in error"
left=$(ls | grep -v -x -e err.txt -e out.txt -e help.txt)
[ -z "$left" ] && ok || fail "bad input left files: $left"

# A bad scene file names the file and line.
printf 'x y z vx vy vz radius density\n0 0 0 0 0 0 -1 1\n' >bad.scene
expect_error 2 --backend cpu --frames 1 --scene bad.scene
grep -q "bad.scene" err.txt && ok || fail "scene error does not name the file: $(cat err.txt)"

# Headless CPU run with every output.
if "$nbsim" --backend cpu --frames 20 --n 200 --seed 3 --log t.csv --summary s.json \
     --save-state final.scene --quiet >run.txt 2>run.err; then ok; else fail "headless run: $(cat run.err)"; fi
[ "$(wc -l <t.csv)" -eq 21 ] && ok || fail "log rows: $(wc -l <t.csv)"
head -1 t.csv | grep -q "^frame,sim_time,n,backend,gpu,pair_map,triplet_map,tile" && ok || fail "log header"
cols=$(head -1 t.csv | awk -F, '{print NF}')
awk -F, -v c="$cols" 'NR > 1 && NF != c { bad = 1 } END { exit bad }' t.csv && ok || fail "ragged log rows"
python3 -c "import json,sys; d=json.load(open('s.json')); sys.exit(0 if d['frames']==20 and d['n']==200 else 1)" \
  && ok || fail "summary json"
grep -q "median" run.txt && ok || fail "summary on stdout"
# The summary says what each row includes (pair < contact: the sweep alone, the whole phase) and,
# culled, gives particle steps/s, the pair tests and the contacts, but no rate of unique pairs,
# which were never all tested.
grep -q "^  pair .*the contact sweep alone$" run.txt && grep -q "^  contact .*sum: sort + cull + lists" run.txt \
  && grep -q "^  step .*the whole step" run.txt && ok || fail "summary rows unexplained: $(cat run.txt)"
grep -q "^  particle steps/s [0-9.e+]*  (N x steps/s" run.txt \
  && grep -q "^  pair tests  *[0-9]* per step, [0-9.e+]* per body  (what the culled sweep tested" run.txt \
  && grep -q "^  contacts  *[0-9]* per step" run.txt && ! grep -q "unique pairs/s" run.txt && ok \
  || fail "culled summary metrics: $(cat run.txt)"
"$nbsim" --backend cpu --frames 2 --n 100 --cull off --quiet >full.txt 2>&1 \
  && grep -q "^  unique pairs/s .*(4950 unique pairs per step" full.txt \
  && grep -q "^  pair tests  *12288 per step, 122.9 per body  (every tile pair of the plan" full.txt \
  && grep -q "^  contacts  *n/a" full.txt && ok \
  || fail "brute-force summary metrics: $(cat full.txt)"
[ -z "$(leftovers)" ] && ok || fail "temporaries left: $(leftovers)"
grep -q "fx fy fz" final.scene && ok || fail "saved state lacks forces"
"$nbsim" --backend cpu --frames 2 --scene final.scene --quiet >/dev/null 2>&1 && ok || fail "resume from saved state"

# --triplets auto keeps the forces the triplets scene is built around (nothing touches in it, so
# the potential energy is the ATM energy), and says so.
"$nbsim" --backend cpu --frames 1 --scene triplets --n 500 --log tri.csv >/dev/null 2>tri.err \
  && ok || fail "triplets scene: $(cat tri.err)"
awk -F, 'NR == 2 { exit !($7 == "tetra" && $23 + 0 > 0) }' tri.csv && ok \
  || fail "triplets scene ran without ATM: $(cut -d, -f7,22-24 tri.csv)"
grep -q "nbsim: triplet forces on, as triplets is built around them" tri.err && ok || fail "triplets notice: $(cat tri.err)"

# Ctrl-C: exit 130, complete log, no temporary left (test_outputs.sh: every signal, every output).
start_run /dev/null int.err --backend cpu --frames 100000000 --n 300 --log int.csv
wait_for int.err "bodies, scene gas" || fail "Ctrl-C: the run did not start"
kill -INT "$run_pid"
wait "$run_pid"
code=$?
[ "$code" -eq 130 ] && ok || fail "Ctrl-C exit $code: $(cat int.err)"
[ -s int.csv ] && [ -z "$(leftovers)" ] && ok || fail "interrupted log missing"
awk -F, -v c="$cols" 'NF != c { bad = 1 } END { exit bad }' int.csv && ok || fail "interrupted log ragged"

# Ctrl-C in the initial forces of a triplet run (issue 37: ignored until they ended, seconds to
# minutes): the tile triples are built in the same forces, so their sweep is watched whatever a
# rate foretold. 5.6e8 triples: about a minute on one core.
start_run /dev/null tri_int.err --backend cpu --threads 1 --frames 2 --scene triplets --n 1500 \
  --triplets on --atm-cutoff 1e9 --log tri_int.csv
sleep 2
stop_run INT
[ "$code" -eq 130 ] && [ "$took_ms" -lt 2000 ] && ok \
  || fail "Ctrl-C in the initial forces: exit $code after $took_ms ms: $(tail -2 tri_int.err)"
[ ! -e tri_int.csv ] && ok || fail "Ctrl-C in the initial forces left a log"
# A cut-off as wide as the scene culls nothing: a scene that only sets a strength keeps its
# triplets off, and says why (issue 37: they were turned on, minutes a step on a CPU).
"$nbsim" --backend cpu --frames 1 --n 1500 --atm-cutoff 1e9 --log wide.csv >/dev/null 2>wide.err \
  && grep -q "^nbsim: triplet forces off: gas sets atm_nu but does not ask for triplets, and N = 1500 gives 5.6[0-9]e+08 triples per step within the cut-off" wide.err \
  && awk -F, 'NR == 2 { exit !($7 == "off") }' wide.csv && ok || fail "wide cut-off: $(cat wide.err)"

# Inputs only friction reads, given without friction, are said to do nothing (issue 41).
"$nbsim" --backend cpu --frames 1 --n 50 --stiffness-ratio 0.5 >/dev/null 2>sr.err \
  && grep -q "^nbsim: --stiffness-ratio shapes friction's tangential spring and dashpot: with friction 0 and rolling friction 0 it has no effect" sr.err \
  && "$nbsim" --backend cpu --frames 1 --n 50 --stiffness-ratio 0.5 --friction 0.3 >/dev/null 2>sr2.err \
  && ! grep -q "no effect" sr2.err && ok || fail "--stiffness-ratio without friction: $(cat sr.err sr2.err)"

# Conventions: -h, -V, "--" ends the options, --version takes nothing else; --help lists them.
"$nbsim" -h | grep -q -- "-V, --version" && grep -q -- "-h, --help" help.txt && grep -q "^  --  " help.txt \
  && ok || fail "-h / the help's own flags"
"$nbsim" -V | grep -q "^nbsim [0-9]" && ok || fail "-V"
expect_error 2 --version extra
expect_error 2 --frames 1 -- --n 5
grep -q "follows '--'" err.txt && ok || fail "after --: $(cat err.txt)"
"$nbsim" --backend cpu --frames 1 --n 10 --quiet -- >/dev/null && ok || fail "a trailing --"
grep -q "1..1000000000" help.txt && ok || fail "the frame-count limit is not in --help"
expect_error 2 --frames 1 --triplets yes
grep -q "'yes' must be on, off or auto" err.txt && ok || fail "--triplets yes: $(cat err.txt)"

"$nbsim" --backend cpu --frames 1 --n 10 --quiet | grep -q "^1 frame, per step" && ok || fail "1 frame"

# Exit codes: 2 for what can never work as typed, 1 for what this machine lacks.
expect_error 2 --pair-map full --backend cpu --frames 1
expect_error 2 --backend cpu --frames 1 --screenshot never.png
expect_error 2 --backend cpu --frames 1 --exit-after 3
# The viewer's own flags are refused by a headless run, as --screenshot is (issue 37), and a flag
# given twice is refused, not the last one silently taken.
for flag in "--vsync off" "--size 640x480" "--sweep exit"; do
  # shellcheck disable=SC2086
  expect_error 2 --backend cpu --frames 1 --n 10 $flag
  grep -q "^nbsim: ${flag%% *} is the viewer's; a headless run (--frames) opens no window" err.txt \
    && ok || fail "headless $flag: $(cat err.txt)"
done
expect_error 2 --backend cpu --frames 1 --n 10 --n 20
grep -q "^nbsim: --n is given twice; give it once (see nbsim --help)$" err.txt && ok \
  || fail "--n twice: $(cat err.txt)"
expect_error 2 --backend cpu --frames 1 --dt=1e-4 --dt 2e-4
expect_error 2 --backend cpu --frames 1 --quiet --quiet

# A long first frame says what it computes and that Ctrl-C stops it within a second (the run is
# not waited for: 5e10 pairs take minutes on a CPU). Culled, the pairs are not N^2 / 2 and are
# not announced as such (test_outputs.sh: the initial forces' time says how long a frame takes).
start_run /dev/null long.err --backend cpu --cull off --n 1000 --steps-per-frame 100000 --frames 1
wait_for long.err "each frame computes 5e+10 unique pairs on the CPU, which takes a while" && ok \
  || fail "long first frame: $(cat long.err)"
grep -q "Ctrl-C stops within a second" long.err && ok || fail "long first frame: $(cat long.err)"
kill -KILL "$run_pid"
wait "$run_pid" 2>/dev/null
start_run /dev/null long.err --backend cpu --n 4000 --steps-per-frame 100000 --frames 1
wait_for long.err "bodies, scene gas" || fail "culled long frame: $(cat long.err)"
grep -q "unique pairs" long.err && fail "a culled run announced N^2 / 2 pairs: $(cat long.err)" || ok
kill -KILL "$run_pid"
wait "$run_pid" 2>/dev/null

# No display: one line, exit 1.
env -u DISPLAY -u WAYLAND_DISPLAY "$nbsim" --backend cpu >out.txt 2>err.txt
code=$?
[ "$code" -eq 1 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q -- "--frames" err.txt && ok \
  || fail "no display: exit $code, $(cat err.txt)"

# Without a GPU, bench says so in one line.
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi >/dev/null 2>&1; then
  expect_error 1 bench pairs
  expect_error 1 --backend cuda --frames 1
  expect_error 1 --pair-map full --frames 1
  grep -q "needs the CUDA backend, and no CUDA device was found" err.txt && ok || fail "full without a GPU: $(cat err.txt)"
fi

finish
