#!/usr/bin/env python3
"""Which NAS-Bench-201 graph each latency column follows: the cells as the benchmark's code runs
them (nb201_build.py --none-edges zero) or with 'none' edges left out (--none-edges drop).

    /usr/bin/python3 benchmarks/nb201_graphs.py --zero datasets/nb201.h5 --drop DROP.h5
        [--transfer WORK/fbnet_to_nb201_cost_roofline.csv] [--fbnet datasets/fbnet.h5]

DROP.h5: `nb201_build.py --none-edges drop -o DROP.h5 --onnx-dir DIR`. For every label and batch
of both files, the roofline cost (c0 + c1 nodes + c2 FLOPs + c3 bytes, c >= 0, least squares on
the relative error over every cell) is fitted on each graph and its MAPE printed: the graph whose
totals explain a column better is the one its measurements ran. With --transfer (a prediction
file of benchmarks/transfer.py, a model trained on FBNet scored on NAS-Bench-201), the log error
log(predicted / measured) at batch 1 and 32 is regressed on the cell string's operator counts
(none, skip, 1x1 and 3x3 convolution, pooling, of six edges): MAPE as predicted, after one factor
per GPU and batch (the median), and after the operator-count fit, with the coefficients (the
six edges' counts sum to 6, so the coefficients are defined up to one common shift: compare them
with each other, e.g. 'none' against skip). With --fbnet, the median latency per graph node of the
GPUs both tables measured, at batch 1 and 32, in FBNet and in both NAS-Bench-201 graphs: what one
kernel costs in each table, the level a model trained on one carries to the other.
Prints markdown."""
import argparse
import csv
import os
import re
import sys

import h5py
import numpy as np
from scipy.optimize import nnls

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")


def totals(path):
    with h5py.File(path, "r") as h:
        dec = lambda a: [x.decode() if isinstance(x, bytes) else x for x in a[()]]
        labels, gf = dec(h["schema/labels"]), dec(h["schema/global_features"])
        g, y = h["global/x"][()], h["label/y"][()]
        nodes = np.diff(h["graph/node_ptr"][()]).astype(float)
    col = lambda n: np.expm1(g[:, gf.index(n)].astype(float))
    return labels, y, np.round(col("log_batch")), np.c_[np.ones(len(nodes)), nodes, col("log_flops_total"),
                                                         col("log_mem_total")]


def cost_mape(A, y):
    """Non-negative least squares on the relative error (columns scaled for conditioning)."""
    W = A / y[:, None]
    s = np.abs(W).max(0)
    s[s == 0] = 1
    c, _ = nnls(W / s, np.ones(len(y)))
    return 100 * np.mean(np.abs(A @ (c / s) / y - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zero", required=True)
    ap.add_argument("--drop", required=True)
    ap.add_argument("--transfer", default=None)
    ap.add_argument("--fbnet", default=None)
    ap.add_argument("--csv", default=os.path.join(ROOT, "datasets/nb201/nasbench201_latency_ms.csv"))
    a = ap.parse_args()
    lz, yz, bz, Az = totals(a.zero)
    ld, yd, bd, Ad = totals(a.drop)
    if lz != ld or not np.array_equal(bz, bd):
        sys.exit("nb201_graphs: %s and %s are not the same graphs and labels" % (a.zero, a.drop))
    print("| label | batch | cells | cost MAPE, 'none' dropped | cost MAPE, as the code runs | better |")
    print("|---|---|---|---|---|---|")
    for j, lab in enumerate(lz):
        for b in sorted(set(bz)):
            m = (bz == b) & np.isfinite(yz[:, j])
            if m.sum() < 100:
                continue
            d, z = cost_mape(Ad[m], yd[m, j]), cost_mape(Az[m], yz[m, j])
            print("| %s | %d | %d | %.2f | %.2f | %s |" % (lab, b, m.sum(), d, z, "as run" if z < d else "dropped"))
    if a.fbnet:
        print("\n| GPU | batch | FBNet us per node | NAS-Bench-201, 'none' dropped | NAS-Bench-201, as the code runs |")
        print("|---|---|---|---|---|")
        per = {}
        for path in (a.fbnet, a.drop, a.zero):
            labels, y, b, A = totals(path)
            for dev in ("1080ti", "2080ti", "titan_rtx"):
                j = labels.index(dev + "_infer_ms")
                for bs in (1, 32):
                    m = (b == bs) & np.isfinite(y[:, j])
                    per.setdefault((dev, bs), []).append(1000 * np.median(y[m, j] / A[m, 1]))
        for (dev, bs), v in per.items():
            print("| %s | %d | %.1f | %.1f | %.1f |" % (dev, bs, *v))
    if not a.transfer:
        return
    arch, meas = {}, {}
    for r in csv.DictReader(open(a.csv)):
        arch[int(r["idx"])], meas[int(r["idx"])] = r["arch_str"], r
    pred = list(csv.DictReader(open(a.transfer)))
    gpus = [c[: -len("_infer_ms")] for c in pred[0] if c.endswith("_infer_ms")]
    print("\n%s: log(predicted / measured) on the cell's operator counts\n" % os.path.basename(a.transfer))
    print("| GPU | batch | MAPE | after a factor | after the counts | none | skip | conv 1x1 | conv 3x3 | pool |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    mape = lambda e: 100 * np.mean(np.abs(np.exp(e) - 1))
    for dev in gpus:
        for bs in (1, 32):
            X, e = [], []
            for r in pred:
                m = re.match(r"nb201/(\d+)@bs(\d+)$", r["name"])
                if not m or int(m.group(2)) != bs:
                    continue
                i = int(m.group(1))
                ops = re.findall(r"([a-z_0-9]+)~\d", arch[i])
                X.append([ops.count(o) for o in OPS])
                e.append(np.log(float(r[dev + "_infer_ms"]) / float(meas[i]["%s_%d" % (dev, bs)])))
            X, e = np.array(X, float), np.array(e)
            A = np.c_[np.ones(len(e)), X]
            c, *_ = np.linalg.lstsq(A, e, rcond=None)
            print("| %s | %d | %.1f | %.1f | %.1f | %s |" % (dev, bs, mape(e), mape(e - np.median(e)), mape(e - A @ c),
                                                         " | ".join("%+.3f" % v for v in c[1:])))


if __name__ == "__main__":
    main()
