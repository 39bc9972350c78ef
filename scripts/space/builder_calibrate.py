#!/usr/bin/env python3
"""Moves a CPU predictor's inference time from the design space's first PyTorch builder to the
second, with seercalibrate and the configurations measured by both.

The first builder's no-grad forward pass held every activation to the end and ran slower than
the same network written as a usual nn.Module (benchmarks/RESULTS.md, "The design space's forward
pass held every activation"); a predictor trained on its inference times predicts them high.
measure.py --pass 2 measures every configuration again with builder 2, but later, on a machine
whose speed drifts (by more than the builder's effect: benchmarks/RESULTS.md). The training step,
which the builder hardly touches, gauges that drift against the predictor itself: for each
configuration measured by both builders,

    infer_2 x predicted_train / train_2

is its builder-2 inference time at the speed the predictor learned. Those become the inference
labels of a PerfGraph file (every other metric left unmeasured, so seercalibrate leaves it
alone), and seercalibrate fits the predictor's inference to them, one factor per batch: the
builder's effect, with the drift between the passes and the predictor's own level taken out.

    python3 scripts/space/builder_calibrate.py predictors/cpu_epyc.seer \\
        datasets/space_cpu/measurements_epyc.jsonl -o cpu_epyc_b2.seer [--device cpu_epyc]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def pairs(path, builder):
    """(pass-1 line, later line measured by builder `builder` or newer) per configuration."""
    first, later = {}, {}
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue  # the line a running measure.py is writing
            if "train_time_ms" not in r or not r.get("infer_time_ms"):
                continue
            key = (r["id"], r["batch"])
            if r.get("builder", 1) < builder:
                first.setdefault(key, r)
            else:
                later[key] = r
    return [(first[k], later[k]) for k in sorted(later) if k in first]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("measurements")
    ap.add_argument("-o", required=True)
    ap.add_argument("--device", default="cpu_epyc", help="the predictor's device (its labels' prefix)")
    ap.add_argument("--builder", type=int, default=2, help="the builder to move to")
    ap.add_argument("--min-pairs", type=int, default=30, help="fewer configurations measured by both builders: refuse")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--specs", default=os.path.join(ROOT, "datasets/space_cpu"),
                    help="specs files or a folder of them (make_dataset.py --specs)")
    a = ap.parse_args()
    ps = pairs(a.measurements, a.builder)
    if len(ps) < a.min_pairs:
        sys.exit("builder_calibrate.py: %s: %d configurations measured by builder 1 and by builder %d "
                 "or later; want %d or more (measure.py --pass 2)" % (a.measurements, len(ps), a.builder, a.min_pairs))
    drift = [new["train_time_ms"] / old["train_time_ms"] for old, new in ps]
    effect = [new["infer_time_ms"] / old["infer_time_ms"] / d for (old, new), d in zip(ps, drift)]
    print("builder_calibrate.py: %d configurations measured by both builders; the machine's drift "
          "(training step, second / first) %.3f in the median; the builder's effect on inference "
          "with it taken out %.3f" % (len(ps), statistics.median(drift), statistics.median(effect)))
    import h5py  # noqa: E402 (only here: the rest runs without it)
    import numpy as np
    with tempfile.TemporaryDirectory(prefix="builder_calibrate-") as work:  # its file's name is recorded
        jl = os.path.join(work, "b2.jsonl")
        with open(jl, "w") as f:
            for _, new in ps:
                f.write(json.dumps({k: v for k, v in new.items() if k != "pass"}) + "\n")
        h5 = os.path.join(work, "builder%d_inference_%s.h5" % (a.builder, os.path.splitext(os.path.basename(a.measurements))[0]))
        subprocess.run([sys.executable, os.path.join(HERE, "make_dataset.py"), "--specs", a.specs, "--measurements",
                        jl, "-o", h5, "--label-prefix", a.device, "--onnx-dir", os.path.join(work, "onnx"),
                        "--card", os.path.join(work, "card.md"), "--seerconvert",
                        os.path.join(a.build, "seerconvert")], check=True, stdout=subprocess.DEVNULL)
        csv = os.path.join(work, "pred.csv")
        subprocess.run([os.path.join(a.build, "seerpredict"), a.model, h5, "--predictions", csv], check=True,
                       stdout=subprocess.DEVNULL)
        train, infer = a.device + "_train_ms", a.device + "_infer_ms"
        with open(csv) as f:
            head = f.readline().strip().split(",")
            pred = [float(line.split(",")[head.index(train)]) for line in f]
        with h5py.File(h5, "r+") as f:
            names = [n.decode() if isinstance(n, bytes) else n for n in f["schema/labels"][:]]
            y = f["label/y"][:]
            it, tt = names.index(infer), names.index(train)
            gauge = np.array(pred) / y[:, tt]  # the predictor's speed over this measurement's
            print("builder_calibrate.py: the predictor's training step over the builder-%d pass's: %.3f in the "
                  "median" % (a.builder, float(np.median(gauge))))
            out = np.full_like(y, np.nan)
            out[:, it] = y[:, it] * gauge
            f["label/y"][...] = out
        subprocess.run([os.path.join(a.build, "seercalibrate"), a.model, h5, "-o", a.o], check=True)


if __name__ == "__main__":
    main()
