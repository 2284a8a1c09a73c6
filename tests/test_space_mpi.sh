#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The CPU reference split in space over MPI (sim/space/space.h): mpirun -np 1..4 and 8 nbsim
# --backend cpu --decompose space saves the state one rank saves, to rounding (compare_states.py),
# for a gas, a pile under gravity and walls, a box periodic on every axis, with and without
# friction, and the ATM cut-off, with rank counts that do not divide the bodies; what it cannot
# run is refused on every rank in one line, with one exit status. Skips (77) in a build without
# MPI.
nbsim=$1
compare=$(cd "$(dirname "$0")" && pwd)/compare_states.py
. "$(dirname "$0")/cli_lib.sh"
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE SLURM_PROCID SLURM_NTASKS \
  SLURM_STEP_NUM_TASKS
if ! command -v mpiexec >/dev/null ||
   ! "$nbsim" --version | grep -q "MPI (NCCL id under mpirun) yes"; then
  echo "no MPI in this build: skipped"
  exit 77
fi
# Open MPI refuses root and more processes than cores unless told (CI runs as root on 2 cores).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# ranks waiting for a message yield the core: four ranks share two
export OMPI_MCA_mpi_yield_when_idle=1
mpi() { # mpi R ARGS...: nbsim on R ranks, one thread each; its exit status
  local r=$1; shift
  timeout 60 mpiexec -n "$r" "$nbsim" --backend cpu --threads 1 --quiet "$@" </dev/null
}

# Tolerances: a body's force may be summed in another order on another rank count (its contacts
# come from own bodies and ghosts), so the runs agree to rounding (these agree bit for bit today);
# 1e-9 m and 1e-7 of the largest force leave room for that and still catch a missing contact,
# whose force moves its bodies far more.
check() { # check LABEL ARGS...: one rank, then 1, 2, 3 and 4 ranks, compared
  check_on "1 2 3 4" "$@"
}
check_on() { # check_on "RANKS..." LABEL ARGS...: one rank, then each of RANKS, compared
  local ranks=$1 label=$2; shift 2
  if ! "$nbsim" --backend cpu --threads 1 --quiet "$@" --save-state one.txt >out.txt 2>err.txt; then
    fail "$label, one rank: $(head -c 300 err.txt)"
    return
  fi
  for r in $ranks; do
    rm -f split.txt
    if mpi "$r" --decompose space "$@" --save-state split.txt >out.txt 2>err.txt &&
       python3 "$compare" "$label $r" one.txt split.txt --max-dx 1e-9 --max-df 1e-7 \
         --max-any 1e-9 >cmp.txt; then
      ok
    else
      fail "$label on $r ranks: $(head -c 300 err.txt) $(cat cmp.txt 2>/dev/null)"
    fi
  done
}

# Dense enough to collide (the gas at the smallest box it fits, the pile dropped hard onto the
# floor), long enough for bodies to cross the cuts (35 to 60 re-cuts); the periodic gas crosses
# the box's faces, and so the cuts across the period.
check gas --scene gas --n 1001 --box 10.8 --triplets off --frames 8 --steps-per-frame 100
check pile --scene pile --n 999 --gravity 0,-5000,0 --triplets off --frames 6 --steps-per-frame 50
check periodic --scene gas --n 1003 --box 10.8 --periodic xyz --triplets off --frames 10 \
  --steps-per-frame 100

# Friction: a contact's springs live with the body that owns them (the larger user index) and
# migrate with it, and a contact across a cut evolves on both its ranks from the same history, so
# the springs saved (the contact rows, "any column") are one rank's too. The pile settles onto the
# floor with sliding and rolling friction (some 800 contacts, half of them with the floor) over 8
# re-cuts; the periodic box's contacts cross the cuts and the period.
pile_friction="--scene pile --n 999 --gravity 0,-20000,0 --triplets off --frames 4
  --steps-per-frame 100 --friction 0.5 --rolling-friction 0.1"
check_on "2 3 4 8" "friction pile" $pile_friction
check_on "2 3 8" "friction periodic" --scene gas --n 1003 --box 10.8 --periodic xyz --triplets off \
  --frames 6 --steps-per-frame 100 --friction 0.5

# The ATM cut-off: every triple within it has all three sides within it, so ghosts one cut-off
# (+ skin) deep complete the triples of own bodies; the gas is dense enough for the triplet forces
# to move its bodies (they change the state by 0.4 mm and 40 % of the largest force).
atm="--scene gas --n 3000 --box 20 --atm-cutoff 2.2 --atm-nu 20 --triplets on --frames 4
  --steps-per-frame 50"
check_on "2 3 4 8" "ATM cut-off" $atm
check_on "3" "ATM cut-off periodic" $atm --periodic xyz # triples across the period

# A split run's save is written by rank 0 as the ranks send it ranges of 65,536 bodies (no
# process holds all N): one rank's file byte for byte, over two ranges of bodies and of springs
# (the lattice touches from the start: some 100,000 histories).
lattice="--scene lattice --n 70000 --friction 0.5 --triplets off --frames 1 --steps-per-frame 1"
if "$nbsim" --backend cpu --threads 1 --quiet $lattice --save-state one.txt >/dev/null 2>err.txt &&
   mpi 2 --decompose space $lattice --save-state split.txt >/dev/null 2>>err.txt &&
   cmp -s one.txt split.txt; then
  ok
else
  fail "the lattice's save on 2 ranks: $(head -c 300 err.txt) $(cmp one.txt split.txt 2>&1)"
fi

# The summary says how the bodies were split: own bodies (about N / 2) and ghosts per rank, and
# the largest rank's peak memory.
if mpi 2 --decompose space --scene gas --n 600 --triplets off --frames 2 --summary sum.json \
     >/dev/null 2>err.txt &&
   grep -Eq '"ranks": "space split over 2 ranks along [xyz]: own bodies (29|30)[0-9]\.\.' \
     sum.json &&
   grep -Eq '"ranks": ".*peak resident memory [1-9][0-9]* MiB .*, [1-9][0-9]* bytes per own' \
     sum.json; then
  ok
else
  fail "summary of 2 ranks: $(head -c 300 err.txt) $(grep ranks sum.json)"
fi

# The energies, reduced over the ranks, are one rank's: the log's kinetic, potential and total
# (columns found by name, printed to 9 digits) within 1e-7 of their size, frame by frame.
energies() { # energies LOG: kinetic potential total, a frame a line
  awk -F, 'NR == 1 { for (c = 1; c <= NF; ++c) col[$c] = c; next }
    { print $col["kinetic"], $col["potential"], $col["total_energy"] }' "$1"
}
same_energies() { # same_energies FRAMES ARGS...: one rank's log and three ranks'
  local frames=$1; shift
  if "$nbsim" --backend cpu --threads 1 --quiet "$@" --log one.csv >/dev/null 2>err.txt &&
     mpi 3 --decompose space "$@" --log three.csv >/dev/null 2>>err.txt &&
     paste -d' ' <(energies one.csv) <(energies three.csv) | awk -v frames="$frames" '
       { for (k = 1; k <= 3; ++k) { a = $k; b = $(k + 3); m = (a < 0 ? -a : a) + 1e-300;
           if ((a - b) > 1e-7 * m || (b - a) > 1e-7 * m) bad = 1 } ++rows }
       END { exit (bad || rows != frames) }'; then
    ok
  else
    fail "energies on 3 ranks ($*): $(head -c 300 err.txt) $(paste one.csv three.csv | head -3)"
  fi
}
same_energies 6 --scene pile --n 999 --gravity 0,-5000,0 --triplets off --frames 6 \
  --steps-per-frame 50
same_energies 4 $pile_friction # the springs' energy too, walls' and pairs'
same_energies 4 $atm            # each triple once over the ranks

# Bad input: the same one line on every rank and one exit status.
refused() { # refused CODE PATTERN R ARGS...
  local want=$1 pattern=$2 r=$3; shift 3
  mpi "$r" "$@" >out.txt 2>err.txt
  local got=$?
  local lines; lines=$(grep -c "^nbsim: " err.txt)
  if [ "$got" -eq "$want" ] && [ "$lines" -eq "$r" ] &&
     [ "$(grep -c -- "$pattern" err.txt)" -eq "$r" ]; then
    ok
  else
    fail "$* on $r ranks -> exit $got (want $want), $lines lines: $(head -c 400 err.txt)"
  fi
}
refused 2 "less than one halo" 4 --decompose space --scene gas --n 8 --triplets off --frames 1
refused 2 "trajectories of a run split in space" 2 --scene gas --n 200 --frames 1 --dump t.xyz
refused 2 "less than one halo of .* (ATM cut-off 4 m" 4 --decompose space --scene gas --n 400 \
  --triplets on --atm-cutoff 4 --frames 1
refused 2 "forces without a cut-off reach every body" 2 --scene gas --n 200 --triplets on \
  --frames 1
refused 2 "needs culled contacts" 3 --scene gas --n 200 --cull off --frames 1
refused 2 "replicates over threads" 2 --decompose replicate --scene gas --n 200 --frames 1

# A rank that fails mid-run (a body of the pile thrown out of the box at its 316th step): every
# rank stops at that step with one line and one rank's exit status, none left waiting; the
# body's owner says what one rank says (the body by its user index, the step since set-up), the
# others name that rank.
thrown="--scene pile --n 999 --gravity 0,-50000,0 --triplets off --frames 4 --steps-per-frame 100"
"$nbsim" --backend cpu --threads 1 --quiet $thrown >/dev/null 2>one_err.txt
want=$?
rm -f rank_err.* rank_exit.*
timeout 60 mpiexec -n 3 sh -c '"$0" "$@" >/dev/null 2>"rank_err.$$"; echo $? >"rank_exit.$$"' \
  "$nbsim" --backend cpu --threads 1 --quiet --decompose space $thrown </dev/null >/dev/null 2>&1
if [ "$want" -ne 0 ] && [ "$(ls rank_exit.* | wc -l)" -eq 3 ] &&
   [ "$(sort -u rank_exit.*)" = "$want" ] && [ "$(cat rank_err.* | wc -l)" -eq 3 ] &&
   [ "$(cat rank_err.* | grep -c '^nbsim: simulation stopped at frame 4')" -eq 3 ] &&
   [ "$(cat rank_err.* | grep -cxF -- "$(cat one_err.txt)")" -eq 1 ] &&
   [ "$(cat rank_err.* | grep -c 'rank [0-2] failed at step 16 of the frame')" -eq 2 ]; then
  ok
else
  fail "a rank failing mid-run: one rank exits $want, the ranks $(cat rank_exit.* | tr '\n' ' ')" \
    "$(cat rank_err.* | head -c 400)"
fi
finish
