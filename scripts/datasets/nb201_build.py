#!/usr/bin/env python3
"""Build datasets/nb201.h5: the NAS-Bench-201 CIFAR-10 network of every cell, written as a
weight-stripped ONNX model and converted by seerconvert, with every measured latency column of
datasets/nb201/nasbench201_latency_ms.csv as a label (<column>_ms).

Network (NAS-Bench-201 'TinyNetwork'): 3x3 conv stem (16 channels, no bias) + BN; three stages of
five cells at 16, 32, 64 channels (32x32, 16x16, 8x8) with the benchmark's residual reduction
block between stages (ReLU-Conv3x3/s2-BN, ReLU-Conv3x3-BN, shortcut AvgPool2x2/s2 + Conv1x1);
BN + ReLU; global average pool; linear layer to 10 classes. Cell node i = sum over j < i of
op(j -> i)(node j), output node 3; nor_conv_kxk = ReLU, Conv (no bias), BN; avg_pool_3x3 =
AveragePool 3x3 stride 1 pad 1 (count_include_pad 0); skip_connect = identity.

The cell is written as the benchmark's own code runs it (--none-edges zero, the default):
NAS-Bench-201's InferCell sums its inputs with Python's sum(), so a node is Add(0, first input)
then an Add per further input, and a 'none' edge is its Zero operation, x * 0 (a Mul with the
scalar 0): kernels the measured latencies include and torch.onnx.export of that code writes.
--none-edges drop writes the graph the builder wrote before 2026-12-03: 'none' edges dropped,
n - 1 Adds for n inputs, a node that only 'none' edges reach a zero tensor (a ConstantOfShape, not
an operator of the PerfGraph) whose readers get no edge; it is --brpnas's default. Which graph a
table's latencies follow depends on the code that ran the network: the roofline cost fitted on
each column (benchmarks/RESULTS.md, "The NAS-Bench-201 cell as its code runs it") fits HELP's
own GPU measurements better on the zero graph (Titan RTX at batch 1: 5.6% against 8.4%) and
HW-NAS-Bench's FPGA, Eyeriss and phone columns, compiled by other toolchains, better on the
dropped one (FPGA 5.4% against 7.7%), so the GPU dataset is written as the code runs and
BRP-NAS's protocol, whose six devices are mostly of the latter kind, keeps what its table was
measured on. The ONNX files are named by the mode (cell_00000.zero.onnx), so a folder built in
one mode is never read as the other.

The default follows DESIGN.md's label convention (datasets/nb201.h5): a graph per cell and
measured batch (1, 32, 256: 46,875 graphs), a label per device, `<device>_infer_ms` (NaN where
the device was not measured at that batch), /graph/family nb201: the same labels as
datasets/fbnet.h5, so the two spaces train and score together. configs/multi.ini trains on it.

--brpnas writes BRP-NAS's protocol instead (datasets/nb201_brpnas.h5): one graph per cell at
--batch (1), with every latency column as its own label `<column>_ms` (`titan_rtx_256_ms` is the
Titan RTX at batch 256 although the graph is at batch 1): the table configs/brpnas/*.ini and
benchmarks/accuracy_nb201.py reproduce.

usage: nb201_build.py [--csv CSV] [-o OUT.h5] [--limit N] [--brpnas [--batch B]]
                      [--none-edges zero|drop] [--onnx-dir DIR] [--seerconvert PATH] [--threads N]
"""
import argparse
import csv
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_writer  # noqa: E402
from help_labels import label_columns, row_labels  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
NONE_EDGES = ("zero", "drop")


def parse_arch(arch):
    """'|op~0|+|op~0|op~1|+|op~0|op~1|op~2|' -> [[(op, j)], [(op, j), (op, j)], [...]]"""
    nodes = []
    for part in arch.strip("|").split("|+|"):
        nodes.append([(tok.split("~")[0], int(tok.split("~")[1])) for tok in part.strip("|").split("|")])
    if [len(n) for n in nodes] != [1, 2, 3] or any(op not in OPS for n in nodes for op, _ in n):
        raise ValueError("not a NAS-Bench-201 cell string: %r" % arch)
    return nodes


class Builder(onnx_writer.Builder):
    def zeros(self, shape):
        return self.op("ConstantOfShape", [self.const_i64(shape)])

    def conv(self, x, cin, cout, k, stride, pad):
        return self.op("Conv", [x, self.weight([cout, cin, k, k])], kernel_shape=[k, k],
                       strides=[stride, stride], pads=[pad] * 4)

    def relu_conv_bn(self, x, cin, cout, k, stride, pad):
        return self.bn(self.conv(self.op("Relu", [x]), cin, cout, k, stride, pad), cout)


def build_onnx(arch, path, none_edges="zero"):
    """The network of one cell string as weight-stripped ONNX; none_edges "zero" (the benchmark's
    code: Zero ops and sum()'s leading Add of 0) or "drop" (the graph written before)."""
    if none_edges not in NONE_EDGES:
        raise ValueError("none_edges must be one of %s, not %r" % (", ".join(NONE_EDGES), none_edges))
    zero = none_edges == "zero"
    spec = parse_arch(arch)
    b = Builder()
    shape = ["batch", 3, 32, 32]
    x = b.bn(b.conv("input", 3, 16, 3, 1, 1), 16)

    def value(v, c, hw):
        return v if v is not None else b.zeros([1, c, hw, hw])

    c, hw = 16, 32
    for stage, width in enumerate((16, 32, 64)):
        if stage:
            inp = value(x, c, hw)
            a = b.relu_conv_bn(b.relu_conv_bn(inp, c, width, 3, 2, 1), width, width, 3, 1, 1)
            s = b.conv(b.op("AveragePool", [inp], kernel_shape=[2, 2], strides=[2, 2]), c, width, 1, 1, 0)
            x = b.op("Add", [a, s])
            c, hw = width, hw // 2
        for _ in range(5):
            states = [x]
            for edges in spec:
                contrib = []
                for op, j in edges:
                    src = states[j]
                    if op == "none":
                        if zero:  # Zero(stride 1): x.mul(0.)
                            contrib.append(b.op("Mul", [value(src, c, hw), b.const_f32(0.0)]))
                        continue
                    if op == "skip_connect":
                        if src is not None:
                            contrib.append(src)
                        continue
                    inp = value(src, c, hw)
                    if op == "nor_conv_1x1":
                        contrib.append(b.relu_conv_bn(inp, c, c, 1, 1, 0))
                    elif op == "nor_conv_3x3":
                        contrib.append(b.relu_conv_bn(inp, c, c, 3, 1, 1))
                    else:
                        contrib.append(b.op("AveragePool", [inp], kernel_shape=[3, 3], strides=[1, 1],
                                            pads=[1, 1, 1, 1], count_include_pad=0))
                acc = contrib[0] if contrib else None
                if zero:  # sum() starts from 0: 0 + first input is a kernel of its own
                    acc = b.op("Add", [acc, b.const_f32(0.0)])
                for v in contrib[1:]:
                    acc = b.op("Add", [acc, v])
                states.append(acc)
            x = states[3]
    x = b.op("Relu", [b.bn(value(x, c, hw), c)])
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x])])
    b.save(path, "nb201", shape, (x, 64), 10, "seer nb201_build")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--csv", default=os.path.join(ROOT, "datasets/nb201/nasbench201_latency_ms.csv"))
    ap.add_argument("-o", "--out", default=os.path.join(ROOT, "datasets/nb201.h5"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N cells (0: all)")
    ap.add_argument("--brpnas", action="store_true",
                    help="BRP-NAS's protocol: a graph per cell at --batch, a label per latency column")
    ap.add_argument("--batch", type=int, default=1, help="--brpnas: batch size of the graphs")
    ap.add_argument("--none-edges", choices=NONE_EDGES, default=None,
                    help="zero: the cell as NAS-Bench-201's code runs it (Zero ops, sum()'s Adds; the "
                         "default); drop: 'none' edges left out (the graph before 2026-12-03; the "
                         "default of --brpnas)")
    ap.add_argument("--onnx-dir", default=None, help="where the ONNX files go (default: OUT's folder/nb201_onnx)")
    ap.add_argument("--seerconvert", default=os.path.join(ROOT, "build/seerconvert"))
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    args.per_batch = not args.brpnas
    if args.none_edges is None:
        args.none_edges = "drop" if args.brpnas else "zero"
    if args.brpnas and args.out == os.path.join(ROOT, "datasets/nb201.h5"):
        args.out = os.path.join(ROOT, "datasets/nb201_brpnas.h5")
    if not os.access(args.seerconvert, os.X_OK):
        sys.exit("nb201_build: %s not found: build Seer first (sh scripts/setup.sh)" % args.seerconvert)
    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    if header[:2] != ["idx", "arch_str"]:
        sys.exit("%s: line 1: expected columns idx,arch_str,...; got %s" % (args.csv, header[:2]))
    if args.limit:
        rows = rows[:args.limit]
    out_dir = os.path.dirname(os.path.abspath(args.out))
    onnx_dir = args.onnx_dir or os.path.join(out_dir, "nb201_onnx")
    os.makedirs(onnx_dir, exist_ok=True)
    manifest = os.path.join(onnx_dir, "manifest.csv" if args.per_batch else "manifest_brpnas.csv")
    cols, labels = label_columns(header[2:])
    t0 = time.time()
    tty = sys.stderr.isatty()
    with open(manifest, "w") as m:
        if args.per_batch:
            m.write("onnx,batch,name,group,family," + ",".join(labels) + "\n")
        else:
            m.write("onnx,batch,name,group," + ",".join(c + "_ms" for c in header[2:]) + "\n")
        for i, row in enumerate(rows):
            if len(row) != len(header):
                sys.exit("%s: line %d: %d columns, expected %d" % (args.csv, i + 2, len(row), len(header)))
            idx = int(row[0])
            name = "cell_%05d.%s.onnx" % (idx, args.none_edges)
            path = os.path.join(onnx_dir, name)
            if not os.path.exists(path):
                build_onnx(row[1], path, args.none_edges)
            if args.per_batch:
                for bs in (1, 32, 256):
                    m.write("%s,%d,nb201/%05d@bs%d,%d,nb201,%s\n" % (name, bs, idx, bs, idx,
                                                                   ",".join(row_labels(cols, labels, row[2:], bs))))
            else:
                m.write("%s,%d,nb201/%05d@bs%d,%d,%s\n" % (name, args.batch, idx, args.batch, idx, ",".join(row[2:])))
            if tty and (i + 1) % 250 == 0:
                rate = (i + 1) / (time.time() - t0)
                sys.stderr.write("\rnb201: %d/%d ONNX files, %.0f/s, ETA %.0fs " % (i + 1, len(rows), rate, (len(rows) - i - 1) / rate))
    if tty:
        sys.stderr.write("\n")
    print("nb201: %d ONNX models in %s (%.1fs)" % (len(rows), onnx_dir, time.time() - t0))
    cmd = [args.seerconvert, "--manifest", manifest, "-o", args.out,
           "--source", "NAS-Bench-201 cells (HELP latency table, MIT), scripts/datasets/nb201_build.py "
                       "--none-edges %s" % args.none_edges,
           "--device", "various (a label per device)" if args.per_batch else
           "various (one label column per device and batch)"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
