#!/usr/bin/env python3
"""What separates HELP's two latency tables on the same GPU: the price of a kernel, or a fixed cost
per network?

    /usr/bin/python3 benchmarks/help_tables.py [--transfer WORK] > benchmarks/help_tables.md

Part 1, from the tables alone (datasets/nb201/ and datasets/fbnet/ CSVs): the marginal latency of
one kernel in each table, by least squares of each column on the architectures' choices.
NAS-Bench-201: latency = a + sum over edge operations of n_op c_op (n_op: that operation's edges in
all 15 cells; skip_connect, no kernel, is the baseline), and c_op divided by the kernels the
operation runs as the benchmark's code runs it (nb201_build.py --none-edges zero: a convolution
edge ReLU, Conv, BatchNorm = 3; pooling 1; 'none' x.mul(0.) 1). FBNet: latency = a + sum over
the 22 layers of c_(layer, op) (one coefficient per layer and block, skip the baseline), and for
each block the sum of its c over the layers divided by the kernels it adds over skip there (HW-
NAS-Bench's FBNet_Infer: Conv, BN, ReLU, [channel shuffle copy when g = 2], depthwise Conv, BN,
ReLU, Conv, BN, [+ input when the shape holds]; skip is nothing, or Conv, BN, ReLU when the shape
changes). Where the marginal prices agree and the totals do not, the difference is a fixed cost.

Part 2, with --transfer (benchmarks/transfer.py's work folder): for the PerfSAGE roofline model
trained on one table and scored on the other, measured = alpha + beta x predicted by least squares
over every target network, per GPU and batch: beta near 1 with alpha > 0 is a fixed cost per
network the training table did not have. MAPE as predicted, after one factor (the median ratio),
and after alpha + beta (both fitted on all networks: what each form of calibration can reach).
"""
import argparse
import csv
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = ("1080ti", "2080ti", "titan_rtx", "titanx", "titanxp")
NB_OPS = {"nor_conv_3x3": 3, "nor_conv_1x1": 3, "avg_pool_3x3": 1, "none": 1}  # kernels per edge
FB_OPS = ("k3_e1", "k3_e1_g2", "k3_e3", "k3_e6", "k5_e1", "k5_e1_g2", "k5_e3", "k5_e6")
# FBNet_Infer's CIFAR layout: (channels, layers, stride of the first) per stage, stem 16 channels
STAGES = ((16, 1, 1), (24, 4, 1), (32, 4, 2), (64, 4, 2), (112, 4, 1), (184, 4, 2), (352, 1, 1))


def fb_layers():
    """(c_in, c_out, stride) of the 22 searchable layers."""
    out, c = [], 16
    for ch, n, s in STAGES:
        for i in range(n):
            out.append((c, ch, s if i == 0 else 1))
            c = ch
    return out


def fb_kernels(op, c_in, c_out, stride):
    """The kernels block op runs at a layer, as FBNet_Infer's forward does."""
    same = c_in == c_out and stride == 1
    if op == "skip":
        return 0 if same else 3
    return 8 + ("_g2" in op) + same


def lstsq(X, y):
    A = np.column_stack([np.ones(len(y)), X])
    w, *_ = np.linalg.lstsq(A, y, rcond=None)
    return w, 100 * np.median(np.abs(A @ w - y) / y)


def part1(nb_csv, fb_csv):
    nb = list(csv.DictReader(open(nb_csv)))
    fb = list(csv.DictReader(open(fb_csv)))
    layers = fb_layers()
    Xn = np.array([[15 * [t.split("~")[0] for t in r["arch_str"].replace("+", "|").split("|") if t].count(o)
                    for o in NB_OPS] for r in nb], float)
    ops = [r["op_names"].split() for r in fb]
    Xf = np.array([[float(o[i] == b) for i in range(22) for b in FB_OPS] for o in ops])
    dk = np.array([fb_kernels(b, *layers[i]) - fb_kernels("skip", *layers[i]) for i in range(22) for b in FB_OPS], float)
    L = ["## The price of a kernel in each table", "",
         "Marginal microseconds per kernel, least squares on each column (median residual of the fit in "
         "brackets); *a*: the intercept, the time of the network with every choice at its baseline (every edge "
         "a skip; every layer a skip).", "",
         "| GPU, batch | NAS-Bench-201 conv edge | pooling | 'none' | *a* ms (fit) | FBNet " + " | ".join(FB_OPS)
         + " | *a* ms (fit) | FBNet / NAS-Bench-201, conv kernels |", "|---" * (6 + len(FB_OPS) + 2) + "|"]
    for g in GPUS:
        for b in ("1", "32"):
            col = "%s_%s" % (g, b)
            yn = np.array([float(r[col]) for r in nb])
            yf = np.array([float(r[col]) for r in fb])
            wn, rn = lstsq(Xn, yn)
            per_n = [1000 * wn[1 + i] / k for i, k in enumerate(NB_OPS.values())]  # us per kernel (one edge)
            wf, rf = lstsq(Xf, yf)
            per_f = []
            for j, op in enumerate(FB_OPS):
                sel = [i * len(FB_OPS) + j for i in range(22)]
                per_f.append(1000 * wf[1 + np.array(sel)].sum() / dk[sel].sum())
            conv_n = np.mean(per_n[:2])
            conv_f = np.mean([p for p, o in zip(per_f, FB_OPS) if "g2" not in o])
            L.append("| %s bs%s | %.1f | %.1f | %.1f | %.2f (%.1f%%) | %s | %.2f (%.1f%%) | %.2f |" % (
                g, b, conv_n, per_n[2], per_n[3], wn[0], rn, " | ".join("%.1f" % p for p in per_f), wf[0], rf,
                conv_f / conv_n))
    return L + [""]


def part2(work, nb_csv, fb_csv):
    tabs = {"fbnet": {int(r["idx"]): r for r in csv.DictReader(open(fb_csv))},
            "nb201": {int(r["idx"]): r for r in csv.DictReader(open(nb_csv))}}
    L = ["## The transfer's error: a factor or a fixed cost?", "",
         "PerfSAGE (roofline target, seed 1) trained on one table, every network of the other: measured = "
         "alpha + beta x predicted over all of them. MAPE % as predicted / after one factor / after alpha + beta.", "",
         "| direction | GPU, batch | median measured ms | median predicted ms | alpha ms | beta | MAPE | x factor | alpha + beta |",
         "|---|---|---|---|---|---|---|---|---|"]
    for src, dst in (("nb201", "fbnet"), ("fbnet", "nb201")):
        path = os.path.join(work, "%s_to_%s_perfsage_roofline.csv" % (src, dst))
        if not os.path.exists(path):
            L.append("| %s -> %s | (no %s) | | | | | | | |" % (src, dst, path))
            continue
        rows = list(csv.DictReader(open(path)))
        for g in ("1080ti", "2080ti", "titan_rtx"):
            for b in ("1", "32"):
                p, m = [], []
                for r in rows:
                    name, bs = r["name"].split("@bs")
                    if bs != b:
                        continue
                    idx = int(name.split("/")[1].split(".")[0].split("_")[-1])
                    p.append(float(r["%s_infer_ms" % g]))
                    m.append(float(tabs[dst][idx]["%s_%s" % (g, b)]))
                p, m = np.array(p), np.array(m)
                (al, be), *_ = np.linalg.lstsq(np.column_stack([np.ones(len(p)), p]), m, rcond=None)
                f = np.median(m / p)
                mape = lambda q: 100 * np.mean(np.abs(q - m) / m)  # noqa: E731
                L.append("| %s -> %s | %s bs%s | %.2f | %.2f | %+.2f | %.2f | %.1f | %.1f | %.1f |" % (
                    src, dst, g, b, np.median(m), np.median(p), al, be, mape(p), mape(f * p), mape(al + be * p)))
    return L + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nb201", default=os.path.join(ROOT, "datasets/nb201/nasbench201_latency_ms.csv"))
    ap.add_argument("--fbnet", default=os.path.join(ROOT, "datasets/fbnet/fbnet_latency_ms.csv"))
    ap.add_argument("--transfer", default=None, metavar="WORK", help="benchmarks/transfer.py's --work folder")
    a = ap.parse_args()
    for p in (a.nb201, a.fbnet):
        if not os.path.exists(p):
            raise SystemExit("help_tables.py: %s missing (the HELP tables ship in datasets/)" % p)
    cmd = " ".join(["/usr/bin/python3 benchmarks/help_tables.py"] + sys.argv[1:])
    L = ["# HELP's two latency tables, kernel by kernel", "",
         "Regenerated by `%s` on %s (the tables: `%s`, `%s`: HELP, MIT; the transfer predictions: "
         "`benchmarks/transfer.py`'s runs%s)." % (cmd, time.strftime("%Y-%m-%d"), os.path.relpath(a.nb201, ROOT),
                                                  os.path.relpath(a.fbnet, ROOT), " in `%s`" % a.transfer if a.transfer else ", not given"),
         ""] + part1(a.nb201, a.fbnet)
    if a.transfer:
        L += part2(a.transfer, a.nb201, a.fbnet)
    print("\n".join(L))


if __name__ == "__main__":
    main()
