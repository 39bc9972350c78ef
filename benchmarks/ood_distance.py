#!/usr/bin/env python3
"""Does a real network's distance from the training graphs tell where a predictor is wrong?

For every measured (network, batch) of a real-network file (benchmarks/real_networks.py's, the
networks it holds out left out), the mean Euclidean distance to the 5 nearest training graphs of
a PerfGraph dataset, in standardised features: the global vector, the pooled node features (mean
and max over the graph's nodes), and both. Prints, per metric, the Spearman correlation of that
distance with the predictor's error |log(pred / measured)| (and of the members' spread, for
comparison), and the MAPE beyond and within the distance that 99 in 100 training graphs stay
under (leave-one-out over 500 of them, seeded).

  /usr/bin/python3 benchmarks/ood_distance.py --h5 W/cpu_xeon26.h5 --predictor predictors/cpu_xeon26.seer \\
      --device cpu_xeon26 --real benchmarks/real_networks_xeon26.jsonl --work /tmp/seer-real-networks
"""
import argparse
import json
import os
import sys

import h5py
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import real_networks as rn  # noqa: E402
import seer  # noqa: E402

FIELDS = (("train_ms", "train_time_ms"), ("infer_ms", "infer_time_ms"), ("train_mb", "train_mem_mb"))


def pooled(x):
    return np.concatenate([x.mean(0), x.max(0)])


def knn(T, X, k=5, skip_self=False):
    out = []
    for x in X:
        d = np.sort(np.sqrt(((T - x) ** 2).sum(1)))
        out.append(d[1:k + 1].mean() if skip_self else d[:k].mean())
    return np.array(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--h5", required=True, help="the predictor's training dataset (PerfGraph)")
    ap.add_argument("--predictor", required=True)
    ap.add_argument("--device", required=True, help="the label prefix, e.g. cpu_xeon26")
    ap.add_argument("--real", required=True, help="real_networks.py measurements (JSON lines)")
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="the ONNX exports")
    a = ap.parse_args()
    with h5py.File(a.h5, "r") as f:
        gx = f["global/x"][:].astype(np.float64)
        nptr, nx = f["graph/node_ptr"][:], f["node/x"][:].astype(np.float64)
    tp = np.array([pooled(nx[nptr[i]:nptr[i + 1]]) for i in range(len(nptr) - 1)])
    m = seer.Model(a.predictor)
    rows = []
    for line in open(a.real):
        r = json.loads(line)
        p = os.path.join(a.work, r["name"] + ".onnx")
        if "train_time_ms" not in r or r["name"] in rn.HELD_OUT or not os.path.exists(p):
            continue
        g = seer.onnx_graph(p, batch=r["batch"])
        rows.append((g[3].astype(np.float64), pooled(g[0].astype(np.float64)), m.predict_onnx(p, batch=r["batch"]),
                     m.member_spread(*g), r))
    if len(rows) < 10:
        sys.exit("ood_distance: %d configurations with an ONNX export in %s: too few" % (len(rows), a.work))
    print("ood_distance: %d configurations of %s; %d training graphs of %s" % (len(rows), a.real, len(gx), a.h5))
    print("| features | training graphs: median / q99 | real: median | metric | Spearman, distance | Spearman, "
          "members' spread | beyond q99: configs, MAPE % | within: configs, MAPE % |")
    print("|---|---|---|---|---|---|---|---|")
    for name, T, X in (("global", gx, np.array([r[0] for r in rows])), ("pooled nodes", tp, np.array([r[1] for r in rows])),
                       ("both", np.hstack([gx, tp]), np.hstack([[r[0] for r in rows], [r[1] for r in rows]]))):
        mu, sd = T.mean(0), T.std(0) + 1e-9
        T, X = (T - mu) / sd, (X - mu) / sd
        d = knn(T, X)
        ref = knn(T, T[np.random.default_rng(0).choice(len(T), min(500, len(T)), replace=False)], skip_self=True)
        q = np.quantile(ref, 0.99)
        for met, fld in FIELDS:
            key = "%s_%s" % (a.device, met)
            ape = np.array([abs(r[2][key] / r[4][fld] - 1) for r in rows])
            err = np.abs(np.log([r[2][key] / r[4][fld] for r in rows]))
            s = np.array([r[3][key] for r in rows])
            far = d > q
            mape = lambda sel: "%d, %.1f" % (sel.sum(), 100 * ape[sel].mean()) if sel.any() else "0, -"  # noqa: E731
            print("| %s | %.2f / %.2f | %.2f | %s | %.2f | %.2f | %s | %s |" % (
                name, np.median(ref), q, np.median(d), met, rn.spearman(d, err), rn.spearman(s, err),
                mape(far), mape(~far)))


if __name__ == "__main__":
    main()
