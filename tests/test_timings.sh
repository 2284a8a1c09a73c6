#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Timings that add up (issue 37): every phase a step runs is a column of the log, a row of the
# summary and a key of the JSON, and the phases add up to the step (within 5 %: the log's
# columns are rounded to a nanosecond; the CPU times every phase of every step, so the sums are
# exact but for that rounding). Runs the CPU reference on the workloads that take each phase:
# neighbour lists (a pile that rebuilds them), tile pairs alone (--skin 0), the ATM cut-off over
# its lists and over tile triples, friction, a periodic box, several CPU ranks (the exchange),
# at 1, 10, 100 steps a frame; and the start-up estimate of a long frame against the frame.
set -u
nbsim="$1"
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=cli_lib.sh
. "$here/cli_lib.sh"

# check_sums NAME: t.csv, s.json and run.txt of the last run add up.
check_sums() {
  python3 - "$1" <<'EOF' && ok || fail "$1: the phases do not add up to the step"
import csv, json, re, sys
name = sys.argv[1]
phases = ["drift", "sort", "cull", "lists", "cells", "pair", "atm_lists", "triplet_cull",
          "triplet", "comm", "kick"]
columns = {"lists": "nlist_ms", "atm_lists": "atm_list_ms"}
cols = [columns.get(p, p + "_ms") for p in phases]
bad = []
rows = list(csv.DictReader(open("t.csv")))
assert rows, "no rows"
for r in rows:
    missing = [c for c in cols if c not in r]
    if missing:
        sys.exit(f"{name}: log columns missing: {missing}")
    total = sum(float(r[c]) for c in cols)
    step = float(r["step_ms"])
    if abs(total - step) > 0.05 * step + 1e-5:
        bad.append(f"frame {r['frame']}: phases {total:.6f} ms, step {step:.6f} ms")
    integ = float(r["drift_ms"]) + float(r["kick_ms"])
    if abs(integ - float(r["integrate_ms"])) > 1e-5 + 1e-6 * integ:
        bad.append(f"frame {r['frame']}: integrate_ms is not drift + kick")
j = json.load(open("s.json"))["ms_per_step"]
missing = [p for p in phases if p not in j]
if missing:
    sys.exit(f"{name}: JSON keys missing: {missing}")
total = sum(j[p]["mean"] for p in phases)
if abs(total - j["step"]["mean"]) > 0.05 * j["step"]["mean"]:
    bad.append(f"JSON: phases {total:.6g}, step {j['step']['mean']:.6g}")
# the summary on stdout: the mean column (the last number) of each phase row shown
shown = {}
for line in open("run.txt"):
    m = re.match(r"^  (\w+) +([-0-9.e+]+) +([-0-9.e+]+) +([-0-9.e+]+) +([-0-9.e+]+) +([-0-9.e+]+)", line)
    if m:
        shown[m.group(1)] = float(m.group(6))
total = sum(shown.get(p, 0.0) for p in phases)
if "step" not in shown or abs(total - shown["step"]) > 0.05 * shown["step"]:
    bad.append(f"summary: phases {total:.6g}, step {shown.get('step')}: {shown}")
for p in phases:  # a phase that took time is shown
    if j[p]["mean"] > 1e-4 and p not in shown:
        bad.append(f"summary: row {p} missing ({j[p]['mean']} ms a step in the JSON)")
if bad:
    sys.exit(f"{name}: " + "; ".join(bad[:5]))
EOF
}

# run NAME ARGS...: a headless CPU run with the log and the summary, then the sums checked.
run() {
  local name=$1; shift
  rm -f t.csv s.json
  if "$nbsim" --backend cpu --threads 1 --quiet --log t.csv --summary s.json "$@" >run.txt 2>run.err
  then
    check_sums "$name"
  else
    fail "$name: $(cat run.err)"
  fi
}

run "pile, lists" --scene pile --n 2000 --frames 12 --steps-per-frame 10
# the lists' phase takes time and is in the log (it was missing before)
python3 -c "
import csv; r = list(csv.DictReader(open('t.csv')))
assert sum(float(x['nlist_ms']) for x in r) > 0" && ok || fail "pile: no time in the lists' column"
run "pile, 1 step a frame" --scene pile --n 1000 --frames 30 --steps-per-frame 1
run "pile, 100 steps a frame" --scene pile --n 1000 --frames 3 --steps-per-frame 100
run "gas, tile pairs" --n 1500 --frames 5 --skin 0
run "ATM cut-off, lists" --scene triplets --n 300 --frames 3 --atm-cutoff 3
python3 -c "
import csv; r = list(csv.DictReader(open('t.csv')))
assert sum(float(x['atm_list_ms']) for x in r) > 0 and all(float(x['triplet_cull_ms']) == 0 for x in r)" \
  && ok || fail "ATM lists: their time is not in atm_list_ms alone"
run "ATM cut-off, tile triples" --scene triplets --n 300 --frames 3 --atm-cutoff 3 --skin 0
run "friction" --scene pile --n 800 --frames 5 --friction 0.5 --rolling-friction 0.05
run "periodic" --n 800 --frames 5 --periodic xyz
run "two CPU ranks" --n 1500 --frames 5 --gpus 2
python3 -c "
import csv; r = list(csv.DictReader(open('t.csv')))
assert sum(float(x['comm_ms']) for x in r) > 0" && ok || fail "two ranks: no exchange time"

# The start-up estimate of a step (set-up's forces, the lists' builds spread over the steps
# between rebuilds: what "a frame of N steps should take about" says) within 2x of the steps that
# follow: a pile at rest (lists rarely rebuilt), a gas, the ATM cut-off, brute force. The estimate
# rests on one measured force pass, which a busy machine (a parallel ctest, other jobs) can slow
# or spare alone: a case fails only when three runs in a row all miss.
estimate() {
  local name=$1 try
  shift
  for try in 1 2 3; do
    if ! "$nbsim" --backend cpu --threads 1 --quiet --summary s.json "$@" >run.txt 2>run.err; then
      fail "$name: $(cat run.err)"
      return
    fi
    if python3 - "$name" <<'EOF2'; then
import json, sys
d = json.load(open("s.json"))
est, mean = d["step_estimate_ms"], d["ms_per_step"]["step"]["mean"]
print(f"  {sys.argv[1]}: estimated {est:.4g} ms a step, ran {mean:.4g}")
sys.exit(0 if est > 0 and 0.5 <= est / mean <= 2.0 else 1)
EOF2
      ok
      return
    fi
  done
  fail "$name: the start-up estimate is off (three runs)"
}
estimate "pile" --scene pile --n 4000 --frames 4 --steps-per-frame 50
estimate "gas" --n 4000 --frames 4 --steps-per-frame 50
estimate "ATM cut-off" --scene triplets --n 400 --frames 2 --steps-per-frame 10 --atm-cutoff 3
estimate "brute force" --n 1000 --frames 3 --steps-per-frame 10 --cull off

finish
