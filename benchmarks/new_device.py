#!/usr/bin/env python3
"""A device the shipped GPU predictor never saw, from ten measured networks.

predictors/transfer_gpu.seer predicts five GPUs (1080ti, 2080ti, titan_rtx, titanx, titanxp).
The HELP tables behind datasets/nb201.h5 and datasets/fbnet.h5 also time every network at batch 1
on twelve other devices: four Xeon CPUs, phones, a Raspberry Pi, an FPGA and the Eyeriss
accelerator. For each of those devices and each space, ten architectures of the space (seeded)
play the networks a user measured on the new device; the rest are scored:

- transfer_gpu.seer + seercalibrate --device GPU=DEVICE on the ten: one factor at batch 1 (what
  `seercalibrate` fits; computed here by transfer.batch_factors, which equals libseer's calibrated
  predictions to 1e-8), from the GPU whose calibrated predictions have the lowest MAPE on the ten
  themselves (chosen on the measured networks only),
- the regression of log latency on log FLOPs and log bytes fitted on the ten alone (the floor),
- both at once, `seercalibrate --with-flops`: log latency = a + b log(GPU prediction) + c log FLOPs
  fitted on the ten (least squares; equal to libseer's to 1e-8), from the GPU whose fit on the ten is best (three numbers per device: the
  predictor's ranking where it holds, FLOPs where it does not).

The predictor was trained on every network of both spaces (on the GPUs): the networks are not
new to it, the device is. Cells: MAPE % / Spearman over the other networks of the space.

    /usr/bin/python3 benchmarks/new_device.py [--out benchmarks/new_device.md]
"""
import argparse
import csv
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from transfer import batch_factors, logflops_fit, machine, read_h5, scores  # noqa: E402

GPUS = ["1080ti", "2080ti", "titan_rtx", "titanx", "titanxp"]
SHOTS = 10


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks/new_device.md"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--predictor", default=os.path.join(ROOT, "predictors/transfer_gpu.seer"))
    ap.add_argument("--work", default="/tmp/seer-new-device")
    ap.add_argument("--seeds", type=int, default=3, help="draws of the ten networks (seed 0..N-1)")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    spaces = {}
    for sp in ("nb201", "fbnet"):
        h5 = os.path.join(ROOT, "datasets/%s.h5" % sp)
        if not os.path.exists(h5):
            sys.exit("new_device.py: %s missing: build it with scripts/datasets/%s_build.py" % (h5, sp))
        out = os.path.join(a.work, sp + ".csv")
        with open(out + ".log", "w") as log:
            if subprocess.run([os.path.join(a.build, "seerpredict"), a.predictor, h5, "--predictions", out],
                              stdout=log, stderr=subprocess.STDOUT).returncode:
                sys.exit("new_device.py: seerpredict failed, see %s.log" % out)
        with open(out) as f:
            rows = list(csv.DictReader(f))
        import h5py
        with h5py.File(h5, "r") as f:
            labels = [x.decode() for x in f["/schema/labels"][:]]
        devices = [l[:-len("_infer_ms")] for l in labels if l.endswith("_infer_ms") and l[:-len("_infer_ms")] not in GPUS]
        d = read_h5(h5, [dv + "_infer_ms" for dv in devices])
        p = np.array([[float(r[g + "_infer_ms"]) for g in GPUS] for r in rows])
        spaces[sp] = (devices, d, p)
    devices = spaces["nb201"][0]
    res = {}  # (device, space, row) -> list of (mape, spearman) over seeds
    picked = {}
    for sp, (devs, d, p) in spaces.items():
        for j, dv in enumerate(devs):
            ok = np.isfinite(d["y"][:, j]) & (d["batch"] == 1)
            arch = sorted(set(n.split("@")[0] for n, o in zip(d["name"], ok) if o))
            for seed in range(a.seeds):
                shots = set(np.random.default_rng(seed).choice(arch, SHOTS, replace=False))
                shot = ok & np.array([n.split("@")[0] in shots for n in d["name"]])
                rest = ok & ~shot
                y = d["y"][:, j:j + 1]
                best = None
                for k, g in enumerate(GPUS):
                    f = batch_factors(p[shot, k:k + 1], y[shot], d["batch"][shot])
                    cal = p[:, k:k + 1] * f(d["batch"])
                    on_shots = scores(cal[shot, 0], y[shot, 0])[0]
                    if best is None or on_shots < best[0]:
                        best = (on_shots, g, cal[:, 0])
                picked.setdefault((dv, sp), []).append(best[1])
                res.setdefault((dv, sp, "gpu"), []).append(scores(best[2][rest], y[rest, 0])[:2])
                reg = logflops_fit(d["x"][shot], y[shot, 0])(d["x"])
                res.setdefault((dv, sp, "reg"), []).append(scores(reg[rest], y[rest, 0])[:2])
                best = None  # the hybrid: a + b log p + c log FLOPs, least squares on the ten
                for k in range(len(GPUS)):
                    A = np.column_stack([np.ones(len(p)), np.log(p[:, k]), d["x"][:, 0]])
                    w, *_ = np.linalg.lstsq(A[shot], np.log(y[shot, 0]), rcond=None)
                    hyb = np.exp(A @ w)
                    on_shots = scores(hyb[shot], y[shot, 0])[0]
                    if best is None or on_shots < best[0]:
                        best = (on_shots, hyb)
                res.setdefault((dv, sp, "hyb"), []).append(scores(best[1][rest], y[rest, 0])[:2])
    out = ["# A device the GPU predictor never saw: ten measured networks", "",
           "Regenerated by `/usr/bin/python3 benchmarks/new_device.py` on %s (%s)." % (time.strftime("%Y-%m-%d"), machine()),
           "", __doc__.split("\n\n", 1)[1].split("\n    /usr/bin")[0].strip(), "",
           "Mean over %d draws of the ten networks (seeds 0 to %d); the GPU calibrated from is the one picked "
           "most often." % (a.seeds, a.seeds - 1), "",
           "| device | NB201: transfer_gpu.seer + seercalibrate | NB201: log-FLOPs regression on the ten | "
           "NB201: both | FBNet: transfer_gpu.seer + seercalibrate | FBNet: log-FLOPs regression on the ten | "
           "FBNet: both |", "|---|---|---|---|---|---|---|"]
    wins = hwins = 0
    for dv in devices:
        cells = []
        for sp in ("nb201", "fbnet"):
            for row in ("gpu", "reg", "hyb"):
                m = np.mean(res[(dv, sp, row)], axis=0)
                cell = "%.1f / %.2f" % (m[0], m[1])
                if row == "gpu":
                    g = max(GPUS, key=picked[(dv, sp)].count)  # ties: the first in GPUS
                    cell += " (from %s)" % g
                cells.append(cell)
            wins += np.mean(res[(dv, sp, "gpu")], axis=0)[0] < np.mean(res[(dv, sp, "reg")], axis=0)[0]
            hwins += np.mean(res[(dv, sp, "hyb")], axis=0)[0] < np.mean(res[(dv, sp, "reg")], axis=0)[0]
        out.append("| %s | %s |" % (dv, " | ".join(cells)))
    tiny = []  # labels far below the rest: any relative error on them dominates a mean
    for sp, (devs, d, p) in spaces.items():
        for j, dv in enumerate(devs):
            y = d["y"][:, j][np.isfinite(d["y"][:, j])]
            k = int((y < np.median(y) / 100).sum())
            if k:
                tiny.append("%s %s: %d of %d networks timed under 1/100 of the median (%.3g ms against %.3g ms)"
                            % (sp, dv, k, len(y), y.min(), np.median(y)))
    out += ["", "Against the regression on the ten, the calibrated predictor has the lower MAPE in %d of %d cells, "
            "both at once in %d." % (wins, 2 * len(devices), hwins)]
    if tiny:
        out += ["", "Labels that dominate a mean MAPE whatever predicts them: " + "; ".join(tiny) + "."]
    out += ["", "Predictions and logs: `%s`." % a.work, ""]
    with open(a.out, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
