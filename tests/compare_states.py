#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two states saved by nbsim (--save-state) against each other, body by body.

Prints one line: LABEL, the largest position difference |dx| [m], the largest force difference
relative to the largest force |dF| / max |F| (columns 0..2 and 8..10 of a body row), and the
largest difference of any column relative to max(1, |a|, |b|). Exits 1 when a bound given is
passed, or when the states do not have the same bodies; 0 otherwise.

Usage: compare_states.py LABEL A B [--max-dx M] [--max-df R] [--max-any R]
"""
import argparse
import sys


def body_rows(path):
    """The numeric rows with more than three values: one per body (comments, parameters and the
    column header are skipped)."""
    rows = []
    with open(path) as f:
        for line in f:
            try:
                values = [float(v) for v in line.split()]
            except ValueError:
                continue
            if len(values) > 3:
                rows.append(values)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("label")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--max-dx", type=float)
    ap.add_argument("--max-df", type=float)
    ap.add_argument("--max-any", type=float)
    args = ap.parse_args()
    a, b = body_rows(args.a), body_rows(args.b)
    if not a or len(a) != len(b):
        print(f"{args.label}: {len(a)} and {len(b)} bodies")
        return 1
    dx = max(abs(x[k] - y[k]) for x, y in zip(a, b) for k in range(3))
    fmax = max(abs(v) for x in b for v in x[8:11]) or 1.0
    df = max(abs(x[k] - y[k]) for x, y in zip(a, b) for k in range(8, 11)) / fmax
    worst = max(abs(u - v) / max(1.0, abs(u), abs(v)) for x, y in zip(a, b) for u, v in zip(x, y))
    print(f"{args.label}: max |dx| {dx:.2e} m, max |dF| / max |F| {df:.2e}, "
          f"any column {worst:.2e}")
    bounds = ((args.max_dx, dx), (args.max_df, df), (args.max_any, worst))
    return 1 if any(bound is not None and value > bound for bound, value in bounds) else 0


if __name__ == "__main__":
    sys.exit(main())
