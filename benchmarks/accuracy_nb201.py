#!/usr/bin/env python3
"""Accuracy of seernet, perfsage, gcn and linear on NAS-Bench-201 with the BRP-NAS protocol.

    /usr/bin/python3 benchmarks/accuracy_nb201.py [--seeds 1,2,3] [--models seernet,perfsage,gcn,linear]
                                                  [--out benchmarks/results/accuracy_nb201.md]

For each model (configs/brpnas/<model>.ini: 900 training cells, 100 validation, the other 14,625
for test; one head per device) and each seed (the split seed and the training seed), runs
seertrain, reads the run's test_predictions.csv and computes per device Spearman, Kendall tau-b,
MAPE and the share within 10%, then averages over the seeds. Devices: titan_rtx_256, gold_6226,
pixel2, raspi4, eyeriss, fpga (BRP-NAS's six), titan_rtx_1 and 2080ti_32.

Degenerate cells, those with no path from the cell's input to its output through non-'none'
edges (their output is a constant; some raspi4/pixel values under 0.5 ms come from them), are
reported apart: the main table leaves them out of every figure, a second table gives their
count and the MAPE on them. Runs that already have a test_predictions.csv are reused (delete
checkpoints/brpnas to start over). Prints markdown; --out also writes it to a file.
"""
import argparse
import csv
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "datasets"))
from nb201_build import parse_arch  # noqa: E402

DEVICES = ["titan_rtx_256", "gold_6226", "pixel2", "raspi4", "eyeriss", "fpga", "titan_rtx_1", "2080ti_32"]
BRPNAS = {"titan_rtx_256": 0.814, "gold_6226": 0.796, "pixel2": 0.666, "raspi4": 0.847, "eyeriss": 0.811,
          "fpga": 0.801}  # HELP (NeurIPS 2021) Table 3, BRP-NAS with 900 samples, Spearman


def degenerate_cells():
    """Indexes of cells whose output is unreachable from the input through non-'none' edges."""
    bad = set()
    with open(os.path.join(ROOT, "datasets", "nb201", "nasbench201_latency_ms.csv")) as f:
        for row in csv.DictReader(f):
            spec = parse_arch(row["arch_str"])
            reach = [True, False, False, False]
            for i, node in enumerate(spec, start=1):
                reach[i] = any(op != "none" and reach[j] for op, j in node)
            if not reach[3]:
                bad.add(int(row["idx"]))
    return bad


def ranks(a):
    """Average ranks (ties share their mean rank)."""
    order = np.argsort(a, kind="mergesort")
    r = np.empty(len(a))
    sa = a[order]
    i = 0
    while i < len(a):
        j = i
        while j + 1 < len(a) and sa[j + 1] == sa[i]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2.0
        i = j + 1
    return r


def kendall_b(x, y):
    """Kendall tau-b in O(n log n) is overkill here: a vectorised O(n^2) in chunks."""
    n = len(x)
    conc = disc = tx = ty = 0
    for s in range(0, n, 2048):
        dx = np.sign(x[s:s + 2048, None] - x[None, :])
        dy = np.sign(y[s:s + 2048, None] - y[None, :])
        mask = np.arange(s, min(s + 2048, n))[:, None] < np.arange(n)[None, :]
        p = dx * dy
        conc += np.sum((p > 0) & mask)
        disc += np.sum((p < 0) & mask)
        tx += np.sum((dx == 0) & (dy != 0) & mask)
        ty += np.sum((dy == 0) & (dx != 0) & mask)
    den = np.sqrt((conc + disc + tx) * (conc + disc + ty))
    return (conc - disc) / den if den else float("nan")


def figures(truth, pred):
    ok = np.isfinite(truth)
    t, p = truth[ok], pred[ok]
    ape = np.abs(p - t) / t
    return {"n": len(t), "spearman": np.corrcoef(ranks(t), ranks(p))[0, 1], "kendall": kendall_b(t, p),
            "mape": 100 * ape.mean(), "within10": 100 * np.mean(ape <= 0.10)}


def run(model, seed):
    run_name = "%s_s%d" % (model, seed)
    path = os.path.join(ROOT, "checkpoints", "brpnas", run_name, "test_predictions.csv")
    if not os.path.exists(path):
        t0 = time.time()
        subprocess.run([os.path.join(ROOT, "build", "seertrain"), "configs/brpnas/%s.ini" % model, "--quiet",
                        "--set", "data.split_seed=%d" % seed, "--set", "train.seed=%d" % seed,
                        "--set", "output.run=%s" % run_name], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        print("  %s seed %d: trained in %.0f s" % (model, seed, time.time() - t0), file=sys.stderr)
    with open(path) as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    names = [r[1] for r in body]
    cells = np.array([int(n.split("/")[1].split("@")[0]) for n in names])
    out = {}
    for d in DEVICES:
        col = head.index(d + "_ms")
        out[d] = (np.array([float(r[col]) if r[col] else np.nan for r in body]),
                  np.array([float(r[col + 1]) for r in body]))
    return cells, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--models", default="seernet,perfsage,gcn,linear")
    ap.add_argument("--out")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    models = a.models.split(",")
    bad = degenerate_cells()
    res, degen = {}, {}
    for m in models:
        for s in seeds:
            cells, out = run(m, s)
            keep = np.array([c not in bad for c in cells])
            for d in DEVICES:
                t, p = out[d]
                res.setdefault((m, d), []).append(figures(t[keep], p[keep]))
                if (~keep).any():
                    degen.setdefault((m, d), []).append(figures(t[~keep], p[~keep]))
    nds = [x["n"] for x in degen.get((models[0], DEVICES[0]), [])]
    lines = ["Test cells per seed: %d, of which %s degenerate (reported apart); seeds %s; mean over "
             "seeds (min..max of Spearman in brackets)." % (len(cells), "%d to %d" % (min(nds), max(nds))
                                                          if nds else "none", a.seeds), ""]
    lines.append("| device | " + " | ".join("%s Spearman | %s Kendall | %s MAPE%% | %s <10%%" % (m, m, m, m) for m in models)
                 + " | BRP-NAS Spearman (HELP Tab. 3) |")
    lines.append("| --- " * (1 + 4 * len(models) + 1) + "|")
    mean = {}
    for d in DEVICES:
        cells_txt = []
        for m in models:
            f = res[(m, d)]
            sp = [x["spearman"] for x in f]
            avg = {k: np.mean([x[k] for x in f]) for k in ("spearman", "kendall", "mape", "within10")}
            mean.setdefault(m, []).append(avg)
            cells_txt.append("%.4f [%.4f..%.4f] | %.4f | %.3f | %.1f" % (avg["spearman"], min(sp), max(sp),
                                                                        avg["kendall"], avg["mape"], avg["within10"]))
        lines.append("| %s | %s | %s |" % (d, " | ".join(cells_txt), ("%.3f" % BRPNAS[d]) if d in BRPNAS else "-"))
    six = [i for i, d in enumerate(DEVICES) if d in BRPNAS]
    lines.append("| mean (BRP-NAS six) | %s | %.3f |" % (" | ".join(
        "%.4f | %.4f | %.3f | %.1f" % tuple(np.mean([mean[m][i][k] for i in six]) for k in ("spearman", "kendall", "mape", "within10"))
        for m in models), np.mean(list(BRPNAS.values()))))
    lines.append("")
    lines.append("Gap per device, seernet minus linear (mean over seeds): Spearman and MAPE points; "
                 "'beats' = higher Spearman and lower MAPE.")
    lines.append("")
    if "seernet" in models and "linear" in models:
        lines.append("| device | Spearman gap | MAPE gap | seernet beats linear |")
        lines.append("| --- | --- | --- | --- |")
        for i, d in enumerate(DEVICES):
            s, l = mean["seernet"][i], mean["linear"][i]
            lines.append("| %s | %+.4f | %+.3f | %s |" % (d, s["spearman"] - l["spearman"], s["mape"] - l["mape"],
                                                            "yes" if s["spearman"] > l["spearman"] and s["mape"] < l["mape"] else "no"))
        lines.append("")
    if degen:
        lines.append("Degenerate cells (no input-to-output path), per device: count (seed %d) and MAPE (mean "
                     "over seeds)." % seeds[0])
        lines.append("")
        lines.append("| device | cells | " + " | ".join("%s MAPE%%" % m for m in models) + " |")
        lines.append("| --- " * (2 + len(models)) + "|")
        for d in DEVICES:
            f0 = degen[(models[0], d)]
            lines.append("| %s | %d | %s |" % (d, f0[0]["n"], " | ".join("%.1f" % np.mean([x["mape"] for x in degen[(m, d)]]) for m in models)))
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        os.makedirs(os.path.dirname(a.out), exist_ok=True)
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
