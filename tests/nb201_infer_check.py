#!/usr/bin/env python3
"""nb201_build.py (DESIGN.md's label convention) on the first 4 cells: 12 graphs (batch 1, 32,
256), family nb201, labels <device>_infer_ms equal to the table's columns (NaN where a device was
not measured at that batch), and the same label names as the FBNet builder's, so the two spaces
line up. With NB201_SUBSET (the --brpnas file of the tests, 'none' edges dropped, its default),
the batch-1 graphs of those cells built with --none-edges drop are the same graphs, feature for
feature, and the default graphs (the cell as NAS-Bench-201's code runs it) have more nodes.
  nb201_infer_check.py SEERCONVERT WORKDIR"""
import csv
import math
import os
import subprocess
import sys

import h5py

conv, work = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "scripts", "datasets"))
from help_labels import GPUS, label_columns  # noqa: E402

table = os.path.join(here, "..", "datasets", "nb201", "nasbench201_latency_ms.csv")
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "nb.h5")
subprocess.run([sys.executable, os.path.join(here, "..", "scripts", "datasets", "nb201_build.py"),
                "--limit", "4", "-o", out, "--onnx-dir", os.path.join(work, "onnx"), "--seerconvert", conv],
               check=True, stdout=subprocess.DEVNULL)
rows = list(csv.DictReader(open(table)))[:4]
fb_header = next(csv.reader(open(os.path.join(here, "..", "datasets", "fbnet", "fbnet_latency_ms.csv"))))
f = h5py.File(out, "r")
dec = lambda a: [s.decode() if isinstance(s, bytes) else s for s in a]
labels, names, fam, y = dec(f["schema/labels"][:]), dec(f["graph/name"][:]), dec(f["graph/family"][:]), f["label/y"][:]
assert len(names) == 12 and set(fam) == {"nb201"}, (len(names), set(fam))
assert set(labels) == set(label_columns(fb_header[3:])[1]), (labels, label_columns(fb_header[3:])[1])
for g, name in enumerate(names):
    cell, bs = int(name.split("/")[1].split("@")[0]), int(name.split("@bs")[1])
    for j, l in enumerate(labels):
        dev = l[: -len("_infer_ms")]
        col = "%s_%d" % (dev, bs) if dev in GPUS else (dev if bs == 1 else None)
        if col is None:
            assert math.isnan(y[g, j]), (name, l, y[g, j])
        else:
            assert abs(y[g, j] - float(rows[cell][col])) <= 1e-5 * float(rows[cell][col]), (name, l)
print("nb201_build: 12 graphs, the FBNet builder's 17 labels, values equal to the table, NaN where "
      "unmeasured")
if os.environ.get("NB201_SUBSET"):
    import numpy as np
    b = h5py.File(os.environ["NB201_SUBSET"], "r")
    zero_nodes = np.diff(f["graph/node_ptr"][:])
    drop = os.path.join(work, "nb_drop.h5")
    subprocess.run([sys.executable, os.path.join(here, "..", "scripts", "datasets", "nb201_build.py"),
                    "--limit", "4", "-o", drop, "--none-edges", "drop", "--onnx-dir", os.path.join(work, "onnx"),
                    "--seerconvert", conv], check=True, stdout=subprocess.DEVNULL)
    f = h5py.File(drop, "r")
    assert (zero_nodes > np.diff(f["graph/node_ptr"][:])).all(), "the zero graphs must have more nodes"
    for k in ("node", "edge"):
        pa, pb = f["graph/%s_ptr" % k][:], b["graph/%s_ptr" % k][:]
        xa, xb = f["%s/x" % k], b["%s/x" % k]
        for g, name in enumerate(names):
            if name.endswith("@bs1"):
                cell = int(name.split("/")[1].split("@")[0])
                assert np.array_equal(xa[pa[g]:pa[g + 1]], xb[pb[cell]:pb[cell + 1]]), (name, k)
    bs1 = [g for g, n in enumerate(names) if n.endswith("@bs1")]
    assert np.array_equal(f["global/x"][bs1], b["global/x"][:4])
    print("the batch-1 graphs (--none-edges drop) equal the --brpnas file's graphs of the same cells; "
          "the default graphs have more nodes")
    f = h5py.File(out, "r")

# both spaces as one dataset ([data] path = a.h5,b.h5), FBNet held out as the test split
seertrain = os.environ.get("SEERTRAIN")
if seertrain:
    fb = os.path.join(work, "fb.h5")
    subprocess.run([sys.executable, os.path.join(here, "..", "scripts", "datasets", "fbnet_build.py"), "--limit", "3",
                    "-o", fb, "--onnx-dir", os.path.join(work, "fb_onnx"), "--seerconvert", conv],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([seertrain, os.path.join(here, "data", "tiny.ini"), "--quiet", "--set", "data.path=%s,%s" % (out, fb),
                    "--set", "data.labels=titan_rtx_infer_ms", "--set", "data.test_family=fbnet", "--set", "data.limit=0",
                    "--set", "train.epochs=2", "--set", "output.dir=" + work, "--set", "output.run=both"],
                   check=True, stdout=subprocess.DEVNULL)
    test = list(csv.DictReader(open(os.path.join(work, "both", "test_predictions.csv"))))
    assert sorted(r["name"] for r in test) == sorted("fbnet/%04d@bs%d" % (a, b) for a in range(3) for b in (1, 32, 64)), \
        [r["name"] for r in test]
    other = os.environ["NB201_SUBSET"]  # the older label convention: another schema
    bad = subprocess.run([seertrain, os.path.join(here, "data", "tiny.ini"), "--set", "data.path=%s,%s" % (out, other),
                          "--set", "data.labels=titan_rtx_infer_ms", "--set", "output.dir=" + work],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "schema" in bad.stderr and os.path.basename(other) in bad.stderr, bad.stderr
    print("two files as one dataset: the 9 FBNet graphs are the test split of NB201 + FBNet; "
          "a file of another schema is refused")
