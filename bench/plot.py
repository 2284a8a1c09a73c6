#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plots of `nbsim bench` results, in the style of the papers' figures, and of timing logs.

usage: python3 bench/plot.py DIR | LOG.csv [--out FILE.png | --out -]

A timing log (nbsim --log LOG.csv, one row per frame) gives one PNG (default: LOG.png beside it;
--out -: on standard output, as nbsim --plot reads it; another extension matplotlib writes, such
as .svg or .pdf, picks that format). The file is written whole or not at all: a temporary beside
it is renamed into place; a write error or a format matplotlib lacks is one line (exit 1, 2):
  top     every *_ms column of the log against the frame, as ms per step (the frame's value over
          its steps); dump_ms, the simulation thread's cost of a trajectory dump, as ms per dumped
          frame; a dashed line where pair_map, triplet_map or tile changes (a map switch),
          labelled with the new value
  bottom  kinetic, potential and total energy against simulated time, when the log has them

A bench directory (DIR holds maps.csv, pairs.csv, triplets.csv, meta.txt) gives PNGs in DIR:
  maps_I_<d>d_<kernel>.png    I = t_bb / t_map against N, one line per map, one panel per rho
                              (columns) and map evaluation per thread / per block (rows)
  maps_rate_<d>d.png          unique element pairs/triples per second against N (best rho and
                              evaluation per map), one panel per kernel
  pairs_I.png, triplets_I.png                 I against N, one panel per tile size
  pairs_throughput.png, triplets_throughput.png   interactions/s against N, with the
                              instruction-issue ceiling from meta.txt
Paper float variants are dashed; points whose exactly-once check failed are marked x.
Needs only matplotlib (Debian: python3-matplotlib)."""
import csv
import os
import re
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    matplotlib = plt = None

DPI = 72


def no_matplotlib_message():
    """One line: which interpreter ran this without matplotlib, and one that has it (a pyenv or
    venv python3 first on PATH lacks Debian's python3-matplotlib, which /usr/bin/python3 has)."""
    import shutil
    import subprocess
    here = sys.executable or "python3"
    candidates = []
    for name in (os.environ.get("NBSIM_PYTHON"), "/usr/bin/python3", shutil.which("python3")):
        if name and name not in candidates and shutil.which(name):
            candidates.append(name)
    for name in candidates:
        try:
            found = subprocess.run([name, "-c", "import matplotlib"], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, timeout=60).returncode == 0
        except (OSError, subprocess.SubprocessError):
            found = False
        if found:
            return (f"plot.py: matplotlib cannot be imported by {here}, the python3 that ran this; "
                    f"{name} has it: run {name} {' '.join(sys.argv)}; no plot written")
    return (f"plot.py: matplotlib cannot be imported by {here}, the python3 that ran this, nor by "
            f"{', '.join(candidates) or 'another python3'}: install it (Debian: apt-get install "
            f"python3-matplotlib, for /usr/bin/python3; else {here} -m pip install matplotlib); "
            f"no plot written")


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        try:
            r["N"] = int(r["N"])
            r["median_ms"] = float(r["median_ms"])
            r["I"] = float(r["I"]) if r.get("I") else 0.0
            r["rate"] = float(r["interactions_per_s"]) if r.get("interactions_per_s") else 0.0
        except (KeyError, ValueError):
            continue  # a malformed row: leave it out rather than fail the whole plot
        out.append(r)
    return out


def gpu_name(rows, dirname):
    return rows[0].get("gpu", "") if rows else os.path.basename(os.path.normpath(dirname))


def ceilings(dirname):
    """(pairs/s, triples/s) from meta.txt's ceiling line, or (None, None)."""
    try:
        with open(os.path.join(dirname, "meta.txt")) as f:
            text = f.read()
    except OSError:
        return None, None
    m = re.search(r"-> ([0-9.e+]+) pairs/s.*?, ([0-9.e+]+) triples/s", text)
    return (float(m.group(1)), float(m.group(2))) if m else (None, None)


def map_order(rows):
    names = []
    for r in rows:
        if r["map"] not in names:
            names.append(r["map"])
    return names


COLORS = {}  # one colour per map name across every figure


def style(name, paper):
    if name not in COLORS:
        COLORS[name] = f"C{len(COLORS) % 10}"
    return {"linestyle": "--" if paper else "-", "marker": "o", "markersize": 3, "linewidth": 1.2,
            "color": COLORS[name]}


def plot_lines(ax, rows, key, group, ylabel, baseline=None):
    """One line per map: key against N; failed checks marked with x."""
    for name in map_order(rows):
        pts = sorted((r for r in rows if r["map"] == name), key=lambda r: r["N"])
        if not pts:
            continue
        paper = pts[0].get("paper_float") == "1"
        label = name + ("*" if paper else "")
        xs, ys = [p["N"] for p in pts], [p[key] for p in pts]
        line, = ax.plot(xs, ys, label=label, **style(name, paper))
        bad = [(p["N"], p[key]) for p in pts if p.get("check", "ok").startswith("FAIL")]
        if bad:
            ax.plot([b[0] for b in bad], [b[1] for b in bad], "x", color=line.get_color(),
                    markersize=8)
    if baseline is not None:
        ax.axhline(baseline, color="black", linewidth=1.5)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N")
    ax.set_ylabel(ylabel)
    ax.set_title(group, fontsize=9)
    ax.grid(True, alpha=0.3)


def save(fig, dirname, name):
    path = os.path.join(dirname, name)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def plot_maps(dirname, written):
    rows = read_rows(os.path.join(dirname, "maps.csv"))
    gpu = gpu_name(rows, dirname)
    for dim in ("2", "3"):
        drows = [r for r in rows if r.get("dim") == dim]
        kernels = []
        for r in drows:
            if r["kernel"] not in kernels:
                kernels.append(r["kernel"])
        for kernel in kernels:
            krows = [r for r in drows if r["kernel"] == kernel]
            rhos = sorted({int(r["rho"]) for r in krows})
            evals = [e for e in ("thread", "block") if any(r.get("eval", "thread") == e
                                                           for r in krows)]
            fig, axes = plt.subplots(len(evals), len(rhos), figsize=(4.2 * len(rhos),
                                     3.4 * len(evals)), squeeze=False)
            for row, ev in enumerate(evals):
                for ax, rho in zip(axes[row], rhos):
                    sub = [r for r in krows if int(r["rho"]) == rho and
                           r.get("eval", "thread") == ev and
                           not (r["map"] == "bb" and ev == "thread")]
                    threads = rho * rho if dim == "2" else rho ** 3
                    plot_lines(ax, sub, "I", f"rho = {rho} ({threads} threads), map per {ev}",
                               "I = t_bb / t_map", baseline=1.0)
                axes[row][-1].legend(fontsize=7)
            fig.suptitle(f"{dim}-D {kernel}: improvement over the bounding box (bb per thread), "
                         f"{gpu}", fontsize=10)
            fig.tight_layout()
            written.append(save(fig, dirname, f"maps_I_{dim}d_{kernel}.png"))
        if kernels:
            # Throughput: per map and N the best rho, one panel per kernel.
            cols = min(3, len(kernels))
            nrows = (len(kernels) + cols - 1) // cols
            fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.4 * nrows),
                                     squeeze=False)
            for idx, kernel in enumerate(kernels):
                ax = axes[idx // cols][idx % cols]
                best = {}
                for r in (r for r in drows if r["kernel"] == kernel):
                    k = (r["map"], r["N"])
                    if k not in best or r["rate"] > best[k]["rate"]:
                        best[k] = r
                plot_lines(ax, list(best.values()), "rate", kernel,
                           "element " + ("pairs" if dim == "2" else "triples") +
                           "/s (best rho, eval)")
                ax.set_yscale("log")
            for idx in range(len(kernels), nrows * cols):
                axes[idx // cols][idx % cols].axis("off")
            axes[0][0].legend(fontsize=7)
            fig.suptitle(f"{dim}-D micro-benchmarks: throughput, {gpu}", fontsize=10)
            fig.tight_layout()
            written.append(save(fig, dirname, f"maps_rate_{dim}d.png"))


def plot_sim(dirname, suite, ceiling, written):
    rows = read_rows(os.path.join(dirname, f"{suite}.csv"))
    if not rows:
        return
    gpu = gpu_name(rows, dirname)
    unit = "pairs" if suite == "pairs" else "triples"
    tiles = sorted({int(r["tile"]) for r in rows})
    for what in ("I", "throughput"):
        fig, axes = plt.subplots(1, len(tiles), figsize=(4.2 * len(tiles), 3.6), squeeze=False)
        for ax, tile in zip(axes[0], tiles):
            sub = [r for r in rows if int(r["tile"]) == tile]
            if what == "I":
                plot_lines(ax, [r for r in sub if r["map"] != "bb"], "I", f"tile {tile}",
                           "I = t_bb / t_map", baseline=1.0)
            else:
                plot_lines(ax, sub, "rate", f"tile {tile}", f"unique {unit}/s")
                if ceiling:
                    ax.axhline(ceiling, color="red", linewidth=1, linestyle=":",
                               label="issue ceiling")
                ax.set_yscale("log")
        axes[0][-1].legend(fontsize=7)
        kernel = "contact pair" if suite == "pairs" else "ATM triplet"
        title = "I over the bounding box" if what == "I" else "throughput"
        fig.suptitle(f"{kernel} kernel through the CUDA backend: {title}, {gpu}", fontsize=10)
        fig.tight_layout()
        written.append(save(fig, dirname, f"{suite}_{what}.png"))


def number(text):
    """A float from a CSV field, None when empty or not a number."""
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def write_figure(fig, out):
    """fig into out: '-' is standard output (PNG); a FIFO or a device is written directly; else a
    temporary beside out, renamed into place when complete. The format is out's extension's, PNG
    without one. 0, or one line on stderr and 2 (a format matplotlib does not write) or 1 (a write
    error: the path keeps what it had)."""
    import stat
    import tempfile
    if out == "-":
        try:
            fig.savefig(sys.stdout.buffer, format="png", dpi=90)
            sys.stdout.buffer.flush()
        except OSError as e:
            print(f"plot.py: cannot write the picture to standard output: {e.strerror or e}",
                  file=sys.stderr)
            return 1
        return 0
    fmt = os.path.splitext(out)[1][1:].lower() or "png"
    formats = fig.canvas.get_supported_filetypes()
    if fmt not in formats:
        print(f"plot.py: '{out}': matplotlib does not write .{fmt} (it writes "
              f"{', '.join('.' + f for f in sorted(formats))})", file=sys.stderr)
        return 2
    try:
        target = os.path.realpath(out)
        try:
            direct = not stat.S_ISREG(os.stat(target).st_mode)
        except FileNotFoundError:
            direct = False
        if direct:  # a FIFO or a device: a rename would replace it
            with open(target, "wb") as f:
                fig.savefig(f, format=fmt, dpi=90)
            return 0
        folder = os.path.dirname(target) or "."
        fd, temp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(target) + ".",
                                    suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                fig.savefig(f, format=fmt, dpi=90)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(temp, 0o666 & ~umask())
            os.replace(temp, target)
        except BaseException:
            os.unlink(temp)
            raise
    except OSError as e:
        print(f"plot.py: cannot write '{out}': {e.strerror or e}", file=sys.stderr)
        return 1
    return 0


def umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def plot_timing_log(path, out):
    """The per-frame timing log of nbsim --log: kernel ms per step, map switches, energies."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        rows = list(reader)
    if not rows or "frame" not in fields:
        print(f"plot.py: {path} is not an nbsim timing log with rows (no 'frame' column or no rows)",
              file=sys.stderr)
        return 1
    frame = [number(r["frame"]) or 0.0 for r in rows]
    steps = [max(1.0, number(r.get("steps")) or 1.0) for r in rows]
    energy_cols = [c for c in ("kinetic", "potential", "total_energy") if c in fields]
    has_energy = any(number(r.get(c)) is not None for r in rows for c in energy_cols)
    fig, axes = plt.subplots(2 if has_energy else 1, 1, figsize=(8.0, 6.4 if has_energy else 3.8),
                             squeeze=False)
    ax = axes[0][0]
    positive = []
    for col in (c for c in fields if c.endswith("_ms")):
        values = [number(r.get(col)) for r in rows]
        if col == "dump_ms":  # per dumped frame, only where a frame was dumped
            pts = [(x, v) for x, v in zip(frame, values) if v is not None and v > 0.0]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "x", markersize=4,
                        label="dump_ms (per dumped frame)")
                positive += [p[1] for p in pts]
            continue
        ys = [v / s if v is not None else float("nan") for v, s in zip(values, steps)]
        if not any(y > 0.0 for y in ys if y == y):
            continue  # a phase that did not run (triplets off)
        # step_ms is the sum of the others: dashed, so the phase it covers stays visible.
        ax.plot(frame, ys, linewidth=1.0, label=col,
                **({"linestyle": "--", "color": "black"} if col == "step_ms" else {}))
        positive += [y for y in ys if y == y and y > 0.0]
    if positive and max(positive) / min(positive) > 50.0:
        ax.set_yscale("log")
    # Map switches: where pair_map, triplet_map or tile differs from the row before.
    keys = [k for k in ("pair_map", "triplet_map", "tile") if k in fields]
    for prev, row, x in zip(rows, rows[1:], frame[1:]):
        changed = [f"{k.replace('_map', '')} {row[k]}" for k in keys if row[k] != prev[k]]
        if changed:
            ax.axvline(x, color="black", linestyle="--", linewidth=0.8, alpha=0.6)
            ax.annotate(", ".join(changed), (x, 1.0), xycoords=("data", "axes fraction"),
                        rotation=90, va="top", ha="right", fontsize=7)
    first = rows[0]
    where = first.get("gpu", "") or first.get("backend", "")
    maps = ", ".join(f"{k} {first[k]}" for k in keys)
    ax.set_title(f"{first.get('n', '?')} bodies on {where}: {maps}", fontsize=9)
    ax.set_xlabel("frame")
    ax.set_ylabel("ms per step")
    ax.grid(True, alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    if has_energy:
        ax = axes[1][0]
        for col in energy_cols:
            pts = [(number(r.get("sim_time")), number(r.get(col))) for r in rows]
            pts = [p for p in pts if p[0] is not None and p[1] is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", markersize=3,
                        linewidth=1.0, label=col)
        ax.set_xlabel("simulated time [s]")
        ax.set_ylabel("energy [J]")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    status = write_figure(fig, out)
    plt.close(fig)
    if status == 0 and out != "-":
        print(f"plot: {out}")
    return status


def plot_scaling(dirname, suite, written):
    """scaling_<suite>.csv (nbsim bench --gpus): speed-up over GPUs per map and N, ideal dashed."""
    path = os.path.join(dirname, f"scaling_{suite}.csv")
    if not os.path.exists(path):
        return
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    series = {}
    for r in rows:
        try:
            key = (r["map"], int(r["N"]), r["culled"] == "1")
            series.setdefault(key, []).append((int(r["gpus"]), float(r["speedup"]),
                                               float(r["comm_share"])))
        except (KeyError, ValueError):
            continue
    if not series:
        return
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    top = 1
    for (name, n, culled), pts in sorted(series.items()):
        pts.sort()
        g = [p[0] for p in pts]
        top = max(top, max(g))
        label = f"{name} N={n}{' culled' if culled else ''}"
        kw = style(name, False)
        kw["linestyle"] = ":" if culled else "-"
        ax.plot(g, [p[1] for p in pts], label=label, **kw)
        bx.plot(g, [100.0 * p[2] for p in pts], label=label, **kw)
    ax.plot([1, top], [1, top], "k--", linewidth=0.8, label="ideal")
    ax.set_xlabel("GPUs")
    ax.set_ylabel("speed-up")
    ax.set_title(f"{suite}: speed-up over GPUs ({rows[0].get('gpu', '')})", fontsize=9)
    bx.set_xlabel("GPUs")
    bx.set_ylabel("all-reduce share of the step [%]")
    bx.set_title("NCCL share", fontsize=9)
    for a in (ax, bx):
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    written.append(save(fig, dirname, f"scaling_{suite}.png"))


def main(argv):
    args = argv[1:]
    out = None
    if "--out" in args:
        i = args.index("--out")
        if i + 1 >= len(args):
            print("plot.py: --out needs a file name", file=sys.stderr)
            return 2
        out = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1 or not os.path.exists(args[0]):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if plt is None:
        print(no_matplotlib_message(), file=sys.stderr)
        return 1
    if os.path.isfile(args[0]):
        return plot_timing_log(args[0], out or os.path.splitext(args[0])[0] + ".png")
    dirname = args[0]
    written = []
    pair_ceiling, triple_ceiling = ceilings(dirname)
    for name in ("bb", "ltm", "rb", "utm", "rec", "rm", "tetra", "full"):
        style(name, False)  # fixed colours for the exact maps, paper variants after them
    plot_maps(dirname, written)
    plot_sim(dirname, "pairs", pair_ceiling, written)
    plot_sim(dirname, "triplets", triple_ceiling, written)
    plot_scaling(dirname, "pairs", written)
    plot_scaling(dirname, "triplets", written)
    if written:
        print(f"plots: {len(written)} PNG files in {dirname}/")
    else:
        print(f"plots: no results to plot in {dirname}/")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
