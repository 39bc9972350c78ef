#!/usr/bin/env python3
"""Transfer benchmark: predictors scored on networks from a search space they never saw.

    /usr/bin/python3 benchmarks/transfer.py [--quick] [--jobs 2] [--out benchmarks/transfer.md]

Regenerates benchmarks/transfer.md:

1. NAS-Bench-201 -> FBNet and FBNet -> NAS-Bench-201 (datasets/nb201.h5 from
   `nb201_build.py`, datasets/fbnet.h5 from `fbnet_build.py`): each model is trained
   on one space (the three GPUs both spaces measured: 1080ti, 2080ti, titan_rtx; every batch of
   that space), its best checkpoint exported and scored with `seerpredict --predictions` on every
   graph of the other space. Reported at the shared batches (1 and 32): MAPE and Spearman per GPU
   and batch, and their mean.
2. Leave-one-style-out on the design space measured on a CPU (--cpu: the Xeon's, the EPYC's or the
   2.6 GHz Xeon's (xeon26) measurements in datasets/space_cpu/, default the machine it runs on; built into
   WORK/space_<cpu>.h5 with scripts/space/make_dataset.py): for each stage style, every
   network that has a stage of that style is the test split (data.test_family), the others train;
   labels train_time_ms and infer_time_ms.
3. Leave one family out on the widened space on the same CPU (the CNNs above plus the ConvNeXt,
   ViT, DeiT and MLP-Mixer networks of specs_w.jsonl, WORK/space_all.h5): each of the four
   families held out in turn (every network with a stage of it), and all four at once (trained
   on CNNs alone: CNN -> transformers).
   Sections 2 and 3 take the measurement files as they are (a running measure.py's last,
   incomplete line is left out) and say how many configurations they hold.

Models: seernet as PerfSeer describes it (target = log, no clamp), seernet / perfsage / gcn with
[model] target = roofline and clamp = range, the linear baseline (ridge on a bag of operators,
roofline target), the fitted roofline cost alone (model.name = cost: the target's analytic part
with no learned residual), and a least-squares regression of log y on log FLOPs and log bytes (the floor
every learned model must beat). The models in SEEDED train with train.seed 1..--seeds in section 1:
the table gives each seed's figures (how far single runs fall apart) and ensembles of the seeds
(`seerexport --ensemble`, scored like any export). --skip-loso / --skip-families keep those
sections from the existing output file, marked with where they came from; --skip-gpu keeps section 1
and regenerates the CPU sections. --quick trains on 6,000 graphs of each GPU space for 6 epochs
(the committed table says which mode made it).
"""
import argparse
import concurrent.futures as cf
import csv
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPUS = ["1080ti_infer_ms", "2080ti_infer_ms", "titan_rtx_infer_ms"]
SHARED_BATCHES = [1, 32]
SHOTS = 10  # target architectures measured for the calibrated rows
STYLES = ["vgg", "inception", "resnext", "densenet", "mobilenet"]
NEW_FAMILIES = ["convnext", "vit", "deit", "mixer"]
HOLDOUTS = [[f] for f in NEW_FAMILIES] + [NEW_FAMILIES]  # leave-one-family-out, then all four
CPU_LABELS = ["train_time_ms", "infer_time_ms"]
# --cpu -> the measurement files of datasets/space_cpu: (CNN stages of specs_r, the widened families of specs_w)
CPUS = {"xeon": (["measurements_xeon.jsonl"], ["measurements_xeon.jsonl", "measurements_xeon_w.jsonl"]),
        "epyc": (["measurements_epyc.jsonl"], ["measurements_epyc.jsonl"]),
        "xeon26": (["measurements_xeon26.jsonl"], ["measurements_xeon26.jsonl"])}

# name -> seertrain overrides (the roofline variants are this round's extrapolating options)
ROOF = ["model.target=roofline", "model.clamp=range"]
MODELS = {
    "seernet (paper)": ["model.name=seernet", "model.hidden=64", "model.blocks=1"],
    "seernet roofline": ["model.name=seernet", "model.hidden=64", "model.blocks=1"] + ROOF,
    "perfsage roofline": ["model.name=perfsage", "model.hidden=64", "model.blocks=2",
                          "model.head_hidden=64"] + ROOF,
    "perfsage roofline additive": ["model.name=perfsage", "model.hidden=64", "model.blocks=2",
                                   "model.head_hidden=64", "model.readout=additive"] + ROOF,
    "gcn roofline": ["model.name=gcn", "model.hidden=128", "model.blocks=3",
                     "model.head_hidden=64"] + ROOF,
    "linear roofline": ["model.name=linear"] + ROOF,
    "cost roofline": ["model.name=cost"] + ROOF,  # the fitted roofline cost alone, no learned residual
    # the same with the light operators' bytes priced apart (seerconvert's log_mem_light: datasets
    # converted on 2026-12-03 or later)
    "cost roofline_light": ["model.name=cost", "model.target=roofline_light", "model.clamp=range"],
}

# trained with several seeds (--seeds): their spread, and ensembles of them (seerexport --ensemble)
SEEDED = ["perfsage roofline", "perfsage roofline additive"]


def run(cmd, log):
    with open(log, "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.exit("transfer.py: failed (%d): %s\n  see %s" % (r.returncode, " ".join(cmd), log))


def read_h5(path, labels):
    import h5py
    with h5py.File(path, "r") as f:
        names = [x.decode() if isinstance(x, bytes) else x for x in f["/graph/name"][:]]
        fam = [x.decode() if isinstance(x, bytes) else x for x in f["/graph/family"][:]]
        cols = [x.decode() if isinstance(x, bytes) else x for x in f["/schema/labels"][:]]
        gcols = [x.decode() if isinstance(x, bytes) else x for x in f["/schema/global_features"][:]]
        y = f["/label/y"][:]
        xg = f["/global/x"][:]
    Y = np.stack([y[:, cols.index(l)] for l in labels], 1).astype(np.float64)
    X = np.stack([xg[:, gcols.index(c)] for c in ("log_flops_total", "log_mem_total")], 1)
    batch = np.array([int(n.rsplit("@bs", 1)[1]) for n in names])
    return {"name": names, "family": fam, "y": Y, "x": X.astype(np.float64), "batch": batch}


def spearman(p, y):
    rp, ry = np.argsort(np.argsort(p)), np.argsort(np.argsort(y))
    return float(np.corrcoef(rp, ry)[0, 1])


def scores(pred, y):
    ok = np.isfinite(y)
    p, t = pred[ok], y[ok]
    if len(t) < 3:
        return None
    return 100 * float(np.mean(np.abs(p - t) / t)), spearman(p, t), int(len(t))


def calibration_groups(d):
    """The architectures (name before @bs) measured for calibration: SHOTS of them, seeded."""
    arch = sorted(set(n.split("@")[0] for n in d["name"]))
    rng = np.random.default_rng(0)
    return set(rng.choice(arch, size=SHOTS, replace=False))


def batch_factors(pred, y, batch):
    """What `seercalibrate` fits on graphs measured at these batches: per label, the median measured /
    predicted at each batch with 3 graphs or more (over all graphs when none has); returns
    at(batches) -> the factors (len, labels), log-linear in log1p(batch) between those batches,
    constant beyond them."""
    knots = []
    for k in range(pred.shape[1]):
        x, f = [], []
        for b in np.unique(batch):
            ok = np.isfinite(y[:, k]) & (batch == b)
            if ok.sum() >= 3:
                x.append(np.log1p(np.float32(b))), f.append(np.log(np.median(y[ok, k] / pred[ok, k])))
        ok = np.isfinite(y[:, k])
        if not x and ok.any():
            x, f = [0.0], [np.log(np.median(y[ok, k] / pred[ok, k]))]
        knots.append((x, f))

    def at(batches):
        lb = np.log1p(np.asarray(batches).astype(np.float32)).astype(np.float64)
        return np.column_stack([np.exp(np.interp(lb, x, f)) if x else np.ones(len(lb)) for x, f in knots])
    return at


def power_fit(pred, y, batch):
    """What `seercalibrate --power` fits on graphs measured at these batches: per label, log y = a_j +
    b log prediction by least squares, a_j one per batch with 3 graphs or more (one over all graphs
    when none has), b shared; returns apply(pred, batches) -> the calibrated predictions,
    (prediction x f)^b with log f = a_j / b log-linear in log1p(batch) between those batches,
    constant beyond them (raises where seercalibrate refuses: predictions within 5%, b outside
    [0.2, 5])."""
    fits = []
    for k in range(pred.shape[1]):
        ok = np.isfinite(y[:, k]) & (y[:, k] > 0) & (pred[:, k] > 0)
        groups = [b for b in np.unique(batch[ok]) if (ok & (batch == b)).sum() >= 3]
        sel = [ok & (batch == b) for b in groups] or [ok]
        if not ok.any():
            fits.append(None)
            continue
        lp = [np.log(pred[s, k]) for s in sel]
        ly = [np.log(y[s, k]) for s in sel]
        sxx = sum(float(np.sum((p - p.mean()) ** 2)) for p in lp)
        sxy = sum(float(np.sum((p - p.mean()) * (q - q.mean()))) for p, q in zip(lp, ly))
        n = sum(len(p) for p in lp)
        if n < 3 or sxx < 0.05 ** 2 * n or not 0.2 <= sxy / sxx <= 5:
            raise ValueError("seercalibrate --power refuses label %d (%d graphs, b = %.3g)" % (k, n, sxy / max(sxx, 1e-300)))
        b = sxy / sxx
        x = [float(np.log1p(np.float32(g))) for g in groups] or [0.0]
        fits.append((b, x, [(q.mean() - b * p.mean()) / b for p, q in zip(lp, ly)]))

    def apply(p, batches):
        lb = np.log1p(np.asarray(batches).astype(np.float32)).astype(np.float64)
        return np.column_stack([p[:, k] if f is None else np.exp(f[0] * (np.log(p[:, k]) + np.interp(lb, f[1], f[2])))
                                for k, f in enumerate(fits)])
    return apply


def calibrate_power(pred, d, shots):
    """calibrate() with `seercalibrate --power`'s fit."""
    shot = np.array([n.split("@")[0] in shots for n in d["name"]])
    return power_fit(pred[shot], d["y"][shot], d["batch"][shot])(pred, d["batch"]), ~shot


def calibrate(pred, d, shots):
    """Each label's predictions times seercalibrate's factors from the graphs of the shot
    architectures; returns them and the mask of the graphs left to score."""
    shot = np.array([n.split("@")[0] in shots for n in d["name"]])
    return pred * batch_factors(pred[shot], d["y"][shot], d["batch"][shot])(d["batch"]), ~shot


def logflops_fit(X, y):
    """log y = a + b log FLOPs + c log bytes, least squares on the finite labels."""
    ok = np.isfinite(y)
    A = np.column_stack([np.ones(ok.sum()), X[ok]])
    w, *_ = np.linalg.lstsq(A, np.log(y[ok]), rcond=None)
    return lambda Xn: np.exp(np.column_stack([np.ones(len(Xn)), Xn]) @ w)


def train(a, name, sets, run_dir, log):
    cmd = [a.seertrain, os.path.join(ROOT, "configs/multi.ini"), "--quiet"]
    for s in sets + MODELS[name] + ["output.dir=" + os.path.dirname(run_dir),
                                     "output.run=" + os.path.basename(run_dir), "train.threads=1"]:
        cmd += ["--set", s]
    run(cmd, log)


def predict(a, seer, h5, csv_out, log):
    run([a.seerpredict, seer, h5, "--predictions", csv_out], log)


def gpu_job(a, src, dst, name, seed=1):
    """One model trained on space src (with this train.seed), scored on every graph of dst."""
    tag = "%s_to_%s_%s%s" % (src, dst, name.replace(" ", "_").replace("(", "").replace(")", ""),
                             "_seed%d" % seed if seed != 1 else "")
    run_dir = os.path.join(a.work, tag)
    sets = ["data.path=" + a.data[src], "data.labels=" + ",".join(GPUS), "train.multi_task=sum",
            "train.epochs=%d" % a.epochs, "data.train_frac=0.8", "data.val_frac=0.1",
            "data.limit=%d" % a.limit, "train.seed=%d" % seed]
    if not (a.reuse and os.path.exists(run_dir + ".csv")):
        train(a, name, sets, run_dir, run_dir + ".log")
        predict(a, export(a, run_dir), a.data[dst], run_dir + ".csv", run_dir + ".predict.log")
    with open(run_dir + ".csv") as f:
        pred = np.array([[float(r[l]) for l in GPUS] for r in csv.DictReader(f)])
    with open(os.path.join(run_dir, "summary.json")) as f:
        s = json.load(f)
    return tag, pred, s["train_seconds"], s["mean_test_mape"], run_dir + ".seer"


def export(a, run_dir):
    out = run_dir + ".seer"
    run([a.seerexport, run_dir, "-o", out], run_dir + ".export.log")
    return out


def holds(family, members):
    """Whether a graph's family ("space/a+b": the styles of its stages) has any of members among its
    parts: a network with one ConvNeXt stage is held out with the ConvNeXt family (the hybrids of
    specs_y / specs_z name several), or the family it is held out from would train."""
    return bool(set(family.split("/", 1)[-1].split("+")) & set(members))


def loso_job(a, style, name, families):
    held = sorted(f for f in families if holds(f, [style]))
    tag = "loso_%s_%s_%s" % (a.cpu, style, name.replace(" ", "_").replace("(", "").replace(")", ""))
    run_dir = os.path.join(a.work, tag)
    sets = ["data.path=" + a.space, "data.labels=" + ",".join(CPU_LABELS), "train.multi_task=sum",
            "data.test_family=" + ",".join(held), "data.train_frac=0.8", "data.val_frac=0.1",
            "train.epochs=%d" % a.loso_epochs, "train.batch_size=16"]
    if not (a.reuse and os.path.exists(os.path.join(run_dir, "summary.json"))):
        train(a, name, sets, run_dir, run_dir + ".log")
    with open(os.path.join(run_dir, "summary.json")) as f:
        s = json.load(f)
    return tag, {l: (s["test"][l]["mape"], s["test"][l]["spearman"], s["test"][l]["n"]) for l in CPU_LABELS}


def lofo_job(a, held, name, families):
    tag = "lofo_%s_%s_%s" % (a.cpu, "+".join(held), name.replace(" ", "_").replace("(", "").replace(")", ""))
    run_dir = os.path.join(a.work, tag)
    sets = ["data.path=" + a.space_all, "data.labels=" + ",".join(CPU_LABELS), "train.multi_task=sum",
            "data.test_family=" + ",".join(sorted(f for f in families if holds(f, held))), "data.train_frac=0.8",
            "data.val_frac=0.1", "train.epochs=%d" % a.loso_epochs, "train.batch_size=16"]
    if not (a.reuse and os.path.exists(os.path.join(run_dir, "summary.json"))):
        train(a, name, sets, run_dir, run_dir + ".log")
    with open(os.path.join(run_dir, "summary.json")) as f:
        s = json.load(f)
    return tag, {l: (s["test"][l]["mape"], s["test"][l]["spearman"], s["test"][l]["n"]) for l in CPU_LABELS}


def lofo(a, names):
    a.space_all = os.path.join(a.work, "space_all_%s.h5" % a.cpu)
    sd = os.path.join(ROOT, "datasets/space_cpu")
    if not (a.reuse and os.path.exists(a.space_all)):  # --reuse: the data the kept runs trained on
        run([sys.executable, os.path.join(ROOT, "scripts/space/make_dataset.py"), "--specs", sd, "--measurements",
             ",".join(cpu_measurements(a, "w", CPUS[a.cpu][1])),
             "-o", a.space_all, "--onnx-dir", os.path.join(a.work, "space_all_onnx_" + a.cpu),
             "--card", os.path.join(a.work, "space_all_card_%s.md" % a.cpu), "--seerconvert",
             os.path.join(a.build, "seerconvert")], os.path.join(a.work, "space_all_build_%s.log" % a.cpu))
    sp = read_h5(a.space_all, CPU_LABELS)
    families = sorted(set(sp["family"]))
    counts = {f: len({n.split("@")[0] for n, g in zip(sp["name"], sp["family"]) if holds(g, [f])})
              for f in NEW_FAMILIES}
    res = {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(lofo_job, a, h, m, families): (tuple(h), m) for h in HOLDOUTS for m in MODELS}
        for f in cf.as_completed(futs):
            h, m = futs[f]
            res[(h, m)] = f.result()[1]
            print("transfer.py: leave out %s, %s done" % ("+".join(h), m), flush=True)
    for h in HOLDOUTS:  # the regression: trained on the networks of the other families
        held = np.array([holds(f, h) for f in sp["family"]])
        res[(tuple(h), "log-FLOPs regression")] = {
            l: scores(logflops_fit(sp["x"][~held], sp["y"][~held, k])(sp["x"][held]), sp["y"][held, k])
            for k, l in enumerate(CPU_LABELS)}
    heads = ["without %s" % h[0] if len(h) == 1 else "CNNs only (without all four)" for h in HOLDOUTS]
    lines = ["## Leave one family out: CNNs, ConvNeXt, ViT, DeiT and MLP-Mixer on the %s" % cpu_name(a, "w"), "",
             "%d graphs (%d architectures x batch 1/4/16: the CNNs of section 2 and %s) measured with "
             "scripts/measure/measure.py; the test split is every network with a stage of the held-out family "
             "(data.test_family), "
             "the rest trains (80/10 train/val, the 10%% test share trains too), %d epochs. Cells: MAPE %% / "
             "Spearman of train_time_ms, then infer_time_ms."
             % (len(sp["y"]), len(set(n.split("@")[0] for n in sp["name"])),
                ", ".join("%d %s" % (counts[f], f) for f in NEW_FAMILIES), a.loso_epochs), "",
             "| model | " + " | ".join(heads) + " |", "|---" * (1 + len(HOLDOUTS)) + "|"]
    for m in names:
        cells = ["<br>".join(fmt(res[(tuple(h), m)][l]) for l in CPU_LABELS) for h in HOLDOUTS]
        lines.append("| %s | %s |" % (m, " | ".join(cells)))
    return lines + [""]


def fmt(s):
    return "-" if s is None else "%.1f / %.2f" % (s[0], s[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="6,000 graphs per GPU space, 6 epochs, 30 LOSO epochs")
    ap.add_argument("--jobs", type=int, default=1, help="trainings run at once (one thread each)")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks/transfer.md"))
    ap.add_argument("--work", default="/tmp/seer-transfer")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--loso-epochs", type=int, default=None, help="epochs of the leave-one-style-out runs "
                    "(default 30 with --quick, else 80)")
    ap.add_argument("--reuse", action="store_true",
                    help="keep the runs already in WORK (a finished run's summary and predictions) and the "
                    "CPU datasets built there, so new runs train on the same data as the kept ones")
    ap.add_argument("--skip-loso", action="store_true", help="only the two GPU spaces")
    ap.add_argument("--seeds", type=int, default=3,
                    help="train.seed 1..N of the models in SEEDED (%s): the spread between seeds and "
                         "their ensembles (seerexport --ensemble); 1: no seeds beyond the first" % ", ".join(SEEDED))
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of the learned models (default: all): " + ", ".join(MODELS))
    ap.add_argument("--skip-families", action="store_true", help="leave out section 3 (the widened space)")
    ap.add_argument("--skip-gpu", action="store_true",
                    help="keep section 1 (the GPU spaces) from the existing --out file and regenerate the CPU "
                         "sections only (a line under the header says which run made them)")
    ap.add_argument("--merge", action="store_true",
                    help="section 1 only (with --skip-loso --skip-families): put the rows of --models into the "
                         "existing --out file, replacing theirs, and keep every other row and section as it is")
    here = "epyc" if "EPYC" in machine() else "xeon"
    ap.add_argument("--cpu", choices=sorted(CPUS), default=here,
                    help="whose CPU measurements sections 2 and 3 train on (default: this machine's, %s)" % here)
    a = ap.parse_args()
    if a.merge and not (a.skip_loso and a.skip_families and os.path.exists(a.out)):
        ap.error("--merge needs --skip-loso, --skip-families and an existing --out file")
    if a.skip_gpu and (a.merge or not os.path.exists(a.out)):
        ap.error("--skip-gpu keeps section 1 of an existing --out file (%s) and goes without --merge" % a.out)
    unknown = [m for m in a.models.split(",") if m not in MODELS]
    if unknown:
        ap.error("--models: unknown %s (known: %s)" % (", ".join(unknown), ", ".join(MODELS)))
    for m in [m for m in MODELS if m not in a.models.split(",")]:
        del MODELS[m]
    a.seertrain, a.seerexport, a.seerpredict = (os.path.join(a.build, t) for t in ("seertrain", "seerexport", "seerpredict"))
    a.data = {"nb201": os.path.join(ROOT, "datasets/nb201.h5"), "fbnet": os.path.join(ROOT, "datasets/fbnet.h5")}
    a.limit, a.epochs, loso_epochs = (6000, 6, 30) if a.quick else (0, 10, 80)
    a.loso_epochs = a.loso_epochs or loso_epochs
    os.makedirs(a.work, exist_ok=True)
    lines = kept_gpu(a) if a.skip_gpu else gpu_sections(a)
    single = list(MODELS) + ["log-FLOPs regression"]
    old = open(a.out).read().split("\n") if os.path.exists(a.out) else []
    for skipped, header, fn in ((a.skip_loso, "## Leave one stage style out", loso),
                                (a.skip_families, "## Leave one family out", lofo)):
        if not skipped:
            lines += fn(a, single)
        else:
            lines += kept_section(old, header)
    lines += ["Commands behind each cell: the run folders and logs under `%s` (seertrain `--set` overrides "
              "in each `*.log`'s config echo)." % a.work, ""]
    if a.merge:
        lines = merged(old, lines, list(MODELS), a)
    with open(a.out + ".tmp", "w") as f:
        f.write("\n".join(lines))
    os.replace(a.out + ".tmp", a.out)
    print("transfer.py: wrote %s" % a.out)


def kept_gpu(a):
    """--skip-gpu: section 1 and what the two tables disagree on, as the existing --out file has them,
    with a line under its header naming this run (the CPU sections that follow are this run's)."""
    old = open(a.out).read().split("\n")
    end = next((i for i, l in enumerate(old) if l.startswith("## Leave one") or l.startswith("Commands behind")),
               len(old))
    drop = {i for i, l in enumerate(old[:end]) if l.startswith("Sections 2 and 3 (the CPU) regenerated")}
    drop |= {i - 1 for i in drop if i > 0 and not old[i - 1].strip()}  # and the blank line this run put before it
    lines = [l for i, l in enumerate(old[:end]) if i not in drop]
    while len(lines) > 1 and not lines[-1].strip() and not lines[-2].strip():
        lines.pop()
    at = next((i + 1 for i, l in enumerate(lines) if l.startswith("Regenerated by")), len(lines))
    lines[at:at] = ["", "Sections 2 and 3 (the CPU) regenerated on %s by `/usr/bin/python3 benchmarks/transfer.py "
                    "--skip-gpu --cpu %s --loso-epochs %d --models \"%s\" --jobs %d%s` (%s)%s; section 1 is the "
                    "regeneration's above." % (time.strftime("%Y-%m-%d"), a.cpu, a.loso_epochs, ",".join(MODELS),
                                               a.jobs, " --reuse --work %s" % a.work if a.reuse else "", machine(),
                                               ": with --reuse the runs already in %s were kept and only the "
                                               "missing ones trained" % a.work if a.reuse else "")]
    return lines


def gpu_sections(a):
    """Section 1: both GPU spaces' transfer tables, the seeds, and what the two tables disagree on."""
    for k, p in a.data.items():
        if not os.path.exists(p):
            sys.exit("transfer.py: %s missing: build it with /usr/bin/python3 scripts/datasets/%s" %
                     (p, "nb201_build.py" if k == "nb201" else "fbnet_build.py"))
    data = {k: read_h5(p, GPUS) for k, p in a.data.items()}
    results, meta = {}, {}
    seeded = [m for m in SEEDED if m in MODELS]
    jobs = [(s, d, m, seed) for seed in range(1, a.seeds + 1) for s, d in (("nb201", "fbnet"), ("fbnet", "nb201"))
            for m in MODELS if seed == 1 or m in seeded]
    seers = {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(gpu_job, a, s, d, m, seed): (s, d, m, seed) for s, d, m, seed in jobs}
        for f in cf.as_completed(futs):
            s, d, m, seed = futs[f]
            tag, pred, secs, ins, seers[(s, d, m, seed)] = f.result()
            results[(s, d, m, seed)], meta[(s, d, m, seed)] = pred, (secs, ins)
            if seed == 1:
                results[(s, d, m)], meta[(s, d, m)] = pred, (secs, ins)
            print("transfer.py: %s -> %s %-18s seed %d trained in %.0f s (in-space test MAPE %.2f%%)"
                  % (s, d, m, seed, secs, ins), flush=True)
    # the log-FLOPs regression, fitted on the source's training graphs (the first limit graphs)
    for s, d in (("nb201", "fbnet"), ("fbnet", "nb201")):
        src, dst = data[s], data[d]
        n = a.limit or len(src["y"])
        pred = np.column_stack([logflops_fit(src["x"][:n], src["y"][:n, k])(dst["x"]) for k in range(len(GPUS))])
        results[(s, d, "log-FLOPs regression")] = pred
        meta[(s, d, "log-FLOPs regression")] = (0.0, float("nan"))
    # ensembles of the seeded runs (seerexport --ensemble), scored like any exported model
    ensembles = {}
    if a.seeds > 1:
        for m in seeded:
            ensembles["ensemble: %s, seeds 1-%d" % (m, a.seeds)] = [(m, k) for k in range(1, a.seeds + 1)]
        if len(seeded) > 1:
            ensembles["ensemble: %s, seeds 1-%d each" % (" + ".join(seeded), a.seeds)] = \
                [(m, k) for m in seeded for k in range(1, a.seeds + 1)]
    for s, d in (("nb201", "fbnet"), ("fbnet", "nb201")):
        for i, (e, members) in enumerate(ensembles.items()):
            out = os.path.join(a.work, "%s_to_%s_ensemble%d" % (s, d, i))
            run([a.seerexport, "--ensemble"] + [seers[(s, d, m, k)] for m, k in members] + ["-o", out + ".seer"],
                out + ".export.log")
            predict(a, out + ".seer", a.data[d], out + ".csv", out + ".predict.log")
            with open(out + ".csv") as f:
                results[(s, d, e)] = np.array([[float(r[l]) for l in GPUS] for r in csv.DictReader(f)])
            meta[(s, d, e)] = (sum(meta[(s, d, m, k)][0] for m, k in members), float("nan"))
    names = list(MODELS) + list(ensembles) + ["log-FLOPs regression"]
    lines = ["# Transfer between search spaces", "",
             "Regenerated by `/usr/bin/python3 benchmarks/transfer.py%s` on %s (%s; %.0f min of training in all)."
             % ((" --quick" if a.quick else "") + (" --reuse --work %s" % a.work if a.reuse else ""),
                time.strftime("%Y-%m-%d"), machine(),
                sum(v[0] for k, v in meta.items() if len(k) == 4) / 60)
             + (" With --reuse: the runs and CPU datasets already under %s were kept and only the missing "
                "runs trained (the minutes above are section 1's trainings, kept or new)." % a.work if a.reuse else ""), "",
             "Every figure is on networks of a space the model never saw in training. Cells are MAPE % / Spearman.",
             "Training: %s graphs of the source space (every batch), %d epochs, 80/10/10 split; scored on every "
             "graph of the target space at the batches both spaces measured (1 and 32)."
             % ("the first %d" % a.limit if a.limit else "all", a.epochs), "",
             "Targets (issue: generalisation): Spearman >= 0.9 and MAPE <= 15% on both directions; the best model at "
             "least as good as the log-FLOPs regression.", "",
             "Rows marked *+10 measured* rescale each label's predictions at each batch by one factor, the median of "
             "measured / predicted over %d target architectures at that batch (seeded; what `seercalibrate` does "
             "with a file of them), and score the other graphs: what a user gets after measuring a handful of "
             "networks of the new space (HELP's few-shot setting). Rows marked *+10 measured, --power* fit "
             "`seercalibrate --power` on the same architectures instead: a factor per batch and one exponent per "
             "label, y = (prediction x factor)^b, least squares in log." % SHOTS, ""]
    for s, d in (("nb201", "fbnet"), ("fbnet", "nb201")):
        dst = data[d]
        lines += ["## %s -> %s" % (s, d), "",
                  "| model | in-space test MAPE | train s | " + " | ".join("%s bs%d" % (g.split("_infer")[0], b) for g in GPUS for b in SHARED_BATCHES) + " | mean |",
                  "|---" * (4 + len(GPUS) * len(SHARED_BATCHES)) + "|"]
        shots = calibration_groups(dst)
        for m in names:
            for calibrated in (False, True, "power"):
                pred = results[(s, d, m)]
                keep = np.ones(len(pred), bool)
                if calibrated == "power":
                    try:
                        pred, keep = calibrate_power(pred, dst, shots)
                    except ValueError:  # seercalibrate --power would refuse: no row
                        continue
                elif calibrated:
                    pred, keep = calibrate(pred, dst, shots)
                cells, mp, sp = table_cells(pred, dst, keep)
                secs, ins = meta[(s, d, m)]
                lines.append("| %s | %s | %s | %s | %.1f / %.3f |" % (
                    m + (" *+%d measured, --power*" % SHOTS if calibrated == "power" else
                         " *+%d measured*" % SHOTS if calibrated else ""),
                    "-" if math.isnan(ins) or calibrated else "%.2f%%" % ins,
                    "%.0f" % secs if secs and not calibrated else "-",
                    " | ".join(cells), np.mean(mp), np.mean(sp)))
        lines.append("")
        if a.seeds > 1:  # how far single runs of one recipe fall apart
            lines += ["Seeds (train.seed 1 to %d, nothing else changed), each run's mean MAPE / Spearman over the six "
                      "cells above:" % a.seeds, ""]
            for m in seeded:
                runs = [table_cells(results[(s, d, m, k)], dst, np.ones(len(dst["y"]), bool))[1:]
                        for k in range(1, a.seeds + 1)]
                mm, ss = [np.mean(r[0]) for r in runs], [np.mean(r[1]) for r in runs]
                lines.append("- %s: %s; spread %.1f points of MAPE, %.3f of Spearman" % (
                    m, ", ".join("%.1f / %.3f" % x for x in zip(mm, ss)), max(mm) - min(mm), max(ss) - min(ss)))
            lines.append("")
    lines += consistency(data)
    return lines


def merged(old, new, models, a):
    """--merge: the existing file with the rows of these models in section 1's tables replaced by (or
    added from) this run's, before the ensembles and the regression; everything else kept."""
    mine = lambda row: any(row.startswith("| %s |" % m) or row.startswith("| %s *+" % m) for m in models)  # noqa: E731
    out, section, fresh = [], None, {}
    for line in new:  # this run's rows, by section
        section = line if line.startswith("## ") else section
        if section and mine(line):
            fresh.setdefault(section, []).append(line)
    if not any(l.startswith("## ") and l in fresh for l in old):
        sys.exit("transfer.py: --merge: %s has none of this run's sections (run without --merge first)" % a.out)
    section, placed = None, set()
    for line in old:
        if line.startswith("## "):
            section = line
        if section in fresh and mine(line):
            continue  # replaced below
        if section in fresh and section not in placed and (line.startswith("| ensemble") or
                                                           line.startswith("| log-FLOPs regression")):
            out += fresh[section]
            placed.add(section)
        out.append(line)
        if line.startswith("Regenerated by"):
            out += ["", "Rows of %s: merged into it on %s by `/usr/bin/python3 benchmarks/transfer.py --merge "
                    "--models \"%s\" --skip-loso --skip-families --seeds 1` (%s); the other rows are the "
                    "regeneration's above." % (", ".join(models), time.strftime("%Y-%m-%d"), ",".join(models),
                                                machine())]
    return out


def consistency(data):
    """What the two latency tables say about the same GPUs, independent of any model: how much
    slower batch 32 is than batch 1, and each GPU against the 1080 Ti, median over architectures."""
    lines = ["## What the two spaces' tables disagree on", "",
             "Ratios of measured latencies, median over each space's architectures; no model involved. Both "
             "spaces' networks run the same GPUs at the same batches. A batch ratio may differ between the rows "
             "because the networks do (a network with more arithmetic gains less from batching); a ratio between "
             "two GPUs at batch 1, where both spaces' small networks are bound by kernel launches, has little room to differ "
             "but through the two tables' measurement setups (host, driver, clocks), and here the 2080 Ti and "
             "the Titan RTX swap places. A model learns the source table's GPU ratios from its labels and "
             "carries them to the target, where no feature of the graph can correct them (measuring the target "
             "can: the *+10 measured* rows, whose factor per GPU and batch takes exactly such ratios from ten "
             "target networks).", "",
             "| space | " + " | ".join("%s bs32 / bs1" % g.split("_infer")[0] for g in GPUS) + " | " +
             " | ".join("%s / %s, bs%d" % (g.split("_infer")[0], GPUS[0].split("_infer")[0], b)
                        for b in SHARED_BATCHES for g in GPUS[1:]) + " |",
             "|---" * (1 + len(GPUS) + len(SHARED_BATCHES) * (len(GPUS) - 1)) + "|"]
    for name, d in data.items():
        arch = np.array([n.split("@")[0] for n in d["name"]])
        cells = []
        for k in range(len(GPUS)):
            per = [dict(zip(arch[d["batch"] == b], d["y"][d["batch"] == b, k])) for b in SHARED_BATCHES]
            r = [per[1][x] / per[0][x] for x in per[0] if x in per[1]]
            cells.append("%.2f" % np.nanmedian(r))
        for b in SHARED_BATCHES:
            y = d["y"][d["batch"] == b]
            cells += ["%.2f" % np.nanmedian(y[:, k] / y[:, 0]) for k in range(1, len(GPUS))]
        lines.append("| %s | %s |" % (name, " | ".join(cells)))
    return lines + [""]


def table_cells(pred, dst, keep):
    """The cells of one row (each GPU and shared batch) and their MAPE and Spearman lists."""
    cells, mp, sp = [], [], []
    for k in range(len(GPUS)):
        for b in SHARED_BATCHES:
            sel = (dst["batch"] == b) & keep
            sc = scores(pred[sel, k], dst["y"][sel, k])
            cells.append(fmt(sc))
            if sc:
                mp.append(sc[0]), sp.append(sc[1])
    return cells, mp, sp


def kept_section(old, header):
    """A section this run skipped, kept from the previous file with where it came from."""
    start = [i for i, l in enumerate(old) if l.startswith(header)]
    if not start:
        return []
    end = start[0] + 1
    while end < len(old) and not old[end].startswith("## ") and not old[end].startswith("Commands behind"):
        end += 1
    made = next((l for l in old if l.startswith("Regenerated by") or l.startswith("*Kept from")), "")
    note = old[start[0] + 2] if start[0] + 2 < len(old) and old[start[0] + 2].startswith("*Kept from") else \
        "*Kept from the previous file (this run skipped the section): %s*" % made.split(" With --reuse")[0]
    body = [l for l in old[start[0] + 1:end] if not l.startswith("*Kept from")]
    while body and not body[0].strip():
        body.pop(0)
    return [old[start[0]], "", note, ""] + body


def loso(a, names):
    a.space = os.path.join(a.work, "space_%s.h5" % a.cpu)
    if not (a.reuse and os.path.exists(a.space)):  # --reuse: the data the kept runs trained on
        run([sys.executable, os.path.join(ROOT, "scripts/space/make_dataset.py"), "--specs",
             os.path.join(ROOT, "datasets/space_cpu/specs_r.jsonl"), "--measurements",
             ",".join(cpu_measurements(a, "r", CPUS[a.cpu][0])), "-o", a.space,
             "--onnx-dir", os.path.join(a.work, "space_onnx_" + a.cpu),
             "--card", os.path.join(a.work, "space_card_%s.md" % a.cpu),
             "--seerconvert", os.path.join(a.build, "seerconvert")], os.path.join(a.work, "space_build_%s.log" % a.cpu))
    sp = read_h5(a.space, CPU_LABELS)
    families = sorted(set(sp["family"]))
    res = {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(loso_job, a, st, m, families): (st, m) for st in STYLES for m in MODELS}
        for f in cf.as_completed(futs):
            st, m = futs[f]
            res[(st, m)] = f.result()[1]
            print("transfer.py: leave out %s, %s done" % (st, m), flush=True)
    for st in STYLES:  # the regression: trained on the networks without the style
        held = np.array([holds(f, [st]) for f in sp["family"]])
        out = {}
        for k, l in enumerate(CPU_LABELS):
            pred = logflops_fit(sp["x"][~held], sp["y"][~held, k])(sp["x"][held])
            out[l] = scores(pred, sp["y"][held, k])
        res[(st, "log-FLOPs regression")] = out
    lines = ["## Leave one stage style out: the design space on the %s" % cpu_name(a, "r"), "",
             "%d graphs (%d architectures x batch 1/4/16) measured with scripts/measure/measure.py; for each style "
             "the test split is every network with a stage of that style (data.test_family), the rest trains "
             "(80/10 train/val, the 10%% test share trains too), %d epochs. Cells: MAPE %% / Spearman of train_time_ms, then infer_time_ms."
             % (len(sp["y"]), len(set(n.split("@")[0] for n in sp["name"])), a.loso_epochs), "",
             "| model | " + " | ".join("without %s" % st for st in STYLES) + " |", "|---" * (1 + len(STYLES)) + "|"]
    for m in names:
        cells = []
        for st in STYLES:
            r = res[(st, m)]
            cells.append("<br>".join(fmt(r[l]) for l in CPU_LABELS))
        lines.append("| %s | %s |" % (m, " | ".join(cells)))
    return lines + [""]


def cpu_measurements(a, part, files):
    """Copies of the measurement files under WORK: their complete lines (measure.py may be appending to
    them), for part "r" only the CNN-stage architectures (ids r...: specs_r.jsonl's), for part "w"
    those and the widened families' (ids w...: specs_w.jsonl's; the later files' deep, large and
    hybrid networks are left out, so "CNNs only" holds no attention or ConvNeXt stage)."""
    out = []
    for fn in files:
        dst = os.path.join(a.work, "%s.%s" % (part, fn))
        with open(os.path.join(ROOT, "datasets/space_cpu", fn)) as f, open(dst, "w") as o:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue  # the line a running measure.py is writing (or a blank one)
                if r["id"].startswith("r") or (part == "w" and r["id"].startswith("w")):
                    o.write(line if line.endswith("\n") else line + "\n")
        out.append(dst)
    return out


def cpu_name(a, part):
    """The section's machine (the device_name its measurements record) and its files."""
    files = CPUS[a.cpu][0 if part == "r" else 1]
    with open(os.path.join(ROOT, "datasets/space_cpu", files[0])) as f:
        device = json.loads(f.readline()).get("device_name", a.cpu)
    return "%s (datasets/space_cpu/%s)" % (device, ", ".join(files))


def machine():
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        model = "unknown CPU"
    return "%s, one thread per training" % model


if __name__ == "__main__":
    main()
