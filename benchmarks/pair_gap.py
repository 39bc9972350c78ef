#!/usr/bin/env python3
"""Would a warning on operator pairs the training data never had tell which real networks a
predictor gets wrong?

A reparameterisable network in its training form (MobileOne, RepGhostNet, FastViT) holds only
operators the design space has, yet puts them in an order it never had (a BatchNormalization fed
by a ReLU or by another BatchNormalization: the identity branch), and the shipped predictors time
it 20-40% fast without a warning. The remedy considered: record in the .seer file the (producer,
consumer) operator pairs of the training graphs' edges and warn on a pair never seen. This script
measures that warning before it is built: for every measured (network, batch) of a real-network
file (real_networks.py's; the networks it holds out left out) it lists the pairs of the network's
Seer graph (seer.onnx_graph, as libseer sees it) that no edge of the training dataset had (pairs
with an operator never seen at all are left to the operator warning), and prints the MAPE and the
mean signed error of the configurations it would warn on against the others, then per pair.

    /usr/bin/python3 benchmarks/pair_gap.py --h5 TRAIN.h5 --predictor predictors/cpu_xeon26.seer \\
        --device cpu_xeon26 --real benchmarks/real_networks_xeon26.jsonl

TRAIN.h5: the predictor's training dataset (scripts/space/make_dataset.py on the measurement lines
it was trained on); every graph of it is counted, the validation and test splits too, so the
pairs seen are if anything more than the training split's and the warning fires if anything less.
"""
import argparse
import collections
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import real_networks as rn  # noqa: E402
import seer  # noqa: E402

FIELDS = (("train_ms", "train_time_ms"), ("infer_ms", "infer_time_ms"), ("train_mb", "train_mem_mb"))


def train_pairs(path):
    """(op names, op counts, pair counts (n, n): edges from op i to op j) of a PerfGraph file."""
    import h5py
    with h5py.File(path, "r") as f:
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in f["schema/op_types"][:]]
        op, ei = f["node/op"][:].astype(np.int64), f["edge/index"][:].astype(np.int64)
        node_ptr, edge_ptr = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
    base = np.repeat(node_ptr[:-1], np.diff(edge_ptr))  # each edge's graph's first node
    n = len(names)
    pairs = np.bincount(op[ei[:, 0] + base] * n + op[ei[:, 1] + base], minlength=n * n).reshape(n, n)
    return names, np.bincount(op, minlength=n), pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--h5", required=True, help="the predictor's training dataset")
    ap.add_argument("--predictor", required=True)
    ap.add_argument("--device", required=True, help="the label prefix, e.g. cpu_xeon26")
    ap.add_argument("--real", required=True, help="real_networks.py measurements (JSON lines)")
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="the ONNX exports")
    ap.add_argument("--top", type=int, default=25, help="pairs listed, the most networks first")
    a = ap.parse_args()
    for p in (a.h5, a.predictor, a.real):
        if not os.path.exists(p):
            sys.exit("pair_gap: %s: no such file" % p)
    names, op_n, pair_n = train_pairs(a.h5)
    index = {s: i for i, s in enumerate(names)}
    onnx_names = seer.onnx_op_names()
    m = seer.Model(a.predictor)
    rows, seen = [], set()
    with open(a.real) as f:
        for line in f:
            r = json.loads(line)
            p = os.path.join(a.work, r["name"] + ".onnx")
            if "train_time_ms" not in r or r["name"] in rn.HELD_OUT or not os.path.exists(p) or \
                    (r["name"], r["batch"]) in seen:
                continue
            seen.add((r["name"], r["batch"]))
            g = seer.onnx_graph(p, batch=r["batch"])
            ops = [index.get(onnx_names[i], -1) for i in g[4]]
            gap = set()
            for s, d in g[1]:
                i, j = ops[s], ops[d]
                if min(i, j) >= 0 and op_n[i] and op_n[j] and not pair_n[i, j]:
                    gap.add("%s -> %s" % (names[i], names[j]))
            pred = m.predict_onnx(p, batch=r["batch"])
            rows.append((r["name"], gap, [pred["%s_%s" % (a.device, k)] / r[fld] - 1 for k, fld in FIELDS]))
    if len(rows) < 10:
        sys.exit("pair_gap: %d configurations with an ONNX export in %s: too few" % (len(rows), a.work))
    print("pair_gap: %d configurations of %d networks in %s; %s; %d of %d operator pairs seen in %s" % (
        len(rows), len({r[0] for r in rows}), a.real, a.predictor, int((pair_n > 0).sum()), pair_n.size, a.h5))
    print()
    print("| operator pair never in the training graphs | networks | configurations | MAPE %: training step / "
          "inference / memory | mean signed error % | the networks |")
    print("|---|---|---|---|---|---|")

    def line(label, sel, who=""):
        e = np.array([r[2] for r in sel]) * 100
        print("| %s | %d | %d | %.1f / %.1f / %.1f | %+.1f / %+.1f / %+.1f | %s |" % (
            label, len({r[0] for r in sel}), len(sel), *np.abs(e).mean(0), *e.mean(0), who))
    line("*any unseen pair: the warning*", [r for r in rows if r[1]])
    line("*none*", [r for r in rows if not r[1]])
    nets = collections.defaultdict(set)
    for name, gap, _ in rows:
        for pair in gap:
            nets[pair].add(name)
    for pair in sorted(nets, key=lambda q: (-len(nets[q]), q))[:a.top]:
        who = sorted(nets[pair])
        line(pair, [r for r in rows if pair in r[1]], ", ".join(who[:6]) + (", ..." if len(who) > 6 else ""))
    if len(nets) > a.top:
        print("\n%d more pairs, each in fewer networks." % (len(nets) - a.top))


if __name__ == "__main__":
    main()
