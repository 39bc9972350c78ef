#!/usr/bin/env python3
"""Build datasets/nb201.h5: the NAS-Bench-201 CIFAR-10 network of every cell as a PerfGraph,
with every measured latency column of datasets/nb201/nasbench201_latency_ms.csv as a label.

Network (NAS-Bench-201 'TinyNetwork'): 3x3 conv stem (16 channels, no bias) + BN; three stages of
five cells at 16, 32, 64 channels (32x32, 16x16, 8x8) with a residual reduction block between
stages; BN + ReLU; global average pool; linear layer to 10 classes. Cell ops: nor_conv_kxk =
ReLU, Conv (no bias), BN; avg_pool_3x3 = AveragePool 3x3 stride 1; skip_connect = identity;
'none' edges are dropped. A value with no producer (a cell node that only 'none' edges reach) is
a zero tensor: operators that consume it keep their node but get no incoming edge.

Usage: nb201_build.py [--csv CSV] [-o OUT.h5] [--limit N] [--batch B]
"""
import argparse
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfgraph as pg  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def parse_arch(arch):
    """'|op~0|+|op~0|op~1|+|op~0|op~1|op~2|' -> [[(op, j)], [(op, j), ...], ...] for nodes 1..3."""
    nodes = []
    for part in arch.strip("|").split("|+|"):
        edges = []
        for tok in part.strip("|").split("|"):
            op, j = tok.split("~")
            edges.append((op, int(j)))
        nodes.append(edges)
    if len(nodes) != 3 or [len(n) for n in nodes] != [1, 2, 3]:
        raise ValueError("not a NAS-Bench-201 cell string: %r" % arch)
    return nodes


def relu_conv_bn(g, x, cout, k, stride, pad):
    n, c, h, w = x[1]
    oh = (h + 2 * pad - k) // stride + 1
    ow = (w + 2 * pad - k) // stride + 1
    r = g.add("Relu", [x], x[1])
    y = g.add("Conv", [r], [n, cout, oh, ow], kernel=(k, k), stride=(stride, stride),
              pad=(pad, pad), groups=1, bias=False)
    return g.add("BatchNormalization", [y], y[1])


def add_values(g, vals, shape):
    """Sum of values, dropping zero tensors (producer None with the zero marker)."""
    live = [v for v in vals if v is not None]
    if not live:
        return None
    acc = live[0]
    for v in live[1:]:
        acc = g.add("Add", [acc, v], shape)
    return acc


def cell(g, x, spec, shape):
    """x is a value or None (zero tensor of `shape`)."""
    zero = (None, shape)
    states = [x]
    for edges in spec:
        contrib = []
        for op, j in edges:
            src = states[j]
            if op == "none":
                continue
            if op == "skip_connect":
                contrib.append(src)
                continue
            inp = src if src is not None else zero
            if op == "nor_conv_1x1":
                contrib.append(relu_conv_bn(g, inp, shape[1], 1, 1, 0))
            elif op == "nor_conv_3x3":
                contrib.append(relu_conv_bn(g, inp, shape[1], 3, 1, 1))
            elif op == "avg_pool_3x3":
                contrib.append(g.add("AveragePool", [inp], shape, kernel=(3, 3), stride=(1, 1),
                                     pad=(1, 1)))
            else:
                raise ValueError("unknown NAS-Bench-201 op %r" % op)
        states.append(add_values(g, contrib, shape))
    return states[3]


def reduction(g, x, shape, cout):
    n, c, h, w = shape
    inp = x if x is not None else (None, shape)
    a = relu_conv_bn(g, inp, cout, 3, 2, 1)
    b = relu_conv_bn(g, a, cout, 3, 1, 1)
    p = g.add("AveragePool", [inp], [n, c, h // 2, w // 2], kernel=(2, 2), stride=(2, 2),
              pad=(0, 0))
    s = g.add("Conv", [p], [n, cout, h // 2, w // 2], kernel=(1, 1), stride=(1, 1), pad=(0, 0),
              groups=1, bias=False)
    return g.add("Add", [b, s], [n, cout, h // 2, w // 2])


def build(arch, batch=1):
    spec = parse_arch(arch)
    g = pg.Graph(batch)
    x = (None, [batch, 3, 32, 32])
    x = g.add("Conv", [x], [batch, 16, 32, 32], kernel=(3, 3), stride=(1, 1), pad=(1, 1),
              groups=1, bias=False)
    x = g.add("BatchNormalization", [x], x[1])
    shape = [batch, 16, 32, 32]
    for stage, c in enumerate((16, 32, 64)):
        if stage:
            x = reduction(g, x, shape, c)
            shape = [batch, c, shape[2] // 2, shape[3] // 2]
        for _ in range(5):
            x = cell(g, x, spec, shape)
    inp = x if x is not None else (None, shape)
    x = g.add("BatchNormalization", [inp], shape)
    x = g.add("Relu", [x], shape)
    x = g.add("GlobalAveragePool", [x], [batch, 64, 1, 1])
    x = g.add("Flatten", [x], [batch, 64])
    g.add("Gemm", [x], [batch, 10], bias=True)
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--csv", default=os.path.join(ROOT, "datasets/nb201/nasbench201_latency_ms.csv"))
    ap.add_argument("-o", "--out", default=os.path.join(ROOT, "datasets/nb201.h5"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N cells (0: all)")
    ap.add_argument("--batch", type=int, default=1, help="batch size of the graph features")
    args = ap.parse_args()

    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    if header[:2] != ["idx", "arch_str"]:
        sys.exit("%s: line 1: expected columns idx,arch_str,...; got %s" % (args.csv, header[:2]))
    if args.limit:
        rows = rows[:args.limit]
    label_names = [c + "_ms" for c in header[2:]]
    graphs, labels, names, groups = [], [], [], []
    t0 = time.time()
    tty = sys.stderr.isatty()
    for i, row in enumerate(rows):
        if len(row) != len(header):
            sys.exit("%s: line %d: %d columns, expected %d" % (args.csv, i + 2, len(row), len(header)))
        idx = int(row[0])
        graphs.append(build(row[1], args.batch).features()[:5])
        labels.append([float(v) for v in row[2:]])
        names.append("nb201/%05d@bs%d" % (idx, args.batch))
        groups.append(idx)
        if tty and (i + 1) % 250 == 0:
            rate = (i + 1) / (time.time() - t0)
            sys.stderr.write("\rnb201: %d/%d cells, %.0f/s, ETA %.0fs " %
                             (i + 1, len(rows), rate, (len(rows) - i - 1) / rate))
    if tty:
        sys.stderr.write("\n")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    pg.write_h5(args.out, graphs, labels, label_names, names, groups,
                source="NAS-Bench-201 cells, HELP latency table (MIT), scripts/datasets/nb201_build.py",
                device="various (one label column per device and batch)")
    n = sum(len(g[1]) for g in graphs)
    e = sum(len(g[2]) for g in graphs)
    print("wrote %s: %d graphs, %d nodes, %d edges, %d labels in %.1fs" %
          (args.out, len(graphs), n, e, len(label_names), time.time() - t0))


if __name__ == "__main__":
    main()
