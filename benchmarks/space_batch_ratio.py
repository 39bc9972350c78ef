#!/usr/bin/env python3
"""A predictor's time ratio between two batches on design-space lines measured at both.

    python3 benchmarks/space_batch_ratio.py MEASUREMENTS.jsonl [--predictor predictors/cpu_xeon21.seer]
        [--label cpu_xeon21] [--lo 16] [--hi 64] [--work /tmp/space-batch-ratio]

For every architecture of MEASUREMENTS.jsonl (scripts/measure/measure.py lines) measured at both
batches, the measured time ratio hi / lo and the predictor's (seerpredict on make_dataset.py's
graphs of those lines); prints, per time metric, the median measured and predicted ratio, the
median of measured over predicted and the MAPE of the predicted ratio. Measure both batches in one
session: a ratio across sessions or hosts carries their drift (benchmarks/batch64_xeon21.md).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measurements")
    ap.add_argument("--predictor", default=os.path.join(ROOT, "predictors", "cpu_xeon21.seer"))
    ap.add_argument("--label", default="cpu_xeon21", help="the predictor's device (label prefix)")
    ap.add_argument("--lo", type=int, default=16)
    ap.add_argument("--hi", type=int, default=64)
    ap.add_argument("--work", default="/tmp/space-batch-ratio")
    a = ap.parse_args()
    if not 0 < a.lo < a.hi:
        ap.error("--lo %d --hi %d: need 0 < lo < hi" % (a.lo, a.hi))
    try:
        rows = [json.loads(line) for line in open(a.measurements) if line.strip()]
    except (OSError, ValueError) as e:
        sys.exit("space_batch_ratio: %s: %s" % (a.measurements, e))
    timed = [r for r in rows if "train_time_ms" in r and r.get("batch") in (a.lo, a.hi)]
    ids = {r["id"] for r in timed if r["batch"] == a.lo} & {r["id"] for r in timed if r["batch"] == a.hi}
    if not ids:
        sys.exit("space_batch_ratio: %s: no architecture measured at both batch %d and %d" % (a.measurements, a.lo, a.hi))
    os.makedirs(a.work, exist_ok=True)
    sel, h5, pred_csv = (os.path.join(a.work, n) for n in ("lines.jsonl", "graphs.h5", "predictions.csv"))
    with open(sel, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in timed if r["id"] in ids)
    for cmd in ([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs",
                 os.path.join(ROOT, "datasets", "space_cpu"), "--measurements", sel, "--label-prefix", a.label, "-o", h5],
                [os.path.join(ROOT, "build", "seerpredict"), a.predictor, h5, "--predictions", pred_csv]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            sys.exit("space_batch_ratio: %s failed: %s" % (os.path.basename(cmd[1 if cmd[0] == sys.executable else 0]),
                                                          (p.stderr or p.stdout).strip()[-500:]))
    with open(pred_csv) as f:
        pred = {r["name"]: r for r in csv.DictReader(f)}
    meas = {(r["id"], r["batch"]): r for r in timed}
    for key, field in (("train_ms", "train_time_ms"), ("infer_ms", "infer_time_ms")):
        out = []
        for i in sorted(ids):
            p_lo, p_hi = (pred.get("space/%s@bs%d" % (i, b)) for b in (a.lo, a.hi))
            if p_lo and p_hi:
                col = "%s_%s" % (a.label, key)
                out.append((meas[(i, a.hi)][field] / meas[(i, a.lo)][field], float(p_hi[col]) / float(p_lo[col])))
        if not out:
            sys.exit("space_batch_ratio: no predictions for the architectures of %s" % a.measurements)
        print("%s: %d architectures, measured %d / %d median %.2f, predicted %.2f; measured over predicted, median %.3f; "
              "MAPE of the predicted ratio %.1f%%" % (key, len(out), a.hi, a.lo, statistics.median(m for m, _ in out),
                                                     statistics.median(p for _, p in out),
                                                     statistics.median(m / p for m, p in out),
                                                     100 * statistics.mean(abs(p / m - 1) for m, p in out)))


if __name__ == "__main__":
    main()
