#!/usr/bin/env python3
"""The metric of a seersweep against each swept parameter, one panel per parameter.

    sweep_plot.py SWEEP_DIR/results.csv OUT.png

Trials that finished the last rung are filled, those stopped early by successive halving hollow,
failed ones left out; log-scale axes for parameters spanning more than a factor 20. Needs
python3-matplotlib (Debian).
"""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    rows = list(csv.DictReader(open(src)))
    head = list(rows[0].keys()) if rows else []
    metric = head[4]
    params = head[5:head.index("run_dir")]
    rows = [r for r in rows if r["status"] != "failed" and r[metric] not in ("", "nan")]
    fig, axes = plt.subplots(1, max(len(params), 1), figsize=(4 * max(len(params), 1), 3.4), squeeze=False)
    for ax, p in zip(axes[0], params):
        vals = [r[p] for r in rows]
        try:
            xs = [float(v) for v in vals]
            numeric = True
        except ValueError:
            cats = sorted(set(vals))
            xs = [cats.index(v) for v in vals]
            numeric = False
        ys = [float(r[metric]) for r in rows]
        done = [r["status"] == "done" for r in rows]
        ax.scatter([x for x, d in zip(xs, done) if d], [y for y, d in zip(ys, done) if d], label="finished")
        ax.scatter([x for x, d in zip(xs, done) if not d], [y for y, d in zip(ys, done) if not d],
                   facecolors="none", edgecolors="gray", label="stopped early")
        if numeric and xs and min(xs) > 0 and max(xs) / min(xs) > 20:
            ax.set_xscale("log")
        if not numeric:
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels(cats)
        ax.set_xlabel(p)
        ax.set_ylabel(metric)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main()
