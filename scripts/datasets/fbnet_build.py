#!/usr/bin/env python3
"""Build datasets/fbnet.h5: the 5,000 FBNet architectures of HELP's latency table
(datasets/fbnet/fbnet_latency_ms.csv, MIT; see datasets/fbnet/README.md), each
written as a weight-stripped ONNX model and converted by seerconvert, one graph per architecture
and measured batch size, in the label convention of DESIGN.md: a label per device and metric,
`<device>_infer_ms`, NaN where that device was not measured at that batch.

  GPUs (1080ti, 2080ti, titan_rtx, titanx, titanxp): batch 1, 32 and 64
  CPUs, phones, raspi4, fpga, eyeriss: batch 1 only (NaN at 32 and 64)

Every graph's /graph/family is `fbnet`, its group the architecture (all batches of one
architecture share a split).

Network (FBNet as HW-NAS-Bench's FBNet_Infer defines it, CIFAR-100 setting; input 3x32x32):
stem Conv 3x3/1 to 16 channels, BN, ReLU; 22 searchable layers in stages (channels, layers,
stride of the first) (16,1,1) (24,4,1) (32,4,2) (64,4,2) (112,4,1) (184,4,2) (352,1,1); header
Conv 1x1 to 1504, BN, ReLU, global average pool, Gemm to 100. A layer (k, e, g) is Conv 1x1 to
e*C_in (groups g), BN, ReLU, a channel shuffle when g = 2, depthwise Conv kxk with the layer's
stride, BN, ReLU, Conv 1x1 to C_out (groups g), BN, plus the input when C_in == C_out and the
stride is 1; `skip` is the identity, or Conv 1x1 with the stride, BN, ReLU when the shape
changes.

usage: fbnet_build.py [--csv CSV] [-o OUT.h5] [--limit N] [--onnx-dir DIR] [--seerconvert PATH]
                      [--threads N]
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
CSV = os.path.join(ROOT, "datasets", "fbnet", "fbnet_latency_ms.csv")
OPS = {0: (3, 1, 1), 1: (3, 1, 2), 2: (3, 3, 1), 3: (3, 6, 1), 4: (5, 1, 1), 5: (5, 1, 2),
       6: (5, 3, 1), 7: (5, 6, 1), 8: None}  # index: (kernel, expansion, groups); 8 = skip
STAGES = ((16, 1, 1), (24, 4, 1), (32, 4, 2), (64, 4, 2), (112, 4, 1), (184, 4, 2), (352, 1, 1))
BATCHES = (1, 32, 64)


class Builder(onnx_writer.Builder):
    def conv(self, x, cin, cout, k, stride, groups=1):
        return self.op("Conv", [x, self.weight([cout, cin // groups, k, k])], kernel_shape=[k, k],
                       strides=[stride, stride], pads=[k // 2] * 4, group=groups)

    def shuffle(self, x, c, hw, g):
        """[N, C, H, W] -> [N, g, C/g, H, W] -> [N, C/g, g, H, W] -> [N, C, H, W]"""
        x = self.op("Reshape", [x, self.const_i64([0, g, c // g, hw, hw])])
        x = self.op("Transpose", [x], perm=[0, 2, 1, 3, 4])
        return self.op("Reshape", [x, self.const_i64([0, c, hw, hw])])


def layer(b, x, cin, cout, hw, stride, op):
    """One searchable layer; returns its output and spatial size."""
    out_hw = (hw + stride - 1) // stride
    if OPS[op] is None:  # skip
        if cin == cout and stride == 1:
            return x, hw
        return b.op("Relu", [b.bn(b.conv(x, cin, cout, 1, stride), cout)]), out_hw
    k, e, g = OPS[op]
    mid = e * cin
    y = b.op("Relu", [b.bn(b.conv(x, cin, mid, 1, 1, g), mid)])
    if g == 2:
        y = b.shuffle(y, mid, hw, g)
    y = b.op("Relu", [b.bn(b.conv(y, mid, mid, k, stride, mid), mid)])
    y = b.bn(b.conv(y, mid, cout, 1, 1, g), cout)
    if cin == cout and stride == 1:
        y = b.op("Add", [y, x])
    return y, out_hw


def build_onnx(ops, path):
    b = Builder()
    x = b.op("Relu", [b.bn(b.conv("input", 3, 16, 3, 1), 16)])
    c, hw, i = 16, 32, 0
    for cout, n, stride in STAGES:
        for j in range(n):
            x, hw = layer(b, x, c, cout, hw, stride if j == 0 else 1, ops[i])
            c, i = cout, i + 1
    x = b.op("Relu", [b.bn(b.conv(x, c, 1504, 1, 1), 1504)])
    x = b.op("Flatten", [b.op("GlobalAveragePool", [x])])
    b.save(path, "fbnet", ["batch", 3, 32, 32], (x, 1504), 100, "seer fbnet_build")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("-o", "--out", default=os.path.join(ROOT, "datasets/fbnet.h5"))
    ap.add_argument("--limit", type=int, default=0, help="only the first N architectures (0: all)")
    ap.add_argument("--onnx-dir", default=None, help="where the ONNX files go (default: OUT's folder/fbnet_onnx)")
    ap.add_argument("--seerconvert", default=os.path.join(ROOT, "build/seerconvert"))
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    if not os.access(args.seerconvert, os.X_OK):
        sys.exit("fbnet_build: %s not found: build Seer first (sh scripts/setup.sh)" % args.seerconvert)
    if not os.path.exists(args.csv):
        sys.exit("fbnet_build: %s not found (HELP's FBNet table; pass --csv)" % args.csv)
    with open(args.csv, newline="") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    if header[:3] != ["idx", "op_idx_list", "op_names"]:
        sys.exit("%s: line 1: expected columns idx,op_idx_list,op_names,...; got %s" % (args.csv, header[:3]))
    if args.limit:
        rows = rows[:args.limit]
    cols, labels = label_columns(header[3:])
    onnx_dir = args.onnx_dir or os.path.join(os.path.dirname(os.path.abspath(args.out)), "fbnet_onnx")
    os.makedirs(onnx_dir, exist_ok=True)
    manifest = os.path.join(onnx_dir, "manifest.csv")
    t0 = time.time()
    with open(manifest, "w") as m:
        m.write("onnx,batch,name,group,family," + ",".join(labels) + "\n")
        for i, row in enumerate(rows):
            if len(row) != len(header):
                sys.exit("%s: line %d: %d columns, expected %d" % (args.csv, i + 2, len(row), len(header)))
            idx, ops = int(row[0]), [int(v) for v in row[1].split()]
            if len(ops) != 22 or any(o not in OPS for o in ops):
                sys.exit("%s: line %d: op_idx_list must hold 22 indices 0..8" % (args.csv, i + 2))
            name = "arch_%04d.onnx" % idx
            path = os.path.join(onnx_dir, name)
            if not os.path.exists(path):
                build_onnx(ops, path)
            for bs in BATCHES:
                m.write("%s,%d,fbnet/%04d@bs%d,%d,fbnet,%s\n" % (name, bs, idx, bs, idx,
                                                               ",".join(row_labels(cols, labels, row[3:], bs))))
    print("fbnet: %d ONNX models, %d graphs in %s (%.1fs)" % (len(rows), len(rows) * len(BATCHES),
                                                           onnx_dir, time.time() - t0))
    cmd = [args.seerconvert, "--manifest", manifest, "-o", args.out,
           "--source", "FBNet (HW-NAS-Bench space) with HELP's latency table (MIT), scripts/datasets/fbnet_build.py",
           "--device", "various (one label column per device: <device>_infer_ms)"]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
