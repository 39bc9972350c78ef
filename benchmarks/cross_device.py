#!/usr/bin/env python3
"""Cross-device benchmark: the shipped CPU predictor on a CPU it never saw.

predictors/cpu_xeon.seer learned the design space's networks timed on one core of the Intel Xeon
development machine. datasets/space_cpu/measurements_epyc.jsonl holds the same networks timed the
same way (scripts/measure/measure.py, one pinned core, one thread) on an AMD EPYC machine that a
later session ran on. Every row is scored on the same EPYC graphs (a seeded test set of
architectures, all their batches):

- the Xeon predictor as shipped (its Xeon times taken as the EPYC's),
- the same rescaled to the EPYC with `seercalibrate --device cpu_xeon=cpu_epyc` from a handful of
  EPYC-measured architectures (what a user with a new CPU does: measure a few networks, calibrate),
- the regression of log time on log FLOPs and log bytes, fitted on the Xeon (then calibrated the
  same way) and fitted on the handful of EPYC architectures alone,
- the Xeon predictor's two recipes (configs/cpu_xeon.ini: PerfSAGE, and the same as a GCN)
  trained on the EPYC architectures outside the test set, alone and as one ensemble: what
  measuring a whole dataset on the new CPU buys,
- an ensemble of the calibrated Xeon pair and that pair (seerexport --ensemble, 4 members),
  written to WORK/cpu_epyc.seer: what predictors/cpu_epyc.seer ships.

    python3 benchmarks/cross_device.py [--work DIR] [--out benchmarks/cross_device.md]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from transfer import batch_factors, logflops_fit, machine, read_h5, scores  # noqa: E402

METRICS = ["train_ms", "infer_ms", "train_mb", "infer_mb"]
SPECS = os.path.join(ROOT, "datasets/space_cpu")  # every specs*.jsonl measured into its files
SHOTS = (10, 50)  # EPYC architectures measured for calibration
TEST_SHARE = 0.4  # of the EPYC architectures outside every shot set
# the two models of predictors/cpu_xeon.seer: configs/cpu_xeon.ini as it is, and with these overrides
RECIPES = {"perfsage": [], "gcn": ["model.name=gcn", "model.hidden=128", "model.blocks=3", "model.head_hidden=64",
                                   "model.readout=pooled"]}


def run(cmd, log):
    with open(log, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit("cross_device.py: failed (%d): %s\n  see %s" % (r.returncode, " ".join(cmd), log))


def make_dataset(a, lines, name, learn=True):
    """A PerfGraph file of these measurement lines (make_dataset.py, labels cpu_epyc_*); with
    --ref-normalize, the times of a set learned from (learn) put on the reference's median speed;
    with --infer-builder, every set's inference times of older builders left empty (not learned
    from, not scored)."""
    jl = os.path.join(a.work, name + ".jsonl")
    with open(jl, "w") as f:
        f.writelines(lines)
    out = os.path.join(a.work, name + ".h5")
    run([sys.executable, os.path.join(ROOT, "scripts/space/make_dataset.py"), "--specs", SPECS,
         "--measurements", jl, "-o", out, "--label-prefix", "cpu_epyc", "--onnx-dir",
         os.path.join(a.work, "onnx"), "--card", os.path.join(a.work, name + "_card.md"),
         "--seerconvert", os.path.join(a.build, "seerconvert")] +
        (["--ref-normalize", str(a.ref_normalize)] if learn and a.ref_normalize is not None else []) +
        (["--infer-builder", str(a.infer_builder)] if a.infer_builder is not None else []),
        os.path.join(a.work, name + ".log"))
    return out


def predictions(a, seer, h5, device):
    """seerpredict's per-graph predictions of the model's <device>_<metric> columns, in h5's order."""
    out = os.path.join(a.work, "%s.%s.csv" % (os.path.basename(seer), os.path.basename(h5)))
    run([os.path.join(a.build, "seerpredict"), seer, h5, "--predictions", out], out + ".log")
    with open(out) as f:
        rows = list(csv.DictReader(f))
    return np.array([[float(r["%s_%s" % (device, m)]) for m in METRICS] for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/seer-cross-device")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks/cross_device.md"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--predictor", default=os.path.join(ROOT, "predictors/cpu_xeon.seer"))
    ap.add_argument("--measurements", default=os.path.join(ROOT, "datasets/space_cpu/measurements_epyc.jsonl"))
    ap.add_argument("--xeon", default=os.path.join(ROOT, "datasets/cpu_xeon.h5"),
                    help="the Xeon dataset the regression is fitted on (configs/cpu_xeon.ini says how to build it)")
    ap.add_argument("--epochs", type=int, default=120, help="epochs of the model trained on the EPYC")
    ap.add_argument("--ref-normalize", type=float, default=None, metavar="POWER",
                    help="train and calibrate on times put on the reference network's median speed "
                         "(make_dataset.py --ref-normalize POWER); the test graphs keep their measured times")
    ap.add_argument("--infer-builder", type=int, default=None, metavar="N",
                    help="learn and score inference times only from measurements of PyTorch builder N or "
                         "later (make_dataset.py --infer-builder N; builder 1's forward pass held every "
                         "activation); training step and memory keep every pass")
    a = ap.parse_args()
    for p in (a.predictor, a.measurements, a.xeon):
        if not os.path.exists(p):
            sys.exit("cross_device.py: %s missing (see --help)" % p)
    os.makedirs(a.work, exist_ok=True)
    lines = [l for l in open(a.measurements) if l.strip()]
    recs = []
    for l in lines:
        try:
            recs.append(json.loads(l))
        except ValueError:
            pass  # a line a running measure.py is still writing
    recs = [r for r in recs if "train_time_ms" in r]  # measured (not out of memory)
    lines = [json.dumps(r) + "\n" for r in recs]
    device = sorted(set(r["device_name"] for r in recs))
    arch = sorted(set(r["id"] for r in recs))
    rng = np.random.default_rng(0)
    perm = list(rng.permutation(arch))
    shots = {k: set(perm[:k]) for k in SHOTS if k <= len(arch) // 4}
    rest = perm[max(shots.keys(), default=0):]
    test = set(rest[: int(len(rest) * TEST_SHARE)])
    train = set(rest) - test
    by = lambda ids: [l for l, r in zip(lines, recs) if r["id"] in ids]  # noqa: E731
    test_h5 = make_dataset(a, by(test), "test", learn=False)
    d = read_h5(test_h5, ["cpu_epyc_" + m for m in METRICS])
    xeon = read_h5(a.xeon, ["cpu_xeon_" + m for m in METRICS])
    cnn = np.array(["+" in f or f.split("/", 1)[1] in ("vgg", "inception", "resnext", "densenet", "mobilenet")
                    for f in d["family"]])
    rows = [("cpu_xeon.seer as shipped", predictions(a, a.predictor, test_h5, "cpu_xeon"))]
    reg = np.column_stack([logflops_fit(xeon["x"], xeon["y"][:, k])(d["x"]) for k in range(len(METRICS))])
    shot_h5 = {k: make_dataset(a, by(ids), "shots%d" % k) for k, ids in sorted(shots.items())}
    for k in sorted(shots):
        cal = os.path.join(a.work, "cpu_epyc_cal%d.seer" % k)
        run([os.path.join(a.build, "seercalibrate"), a.predictor, shot_h5[k], "-o", cal, "--device",
             "cpu_xeon=cpu_epyc"], cal + ".log")
        rows.append(("cpu_xeon.seer + seercalibrate, %d EPYC architectures" % k,
                     predictions(a, cal, test_h5, "cpu_epyc")))
    rows.append(("log-FLOPs regression fitted on the Xeon", reg))
    for k in sorted(shots):
        s = read_h5(shot_h5[k], ["cpu_epyc_" + m for m in METRICS])
        at_shots = np.column_stack([logflops_fit(xeon["x"], xeon["y"][:, j])(s["x"]) for j in range(len(METRICS))])
        f = batch_factors(at_shots, s["y"], s["batch"])(d["batch"])  # as seercalibrate: by batch
        rows.append(("log-FLOPs regression fitted on the Xeon, calibrated on %d EPYC architectures" % k, reg * f))
        rows.append(("log-FLOPs regression fitted on %d EPYC architectures alone" % k,
                     np.column_stack([logflops_fit(s["x"], s["y"][:, j])(d["x"]) for j in range(len(METRICS))])))
    secs, trained = {}, []
    if len(train) >= 50:
        train_h5 = make_dataset(a, by(train), "train")
        for recipe, sets in RECIPES.items():  # the two models of cpu_xeon.seer, trained on the EPYC
            name = "epyc_run" if recipe == "perfsage" else "epyc_" + recipe
            t0 = time.time()
            cmd = [os.path.join(a.build, "seertrain"), os.path.join(ROOT, "configs/cpu_xeon.ini"), "--quiet"]
            for s in sets + ["data.path=" + train_h5, "data.labels=" + ",".join("cpu_epyc_" + m for m in METRICS),
                             "data.train_frac=0.85", "data.val_frac=0.1", "train.epochs=%d" % a.epochs,
                             "train.threads=1", "output.dir=" + a.work, "output.run=" + name, "output.plot=0"]:
                cmd += ["--set", s]
            run(cmd, os.path.join(a.work, name + ".log"))
            secs[recipe] = time.time() - t0
            seer = os.path.join(a.work, name + ".seer")
            run([os.path.join(a.build, "seerexport"), os.path.join(a.work, name), "-o", seer], seer + ".log")
            trained.append(seer)
            rows.append(("cpu_xeon.ini's recipe%s trained on %d other EPYC architectures"
                         % ("" if recipe == "perfsage" else " as a " + recipe.upper(), len(train)),
                         predictions(a, seer, test_h5, "cpu_epyc")))
        both = os.path.join(a.work, "epyc_pair.seer")
        run([os.path.join(a.build, "seerexport"), "--ensemble"] + trained + ["-o", both], both + ".log")
        rows.append(("the two above as one ensemble (the pair cpu_xeon.seer is, trained on the EPYC)",
                     predictions(a, both, test_h5, "cpu_epyc")))
        if shots:  # both sources of knowledge in one predictor: what predictors/cpu_epyc.seer ships
            k = max(shots)
            ens = os.path.join(a.work, "cpu_epyc.seer")
            run([os.path.join(a.build, "seerexport"), "--ensemble", os.path.join(a.work, "cpu_epyc_cal%d.seer" % k),
                 both, "-o", ens], ens + ".log")
            rows.append(("ensemble of the Xeon pair calibrated on %d EPYC architectures and the pair trained on %d "
                         "(seerexport --ensemble: 4 members, the Xeon's knowledge and the EPYC's weighing alike)"
                         % (k, len(train)), predictions(a, ens, test_h5, "cpu_epyc")))
    n_cfg = len(lines)
    opts = ("" if a.ref_normalize is None else " --ref-normalize %g" % a.ref_normalize) + \
        ("" if a.infer_builder is None else " --infer-builder %d" % a.infer_builder)
    out = ["# A CPU the predictor never saw: Intel Xeon -> AMD EPYC", "",
           "Regenerated by `/usr/bin/python3 benchmarks/cross_device.py%s` on %s (%s)." % (
               opts,
               time.strftime("%Y-%m-%d"), machine()),
           "",
           "`predictors/cpu_xeon.seer` learned the design space timed on one core of the Intel Xeon development "
           "machine; `datasets/space_cpu/measurements_epyc.jsonl` times the same specs the same way on one core of "
           "an AMD EPYC (device name %s; %d configurations of %d architectures so far). Every row is scored on the same "
           "%d EPYC graphs: %d architectures (%d CNNs' graphs, %d of ConvNeXt, ViT, DeiT and MLP-Mixer) drawn with "
           "seed 0 from those not used to calibrate or train. Cells are MAPE %% / Spearman; the last two columns "
           "give the time MAPE (training step / inference) on the CNNs and on the other families." % (" / ".join(repr(x) for x in device), n_cfg, len(arch),
                                                                       len(d["y"]), len(test), cnn.sum(), (~cnn).sum())
           + ("" if a.infer_builder is None else " Inference times are learned and scored only where PyTorch builder "
              "%d or later measured them (--infer-builder): %d of the test graphs." % (
                  a.infer_builder, int(np.isfinite(d["y"][:, 1]).sum()))),
           "",
           "| predictor on the EPYC | train ms | infer ms | train MB | infer MB | CNNs: train / infer ms | other families: train / infer ms |",
           "|---|---|---|---|---|---|---|"]
    for name, pred in rows:
        cells = []
        for j in range(len(METRICS)):
            sc = scores(pred[:, j], d["y"][:, j])
            cells.append("%.1f / %.3f" % sc[:2] if sc else "-")
        for sel in (cnn, ~cnn):
            t = [scores(pred[sel, j], d["y"][sel, j]) for j in (0, 1)]
            cells.append(" / ".join("%.1f" % s[0] for s in t) if all(t) else "-")
        out.append("| %s | %s |" % (name, " | ".join(cells)))
    ratio = np.nanmedian(d["y"] / rows[0][1], axis=0)
    out += ["", "Median EPYC / Xeon-predicted ratio on the test graphs: %s." % ", ".join(
        "%s %.2f" % (m, r) for m, r in zip(METRICS, ratio))]
    if secs:
        out.append("Trained on the EPYC (%d epochs, one thread): %s. The last row is what `predictors/cpu_epyc.seer` "
                   "ships (copied from the work folder)." % (a.epochs, ", ".join("%s %.0f s" % kv for kv in secs.items())))
    out += ["", "Runs, logs and the calibrated predictors: `%s`." % a.work, ""]
    with open(a.out, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))


if __name__ == "__main__":
    main()
