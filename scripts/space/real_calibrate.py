#!/usr/bin/env python3
"""A CPU predictor calibrated on the real networks measured on its machine.

The design-space networks a CPU predictor learns from are not the networks users bring: on this
machine their inference runs slower relative to their training step than torchvision's do
(benchmarks/RESULTS.md, "The CPU predictor retrained with the large design-space networks").
benchmarks/real_networks.py measures real networks the way the design space was measured; this
script puts those measurements (every network outside the held-out set ADDED4, every batch
measured, the geometric mean of the two passes where both exist) into one PerfGraph file and runs
`seercalibrate` on it: one factor per metric and batch, the predictor's ranking untouched.

    python3 scripts/space/real_calibrate.py predictors/cpu_epyc.seer -o OUT.seer [--work DIR]

Needs the build (seerconvert, seercalibrate) and the real networks' ONNX exports
(real_networks.py writes them to --onnx, default /tmp/seer-real-networks).
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import real_ablation  # noqa: E402
import real_networks as rn  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("-o", required=True, help="the calibrated predictor")
    ap.add_argument("--work", default="/tmp/seer-real-calibrate")
    ap.add_argument("--onnx", default="/tmp/seer-real-networks", help="the real networks' ONNX exports (those missing are exported first)")
    ap.add_argument("--real", default=os.path.join(ROOT, "benchmarks/real_networks_epyc.jsonl"))
    ap.add_argument("--real2", default=os.path.join(ROOT, "benchmarks/real_networks_epyc_pass2.jsonl"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    a.include_held_out = False  # ADDED4 judges what this makes
    for p in (a.model, a.real, os.path.join(a.build, "seercalibrate")):
        if not os.path.exists(p):
            sys.exit("real_calibrate.py: %s missing (see --help)" % p)
    os.makedirs(a.work, exist_ok=True)
    truth = real_ablation.real_truth(a)  # exports the networks missing under --onnx
    h5 = real_ablation.real_h5(a, truth)
    nets = sorted({n for n, _ in truth})
    assert not set(nets) & set(rn.ADDED4), "the held-out networks must not calibrate"
    print("real_calibrate.py: %d configurations of %d networks -> %s" % (len(truth), len(nets), h5))
    r = subprocess.run([os.path.join(a.build, "seercalibrate"), a.model, h5, "-o", a.o], text=True,
                       capture_output=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if r.returncode != 0:
        sys.exit("real_calibrate.py: seercalibrate failed (%d)" % r.returncode)


if __name__ == "__main__":
    main()
