#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two states saved by nbsim (--save-state) against each other, body by body.

Prints one line: LABEL, the largest position difference |dx| [m], the largest force difference
relative to the largest force |dF| / max |F| (the columns the header names x y z and fx fy fz:
a frictional save puts the spin before the force), and the largest difference of any column of
any numeric row (bodies, and a frictional save's contact histories) relative to
max(1, |a|, |b|). Exits 1 when a bound given is passed, or when the states do not have the same
bodies and rows; 0 otherwise.

Usage: compare_states.py LABEL A B [--max-dx M] [--max-df R] [--max-any R]
"""
import argparse
import sys


def read_state(path):
    """(the column header's names, the body rows, every numeric row in file order). Body rows
    have the header's width; other numeric rows (contact histories) are kept for "any column";
    comments and parameter lines are skipped."""
    names, bodies, rows = [], [], []
    with open(path) as f:
        for line in f:
            fields = line.split()
            try:
                values = [float(v) for v in fields]
            except ValueError:
                if fields and fields[0] == "x" and not names:
                    names = fields
                continue
            if len(values) > 3:
                rows.append(values)
                if len(values) == len(names):
                    bodies.append(values)
    return names, bodies, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("label")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--max-dx", type=float)
    ap.add_argument("--max-df", type=float)
    ap.add_argument("--max-any", type=float)
    args = ap.parse_args()
    names, a, rows_a = read_state(args.a)
    names_b, b, rows_b = read_state(args.b)
    if not a or len(a) != len(b) or names != names_b or len(rows_a) != len(rows_b):
        print(f"{args.label}: {len(a)} and {len(b)} bodies, {len(rows_a)} and {len(rows_b)} rows")
        return 1
    fcols = [names.index(c) for c in ("fx", "fy", "fz")] if "fx" in names else []
    dx = max(abs(x[k] - y[k]) for x, y in zip(a, b) for k in range(3))
    fmax = max((abs(x[k]) for x in b for k in fcols), default=0.0) or 1.0
    df = max((abs(x[k] - y[k]) for x, y in zip(a, b) for k in fcols), default=0.0) / fmax
    if any(len(x) != len(y) for x, y in zip(rows_a, rows_b)):
        print(f"{args.label}: rows of different widths")
        return 1
    worst = max(abs(u - v) / max(1.0, abs(u), abs(v))
                for x, y in zip(rows_a, rows_b) for u, v in zip(x, y))
    print(f"{args.label}: max |dx| {dx:.2e} m, max |dF| / max |F| {df:.2e}, "
          f"any column {worst:.2e}")
    bounds = ((args.max_dx, dx), (args.max_df, df), (args.max_any, worst))
    return 1 if any(bound is not None and value > bound for bound, value in bounds) else 0


if __name__ == "__main__":
    sys.exit(main())
