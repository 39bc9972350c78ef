#!/usr/bin/env python3
"""ref_check.py MEASUREMENTS.jsonl[,MORE.jsonl] [--powers 0,0.25,0.5,0.75,1] [--windows 1,51,201]

MEASUREMENTS: measure.py's lines (passes told apart by their "pass"), or real_networks.py's passes
as files of their own (first,second[,third]: a line without "pass" is its file's pass, 1, 2, ...).

Does dividing out the reference network's time (measure.py's ref_ms, timed just before each
configuration) make the CPU labels more reproducible? For every configuration (architecture,
batch) measured in two or more passes (measure.py --pass) with ref_ms in each, the disagreement
between passes, (max - min) / mean, of the training-step and inference times is computed on the
raw times and on the times scaled by (median ref_ms / ref_ms)^POWER for each power (the scaling
make_dataset.py --ref-normalize POWER applies). Prints the median and 90th percentile of the
disagreement per power: the power with the lowest median is the one to build the dataset with;
0 is no normalisation.

Where a configuration's passes used different versions of the PyTorch builder (measure.py's
"builder", 1 when absent; space.TORCH_BUILDER), the ratio of the newer builder's time to the
older's, training step and inference, median and quartiles: the training step, which the builder
did not change, says how far the machine drifted between the passes, and the inference ratio
over it is the builder's own effect.

Also, on the first pass alone, how much of the time's deviation from a smooth fit in FLOPs and
batch follows ref_ms (the slope of that residual on log ref_ms: 1 would mean every configuration
slows exactly as the reference does).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "space"))
from make_dataset import normalize_ref, pass_disagreement, smooth_refs  # noqa: E402

TIMES = ("train_time_ms", "infer_time_ms")


def load(paths, window=1):
    """{(id, batch): its records} of the lines with ref_ms; window > 1: each with ref_window_ms
    (make_dataset.smooth_refs over its file)."""
    by = {}
    for n, path in enumerate(paths.split(",")):
        recs = []
        with open(path) as f:
            for line in f:
                try:
                    recs.append(json.loads(line))
                except ValueError:  # a cut last line (a run stopped mid-write)
                    continue
        if window > 1:
            smooth_refs(recs, window)
        for r in recs:
            if r.get("oom") or not r.get("ref_ms"):
                continue
            # a line without "pass" is of its file's pass: the first file's 1, the second's 2, ...
            # (real_networks.py's passes are files of their own); a real network is keyed by name
            r.setdefault("pass", n + 1)
            by.setdefault((r.get("id") or r["name"], r["batch"]), []).append(r)
    return by


def disagreement(rs, m):
    v = [r[m] for r in rs if r.get(m)]
    return pass_disagreement(v) if len(v) > 1 else None


def builders(multi):
    """Newer-builder / older-builder time ratios over the configurations measured with both."""
    pairs = []
    for rs in multi.values():
        old = [r for r in rs if r.get("builder", 1) == min(x.get("builder", 1) for x in rs)]
        new = [r for r in rs if r.get("builder", 1) == max(x.get("builder", 1) for x in rs)]
        if old[0] is not new[0] and all(r.get(m) for r in (old[0], new[0]) for m in TIMES):
            pairs.append([new[0][m] / old[0][m] for m in TIMES])
    if not pairs:
        return
    q = np.percentile(np.array(pairs), [25, 50, 75], axis=0)
    rel = np.array([p[1] / p[0] for p in pairs])
    print("\nnewer / older PyTorch builder over %d configurations measured with both (median, "
          "quartiles):" % len(pairs))
    for j, m in enumerate(TIMES):
        print("  %s: %.3f (%.3f-%.3f)" % (m, q[1, j], q[0, j], q[2, j]))
    print("  inference ratio / training-step ratio: %.3f (%.3f-%.3f): the builder's effect on "
          "inference, the machine's drift taken out" % tuple(np.percentile(rel, [50, 25, 75])))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measurements")
    ap.add_argument("--powers", default="0,0.25,0.5,0.75,1")
    ap.add_argument("--windows", default="1",
                    help="reference windows to try (make_dataset.py --ref-window), comma-separated, e.g. 1,51,201")
    a = ap.parse_args()
    windows = [int(x) for x in a.windows.split(",") if x]
    if not windows or min(windows) < 1:
        ap.error("--windows %s: positive whole numbers" % a.windows)
    by = load(a.measurements)
    if not by:
        sys.exit("ref_check.py: no measurement with ref_ms in %s (measure.py records it since the "
                 "reference was added)" % a.measurements)
    refs = sorted(r["ref_ms"] for rs in by.values() for r in rs)
    med = refs[len(refs) // 2]
    multi = {k: rs for k, rs in by.items() if len({r.get("pass", 1) for r in rs}) > 1}
    print("ref_check.py: %d configurations with ref_ms, %d measured in two or more passes; ref_ms "
          "median %.3f ms, 10th-90th percentile %.3f-%.3f ms"
          % (len(by), len(multi), med, np.percentile(refs, 10), np.percentile(refs, 90)))
    if multi:
        print("\npass disagreement (max - min) / mean over %d configurations:" % len(multi))
        print("| window | power | train median | train p90 | infer median | infer p90 |")
        print("|---|---|---|---|---|---|")
        for w in windows:
            mw = multi if w == 1 else {k: rs for k, rs in load(a.measurements, w).items() if k in multi}
            for p in (float(x) for x in a.powers.split(",")):
                cells = []
                for m in TIMES:
                    d = [disagreement([normalize_ref(r, med, p) for r in rs], m) for rs in mw.values()]
                    d = np.array([x for x in d if x is not None])
                    cells += ["%.1f%%" % (100 * np.median(d)), "%.1f%%" % (100 * np.percentile(d, 90))]
                print("| %d | %g | %s |" % (w, p, " | ".join(cells)))
    builders(multi)
    first = [rs[0] for rs in by.values() if rs[0].get("flops")]
    if len(first) > 10:
        print("\nfirst pass, %d configurations: log time = smooth fit in log FLOPs and log batch + residual"
              % len(first))
        f = np.log([r["flops"] for r in first])
        b = np.log([r["batch"] for r in first])
        ref = np.log([r["ref_ms"] for r in first])
        A = np.column_stack([np.ones(len(f)), f, b, f * f, f * b])
        for m in TIMES:
            ok = np.array([bool(r.get(m)) for r in first])
            y = np.log([r[m] for r in first if r.get(m)])
            res = y - A[ok] @ np.linalg.lstsq(A[ok], y, rcond=None)[0]
            slope = np.polyfit(ref[ok], res, 1)[0]
            print("  %s: residual std %.3f, correlation with log ref_ms %.2f, slope %.2f"
                  % (m, res.std(), np.corrcoef(res, ref[ok])[0, 1], slope))


if __name__ == "__main__":
    main()
