#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the thread maps at several n: blocks launched, waste and exactness of every 2-D and
3-D map, as a table and as a plot of the waste against n (docs/python.md).

    python3 docs/examples/compare_maps.py --out maps_waste.png
"""
import argparse

import matplotlib.pyplot as plt
import numpy as np

import nbsim


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="maps_waste.png", help="the plot (PNG)")
    ap.add_argument("--max2", type=int, default=65535, help="largest n in 2-D")
    ap.add_argument("--max3", type=int, default=4096, help="largest n in 3-D")
    a = ap.parse_args()

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, dim, top in ((axes[0], 2, a.max2), (axes[1], 3, a.max3)):
        ns = np.unique(np.geomspace(2, top, 40).astype(int))
        table = nbsim.maps.compare(ns, dim=dim)
        print("%d-D, n = %d .. %d: map, waste at the largest n, exact there" % (dim, ns[0], ns[-1]))
        for name, row in table.items():
            plan = nbsim.maps.plan(name, int(ns[-1]), dim)
            check = plan.check()  # every block, or a sample of the largest plans
            print("  %-12s %7.3f %%   %s" % (name, 100 * row["waste"][-1], check.description))
            style = "--" if plan.paper_float else "-"
            ax.plot(row["n"], 100 * row["waste"], style, label=name + (" *" if plan.paper_float
                                                                      else ""))
        ax.set_xscale("log")
        ax.set_xlabel("n (tiles per side)")
        ax.set_ylabel("wasted blocks [% of launched]")
        ax.set_title("%d-D: tile %s" % (dim, "pairs" if dim == 2 else "triples"))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, ncol=5 if dim == 2 else 4, loc="upper center",
                  bbox_to_anchor=(0.5, -0.16))
    fig.suptitle("nbsim thread maps: waste against n (* the papers' float variants)")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
