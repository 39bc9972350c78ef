#!/usr/bin/env python3
"""What one change buys on real networks: the CPU predictor's recipe trained two ways, scored on
the torchvision networks of benchmarks/real_networks.py.

A predictor trained on the design space (datasets/space_cpu) is judged on networks it never saw.
This script trains the recipes of predictors/cpu_epyc.seer (configs/cpu_xeon.ini's PerfSAGE and
its GCN variant, benchmarks/cross_device.py's RECIPES) on the EPYC measurements twice, all else
equal, and scores both on the real networks' measurements (benchmarks/real_networks_epyc*.jsonl,
the geometric mean of the two passes where both exist, the median of three where a third pass
retook the configurations the two disagree on) as `seerpredict` predicts them:

  --without-prefix P   arm B leaves out the architectures whose ids start with P (a slice of the
                       data, e.g. h: specs_h.jsonl, networks of one stage style throughout);
  --vs KEY=VALUE       arm B trains with these seertrain overrides (e.g. model.target=roofline_weights);
  --score NAME=F.seer  no training: score predictor files already made (repeat it; --device names
                       their labels, e.g. a shipped file against its retrained candidate);
                       --judge NETS|ADDEDn scores the networks a rule named apart, out of the others.

The networks of real_networks.py's ADDED4 (timm's) are left out (--include-held-out scores them
too): they were set aside, before they were measured, to judge a change to the shipped EPYC
predictor (they judged one on 2026-12-02 and are spent now; left out so that the tables before and
after stay comparable). ADDED3, the set before, judged the rebuild of 2026-12-02 and is spent.

--set KEY=VALUE applies to both arms. Two trainings differ by chance as much as a change may move
them (benchmarks/RESULTS.md, "Inference learned from the second builder only"), so every recipe
trains with every seed in --seeds, and the table gives each run and the ensemble of all of an arm's
runs (seerexport --ensemble), the error by group of networks (depthwise: MobileNet, MnasNet,
EfficientNet, RegNetY; DenseNets; the rest), and two baselines fitted on each arm's data: the
log-FLOPs regression of real_networks.py and the roofline cost alone (the non-negative least
relative squares fit the roofline targets divide by, src/data/prep.c, here in numpy: four terms,
constant, nodes, FLOPs, bytes; five with the weights' bytes), no network on top. --blend-cost
adds `[model] name = cost` fitted by seertrain on each arm (the same cost, as libseer predicts it),
alone and joined to the arm's runs at half the weight (seerexport --ensemble --weights).

    taskset -c 0 /usr/bin/python3 benchmarks/real_ablation.py --vs model.target=roofline_weights \
        [--seeds 1,2] [--recipes perfsage,gcn] [--epochs 120] [--jobs 1] [--out FILE.md]

Needs the build (seerconvert, seertrain, seerexport, seerpredict), the real networks' ONNX exports
(real_networks.py writes them to --onnx, default /tmp/seer-real-networks; torchvision to make
them) and their measurements.
"""
import argparse
import concurrent.futures as cf
import csv
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
import types

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import real_networks as rn  # noqa: E402
from cross_device import RECIPES, run  # noqa: E402
from transfer import machine  # noqa: E402

GROUPS = {"depthwise": ("mobilenet", "mnasnet", "efficientnet", "regnet_y"), "dense": ("densenet",)}
# the attention and ConvNeXt networks, whose memory the design space's networks (3 to 4 GFLOPs at
# most before specs_l.jsonl) over-predict at their size (benchmarks/RESULTS.md)
TRANSFORMERS = ("vit", "swin", "convnext", "maxvit")
# the real networks with a stage of more than four blocks, named before specs_d.jsonl (stages as deep
# as theirs) was measured, to judge it (datasets/space_cpu/README.md, "Seventh CPU run")
DEEP = ("densenet121", "densenet161", "densenet169", "densenet201", "resnet101", "resnet152", "resnext101_32x8d",
        "regnet_y_8gf", "regnet_x_8gf", "efficientnet_b4", "inception_v3", "mobilenet_v2")
COST_FEATURES = ("log_nodes", "log_flops_total", "log_mem_total", "log_weight_total")


def deep_text(nets):
    """The deep nets' sentence: which of DEEP were scored, and how many of the twelve that is."""
    got = [n for n in DEEP if n in nets]
    return "deep nets (a stage of more than four blocks; %d named before `specs_d.jsonl` was measured, %d of them " \
           "scored here): %s" % (len(DEEP), len(got), ", ".join(got) or "none")


def group(name):
    return next((g for g, keys in GROUPS.items() if any(name.startswith(k) for k in keys)), "rest")


def build(a, name, keep):
    """A PerfGraph file of the measured lines whose id passes keep (labels cpu_epyc_*)."""
    jl, out = os.path.join(a.work, name + ".jsonl"), os.path.join(a.work, name + ".h5")
    n = 0
    with open(a.measurements) as f, open(jl, "w") as o:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue  # the line a running measure.py is writing
            if "train_time_ms" in r and keep(r["id"]):
                o.write(json.dumps(r) + "\n")
                n += 1
    run([sys.executable, os.path.join(ROOT, "scripts/space/make_dataset.py"), "--specs",
         os.path.join(ROOT, "datasets/space_cpu"), "--measurements", jl, "-o", out, "--label-prefix", "cpu_epyc",
         "--onnx-dir", os.path.join(a.work, "onnx"), "--card", os.path.join(a.work, name + "_card.md"),
         "--seerconvert", os.path.join(a.build, "seerconvert")] +
        (["--infer-builder", str(a.infer_builder)] if a.infer_builder else []), os.path.join(a.work, name + ".log"))
    return out, n


def train(a, data, arm, sets, recipe, seed):
    name = "%s_%s_s%d" % (arm, recipe, seed)
    seer = os.path.join(a.work, name + ".seer")
    if a.reuse and os.path.exists(seer):  # its training time as the run recorded it
        try:
            return name, seer, float(json.load(open(os.path.join(a.work, name, "summary.json")))["train_seconds"])
        except (OSError, ValueError, KeyError):
            return name, seer, 0.0
    t0 = time.time()
    cmd = [os.path.join(a.build, "seertrain"), os.path.join(ROOT, "configs/cpu_xeon.ini"), "--quiet"]
    for kv in (["model.name=cost"] if recipe == "cost" else RECIPES[recipe]) + ["data.path=" + data, "data.labels=" + ",".join("cpu_epyc_" + m for m in rn.METRICS),
                                 "data.train_frac=0.85", "data.val_frac=0.1", "train.epochs=%d" % a.epochs,
                                 "train.seed=%d" % seed, "train.threads=1", "output.dir=" + a.work,
                                 "output.run=" + name, "output.plot=0"] + sets:
        cmd += ["--set", kv]
    run(cmd, os.path.join(a.work, name + ".log"))
    run([os.path.join(a.build, "seerexport"), os.path.join(a.work, name), "-o", seer], seer + ".log")
    return name, seer, time.time() - t0


def real_truth(a):
    """{(net, batch): {metric: measured}} over the passes that measured it (rn.truth: the geometric
    mean of two, the median of three); exits when a network measured has no ONNX export under --onnx."""
    cpu = getattr(a, "cpu_id", "")
    got = rn.truth(rn.pass_files(a.real, a.real2, getattr(a, "real3", None) or None), ref_scale(a),
                   keep=(lambda r: r.get("cpu_id") == cpu) if cpu else None)
    judged = judge_set(a)
    out = {}
    for k, y in got.items():
        if k[0] in rn.ADDED4 and not a.include_held_out:
            continue
        if getattr(a, "batch_set", None) and k[1] not in a.batch_set:
            continue
        if k[0] in rn.HELD_OUT and k[0] not in judged:  # scored only by the --judge they wait for
            continue
        out[k] = {m: y[rn.FIELDS[m]] for m in rn.METRICS}
    failed = rn.export_all(sorted({n for n, b in out}), a.onnx, getattr(a, "jobs", 1), "real_ablation.py")
    if failed:
        sys.exit("real_ablation.py: no ONNX export of %s under %s: %s" % (
            ", ".join(sorted(failed)), a.onnx, "; ".join("%s: %s" % kv for kv in sorted(failed.items()))))
    return out


def judge_set(a):
    """The networks --judge names (names, or groups of real_networks.py such as ADDED8)."""
    judged = set()
    for n in (x for x in getattr(a, "judge", "").split(",") if x):
        g = getattr(rn, n, None) if n.startswith("ADDED") else None
        if isinstance(g, dict):
            judged |= set(g)
        elif n in rn.NETS:
            judged.add(n)
        else:
            sys.exit("real_ablation.py: --judge %s: neither a network nor a group of real_networks.py" % n)
    return judged


def ref_scale(a):
    """--ref-normalize POWER: a line's time scaled by (the median ref_ms of the design-space lines
    of --measurements / the line's ref_ms)^POWER, make_dataset.py --ref-normalize's scaling, as if
    every real network had been timed when the machine ran at the training data's typical speed;
    memory unscaled. Without it: 1."""
    if not a.ref_normalize:
        return lambda r, m: 1.0
    refs = [r["ref_ms"] for r in rn.json_lines(a.measurements) if r.get("ref_ms")]
    if not refs:
        sys.exit("real_ablation.py: --ref-normalize: no ref_ms in %s" % a.measurements)
    mid = float(np.median(refs))

    def scale(r, m):
        if not m.endswith("_ms"):
            return 1.0
        if not r.get("ref_ms"):
            sys.exit("real_ablation.py: --ref-normalize: %s batch %s has no ref_ms" % (r["name"], r["batch"]))
        return (mid / r["ref_ms"]) ** a.ref_normalize
    return scale


def cached_real_h5(a):
    """WORK/real_<device>.h5: every real network not held out (ADDED4 included) over the passes of
    a.real and a.real2, converted once; a later call reuses the file. a: work, real, real2, onnx,
    build, device (the cost-term scripts' options)."""
    path = os.path.join(a.work, "real_%s.h5" % a.device)
    if not os.path.exists(path):
        ns = types.SimpleNamespace(real=a.real, real2=a.real2, real3=None, onnx=a.onnx, include_held_out=True,
                                   judge="", ref_normalize=0, measurements="", work=a.work, build=a.build,
                                   batch_set=set())
        real_h5(ns, real_truth(ns), device=a.device, name="real_" + a.device)
    return path


def real_h5(a, truth, device="cpu_epyc", name="real"):
    """The real networks as one PerfGraph file (seerconvert), labels <device>_<metric>, for the
    baselines' global features and for seercalibrate."""
    man, out = os.path.join(a.work, name + "_manifest.csv"), os.path.join(a.work, name + ".h5")
    with open(man, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["onnx", "batch", "name", "group", "family"] + [device + "_" + m for m in rn.METRICS])
        for g, ((net, b), y) in enumerate(sorted(truth.items())):
            w.writerow([os.path.join(a.onnx, net + ".onnx"), b, "%s@bs%d" % (net, b), g, "real"] +
                       [y[m] for m in rn.METRICS])
    run([os.path.join(a.build, "seerconvert"), "--manifest", man, "-o", out, "--threads", "1"], out + ".log")
    return out


def score(a, seer, truth, device="cpu_epyc"):
    """[(net, batch, measured, predicted)] from seerpredict --json, the labels <device>_<metric>."""
    class P:  # what real_networks.predict reads
        build, predictor = a.build, seer
    P.device = device
    rows = []
    for net in sorted({n for n, b in truth}):
        onnx = os.path.join(a.onnx, net + ".onnx")
        bs = sorted(b for n, b in truth if n == net)
        p = rn.predict(P, onnx, bs)
        if isinstance(p, str):
            sys.exit("real_ablation.py: %s on %s: %s" % (seer, net, p))
        for b in bs:
            rows.append((net, b, truth[(net, b)], p[b][1]))
    return rows


def read_graphs(path, device="cpu_epyc"):
    """A PerfGraph file's graph names, raw global features by name (log1p values) and <device>_*
    labels, in rn.METRICS order."""
    import h5py
    with h5py.File(path, "r") as f:
        dec = lambda xs: [x.decode() if isinstance(x, bytes) else x for x in xs]  # noqa: E731
        names, labels = dec(f["/graph/name"][:]), dec(f["/schema/labels"][:])
        g = dict(zip(dec(f["/schema/global_features"][:]), f["/global/x"][:].astype(np.float64).T))
        y = f["/label/y"][:]
    return names, g, np.stack([y[:, labels.index(device + "_" + m)] for m in rn.METRICS], 1).astype(np.float64)


def cost_fit(X, y):
    """min sum (A c / y - 1)^2 over c >= 0, A = [1, X]: every subset of terms solved by least
    squares, the feasible one with the least residual (prep.c's roof_nnls, exactly so)."""
    A = np.column_stack([np.ones(len(X)), X]) / y[:, None]
    best, c_best = np.inf, np.zeros(A.shape[1])
    for k in range(1, A.shape[1] + 1):
        for idx in itertools.combinations(range(A.shape[1]), k):
            c, *_ = np.linalg.lstsq(A[:, idx], np.ones(len(y)), rcond=None)
            if (c < 0).any():
                continue
            res = float(((A[:, idx] @ c - 1) ** 2).sum())
            if res < best:
                best, c_best = res, np.zeros(A.shape[1])
                c_best[list(idx)] = c
    return c_best


def cost_rows(train_h5, real, terms):
    """The roofline cost with these many terms, fitted per metric on train_h5, on the real graphs."""
    _, dg, dy = read_graphs(train_h5)
    names, rg, ry = read_graphs(real)
    X = np.expm1(np.column_stack([dg[f] for f in COST_FEATURES[: terms - 1]]))
    R = np.column_stack([np.ones(len(names))] + [np.expm1(rg[f]) for f in COST_FEATURES[: terms - 1]])
    preds = {}
    for k, m in enumerate(rn.METRICS):
        ok = np.isfinite(dy[:, k]) & (dy[:, k] > 0)
        preds[m] = R @ cost_fit(X[ok], dy[ok, k])
    out = []
    for i, n in enumerate(names):
        net, b = n.rsplit("@bs", 1)
        out.append((net, int(b), {m: float(ry[i, k]) for k, m in enumerate(rn.METRICS)},
                    {m: float(preds[m][i]) for m in rn.METRICS}))
    return out


def in_space(a, seer, arm, data_h5, first_run):
    """MAPE % of training step and inference on the arm's own held-out split (the graphs of
    first_run's test_predictions.csv: every run of an arm shares the split), as libseer predicts."""
    test = {r["name"]: r for r in csv.DictReader(open(os.path.join(a.work, first_run, "test_predictions.csv")))}
    out = seer + ".space.csv"
    r = subprocess.run([os.path.join(a.build, "seerpredict"), seer, data_h5, "--predictions", out],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("real_ablation.py: seerpredict %s %s: %s" % (seer, data_h5, r.stderr.strip()))
    errs = {"train_ms": [], "infer_ms": []}
    for row in csv.DictReader(open(out)):
        t = test.get(row["name"])
        for m in errs:
            y = t and t.get("cpu_epyc_" + m)
            if y not in (None, "", "nan"):
                errs[m].append(abs(float(row["cpu_epyc_" + m]) / float(y) - 1))
    return {"space " + m: 100 * float(np.mean(v)) if v else float("nan") for m, v in errs.items()}


def summary(rows, judged=()):
    """MAPE % per metric, inference MAPE by group, the median inference predicted / measured and the
    median (infer / train) predicted over measured; the networks in judged (--judge) apart too, and
    not among the others."""
    def mape(rs, m):
        return 100 * float(np.mean([abs(p[m] / y[m] - 1) for _, _, y, p in rs])) if rs else float("nan")
    s = {m: mape(rows, m) for m in ("train_ms", "infer_ms", "train_mb")}
    for g in list(GROUPS) + ["rest"]:
        s["infer " + g] = mape([r for r in rows if group(r[0]) == g], "infer_ms")
    for m, k in (("train_ms", "train"), ("infer_ms", "infer"), ("train_mb", "mem")):
        s[k + " deep"] = mape([r for r in rows if r[0] in DEEP], m)
        s[k + " shallow"] = mape([r for r in rows if r[0] not in DEEP and r[0] not in judged], m)
        if judged:
            s[k + " judged"] = mape([r for r in rows if r[0] in judged], m)
            s[k + " unjudged"] = mape([r for r in rows if r[0] not in judged], m)  # deep or not: every other
    tf = [r for r in rows if r[0].startswith(TRANSFORMERS)]
    s["train transformers"], s["mem transformers"] = mape(tf, "train_ms"), mape(tf, "train_mb")
    s["infer p/y"] = statistics.median(p["infer_ms"] / y["infer_ms"] for _, _, y, p in rows)
    s["ratio p/y"] = statistics.median((p["infer_ms"] / p["train_ms"]) / (y["infer_ms"] / y["train_ms"])
                                       for _, _, y, p in rows)
    return s


COLS = [("train_ms", "training step"), ("infer_ms", "inference"), ("train_mb", "memory"),
        ("infer depthwise", "inference, depthwise nets"), ("infer dense", "inference, DenseNets"),
        ("infer rest", "inference, the rest"),
        ("train deep", "training step, the deep nets"), ("infer deep", "inference, the deep nets"),
        ("mem deep", "memory, the deep nets"), ("train shallow", "training step, the others"),
        ("infer shallow", "inference, the others"), ("mem shallow", "memory, the others"),
        ("train judged", "training step, --judge"), ("infer judged", "inference, --judge"),
        ("mem judged", "memory, --judge"), ("train unjudged", "training step, all but --judge"),
        ("infer unjudged", "inference, all but --judge"), ("mem unjudged", "memory, all but --judge"),
        ("train transformers", "training step, ViT / Swin / ConvNeXt"),

        ("mem transformers", "memory, ViT / Swin / ConvNeXt"), ("infer p/y", "inference predicted / measured"),
        ("ratio p/y", "(infer / train) predicted / measured"),
        ("space train_ms", "design space held out: training step"), ("space infer_ms", "design space held out: inference")]


def overrides(items, flag):
    for kv in items:
        if "=" not in kv or kv.startswith("="):
            sys.exit("real_ablation.py: %s %r: give KEY=VALUE (a seertrain --set)" % (flag, kv))
    return list(items)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--without-prefix", default="", help="arm B: without the architectures whose ids start so")
    ap.add_argument("--vs", action="append", default=[], metavar="KEY=VALUE", help="arm B: these overrides")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="both arms: these overrides")
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--recipes", default="perfsage,gcn")
    ap.add_argument("--epochs", type=int, default=120)
    ap.add_argument("--jobs", type=int, default=1,
                    help="trainings at once, and ONNX exports at once of the measured networks not yet "
                         "under --onnx (each exported once, about 10 s on one core)")
    ap.add_argument("--infer-builder", type=int, default=2,
                    help="learn inference only from this PyTorch builder on (0: every line)")
    ap.add_argument("--measurements", default=os.path.join(ROOT, "datasets/space_cpu/measurements_epyc.jsonl"))
    ap.add_argument("--real", default=os.path.join(ROOT, "benchmarks/real_networks_epyc.jsonl"))
    ap.add_argument("--real2", default=os.path.join(ROOT, "benchmarks/real_networks_epyc_pass2.jsonl"))
    ap.add_argument("--real3", default="", help="the third pass, where the first two disagree "
                    "(real_networks.py --disagree-above; default: --real2's name with pass3, when it exists)")
    ap.add_argument("--onnx", default="/tmp/seer-real-networks",
                    help="folder of NET.onnx; a measured network missing there is exported first")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/seer-real-ablation")
    ap.add_argument("--reuse", action="store_true", help="keep datasets and runs already in --work")
    ap.add_argument("--out", default="", help="also write the table here (Markdown)")
    ap.add_argument("--include-held-out", action="store_true",
                    help="also score the networks of real_networks.py's ADDED4, which are kept out of every "
                         "ablation by default: they judge the next change to the shipped predictor")
    ap.add_argument("--blend-cost", action="store_true",
                    help="also fit [model] name = cost on each arm (the arm's roofline target) and score "
                         "it alone and joined to the arm's runs with half the weight (seerexport --weights)")
    ap.add_argument("--score", action="append", default=[], metavar="NAME=FILE.seer",
                    help="no training: score these predictor files (repeat it), labels of --device")
    ap.add_argument("--device", default="cpu_xeon26", help="with --score: the files' device name")
    ap.add_argument("--ref-normalize", type=float, default=0, metavar="POWER",
                    help="scale each real line's times by (median ref_ms of --measurements / its ref_ms)^POWER "
                         "(make_dataset.py --ref-normalize's scaling); 0: as measured")
    ap.add_argument("--judge", default="", metavar="NETS",
                    help="with --score: these networks apart (names, or a group of real_networks.py such "
                         "as ADDED8: the networks a rule named to judge a candidate) and out of 'the others'")
    ap.add_argument("--cpu-id", default="", metavar="ID",
                    help="score only the real lines (of every pass) measured on this processor (their cpu_id, "
                         "e.g. 'AuthenticAMD 25/1/1'): a machine name that covered two processors")
    ap.add_argument("--batches", default="", metavar="B[,B...]",
                    help="score only the configurations at these batch sizes (default: every batch measured)")
    a = ap.parse_args()
    try:
        a.batch_set = {int(b) for b in a.batches.split(",") if b}
    except ValueError:
        ap.error("--batches %r: give batch sizes separated by commas, e.g. 32 or 1,4,16" % a.batches)
    if a.score:
        return score_files(a)
    if bool(a.without_prefix) == bool(a.vs):
        sys.exit("real_ablation.py: give one of --without-prefix P, --vs KEY=VALUE or --score NAME=FILE (see --help)")
    both, vs = overrides(a.set, "--set"), overrides(a.vs, "--vs")
    try:
        seeds = [int(x) for x in a.seeds.split(",")]
    except ValueError:
        sys.exit("real_ablation.py: --seeds %r: give integers separated by commas" % a.seeds)
    recipes = a.recipes.split(",")
    bad = [r for r in recipes if r not in RECIPES]
    if bad:
        sys.exit("real_ablation.py: --recipes: unknown %s (known: %s)" % (",".join(bad), ",".join(RECIPES)))
    for p in (a.measurements, a.real):
        if not os.path.exists(p):
            sys.exit("real_ablation.py: %s missing (see --help)" % p)
    os.makedirs(a.work, exist_ok=True)
    truth = real_truth(a)
    if a.without_prefix:
        arms = {"A": ("every architecture", lambda i: True, both),
                "B": ("without ids %s*" % a.without_prefix, lambda i: not i.startswith(a.without_prefix), both)}
    else:
        arms = {"A": ("as configs/cpu_xeon.ini", lambda i: True, both),
                "B": (", ".join(vs), lambda i: True, both + vs)}
    data = {}
    for arm, (what, keep, _) in arms.items():
        src = "A" if a.vs and arm == "B" else arm  # --vs: one dataset
        if src in data:
            data[arm] = data[src]
            continue
        h5 = os.path.join(a.work, arm + ".h5")
        if a.reuse and os.path.exists(h5):
            data[arm] = (h5, sum(1 for _ in open(os.path.join(a.work, arm + ".jsonl"))))
        else:
            data[arm] = build(a, arm, keep)
        print("real_ablation.py: arm %s (%s): %d configurations" % (arm, what, data[arm][1]), flush=True)
    if a.without_prefix and data["A"][1] == data["B"][1]:
        sys.exit("real_ablation.py: no measured architecture's id starts with %r" % a.without_prefix)
    jobs = [(arm, r, sd) for arm in arms for r in recipes for sd in seeds]
    runs, secs = {}, {}
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(train, a, data[arm][0], arm, arms[arm][2], r, sd): (arm, r, sd) for arm, r, sd in jobs}
        for f in cf.as_completed(futs):
            name, seer, dt = f.result()
            runs[futs[f]], secs[futs[f]] = seer, dt
            print("real_ablation.py: %s trained (%.0f s)" % (name, dt), flush=True)
    real = real_h5(a, truth)
    res = []
    for arm in arms:
        first = "%s_%s_s%d" % (arm, recipes[0], seeds[0])
        for r in recipes:
            for sd in seeds:
                res.append((arm, "%s seed %d" % (r, sd), dict(summary(score(a, runs[(arm, r, sd)], truth)),
                                                              **in_space(a, runs[(arm, r, sd)], arm, data[arm][0], first))))
        members = [runs[(arm, r, sd)] for r in recipes for sd in seeds]
        if len(members) > 1:
            ens = os.path.join(a.work, arm + "_ensemble.seer")
            run([os.path.join(a.build, "seerexport"), "--ensemble"] + members + ["-o", ens], ens + ".log")
            res.append((arm, "**ensemble of the %d**" % len(members),
                        dict(summary(score(a, ens, truth)), **in_space(a, ens, arm, data[arm][0], first))))
        if a.blend_cost:  # the network's members and the cost alone, weighted half and half
            _, cost, _ = train(a, data[arm][0], arm, arms[arm][2], "cost", 1)
            res.append((arm, "model cost (the roofline cost alone, seertrain)",
                        dict(summary(score(a, cost, truth)), **in_space(a, cost, arm, data[arm][0], first))))
            ens = os.path.join(a.work, arm + "_blend.seer")
            run([os.path.join(a.build, "seerexport"), "--ensemble"] + members + [cost, "--weights",
                 ",".join(["1"] * len(members) + [str(len(members))]), "-o", ens], ens + ".log")
            res.append((arm, "**the %d and model cost, half and half** (--weights)" % len(members),
                        dict(summary(score(a, ens, truth)), **in_space(a, ens, arm, data[arm][0], first))))
        if arm == "A" or a.without_prefix:  # the baselines read the data only
            reg, _ = rn.regression(os.path.join(a.work, arm + ".jsonl"), a.infer_builder or None)
            names, rg, _ = read_graphs(real)
            flops = {(n.rsplit("@bs", 1)[0], int(n.rsplit("@bs", 1)[1])): float(np.expm1(v))
                     for n, v in zip(names, rg["log_flops_total"])}
            res.append((arm, "log-FLOPs regression", summary(
                [(n, b, y, {m: reg(m, flops[(n, b)], b) for m in rn.METRICS}) for (n, b), y in sorted(truth.items())])))
            for terms in (4, 5):
                res.append((arm, "roofline cost alone, %d terms" % terms, summary(cost_rows(data[arm][0], real, terms))))
    nets = sorted({n for n, b in truth})
    cmd = " ".join(["--without-prefix " + a.without_prefix] if a.without_prefix else ["--vs " + v for v in vs])
    cmd += "".join(" --set " + v for v in both)
    L = ["Regenerated by `/usr/bin/python3 benchmarks/real_ablation.py %s --seeds %s --recipes %s --epochs %d%s` "
         "on %s (%s)." % (cmd, a.seeds, a.recipes, a.epochs,
                          "" if a.infer_builder == 2 else " --infer-builder %d" % a.infer_builder,
                          time.strftime("%Y-%m-%d"), machine()), "",
         "Arm A: %s; arm B: %s. Training data: `%s`, %d configurations (A) and %d (B); inference learned %s. Each run: "
         "configs/cpu_xeon.ini's recipe, 85/10/5 train/val/test split, %d epochs, one thread (%.0f s of training "
         "in all). Scored on %d real networks, torchvision's and timm's (%d configurations at batch %s; measured: %s), "
         "none of them trained on. Cells: MAPE %%; the two "
         "predicted / measured columns are medians; the last two columns are the MAPE on the arm's own held-out "
         "design-space graphs (its 5%% test split, shared by its runs). Depthwise nets: %s; ViT / Swin / "
         "ConvNeXt: %s; %s." % (
             arms["A"][0], arms["B"][0], os.path.relpath(a.measurements, ROOT), data["A"][1], data["B"][1],
             "from builder %d's lines only" % a.infer_builder if a.infer_builder else "from every line", a.epochs,
             sum(secs.values()), len(nets), len(truth), "/".join(str(b) for b in sorted({b for n, b in truth})),
             passes_text(a), ", ".join(sorted(n for n in nets if group(n) == "depthwise")),
             ", ".join(sorted(n for n in nets if n.startswith(TRANSFORMERS))),
             deep_text(nets)), ""]
    emit(L + table(res), a.out)


def table(res):
    """The Markdown rows of [(arm, run, summary)], a column per COLS key."""
    L = ["| arm | run | " + " | ".join(c for _, c in COLS) + " |", "|---" * (2 + len(COLS)) + "|"]
    for arm, name, sm in res:
        L.append("| %s | %s | " % (arm, name) +
                 " | ".join("-" if k not in sm or sm[k] != sm[k] else ("%.2f" if k.endswith("p/y") else "%.1f") % sm[k]
                            for k, _ in COLS) + " |")
    return L


def score_files(a):
    """--score: predictor files already made, on the real networks, no training."""
    files = []
    for kv in a.score:
        name, _, path = kv.partition("=")
        if not name or not path:
            sys.exit("real_ablation.py: --score %r: give NAME=FILE.seer" % kv)
        if not os.path.exists(path):
            sys.exit("real_ablation.py: --score %s: %s: no such file" % (name, path))
        files.append((name, os.path.abspath(path)))
    if not os.path.exists(a.real):
        sys.exit("real_ablation.py: %s missing (see --help)" % a.real)
    truth = real_truth(a)
    judged = judge_set(a)
    unmeasured = sorted(judged - {n for n, b in truth})
    if unmeasured:
        sys.exit("real_ablation.py: --judge: %s not measured in %s (real_networks.py --nets ... --measurements %s)" % (
            ", ".join(unmeasured), a.real, a.real))
    res = [("-", "%s (`%s`)" % (n, os.path.relpath(p, ROOT) if p.startswith(ROOT) else os.path.basename(p)),
            summary(score(a, p, truth, a.device), judged)) for n, p in files]
    nets = sorted({n for n, b in truth})
    L = ["Regenerated by `/usr/bin/python3 benchmarks/real_ablation.py %s --device %s%s%s` on %s (%s)." % (
            " ".join("--score " + kv for kv in a.score), a.device,
            " --include-held-out" if a.include_held_out else "",
            "".join(" --%s %s" % (k, os.path.relpath(getattr(a, k), ROOT)) for k in ("real", "real2", "real3")
                    if getattr(a, k)) +
            (" --judge " + a.judge if a.judge else "") + (" --batches " + a.batches if a.batches else "") +
            (" --cpu-id '%s'" % a.cpu_id if a.cpu_id else "") +
            (" --ref-normalize %g --measurements %s" % (a.ref_normalize, os.path.relpath(a.measurements, ROOT))
             if a.ref_normalize else ""), time.strftime("%Y-%m-%d"), machine()), "",
         "Scored on %d real networks (%d configurations at batch %s; measured: %s). Cells: MAPE %%; the two "
         "predicted / measured columns are medians. The %s.%s" % (
             len(nets), len(truth), "/".join(str(b) for b in sorted({b for n, b in truth})),
             passes_text(a), deep_text(nets),
             " --judge (%d networks, %d configurations; not among the others): %s." % (
                 len(judged), sum(1 for n, b in truth if n in judged), ", ".join(sorted(judged))) if judged else ""), ""]
    emit(L + table(res), a.out)


def passes_text(a):
    """How real_truth combined the passes, for a report's header."""
    files = [os.path.relpath(p, ROOT) for p in rn.pass_files(a.real, a.real2, a.real3 or None)]
    only = ", lines of `cpu_id` %s only (`--cpu-id`)" % a.cpu_id if getattr(a, "cpu_id", "") else ""
    if len(files) == 1:
        return "`%s`%s" % (files[0], only)
    text = "the geometric mean of `%s` and `%s` where both have it" % tuple(files[:2])
    if len(files) > 2:
        text += ", the median of the three where `%s` retook it (real_networks.py --disagree-above)" % files[2]
    return text + only


def emit(lines, out):
    """The table to stdout, and to the file out when one is given (written whole or not at all)."""
    if out:
        with open(out + ".tmp", "w") as f:
            f.write("\n".join(lines) + "\n")
        os.replace(out + ".tmp", out)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
