#!/usr/bin/env python3
"""A family never trained on, one model against an ensemble of two architectures.

Trains four recipes on datasets/cpu_xeon.h5 (the shipped CPU predictor's data) with one family
of the widened design space held out (data.test_family: ConvNeXt, ViT, DeiT, MLP-Mixer, then all
four: the CNNs alone train), and scores the held-out networks' training-step and inference time:
each recipe alone and ensembles of them (the geometric mean of the runs' test predictions, what
seerexport --ensemble predicts). Cells are time MAPE %, training step / inference; the last
column is the mean over the ten. What predictors/cpu_xeon.seer's choice of two architectures
rests on.

    python3 benchmarks/families_pair.py [--work DIR] [--epochs 80] [--seed N] [--recipes A,B]
Runs already in WORK (a summary.json) are kept; --seed N (train.seed, default 1) trains and
scores runs of that seed beside them.
"""
import argparse
import csv
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LABELS = ["cpu_xeon_train_ms", "cpu_xeon_infer_ms"]
HOLDOUTS = {"convnext": ["convnext"], "vit": ["vit"], "deit": ["deit"], "mixer": ["mixer"],
            "all four": ["convnext", "vit", "deit", "mixer"]}
PS = ["model.name=perfsage", "model.hidden=64", "model.blocks=2", "model.head_hidden=64"]
RECIPES = {  # as benchmarks/transfer.py's section 3, on the shipped dataset
    "perfsage additive": PS + ["model.readout=additive"],
    "perfsage": PS,
    "gcn": ["model.name=gcn", "model.hidden=128", "model.blocks=3", "model.head_hidden=64"],
    "linear": ["model.name=linear"],
}
ENSEMBLES = [("perfsage additive", "perfsage", "gcn"), ("perfsage additive", "gcn"),
             ("perfsage additive", "gcn", "linear"), tuple(RECIPES)]


def train(a, hold, recipe):
    run = os.path.join(a.work, "%s_%s%s" % (hold.replace(" ", "_"), recipe.replace(" ", "_"),
                                            "_seed%d" % a.seed if a.seed != 1 else ""))
    if not os.path.exists(os.path.join(run, "summary.json")):
        cmd = [os.path.join(a.build, "seertrain"), os.path.join(ROOT, "configs/multi.ini"), "--quiet"]
        for s in ["data.path=" + a.data, "data.labels=" + ",".join(LABELS), "train.multi_task=sum",
                  "data.test_family=" + ",".join("space/" + f for f in HOLDOUTS[hold]),
                  "data.train_frac=0.8", "data.val_frac=0.1", "train.epochs=%d" % a.epochs,
                  "train.batch_size=16", "model.target=roofline", "model.clamp=range", "train.threads=1",
                  "output.dir=" + a.work, "output.run=" + os.path.basename(run), "output.plot=0",
                  "train.seed=%d" % a.seed] + RECIPES[recipe]:
            cmd += ["--set", s]
        with open(run + ".log", "w") as f:
            if subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode:
                sys.exit("families_pair.py: training failed, see %s.log" % run)
        print("families_pair.py: without %s, %s done" % (hold, recipe), flush=True)
    with open(os.path.join(run, "test_predictions.csv")) as f:
        rows = list(csv.DictReader(f))
    return (np.array([[float(r[l]) for l in LABELS] for r in rows]),
            np.array([[float(r[l + "_pred"]) for l in LABELS] for r in rows]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/seer-families-pair")
    ap.add_argument("--data", default=os.path.join(ROOT, "datasets/cpu_xeon.h5"),
                    help="configs/cpu_xeon.ini says how to build it")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--epochs", type=int, default=80)
    ap.add_argument("--seed", type=int, default=1, help="train.seed of every run")
    ap.add_argument("--recipes", default=",".join(RECIPES), help="a subset of: " + ", ".join(RECIPES))
    a = ap.parse_args()
    recipes = a.recipes.split(",")
    bad = [r for r in recipes if r not in RECIPES]
    if bad:
        sys.exit("families_pair.py: unknown recipe %s (see --help)" % ", ".join(bad))
    if not os.path.exists(a.data):
        sys.exit("families_pair.py: %s missing (see --help)" % a.data)
    os.makedirs(a.work, exist_ok=True)
    runs = {(h, r): train(a, h, r) for h in HOLDOUTS for r in recipes}
    print("| recipe | " + " | ".join("without " + h for h in HOLDOUTS) + " | mean |")
    print("|---" * (len(HOLDOUTS) + 2) + "|")
    for combo in [(r,) for r in recipes] + [e for e in ENSEMBLES if all(r in recipes for r in e)]:
        cells, all_ = [], []
        for h in HOLDOUTS:
            y = runs[(h, combo[0])][0]
            p = np.exp(np.mean([np.log(runs[(h, r)][1]) for r in combo], axis=0))
            m = 100 * np.mean(np.abs(p / y - 1), axis=0)
            cells.append("%.1f / %.1f" % tuple(m))
            all_ += list(m)
        print("| %s | %s | %.1f |" % (" + ".join(combo), " | ".join(cells), np.mean(all_)))


if __name__ == "__main__":
    main()
