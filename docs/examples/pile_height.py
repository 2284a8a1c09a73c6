#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a pile and plot its mean height against time (docs/python.md): spheres dropped under
gravity onto the floor, on CUDA where a GPU is, else on the CPU reference.

    python3 docs/examples/pile_height.py --n 2000 --seconds 1.5 --out pile_height.png
"""
import argparse

import matplotlib.pyplot as plt
import numpy as np

import nbsim


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="bodies")
    ap.add_argument("--seconds", type=float, default=1.5, help="simulated time [s]")
    ap.add_argument("--samples", type=int, default=150, help="points on the curve")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--out", default="pile_height.png", help="the plot (PNG)")
    a = ap.parse_args()

    with nbsim.Simulation("pile", n=a.n, backend=a.backend) as sim:
        steps = max(1, round(a.seconds / sim.dt / a.samples))
        sim.set_steps_per_frame(steps)  # one frame per point of the curve
        print("%s: %d bodies on %s, dt = %.3g s, %d steps per point"
              % (sim.scene, sim.n, sim.device, sim.dt, steps))
        t, h, e = [sim.time], [sim.mean_height()], [sim.energy()["total"]]
        for _ in range(a.samples):
            sim.run(1)
            t.append(sim.time)
            h.append(sim.mean_height())
            e.append(sim.energy()["total"])
        step = sim.timing_summary()["step"]
        print("per step: median %.3f ms (min %.3f, max %.3f)"
              % (step["median"], step["min"], step["max"]))
        floor = -sim.params["box_half"]

    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(t, h, label="mean height")
    ax.axhline(floor, color="grey", lw=0.8, ls=":", label="floor")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("mean height [m]")
    ax.set_title("A pile of %d spheres settling" % a.n)
    ax2 = ax.twinx()
    ax2.plot(t, e, color="tab:red", alpha=0.6, label="total energy")
    ax2.set_ylabel("total energy [J]", color="tab:red")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("mean height %.3f m -> %.3f m; wrote %s" % (h[0], h[-1], a.out))
    assert np.all(np.isfinite(h))


if __name__ == "__main__":
    main()
