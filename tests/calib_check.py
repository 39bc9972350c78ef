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
    calib_check.py affine IN.h5 PRED.csv OUT.h5 a,b,c [FEATURE]  IN with every label PRED.csv predicts
                                                      set to exp(a + b log(prediction) + c FEATURE),
                                                      FEATURE a global feature (log_flops_total)
    calib_check.py affine_check BEFORE.csv AFTER.csv IN.h5 a,b,c[;a,b,c] [FEATURE]  AFTER = that of
                                                      BEFORE (each set in turn) to 1e-5
    calib_check.py power IN.h5 PRED.csv OUT.h5 'b;B:F,..'  IN with every label PRED.csv predicts set to
                                                      (prediction x F)^b, F through the knots B:F
    calib_check.py power_check BEFORE.csv AFTER.csv 'b;B:F,..'  AFTER = (BEFORE x F)^b to 1e-5
    calib_check.py globals IN.h5 OUT.h5 add:NAME|drop  IN with a global feature NAME appended
                                                      (every graph 7.0), or its last one dropped
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


def relabel(inp, out, make):
    """out = inp with /label/y replaced by make(names, labels, shape) (names and labels decoded)."""
    with h5py.File(inp, "r") as src, h5py.File(out, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v
        y = make([x.decode() for x in src["graph/name"][:]], [x.decode() for x in src["schema/labels"][:]],
                 src["label/y"].shape)

        def walk(name, obj):  # (visititems stops at a callback that returns something)
            if isinstance(obj, h5py.Dataset):
                f.create_dataset(name, data=y if name == "label/y" else obj[:], dtype=obj.dtype)
        src.visititems(walk)


def globals_(inp, out, how):
    """A converter's schema one global feature longer (add:NAME) or shorter (drop)."""
    with h5py.File(inp, "r") as src, h5py.File(out, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v

        def walk(name, obj):
            if not isinstance(obj, h5py.Dataset):
                return
            d = obj[:]
            if name == "global/x":
                d = np.column_stack([d, np.full(len(d), 7.0, d.dtype)]) if how != "drop" else d[:, :-1]
            elif name == "schema/global_features":
                d = np.append(d, np.array([how[4:].encode()], dtype=d.dtype)) if how != "drop" else d[:-1]
            f.create_dataset(name, data=d, dtype=obj.dtype)
        src.visititems(walk)


def label(inp, pred_csv, out, spec):
    rows = {r["name"]: r for r in csv.DictReader(open(pred_csv))}
    kx, ky = knots(spec)
    only = {int(x.split(":")[0]): int(x.split(":")[2]) for x in spec.split(",") if x.count(":") == 2}

    def make(names, labels, shape):
        y, seen = np.full(shape, np.nan, np.float32), {}
        for g, nm in enumerate(names):
            b = batch_of(nm)
            seen[b] = seen.get(b, 0) + 1
            if seen[b] > only.get(b, seen[b]):
                continue
            fac = math.exp(np.interp(np.float32(math.log1p(b)), kx, ky)) * (10 if g % 5 == 0 else 1)
            for j, l in enumerate(labels):
                if l in rows[nm]:
                    y[g, j] = float(rows[nm][l]) * fac
        return y
    relabel(inp, out, make)


def _flops(h5, feature="log_flops_total"):
    with h5py.File(h5, "r") as f:
        g = [x.decode() for x in f["schema/global_features"][:]].index(feature)
        return {x.decode(): float(v) for x, v in zip(f["graph/name"][:], f["global/x"][:, g])}


def flops(inp, out):
    x = _flops(inp)
    relabel(inp, out, lambda names, labels, shape: np.array(
        [[math.expm1(x[nm]) / 1e6] * shape[1] for nm in names], np.float32))


def affine(inp, pred_csv, out, spec, feature="log_flops_total"):
    a, b, c = (float(v) for v in spec.split(","))
    rows = {r["name"]: r for r in csv.DictReader(open(pred_csv))}
    x = _flops(inp, feature)

    def make(names, labels, shape):
        y = np.full(shape, np.nan, np.float32)
        for g, nm in enumerate(names):
            for j, l in enumerate(labels):
                if l in rows[nm]:
                    y[g, j] = math.exp(a + b * math.log(float(rows[nm][l])) + c * x[nm])
        return y
    relabel(inp, out, make)


def affine_check(before, after, h5, specs, feature="log_flops_total"):
    b, a = list(csv.DictReader(open(before))), list(csv.DictReader(open(after)))
    x = _flops(h5, feature)
    ms = [m for m in b[0] if m not in ("name", "in_range")]
    worst = 0.0
    for rb, ra in zip(b, a):
        for m in ms:
            v = float(rb[m])
            for spec in specs.split(";"):
                ca, cb, cc = (float(t) for t in spec.split(","))
                v = math.exp(ca + cb * math.log(v) + cc * x[rb["name"]])
            worst = max(worst, abs(float(ra[m]) / v - 1))
    assert worst < 1e-5, worst
    print("calib_check: %d predictions through log y = a + b log y + c %s (%s) to %.1e"
          % (len(b) * len(ms), feature, specs, worst))


def _power(spec):
    b, k = spec.split(";")
    kx, ky = knots(k)
    return float(b), lambda bs: math.exp(np.interp(np.float32(math.log1p(bs)), kx, ky))


def power(inp, pred_csv, out, spec):
    b, fac = _power(spec)
    rows = {r["name"]: r for r in csv.DictReader(open(pred_csv))}

    def make(names, labels, shape):
        y = np.full(shape, np.nan, np.float32)
        for g, nm in enumerate(names):
            for j, l in enumerate(labels):
                if l in rows[nm]:
                    y[g, j] = (float(rows[nm][l]) * fac(batch_of(nm))) ** b
        return y
    relabel(inp, out, make)


def power_check(before, after, spec):
    b, fac = _power(spec)
    rb_, ra_ = list(csv.DictReader(open(before))), list(csv.DictReader(open(after)))
    ms = [m for m in rb_[0] if m not in ("name", "in_range")]
    worst = 0.0
    for rb, ra in zip(rb_, ra_):
        assert rb["name"] == ra["name"], (rb["name"], ra["name"])
        for m in ms:
            want = (float(rb[m]) * fac(batch_of(rb["name"]))) ** b
            worst = max(worst, abs(float(ra[m]) / want - 1))
    assert worst < 1e-5, worst
    print("calib_check: %d predictions through (prediction x factor)^b (%s) to %.1e" % (len(rb_) * len(ms), spec, worst))


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
     "affine": lambda: affine(*sys.argv[2:7]),
     "affine_check": lambda: affine_check(*sys.argv[2:7]),
     "power": lambda: power(*sys.argv[2:6]),
     "power_check": lambda: power_check(*sys.argv[2:5]),
     "globals": lambda: globals_(*sys.argv[2:5]),
     "ratio": lambda: ratio(*sys.argv[2:5])}[sys.argv[1]]()
