#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""nbsim — the medians of scripts/cpu_vs_lammps.sh's rows, as a Markdown table.

    cpu_vs_lammps.py CSV [--label TEXT]

Per code (rows of that label; all labels when none is given): the user CPU time per step (the
runs' median less the setups' median, over the steps between), the wall time per step (the same
from the process's wall clock), each code's own loop time per step (nbsim's log, LAMMPS's `Loop
time`), its neighbour-list and pair times per step (nbsim: the lists and pair phases; LAMMPS:
Neigh and Pair), and the particle-steps per second per core from the user time. The last line
says whether nbsim's rate is at least LAMMPS's (issue 41's CPU goal).
"""
import csv
import statistics
import sys


def median(rows, key):
    values = [float(r[key]) for r in rows if r[key] not in ('', 'na')]
    return statistics.median(values) if values else float('nan')


def summary(rows):
    runs = [r for r in rows if r['kind'] == 'run']
    setups = [r for r in rows if r['kind'] == 'setup']
    steps = int(runs[0]['steps']) - (int(setups[0]['steps']) if setups else 0)
    n = int(runs[0]['n'])
    full = int(runs[0]['steps'])
    user = (median(runs, 'user_s') - (median(setups, 'user_s') if setups else 0.0)) / steps
    wall = (median(runs, 'wall_s') - (median(setups, 'wall_s') if setups else 0.0)) / steps
    return {
        'n': n, 'reps': len(runs), 'steps': full, 'user_ms': 1e3 * user, 'wall_ms': 1e3 * wall,
        'loop_ms': 1e3 * median(runs, 'loop_s') / full,
        'neigh_ms': 1e3 * median(runs, 'neigh_s') / full,
        'pair_ms': 1e3 * median(runs, 'pair_s') / full,
        'rate': n / user if user > 0 else float('nan'),
    }


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith('-'):
        sys.exit(__doc__)
    label = args[args.index('--label') + 1] if '--label' in args else None
    rows = [r for r in csv.DictReader(open(args[0])) if label is None or r['label'] == label]
    labels = sorted({r['label'] for r in rows}, key=lambda s: (len(s), s))
    print('| pile | code | N | steps x runs | user ms/step | wall ms/step | own loop ms/step '
          '| lists ms/step | pair ms/step | particle-steps/s per core |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
    verdicts = []
    for lab in labels:
        got = {}
        for code in ('nbsim', 'lammps'):
            mine = [r for r in rows if r['label'] == lab and r['code'] == code]
            if not mine:
                continue
            s = got[code] = summary(mine)
            print('| %s | %s | %d | %d x %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.3g |' %
                  (lab, code, s['n'], s['steps'], s['reps'], s['user_ms'], s['wall_ms'],
                   s['loop_ms'], s['neigh_ms'], s['pair_ms'], s['rate']))
        if len(got) == 2:
            ratio = got['nbsim']['rate'] / got['lammps']['rate']
            verdicts.append('%s: nbsim / LAMMPS particle-steps per core = %.2f: goal %s' %
                            (lab, ratio, 'met' if ratio >= 1.0 else 'NOT met'))
    print()
    for v in verdicts:
        print(v)


if __name__ == '__main__':
    main()
