# SPDX-License-Identifier: MIT
"""What the GPU scripts' summaries share (gpu_nlist.sh, gpu_friction.sh, gpu_periodic.sh): the
rows of cull_timing's CSV, a number from a row, and a Markdown report printed as it is written.
The scripts run their summaries with PYTHONPATH set to this folder."""
import csv


def read_rows(path):
    """The CSV's rows as dicts; none when the file is missing (every run failed)."""
    try:
        with open(path) as f:
            return list(csv.DictReader(f))
    except OSError:
        return []


def num(row, key):
    """row[key] as a number; 0 when absent or empty (a run that failed leaves blanks)."""
    try:
        return float(row[key])
    except (KeyError, ValueError):
        return 0.0


class Report:
    """line(text) prints a line and keeps it; write(path) saves the kept lines as a file."""

    def __init__(self):
        self.lines = []

    def __call__(self, text=""):
        self.lines.append(text)
        print(text)

    def write(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
