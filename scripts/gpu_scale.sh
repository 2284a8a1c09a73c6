#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One GPU to its memory (issue 39), checked with contacts at every size. The built-in lattice at
# N = m^3 (m >= 64) fills its box exactly: with every axis periodic and no gravity, each body has
# the same neighbourhood at any N (six touching neighbours, jittered), so the contacts and the
# energies per body must not depend on N. Runs the lattice at 2.1M (the reference), 16.8M, 64M
# and the largest cube the memory plan admits, without and with friction, 10 frames of 10 steps
# each, and checks every frame's contacts per body against the reference's within 0.5 % and its
# kinetic and potential energy per body within 2 % (sums of squared overlaps, noisier: a trial
# of 262,144 against 373,248 bodies on the CPU differed by 0.1 % and 0.6 %). Then the gas at
# 100M bodies for its particle-steps per second (the goal: 9e9), and the start-up at 200M
# (OUT/startup.txt). Writes OUT/scale.md.
# Usage: NBSIM_BIN=build-gpu/bin/nbsim OUT=dir scripts/gpu_scale.sh
#   (a small trial on the CPU: NBSIM_SCALE_CUBES="64" NBSIM_SCALE_MAX=72 NBSIM_SCALE_GAS=4096;
#   NBSIM_SCALE_FRICTION=0: the lattice without friction alone)
set -uo pipefail
nb=${NBSIM_BIN:-build-gpu/bin/nbsim}
out=${OUT:-scale_out}
mkdir -p "$out"
status=0
lattice=(--scene lattice --periodic xyz --gravity 0,0,0)
run() { # name, arguments...: 10 frames of 10 steps; prints "name exit wall_s"
  local name=$1
  shift
  local t0 rc
  t0=$(date +%s.%N)
  "$nb" "$@" --frames 10 --steps-per-frame 10 --energy-every 1 --quiet \
    --log "$out/$name.csv" --summary "$out/$name.json" >"$out/$name.out" 2>&1
  rc=$?
  echo "$name exit $rc wall $(echo "$(date +%s.%N) - $t0" | bc) s"
  [ $rc -eq 0 ] || { status=1; tail -3 "$out/$name.out"; }
}
largest_cube() { # tag, extra arguments -> the largest m with m^3 in the plan (at most 1000)
  local dry=$out/dry_$1.txt most
  shift
  "$nb" --dry-run "${lattice[@]}" --n 1000000000 "$@" >"$dry" 2>&1
  most=$(sed -n 's/.*at most \([0-9]*\) bodies fit.*/\1/p' "$dry" | tail -1)
  python3 -c "m = round($most ** (1/3)) + 1
while m ** 3 > $most: m -= 1
print(m)"
}
frictions=("" "--friction 0.5")
[ "${NBSIM_SCALE_FRICTION:-1}" = 1 ] || frictions=("")
for fric in "${frictions[@]}"; do
  tag=lattice${fric:+_friction}
  m_max=${NBSIM_SCALE_MAX:-$(largest_cube "$tag" $fric)}
  echo "$tag: largest cube by the plan $m_max^3 = $((m_max * m_max * m_max))"
  for m in ${NBSIM_SCALE_CUBES:-128 256 400} "$m_max"; do
    [ "$m" -le "$m_max" ] || continue
    # shellcheck disable=SC2086
    run "${tag}_$m" "${lattice[@]}" --n $((m * m * m)) $fric
  done
done
"$nb" --dry-run --n 200000000 >"$out/dry_gas_200m.txt" 2>&1
# Start-up at 200M (issue 39: seconds, not minutes): one step of the gas, the scene built on the
# CPU's threads, uploaded, its first forces; the wall time of the whole program, beside 2M's.
for n in 2000000 200000000; do
  t0=$(date +%s.%N)
  "$nb" --scene gas --n $n --frames 1 --steps-per-frame 1 --quiet >"$out/start_$n.out" 2>&1 ||
    { status=1; tail -2 "$out/start_$n.out"; }
  echo "start-up, gas $n bodies, one step: $(echo "$(date +%s.%N) - $t0" | bc) s wall" |
    tee -a "$out/startup.txt"
done
run gas_100m --scene gas --n "${NBSIM_SCALE_GAS:-100000000}"
python3 - "$out" <<'PY' || status=1
import csv, glob, json, os, re, sys
out = sys.argv[1]
def rows(name):
    return list(csv.DictReader(open(f"{out}/{name}.csv")))
lines = ["| run | N | step ms (median) | particle-steps/s | contacts per body, frame 1 / 10 | "
         "worst deviation from 2.1M (contacts, kinetic, potential) |", "|---|" * 1 + "---|" * 5]
bad = []
for tag in ("lattice", "lattice_friction"):
    names = sorted((f for f in (os.path.basename(p)[:-4] for p in glob.glob(f"{out}/{tag}_*.csv"))
                    if re.fullmatch(rf"{tag}_\d+", f)), key=lambda f: int(f.split("_")[-1]))
    if not names:
        continue
    ref = rows(names[0])
    for name in names:
        r = rows(name)
        n = int(r[0]["n"])
        worst = [0.0, 0.0, 0.0]
        if len(r) != len(ref):
            bad.append(f"{name}: {len(r)} frames, the reference {len(ref)}")
        for a, b in zip(r, ref):
            na, nb_ = int(a["n"]), int(b["n"])
            for k, col in enumerate(("contacts", "kinetic", "potential")):
                va, vb = float(a[col]) / na, float(b[col]) / nb_
                dev = abs(va - vb) / max(abs(vb), 1e-300)
                worst[k] = max(worst[k], dev)
        if worst[0] > 0.005 or max(worst[1:]) > 0.02:
            bad.append(f"{name}: per-body deviation {worst}: contacts > 0.5 % or energy > 2 %")
        summ = json.load(open(f"{out}/{name}.json"))
        step = summ["ms_per_step"]["step"]["median"]
        pss = summ.get("particle_steps_per_s")
        c1, c10 = float(r[0]["contacts"]) / n, float(r[-1]["contacts"]) / n
        lines.append(f"| {name} | {n:,} | {step} | {pss} | {c1:.4f} / {c10:.4f} | "
                     f"{worst[0]:.2e}, {worst[1]:.2e}, {worst[2]:.2e} |")
if os.path.exists(f"{out}/gas_100m.json"):
    s = json.load(open(f"{out}/gas_100m.json"))
    lines.append(f"| gas_100m | 100,000,000 | {s['ms_per_step']['step']['median']}"
                 f" | {s.get('particle_steps_per_s')} | | |")
open(f"{out}/scale.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
for b in bad:
    print("FAIL", b)
sys.exit(1 if bad else 0)
PY
echo "scale: status $status"
exit $status
