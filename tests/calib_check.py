#!/usr/bin/env python3
"""Helpers of test_export.sh for seercalibrate's factors by batch.

    calib_check.py copies SRC.h5 N OUT.h5 B1,B2,..   the first N graphs of SRC once per batch B
                                                      (log_batch = log1p(B), names @bsB)
    calib_check.py label IN.h5 PRED.csv OUT.h5 B:F[:K],..  IN with every label PRED.csv predicts
                                                      set to that prediction x F at batch B (only
                                                      the first K graphs there: the rest NaN), a
                                                      fifth of the graphs x 10 more (the median
                                                      ignores them)
    calib_check.py flops IN.h5 OUT.h5                 IN with every label set to the graph's FLOPs / 1e6
                                                      (a device whose ranking is the FLOPs')
    calib_check.py ratio BEFORE.csv AFTER.csv B:F,..  AFTER / BEFORE of every prediction equals the
                                                      calibration through the knots B:F (log F
                                                      linear in log1p(B), constant beyond) to 1e-5
"""
import csv
import math
import sys

import h5py
import numpy as np


def knots(spec):
    b, f = zip(*[(float(x.split(":")[0]), float(x.split(":")[1])) for x in spec.split(",")])  # (K ignored)
    # the knot positions as the file stores log_batch: float32
    return np.log1p(np.array(b, np.float32)).astype(np.float32).astype(np.float64), np.log(f)


def batch_of(name):
    return int(name.rsplit("@bs", 1)[1])


def copies(src_path, n, out, batches):
    src = h5py.File(src_path, "r")
    bs = [int(b) for b in batches.split(",")]
    npt, ept = src["graph/node_ptr"][: n + 1], src["graph/edge_ptr"][: n + 1]
    N, E = int(npt[n]), int(ept[n])
    gcol = [x.decode() for x in src["schema/global_features"][:]].index("log_batch")
    with h5py.File(out, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v

        def walk(name, obj):
            if not isinstance(obj, h5py.Dataset):
                return
            if name in ("graph/node_ptr", "graph/edge_ptr"):
                p, tot = (npt, N) if name == "graph/node_ptr" else (ept, E)
                d = np.concatenate([p[:-1] + i * tot for i in range(len(bs))] + [[len(bs) * tot]])
            elif name.startswith(("node/", "edge/")):
                d = np.concatenate([obj[: N if name.startswith("node/") else E]] * len(bs))
            elif name == "graph/name":
                d = np.array([("%s@bs%d" % (x.decode().rsplit("@bs", 1)[0], b)).encode()
                              for b in bs for x in obj[:n]], dtype=object)
            elif name == "global/x":
                d = np.concatenate([obj[:n]] * len(bs))
                for i, b in enumerate(bs):
                    d[i * n:(i + 1) * n, gcol] = np.float32(math.log1p(b))
            elif name.startswith(("graph/", "global/", "label/")):
                d = np.concatenate([obj[:n]] * len(bs))
            else:
                d = obj[:]
            f.create_dataset(name, data=d.astype(obj.dtype) if d.dtype != object else d, dtype=obj.dtype)
        src.visititems(walk)


def label(inp, pred_csv, out, spec):
    rows = {r["name"]: r for r in csv.DictReader(open(pred_csv))}
    kx, ky = knots(spec)
    only = {int(x.split(":")[0]): int(x.split(":")[2]) for x in spec.split(",") if x.count(":") == 2}
    seen = {}
    with h5py.File(inp, "r") as src, h5py.File(out, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v
        names = [x.decode() for x in src["graph/name"][:]]
        labels = [x.decode() for x in src["schema/labels"][:]]
        y = np.full(src["label/y"].shape, np.nan, np.float32)
        for g, nm in enumerate(names):
            b = batch_of(nm)
            seen[b] = seen.get(b, 0) + 1
            if seen[b] > only.get(b, seen[b]):
                continue
            lb = np.float32(math.log1p(b))
            fac = math.exp(np.interp(lb, kx, ky)) * (10 if g % 5 == 0 else 1)
            for j, l in enumerate(labels):
                if l in rows[nm]:
                    y[g, j] = float(rows[nm][l]) * fac

        def walk(name, obj):  # (visititems stops at a callback that returns something)
            if isinstance(obj, h5py.Dataset):
                f.create_dataset(name, data=y if name == "label/y" else obj[:], dtype=obj.dtype)
        src.visititems(walk)


def flops(inp, out):
    with h5py.File(inp, "r") as src, h5py.File(out, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v
        g = [x.decode() for x in src["schema/global_features"][:]].index("log_flops_total")
        fl = np.expm1(src["global/x"][:, g].astype(np.float64)) / 1e6
        y = np.repeat(fl[:, None], src["label/y"].shape[1], 1).astype(np.float32)

        def walk(name, obj):
            if isinstance(obj, h5py.Dataset):
                f.create_dataset(name, data=y if name == "label/y" else obj[:], dtype=obj.dtype)
        src.visititems(walk)


def ratio(before, after, spec):
    b, a = list(csv.DictReader(open(before))), list(csv.DictReader(open(after)))
    kx, ky = knots(spec)
    ms = [m for m in b[0] if m not in ("name", "in_range")]
    worst, seen = 0.0, set()
    for rb, ra in zip(b, a):
        assert rb["name"] == ra["name"], (rb["name"], ra["name"])
        bs = batch_of(rb["name"])
        want = math.exp(np.interp(np.float32(math.log1p(bs)), kx, ky))
        for m in ms:
            worst = max(worst, abs(float(ra[m]) / float(rb[m]) / want - 1))
        seen.add(bs)
    assert worst < 1e-5, worst
    print("calib_check: %d predictions at batches %s moved by the calibration's factors to %.1e"
          % (len(b) * len(ms), sorted(seen), worst))


if __name__ == "__main__":
    {"copies": lambda: copies(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]),
     "label": lambda: label(*sys.argv[2:6]),
     "flops": lambda: flops(*sys.argv[2:4]),
     "ratio": lambda: ratio(*sys.argv[2:5])}[sys.argv[1]]()
