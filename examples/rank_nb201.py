#!/usr/bin/env python3
"""Rank NAS-Bench-201 cells by predicted latency with the Python binding of libseer.

    python3 examples/rank_nb201.py MODEL.seer [--data datasets/nb201.h5] [--batch 1]
                                   [--count 1000] [--metric titan_rtx_infer_ms] [--seed 0]

Draws `count` cells at one batch size (graphs named ...@bs<batch>; a file without batch
suffixes, such as the --brpnas one, is used whole) from the PerfGraph dataset (raw features, as seerconvert wrote them),
predicts them in one batched call, prints the ten fastest by prediction next to their measured
latency, and the rank agreement (Spearman, Kendall) with the measurements. Needs numpy and h5py
(Debian: python3-numpy, python3-h5py) and a built libseer (build/libseer.so).
"""
import argparse
import os
import sys
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import seer  # noqa: E402


def ranks(a):
    r = np.empty(len(a))
    r[np.argsort(a, kind="stable")] = np.arange(len(a))
    return r


def kendall(a, b):
    n = len(a)
    s = 0
    for i in range(n - 1):
        s += np.sum(np.sign(a[i + 1:] - a[i]) * np.sign(b[i + 1:] - b[i]))
    return s / (n * (n - 1) / 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--data", default="datasets/nb201.h5")
    ap.add_argument("--batch", type=int, default=1, help="rank the cells at this batch size")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--metric", default=None, help="metric to rank by (default: the model's first)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()

    m = seer.Model(a.model)
    names = [n for n, _ in m.metrics]
    metric = a.metric or names[0]
    if metric not in names:
        sys.exit("rank_nb201: error: the model has no metric %s (it has %s)" % (metric, ", ".join(names)))
    k = names.index(metric)
    unit = m.metrics[k][1]
    with h5py.File(a.data, "r") as f:
        node_ptr, edge_ptr = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
        gname = [s.decode() for s in f["graph/name"][:]]
        pool = [g for g, n in enumerate(gname) if n.endswith("@bs%d" % a.batch)]
        if len(set(n.rsplit("@bs", 1)[-1] for n in gname)) == 1:
            pool = list(range(len(gname)))  # one batch size in the file: every graph
        if not pool:
            sys.exit("rank_nb201: error: %s has no graph at batch %d" % (a.data, a.batch))
        ids = np.sort(np.random.default_rng(a.seed).choice(pool, size=min(a.count, len(pool)), replace=False))
        xn, xe, ei, xg = f["node/x"][:], f["edge/x"][:], f["edge/index"][:], f["global/x"][:]
        labels = [s.decode() for s in f["schema/labels"][:]]
        y = f["label/y"][:, labels.index(metric)] if metric in labels else None
    graphs = [(xn[node_ptr[g]:node_ptr[g + 1]], ei[edge_ptr[g]:edge_ptr[g + 1]],
               xe[edge_ptr[g]:edge_ptr[g + 1]], xg[g]) for g in ids]
    t0 = time.perf_counter()
    pred = m.predict_batch(graphs)[:, k]
    secs = time.perf_counter() - t0
    order = np.argsort(pred)
    print("%d cells predicted in %.3f s (%.0f cells/s), model %s (%s weights)"
          % (len(ids), secs, len(ids) / secs, a.model, m.info("dtype")))
    print("fastest ten by predicted %s:" % metric)
    print("  %-4s %-22s %12s %12s" % ("rank", "cell", "predicted", "measured"))
    for r, i in enumerate(order[:10]):
        meas = "%12.4f" % y[ids[i]] if y is not None else "%12s" % "-"
        print("  %-4d %-22s %9.4f %-2s %s" % (r + 1, gname[ids[i]], pred[i], unit, meas))
    if y is not None:
        t = y[ids]
        ok = ~np.isnan(t)
        sp = np.corrcoef(ranks(pred[ok]), ranks(t[ok]))[0, 1]
        print("rank agreement with the measurements over %d cells: Spearman %.4f, Kendall %.4f"
              % (ok.sum(), sp, kendall(pred[ok], t[ok])))


if __name__ == "__main__":
    main()
