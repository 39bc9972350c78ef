#!/usr/bin/env python3
"""scripts/datasets/fbnet_build.py on the first 6 architectures: 18 graphs (batch 1, 32, 64),
family fbnet, the 17 <device>_infer_ms labels equal to the CSV's columns (NaN for the batch-1-only
devices at 32 and 64), and each ONNX model holding one depthwise Conv per non-skip layer, a
channel shuffle (Transpose) per grouped layer, and a residual Add where the shapes allow.
  fbnet_check.py SEERCONVERT WORKDIR"""
import csv
import math
import os
import subprocess
import sys

import h5py
import onnx

conv, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
build = os.path.join(here, "..", "scripts", "datasets", "fbnet_build.py")
table = os.path.join(here, "..", "datasets", "fbnet", "fbnet_latency_ms.csv")
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "fb.h5")
subprocess.run([sys.executable, build, "--limit", "6", "-o", out, "--onnx-dir", os.path.join(work, "onnx"),
                "--seerconvert", conv], check=True, stdout=subprocess.DEVNULL)
rows = list(csv.DictReader(open(table)))[:6]
f = h5py.File(out, "r")
dec = lambda a: [s.decode() if isinstance(s, bytes) else s for s in a]
labels, names, fam, y = dec(f["schema/labels"][:]), dec(f["graph/name"][:]), dec(f["graph/family"][:]), f["label/y"][:]
assert len(names) == 18 and set(fam) == {"fbnet"}, (len(names), set(fam))
assert len(labels) == 17 and all(l.endswith("_infer_ms") for l in labels), labels
gpus = ("1080ti", "2080ti", "titan_rtx", "titanx", "titanxp")
for g, name in enumerate(names):
    arch, bs = int(name.split("/")[1].split("@")[0]), int(name.split("@bs")[1])
    r = rows[arch]
    for j, l in enumerate(labels):
        dev = l[: -len("_infer_ms")]
        col = "%s_%d" % (dev, bs) if dev in gpus else (dev if bs == 1 else None)
        if col is None:
            assert math.isnan(y[g, j]), (name, l, y[g, j])
        else:
            assert abs(y[g, j] - float(r[col])) <= 1e-5 * float(r[col]), (name, l, y[g, j], r[col])
kinds = {0: (3, 1, 1), 1: (3, 1, 2), 2: (3, 3, 1), 3: (3, 6, 1), 4: (5, 1, 1), 5: (5, 1, 2), 6: (5, 3, 1), 7: (5, 6, 1)}
for i, r in enumerate(rows):
    ops = [int(v) for v in r["op_idx_list"].split()]
    m = onnx.load(os.path.join(work, "onnx", "arch_%04d.onnx" % int(r["idx"])))
    dw = sum(1 for n in m.graph.node if n.op_type == "Conv"
             and any(a.name == "group" and a.i > 2 for a in n.attribute))
    shuffles = sum(1 for n in m.graph.node if n.op_type == "Transpose")
    assert dw == sum(o != 8 for o in ops), (i, dw, ops)
    assert shuffles == sum(o in (1, 5) for o in ops), (i, shuffles, ops)
print("fbnet_build: 18 graphs, 17 labels equal to the table (NaN where unmeasured), one depthwise "
      "Conv per non-skip layer and a shuffle per grouped layer in each of 6 models")
