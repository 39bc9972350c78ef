#!/usr/bin/env python3
"""Plots a person would rather look at than a table.

    run_plot.py run RUN_DIR                       RUN_DIR/predicted_vs_measured.png (the test
                                                  split, test_predictions.csv) and RUN_DIR/loss.png
                                                  (metrics.jsonl: training and validation loss,
                                                  validation MAPE per label)
    run_plot.py data PRED.csv DATA.h5 OUT.png     a scored dataset (seerpredict DATA.h5 --plot)

Predicted against measured on log-log axes, one panel per label, with the y = x line, the +-10%
band, and MAPE and Spearman in each title. seertrain and seerpredict call it; it needs
python3-matplotlib (Debian) and, for `data`, python3-h5py. Figures are written to a temporary
name and renamed, so a failed plot leaves no half-written file.
"""
import csv
import json
import math
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):  # average ranks for ties
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(p, y):
    rp, ry = ranks(p), ranks(y)
    n = len(p)
    mp, my = sum(rp) / n, sum(ry) / n
    cov = sum((a - mp) * (b - my) for a, b in zip(rp, ry))
    sp = math.sqrt(sum((a - mp) ** 2 for a in rp) * sum((b - my) ** 2 for b in ry))
    return cov / sp if sp > 0 else float("nan")


def panels(pairs, title, out):
    """pairs: {label: ([pred], [measured])}."""
    names = [k for k, (p, y) in pairs.items() if len(y) > 0]
    if not names:
        sys.exit("run_plot: %s: no measured values to plot" % title)
    cols = min(len(names), 3)
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 4.0 * rows), squeeze=False)
    for ax in axes.flat[len(names):]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names):
        p, y = pairs[name]
        mape = 100 * sum(abs(a - b) / b for a, b in zip(p, y)) / len(y)
        lo, hi = min(min(p), min(y)), max(max(p), max(y))
        ax.plot([lo, hi], [lo, hi], color="k", lw=0.8)
        ax.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="0.85", lw=0)
        ax.scatter(y, p, s=4, alpha=0.5, lw=0)
        ax.set_xscale("log"), ax.set_yscale("log")
        ax.set_xlabel("measured"), ax.set_ylabel("predicted")
        ax.set_title("%s\nMAPE %.2f%%  Spearman %.4f  (n %d)" % (name, mape, spearman(p, y), len(y)),
                     fontsize=9)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, out)


def save(fig, out):
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, out)
    print("run_plot: %s" % out)


def num(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) and v > 0 else None


def run(run_dir):
    pred_csv = os.path.join(run_dir, "test_predictions.csv")
    with open(pred_csv) as f:
        rows = list(csv.DictReader(f))
    labels = [k[:-5] for k in (rows[0].keys() if rows else []) if k.endswith("_pred")]
    pairs = {}
    for l in labels:
        p, y = [], []
        for r in rows:
            a, b = num(r[l + "_pred"]), num(r[l])
            if a is not None and b is not None:
                p.append(a), y.append(b)
        pairs[l] = (p, y)
    panels(pairs, "%s: test split, best checkpoint" % run_dir, os.path.join(run_dir, "predicted_vs_measured.png"))
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        log = [json.loads(line) for line in f if line.strip()]
    if not log:
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    ep = [e["epoch"] for e in log]
    a.plot(ep, [e.get("train_loss") for e in log], label="train")
    a.plot(ep, [e.get("val_loss") for e in log], label="validation")
    a.set_yscale("log"), a.set_xlabel("epoch"), a.set_ylabel("loss (standardised log target, MSE)")
    a.legend()
    for l in labels:
        b.plot(ep, [(e.get("val") or {}).get(l, {}).get("mape") for e in log], label=l)
    b.set_xlabel("epoch"), b.set_ylabel("validation MAPE %")
    b.legend(fontsize=7)
    fig.suptitle(run_dir, fontsize=10)
    fig.tight_layout()
    save(fig, os.path.join(run_dir, "loss.png"))


def data(pred_csv, h5, out):
    import h5py
    with open(pred_csv) as f:
        rows = list(csv.DictReader(f))
    with h5py.File(h5, "r") as f:
        labels = [x.decode() if isinstance(x, bytes) else x for x in f["/schema/labels"][:]]
        y = f["/label/y"][: len(rows)]
    metrics = [k for k in (rows[0].keys() if rows else []) if k not in ("name", "in_range")]
    pairs = {}
    for m in metrics:
        if m not in labels:
            continue
        j = labels.index(m)
        p, t = [], []
        for r, yy in zip(rows, y):
            a, b = num(r[m]), num(str(yy[j]))
            if a is not None and b is not None:
                p.append(a), t.append(b)
        pairs[m] = (p, t)
    panels(pairs, "%s scored with the model's predictions" % h5, out)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        run(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "data":
        data(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
