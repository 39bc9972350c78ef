#!/usr/bin/env python3
"""How well predictor files get the batch right: predicted against measured ratios of a network's time
at two batches (batch 4 over batch 1, batch 16 over batch 4), on real networks and on held-out
design-space architectures (a markdown table).

    benchmarks/batch_scaling.py --score shipped=predictors/cpu_xeon26.seer \
        [--space shipped=/tmp/seer-xeon26-peak] [--out benchmarks/batch_scaling_xeon26.md]

A network's error at one batch is its error at the batch below times the error of the ratio
between them; where the ratio is wrong, no calibration per network can be right at every batch.
For each file and pair of batches: the MAPE of the predicted ratio against the measured one,
their Spearman, and the median and 95th percentile of each (a model that learned the mean
scaling and not which networks depart from it has the medians right and the 95th percentile too
low). Real networks: every one real_networks.py measured on --real (the geometric mean with --real2
where both have it, the median of three where a third pass, --real2's name with pass3, retook it)
but those it holds out (HELD_OUT), predicted by `seerpredict FILE NET.onnx
--batch 1,4,16 --json` (the ONNX from --onnx: real_networks.py --work). Design space: --space
NAME=DIR, a train_cpu_predictor.sh work folder: the blend's predictions of every graph
(DIR/all.csv) on the architectures of its held-out test split (DIR/perfsage/test_predictions.csv,
whose labels are the drift-corrected ones it was scored on). The last rows: the real networks
measured twice, one pass against the other (the floor under any prediction of a ratio).
"""
import argparse
import collections
import csv
import math
import os
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from run_plot import spearman  # noqa: E402  (ties share their mean rank; NaN where a side is constant)
PAIRS = [(1, 4), (4, 16)]  # the default --pairs: the design space's batches
METRICS = [("train_ms", "train_time_ms", "training step"), ("infer_ms", "infer_time_ms", "inference")]


def quantile(v, q):
    s = sorted(v)
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def ratio_stats(nets, lo, hi):
    """nets: {name: {batch: (measured, predicted)}}. Over the networks with both batches: (count,
    MAPE % of the predicted ratio hi/lo against the measured one, Spearman, measured median,
    predicted median, measured q95, predicted q95); None where fewer than three networks have both."""
    m, p = [], []
    for b in nets.values():
        if lo in b and hi in b and b[lo][0] > 0 and b[lo][1] > 0:
            m.append(b[hi][0] / b[lo][0])
            p.append(b[hi][1] / b[lo][1])
    if len(m) < 3:
        return None
    mape = 100.0 * sum(abs(y / x - 1) for x, y in zip(m, p)) / len(m)
    return (len(m), mape, spearman(m, p), quantile(m, 0.5), quantile(p, 0.5), quantile(m, 0.95), quantile(p, 0.95))


def real_nets(a, rn, path):
    """{metric: {network: {batch: (measured, predicted)}}} on the real networks measured and not held
    out, at the batches of a.pairs."""
    meas = {k: y for k, y in rn.truth(rn.pass_files(a.real, a.real2)).items() if k[0] and k[0] not in rn.HELD_OUT}
    names = sorted({n for n, _ in meas})
    out = {m: {} for m, _, _ in METRICS}
    for i, n in enumerate(names):
        onnx = os.path.join(a.onnx, n + ".onnx")
        if not os.path.isfile(onnx):
            continue  # exported by real_networks.py --work; counted below
        bs = sorted(b for (x, b) in meas if x == n and any(b in p for p in a.pairs))
        if len(bs) < 2:
            continue
        got = rn.predict(types.SimpleNamespace(build=a.build, predictor=path, device=a.device), onnx, bs)
        if isinstance(got, str):
            sys.exit("batch_scaling: seerpredict %s %s: %s" % (path, onnx, got))
        for m, field, _ in METRICS:
            out[m][n] = {b: (meas[(n, b)][field], got[b][1][m]) for b in bs}
        if (i + 1) % 25 == 0:
            print("batch_scaling: %s: %d of %d networks" % (os.path.basename(path), i + 1, len(names)),
                  file=sys.stderr, flush=True)
    missing = [n for n in names if not os.path.isfile(os.path.join(a.onnx, n + ".onnx"))]
    return out, len(names), missing


def pass_floor(a, rn, space=None):
    """{metric: {network: {batch: (first pass, second pass)}}}: the ratios' own repeatability, the
    floor under any prediction of them; with space, a design-space measurement file whose lines
    carry "pass" (1 when absent), keyed by architecture id."""
    first, second = {}, {}
    if space:
        for d in rn.json_lines(space):
            if "train_time_ms" in d:
                (second if d.get("pass", 1) == 2 else first)[(d["id"], d["batch"])] = d
    else:
        for f, into in ((a.real, first), (a.real2, second)):
            if f and os.path.exists(f):
                for d in rn.json_lines(f):
                    if "train_time_ms" in d and d.get("name") and d["name"] not in rn.HELD_OUT:
                        into[(d["name"], d["batch"])] = d
    out = {m: collections.defaultdict(dict) for m, _, _ in METRICS}
    for (n, b), d in first.items():
        if (n, b) in second:
            for m, field, _ in METRICS:
                out[m][n][b] = (d[field], second[(n, b)][field])
    return out


def space_nets(d, label):
    """The same from a train_cpu_predictor.sh work folder's held-out test architectures."""
    allp, testp = os.path.join(d, "all.csv"), os.path.join(d, "perfsage", "test_predictions.csv")
    for p in (allp, testp):
        if not os.path.isfile(p):
            sys.exit("batch_scaling: --space %s: no %s (a train_cpu_predictor.sh --work folder kept with --keep)" % (d, p))
    with open(allp) as f:
        pred = {r["name"]: r for r in csv.DictReader(f)}
    out = {m: collections.defaultdict(dict) for m, _, _ in METRICS}
    with open(testp) as f:
        for r in csv.DictReader(f):
            name, _, b = r["name"].rpartition("@bs")
            if r["name"] not in pred or not b.isdigit():
                sys.exit("batch_scaling: %s: graph %s not in %s" % (testp, r["name"], allp))
            for m, _, _ in METRICS:
                col = "%s_%s" % (label, m)
                out[m][name][int(b)] = (float(r[col]), float(pred[r["name"]][col]))
    return out


def rows(name, where, per_metric, pairs):
    lines = []
    for m, _, title in METRICS:
        for lo, hi in pairs:
            s = ratio_stats(per_metric[m], lo, hi)
            if s:
                lines.append("| %s | %s | %s | %d / %d | %d | %.1f | %.2f | %.2f / %.2f | %.2f / %.2f |"
                             % (name, where, title, hi, lo, s[0], s[1], s[2], s[3], s[4], s[5], s[6]))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--score", action="append", required=True, metavar="NAME=FILE.seer")
    ap.add_argument("--space", action="append", default=[], metavar="NAME=DIR",
                    help="a train_cpu_predictor.sh work folder (all.csv, perfsage/test_predictions.csv)")
    ap.add_argument("--device", default="cpu_xeon26", help="the files' device name (label prefix)")
    ap.add_argument("--real", default=os.path.join(ROOT, "benchmarks", "real_networks_xeon26.jsonl"))
    ap.add_argument("--real2", default=os.path.join(ROOT, "benchmarks", "real_networks_xeon26_pass2.jsonl"))
    ap.add_argument("--onnx", default="/tmp/seer-real-networks", help="folder of NET.onnx")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--space-passes", metavar="FILE.jsonl",
                    help="a design-space measurement file with second-pass lines: their ratios against the first pass's")
    ap.add_argument("--pairs", default="1:4,4:16", metavar="LO:HI[,LO:HI...]",
                    help="the ratios, time at HI over time at LO (default 1:4,4:16; e.g. 16:64 for a batch "
                         "beyond the design space's)")
    ap.add_argument("--out", help="write the table here too")
    a = ap.parse_args()
    try:
        a.pairs = [tuple(int(x) for x in p.split(":")) for p in a.pairs.split(",")]
        if any(len(p) != 2 or not 0 < p[0] < p[1] for p in a.pairs):
            raise ValueError
    except ValueError:
        ap.error("--pairs %s: LO:HI pairs of batches with LO < HI, comma-separated (e.g. 1:4,4:16)" % a.pairs)
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import real_networks as rn
    files = rn.named_files(ap, a.score, "--score")
    spaces = []
    for v in a.space:
        name, sep, d = v.partition("=")
        if not sep or not name or not os.path.isdir(d):
            ap.error("--space %s: NAME=DIR with DIR a folder" % v)
        spaces.append((name, d))
    lines = ["| file | networks | metric | batches | n | MAPE of the ratio % | Spearman | median measured / predicted | "
             "q95 measured / predicted |", "|---|---|---|---|---|---|---|---|---|"]
    counted = ""
    for name, path in files:
        per, n_all, missing = real_nets(a, rn, path)
        lines += rows(name, "real", per, a.pairs)
        counted = "%d real networks measured and not held out%s" % (
            n_all, "; %d without an ONNX export in %s, left out" % (len(missing), a.onnx) if missing else "")
    for name, d in spaces:
        lines += rows(name, "design space, held out", space_nets(d, a.device), a.pairs)
    lines += rows("second pass against the first", "real", pass_floor(a, rn), a.pairs)
    if a.space_passes:
        lines += rows("second pass against the first", "design space (%s)" % os.path.basename(a.space_passes),
                      pass_floor(a, rn, a.space_passes), a.pairs)
    head = ["# Batch scaling: predicted against measured time ratios between batches", "",
            "Regenerated by `/usr/bin/python3 benchmarks/batch_scaling.py %s` on %s." % (
                " ".join(sys.argv[1:]), time.strftime("%Y-%m-%d")), "",
            "Real networks: %s. A ratio is (time at the larger batch) / (time at the smaller); measured: the "
            "geometric mean of both passes where both exist, the median of three where a third pass retook them. The rows *second pass against the first*: the "
            "networks measured twice (`--real2`, in other sessions), the first pass's ratio in place of the "
            "measured one and the second's in place of the prediction: how far a ratio measured once can be "
            "trusted, the floor under predicting it." % counted, ""]
    text = "\n".join(head + lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
