#!/usr/bin/env python3
"""SeerNet on the H200's own labels (issue 18, item 4): in-space accuracy per metric, and the
leave-one-style-out transfer.

    /usr/bin/python3 benchmarks/h200.py [--jobs 1] [--seeds 3] [--out benchmarks/h200.md]

Builds WORK/h200.h5 from datasets/space_h200 (scripts/space/make_dataset.py --label-prefix h200
--infer-builder 2: every measured configuration, the ones measured twice averaged; NVML readings
of 0 left empty; the inference labels of the 2026-11-30 lines, whose PyTorch builder held every
activation in the forward pass, left empty), then:

1. In-space, PerfSeer's protocol: a 2:1:1 split by architecture (every batch of one network in
   one split, data.split_seed 0), configs/space_cpu.ini's schedule (200 epochs at most, plateau,
   early stop 40), SeerNet as the paper describes it (hidden 64, one block, target = log):
   "single", one model per metric, and "multi", one trunk with a head per metric trained with
   PCGrad; each with train.seed 1..--seeds, the table giving the mean over seeds and the range.
   Metrics: the training step and inference times, peak memory and SM utilisation of each (the
   six of PerfSeer's; energy is left out: NVML's counter read 0 on 417 of the 992 inference
   configurations kept). The floor: a least-squares regression of log y on log FLOPs and log bytes fitted
   on the training and validation architectures.
2. Leave one stage style out, as benchmarks/transfer.py does on the CPUs: for each of the five
   styles every network with a stage of that style is the test split, the others train (80/10, the
   test share trains too), --loso-epochs epochs; labels training step time, inference time and
   training peak memory; the models of MODELS and the log-FLOPs regression.

Both sections also score the batches of 128 and 256 alone: at 64 and below the H200's times are
bound by PyTorch's host-side launches and jitter by 4 to 11% (datasets/space_h200/README.md).
"""
import argparse
import concurrent.futures as cf
import csv
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import transfer  # noqa: E402  (MODELS, STYLES, read_h5, scores, logflops_fit)

ROOT = transfer.ROOT
METRICS = ["h200_train_ms", "h200_infer_ms", "h200_train_mb", "h200_infer_mb",
           "h200_trainutil_pct", "h200_inferutil_pct"]
LOSO_LABELS = ["h200_train_ms", "h200_infer_ms", "h200_train_mb"]
PAPER = transfer.MODELS["seernet (paper)"]
PEAK = ["model.target=roofline_peak", "model.clamp=range"]
# name -> seertrain overrides: PerfSeer's SeerNet, and the extrapolating variants (the shipped CPU
# recipe's target, roofline_peak: configs/README.md)
MODELS = {
    "seernet (paper)": PAPER,
    "seernet roofline_peak": PAPER + PEAK,
    "perfsage additive roofline_peak": ["model.name=perfsage", "model.hidden=64", "model.blocks=2",
                                        "model.head_hidden=64", "model.readout=additive"] + PEAK,
    "cost roofline_peak": ["model.name=cost"] + PEAK,
}
# in-space: (row name, model, multi_task): "single" trains one model per metric
IN_SPACE = [("SeerNet single (paper)", "seernet (paper)", "single"),
            ("SeerNet-Multi, PCGrad (paper)", "seernet (paper)", "pcgrad"),
            ("SeerNet roofline_peak, summed", "seernet roofline_peak", "sum"),
            ("PerfSAGE additive roofline_peak, summed", "perfsage additive roofline_peak", "sum"),
            ("roofline_peak cost alone", "cost roofline_peak", "sum")]
LOSO_MODELS = list(MODELS)
BIG = 128  # batches at or above it: the GPU-bound configurations


def run(cmd, log):
    with open(log, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit("h200.py: failed (%d): %s\n  see %s" % (r.returncode, " ".join(cmd), log))


def train(a, run_dir, sets):
    """One seertrain run (configs/space_cpu.ini plus sets) unless --reuse finds it finished."""
    if a.reuse and os.path.exists(os.path.join(run_dir, "test_predictions.csv")):
        return run_dir
    cmd = [os.path.join(a.build, "seertrain"), os.path.join(ROOT, "configs/space_cpu.ini"), "--quiet"]
    for s in sets + ["data.path=" + a.h5, "output.dir=" + a.work, "output.run=" + os.path.basename(run_dir),
                     "train.threads=1", "output.plot=0"]:
        cmd += ["--set", s]
    t0 = time.time()
    run(cmd, run_dir + ".log")
    print("h200.py: %s done in %.0f s" % (os.path.basename(run_dir), time.time() - t0), flush=True)
    return run_dir


def predictions(run_dir, labels):
    """{label: (names, measured, predicted)} from a run's test_predictions.csv (finite labels)."""
    with open(os.path.join(run_dir, "test_predictions.csv")) as f:
        rows = list(csv.DictReader(f))
    out = {}
    for l in labels:
        keep = [r for r in rows if r.get(l) not in (None, "", "nan") and np.isfinite(float(r[l]))]
        out[l] = ([r["name"] for r in keep], np.array([float(r[l]) for r in keep]),
                  np.array([float(r[l + "_pred"]) for r in keep]))
    return out


def batch_of(name):
    return int(name.rsplit("@bs", 1)[1])


def score_parts(names, y, p):
    """(all, batches >= BIG): each (MAPE %, Spearman, n) or None."""
    big = np.array([batch_of(n) >= BIG for n in names], dtype=bool)
    return transfer.scores(p, y), transfer.scores(p[big], y[big])


def regression(d, test_names, label):
    """The log-FLOPs floor: fitted on every graph not in test_names, scored on those."""
    k = d["labels"].index(label)
    test = np.array([n in test_names for n in d["name"]])
    fit = transfer.logflops_fit(d["x"][~test], d["y"][~test, k])
    names = [n for n, t in zip(d["name"], test) if t]
    y, ok = d["y"][test, k], np.isfinite(d["y"][test, k])
    return [n for n, o in zip(names, ok) if o], y[ok], fit(d["x"][test][ok])


def cell(parts):
    """'MAPE / Spearman' of all batches, then of batches >= BIG."""
    return " / ".join("-" if s is None else "%.1f%%" % s[0] for s in parts) + \
        " (%s)" % ("-" if parts[0] is None else "%.3f" % parts[0][1])


def in_space(a, d):
    base = ["data.split=fractions", "data.train_frac=0.5", "data.val_frac=0.25", "data.split_seed=0"]
    jobs = {}
    for seed in range(1, a.seeds + 1):
        for row, model, mt in IN_SPACE:
            tag = model.replace(" ", "_").replace("(", "").replace(")", "")
            sets = base + MODELS[model] + ["train.seed=%d" % seed]
            if mt == "single":
                for m in METRICS:
                    jobs[(row, m, seed)] = (os.path.join(a.work, "single_%s_s%d" % (m, seed)) if model == "seernet (paper)"
                                            else os.path.join(a.work, "single_%s_%s_s%d" % (tag, m, seed)),
                                            sets + ["data.labels=" + m])
            else:
                jobs[(row, None, seed)] = (os.path.join(a.work, "multi_s%d" % seed) if mt == "pcgrad"
                                           and model == "seernet (paper)" else
                                           os.path.join(a.work, "multi_%s_%s_s%d" % (tag, mt, seed)),
                                           sets + ["data.labels=" + ",".join(METRICS), "train.multi_task=" + mt])
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {k: ex.submit(train, a, *v) for k, v in jobs.items()}
        done = {k: f.result() for k, f in futs.items()}
    res = {}  # (row, metric) -> [parts per seed]
    test_names = None
    for (row, m, seed), rd in sorted(done.items(), key=lambda kv: kv[0][2]):
        labels = [m] if m is not None else METRICS
        pr = predictions(rd, labels)
        for l in labels:
            res.setdefault((row, l), []).append(score_parts(*pr[l]))
        if test_names is None:
            test_names = set(pr[labels[0]][0])
    rows = [r for r, _, _ in IN_SPACE]
    lines = ["## In-space: a 2:1:1 split by architecture", "",
             "%d graphs (%d architectures x 9 batches); test split %d graphs of %d architectures (the same "
             "for every run: data.split_seed 0). Cells: test MAPE over all batches / over batches 128 and 256 "
             "(Spearman of all), the mean of train.seed 1..%d; in brackets, each seed's MAPE over all batches. "
             "Single: one model per metric; the others one model for the six."
             % (len(d["name"]), len({n.split("@")[0] for n in d["name"]}), len(test_names),
                len({n.split("@")[0] for n in test_names}), a.seeds), "",
             "| metric | " + " | ".join(rows) + " | log-FLOPs regression |", "|---" * (len(rows) + 2) + "|"]
    means = {k: [] for k in rows + ["regression"]}
    for m in METRICS:
        cells = [m]
        for row in rows:
            runs = res[(row, m)]
            mean = tuple(None if any(r[i] is None for r in runs) else
                         (float(np.mean([r[i][0] for r in runs])), float(np.mean([r[i][1] for r in runs])), runs[0][i][2])
                         for i in (0, 1))
            means[row].append(mean)
            cells.append(cell(mean) + ("<br>[" + ", ".join("%.1f" % r[0][0] for r in runs) + "]" if len(runs) > 1 else ""))
        reg = score_parts(*regression(d, test_names, m))
        means["regression"].append(reg)
        cells.append(cell(reg))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("| **mean of the six** | " + " | ".join(
        "**%.2f%% / %.2f%%**" % (np.mean([s[0][0] for s in means[k]]), np.mean([s[1][0] for s in means[k]]))
        for k in rows + ["regression"]) + " |")
    lines += ["", "PerfSeer reports a mean MAPE of 5.14% (single) and 7.75% (multi) on its own 53k "
              "configurations of this space, measured on its GPUs.", ""]
    return lines


def loso(a, d):
    families = sorted(set(d["family"]))
    base = ["data.train_frac=0.8", "data.val_frac=0.1", "data.labels=" + ",".join(LOSO_LABELS),
            "train.multi_task=sum", "train.epochs=%d" % a.loso_epochs, "train.early_stop=0"]
    jobs = {}
    for st in transfer.STYLES:
        held = sorted(f for f in families if st in f.split("/", 1)[1].split("+"))
        for m in LOSO_MODELS:
            tag = "loso_%s_%s" % (st, m.replace(" ", "_").replace("(", "").replace(")", ""))
            jobs[(st, m)] = (os.path.join(a.work, tag), base + MODELS[m] + ["data.test_family=" + ",".join(held)])
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {k: ex.submit(train, a, *v) for k, v in jobs.items()}
        done = {k: f.result() for k, f in futs.items()}
    lines = ["## Leave one stage style out", "",
             "For each style the test split is every network with a stage of that style "
             "(data.test_family), the others train (80/10, the test share trains too), %d epochs, the "
             "three labels summed. Cells: MAPE over all batches / over batches 128 and 256 (Spearman of all), "
             "for the training step time, the inference time, then the training step's peak memory."
             % a.loso_epochs, "",
             "| model | " + " | ".join("without %s (%d archs)" % (st, len({n.split("@")[0] for n, f in zip(d["name"], d["family"])
                                                                      if st in f.split("/", 1)[1].split("+")}))
                                   for st in transfer.STYLES) + " |", "|---" * (1 + len(transfer.STYLES)) + "|"]
    for m in LOSO_MODELS + ["log-FLOPs regression"]:
        cells = []
        for st in transfer.STYLES:
            if m == "log-FLOPs regression":
                held = {n for n, f in zip(d["name"], d["family"]) if st in f.split("/", 1)[1].split("+")}
                parts = [score_parts(*regression(d, held, l)) for l in LOSO_LABELS]
            else:
                pr = predictions(done[(st, m)], LOSO_LABELS)
                parts = [score_parts(*pr[l]) for l in LOSO_LABELS]
            cells.append("<br>".join(cell(p) for p in parts))
        lines.append("| %s | %s |" % (m, " | ".join(cells)))
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default="/tmp/seer-h200")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks/h200.md"))
    ap.add_argument("--jobs", type=int, default=1, help="trainings at once (one thread each)")
    ap.add_argument("--seeds", type=int, default=3, help="train.seed 1..N of the in-space runs")
    ap.add_argument("--loso-epochs", type=int, default=80)
    ap.add_argument("--reuse", action="store_true", help="keep finished runs and the dataset in WORK")
    ap.add_argument("--skip-loso", action="store_true")
    a = ap.parse_args()
    if a.seeds < 1 or a.jobs < 1 or a.loso_epochs < 1:
        sys.exit("h200.py: --seeds, --jobs and --loso-epochs take positive whole numbers")
    os.makedirs(a.work, exist_ok=True)
    a.h5 = os.path.join(a.work, "h200.h5")
    meas = os.path.join(ROOT, "datasets/space_h200/measurements.jsonl")
    if not (a.reuse and os.path.exists(a.h5)):
        run([sys.executable, os.path.join(ROOT, "scripts/space/make_dataset.py"), "--specs",
             os.path.join(ROOT, "datasets/space_h200/specs.jsonl"), "--measurements", meas, "-o", a.h5,
             "--label-prefix", "h200", "--infer-builder", "2", "--onnx-dir", os.path.join(a.work, "onnx"),
             "--card", os.path.join(a.work, "h200_card.md"),
             "--seerconvert", os.path.join(a.build, "seerconvert")], os.path.join(a.work, "dataset.log"))
    d = transfer.read_h5(a.h5, METRICS)
    d["labels"] = METRICS
    with open(meas) as f:
        leases = sorted({json.loads(l).get("lease", "?") for l in f if l.strip()})
    lines = ["# SeerNet on the H200's labels (issue 18, item 4)", "",
             "Generated by `/usr/bin/python3 benchmarks/h200.py --jobs %d --seeds %d --loso-epochs %d` on %s, %s. "
             "Data: datasets/space_h200 (%s), built into a PerfGraph file by scripts/space/make_dataset.py "
             "(`--label-prefix h200`)." % (a.jobs, a.seeds, a.loso_epochs, transfer.machine(),
                                           time.strftime("%Y-%m-%d"), ", ".join(leases)), ""]
    lines += in_space(a, d)
    if not a.skip_loso:
        lines += loso(a, d)
    with open(a.out, "w") as f:
        f.write("\n".join(lines))
    print("h200.py: wrote %s" % a.out)


if __name__ == "__main__":
    main()
