#!/usr/bin/env python3
"""A CPU no shipped predictor saw: the real networks measured on it, scored.

The shipped CPU predictors (predictors/cpu_xeon26.seer, cpu_epyc.seer, cpu_xeon.seer) learned Seer's
design space timed on one core of three machines (Intel Xeons at 2.6 and 2.8 GHz, an AMD EPYC);
cpu_xeon21.seer is cpu_xeon26.seer calibrated to a fourth (an Intel Xeon, 6/207/2). A
user with another CPU has neither its design space nor a predictor for it: what do the shipped files
tell them, as they are and after timing a few of their own networks (seercalibrate)? This script
scores that on torchvision's and timm's ImageNet models measured on the new CPU by
benchmarks/real_networks.py (the same protocol
as the design space: one thread, median of 7 timed runs, peak RSS of a forked child):

    taskset -c 1 /usr/bin/python3 benchmarks/real_networks.py \\
        --measurements benchmarks/real_networks_NEWCPU.jsonl --repeat none --out /tmp/x.md
    /usr/bin/python3 benchmarks/new_cpu.py --measurements benchmarks/real_networks_NEWCPU.jsonl

Rows, for each shipped CPU predictor: as shipped (the device the user names is not theirs); plus
seercalibrate's factor per metric and batch fitted on K other networks measured on the new CPU; plus
seercalibrate --with-flops (log y = a + b log prediction + c log FLOPs) on the same K. Baselines:
the regression log y = a + b log FLOPs + c log batch fitted on the K networks alone (what the user
could do without Seer), and the same networks' measurements on the EPYC (benchmarks/
real_networks_epyc.jsonl) rescaled by the factors of the K (an oracle no user has: every network
timed on another machine). With --own, predictors trained on the design space measured on the new
CPU itself (scripts/space/train_cpu_predictor.sh on the first N architectures of that file, for each
N of --own-archs) are scored beside them: what an hour or a few of measuring buys. With --own-use
calibrate (or both) each shipped predictor is instead (or also) rescaled to the new CPU by seercalibrate
on those design-space lines, no training and no real network: on the fourth CPU the 2.6 GHz Xeon's
file so calibrated on 40 architectures beat every predictor trained there
(benchmarks/new_cpu_xeon21_calibrated.md). Each network is scored with K others drawn at random (seeded), several
draws averaged: no network helps calibrate its own prediction.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import real_networks as rn  # noqa: E402
from transfer import batch_factors, power_fit, spearman  # noqa: E402

METRICS = rn.METRICS
PREDICTORS = ("predictors/cpu_xeon26.seer:cpu_xeon26,predictors/cpu_epyc.seer:cpu_epyc,predictors/cpu_xeon.seer:cpu_xeon,"
              "predictors/cpu_xeon21.seer:cpu_xeon21")
POWER_REFUSED = [0]  # predictions for which seercalibrate --power refused the K networks drawn


def shown(path):
    """A file as the report names it: relative to the repository, or its last two parts (a work folder's)."""
    p = os.path.abspath(path)
    return os.path.relpath(p, ROOT) if p.startswith(ROOT + os.sep) else os.path.join(*p.split(os.sep)[-2:])


def lstsq_predict(A_fit, y_fit, A_new):
    w, *_ = np.linalg.lstsq(A_fit, y_fit, rcond=None)
    return A_new @ w


def methods(rows, keys):
    """name -> f(fit rows, the row to predict) -> {metric: value}; keys: the predictors' row keys."""
    out = {}

    def factors(key):
        def f(fit, r):
            P = np.array([[x[key][m] for m in METRICS] for x in fit])
            Y = np.array([[x["y"][m] for m in METRICS] for x in fit])
            k = batch_factors(P, Y, np.array([x["batch"] for x in fit]))(np.array([r["batch"]]))[0]
            return {m: r[key][m] * k[i] for i, m in enumerate(METRICS)}
        return f

    def power(key):  # seercalibrate --power; where it refuses the K networks, the factors (what a user does then)
        def f(fit, r):
            P = np.array([[x[key][m] for m in METRICS] for x in fit])
            Y = np.array([[x["y"][m] for m in METRICS] for x in fit])
            try:
                q = power_fit(P, Y, np.array([x["batch"] for x in fit]))(
                    np.array([[r[key][m] for m in METRICS]]), np.array([r["batch"]]))[0]
            except ValueError:
                POWER_REFUSED[0] += 1
                return factors(key)(fit, r)
            return {m: q[i] for i, m in enumerate(METRICS)}
        return f

    def with_flops(key):
        def f(fit, r):
            return {m: float(np.exp(lstsq_predict(
                np.array([[1.0, np.log(x[key][m]), np.log(x["flops"])] for x in fit]),
                np.log([x["y"][m] for x in fit]),
                np.array([1.0, np.log(r[key][m]), np.log(r["flops"])])))) for m in METRICS}
        return f

    def regression(fit, r):
        A = np.array([[1.0, np.log(x["flops"]), np.log(x["batch"])] for x in fit])
        return {m: float(np.exp(lstsq_predict(A, np.log([x["y"][m] for x in fit]),
                                              np.array([1.0, np.log(r["flops"]), np.log(r["batch"])]))))
                for m in METRICS}

    for key in keys:
        out[key + "_cal"] = factors(key)
        out[key + "_fl"] = with_flops(key)
        out[key + "_pw"] = power(key)
    out["reg_k"] = regression
    if all("other" in r for r in rows):
        out["other_cal"] = factors("other")
    return out


def score_shots(rows, keys, shots, seeds):
    """{method: {metric: (MAPE %, Spearman)}} averaged over the seeds; each network predicted from
    `shots` others drawn for it."""
    names = sorted(set(r["name"] for r in rows))
    fs = methods(rows, keys)
    acc = {k: {m: [] for m in METRICS} for k in fs}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        preds = {k: [] for k in fs}
        ys = []
        for n in names:
            others = [x for x in names if x != n]
            pick = set(rng.choice(others, size=min(shots, len(others)), replace=False))
            fit = [r for r in rows if r["name"] in pick]
            for r in (r for r in rows if r["name"] == n):
                ys.append(r["y"])
                for k, f in fs.items():
                    preds[k].append(f(fit, r))
        for k in fs:
            for m in METRICS:
                p = np.array([q[m] for q in preds[k]])
                y = np.array([q[m] for q in ys])
                acc[k][m].append((np.mean(100 * np.abs(p - y) / y), spearman(p, y)))
    return {k: {m: tuple(np.mean(v, axis=0)) for m, v in d.items()} for k, d in acc.items()}


def score(rows, key):
    out = {}
    for m in METRICS:
        p = np.array([r[key][m] for r in rows])
        y = np.array([r["y"][m] for r in rows])
        out[m] = (np.mean(100 * np.abs(p - y) / y), spearman(p, y))
    return out


def end_to_end(a, rows, preds, keys, fs_rows):
    """The real tools on the new CPU: `a.e2e` networks (drawn with seed 0) measured into a PerfGraph
    file (seerconvert --manifest, labels <a.label>_<metric>), `seercalibrate --device DEV=LABEL`
    (with and without --with-flops) on each shipped predictor, then `seerpredict --device`-style
    predictions of every other network by the calibrated file. Returns the table's lines and the
    largest relative gap between the file's predictions and this script's emulation of it."""
    import real_ablation
    names = sorted(set(r["name"] for r in rows))
    pick = set(np.random.default_rng(0).choice(names, size=a.e2e, replace=False))
    fit = [r for r in rows if r["name"] in pick]
    rest = [r for r in rows if r["name"] not in pick]
    truth = {(r["name"], r["batch"]): r["y"] for r in fit}
    h5 = real_ablation.real_h5(argparse.Namespace(work=a.work, onnx=a.work, build=a.build), truth,
                               device=a.label, name="new_cpu_calibration")
    L = ["", "## End to end: the tools, on %d networks measured on the new CPU" % a.e2e, "",
         "What a user runs: the %d networks %s, every batch measured, in one PerfGraph file (`seerconvert "
         "--manifest`, labels `%s_*`), then `seercalibrate PREDICTOR.seer that.h5 --device DEV=%s "
         "[--with-flops] -o %s.seer`, then `seerpredict %s.seer NET.onnx` on the other %d networks "
         "(%d configurations). *emulated*: the same by this script's arithmetic (the rows above)." %
         (a.e2e, ", ".join(sorted(pick)), a.label, a.label, a.label, a.label, len(set(r["name"] for r in rest)),
          len(rest)), "",
         "| predictor | calibration | train ms | infer ms | train MB | infer MB | largest gap to emulated |",
         "|---|---|---|---|---|---|---|"]
    gap_all, zoo_rows = 0.0, []
    for path, dev, pk in preds:
        for flag, key in (([], pk + "_cal"), (["--with-flops"], pk + "_fl"), (["--power"], pk + "_pw")):
            out = os.path.join(a.work, "%s_from_%s%s.seer" % (a.label, pk, key[len(pk):] if flag else ""))
            r = subprocess.run([os.path.join(a.build, "seercalibrate"), path, h5, "--device", "%s=%s" % (dev, a.label),
                                "-o", out] + flag, capture_output=True, text=True)
            if r.returncode != 0 and flag == ["--power"]:  # a refusal is an answer: the row says so
                L.append("| `%s` | `--device %s=%s` `--power` | refused: %s | | | | |" % (
                    shown(path), dev, a.label, r.stderr.strip().split(": --power: ")[-1][:160]))
                continue
            if r.returncode != 0:
                sys.exit("new_cpu.py: seercalibrate failed: %s" % r.stderr.strip()[-300:])
            got = []
            for n in sorted(set(x["name"] for x in rest)):
                p = rn.predict(argparse.Namespace(build=a.build, predictor=out, device=a.label),
                               os.path.join(a.work, n + ".onnx"), a.batch_list)
                if isinstance(p, str):
                    sys.exit("new_cpu.py: seerpredict %s on %s: %s" % (out, n, p))
                for x in (x for x in rest if x["name"] == n):
                    got.append((x, p[x["batch"]][1]))
            emu = fs_rows[key]
            gap = max(abs(v[m] / emu(fit, x)[m] - 1) for x, v in got for m in METRICS)
            gap_all = max(gap_all, gap)
            s = {m: (np.mean([100 * abs(v[m] - x["y"][m]) / x["y"][m] for x, v in got]),
                     spearman(np.array([v[m] for _, v in got]), np.array([x["y"][m] for x, _ in got])))
                 for m in METRICS}
            zoo = [("torchvision", lambda n: not n.startswith("timm-")), ("timm (`ADDED4`)", lambda n: n in rn.ADDED4),
                   ("timm, new operators (`ADDED5`)", lambda n: n in rn.ADDED5)]
            zoo_rows.append("| `%s`, `%s`%s | %s |" % (shown(path), dev, " `%s`" % flag[0] if flag else "", " | ".join(
                "%.1f / %.1f (%d)" % tuple([np.mean([100 * abs(v[m] - x["y"][m]) / x["y"][m] for x, v in got if t(x["name"])])
                                            for m in ("train_ms", "infer_ms")] + [sum(t(x["name"]) for x, _ in got)])
                if any(t(x["name"]) for x, _ in got) else "-" for _, t in zoo)))
            L.append("| `%s` | `--device %s=%s`%s | %s | %.1e |" % (
                shown(path), dev, a.label, " `%s`" % flag[0] if flag else " (a factor per batch)",
                " | ".join("%.1f / %.3f" % s[m] for m in METRICS), gap))
    def row(name, pred):
        s = {m: (np.mean([100 * abs(pred(x)[m] - x["y"][m]) / x["y"][m] for x in rest]),
                 spearman(np.array([pred(x)[m] for x in rest]), np.array([x["y"][m] for x in rest]))) for m in METRICS}
        L.append("| %s | %s | - |" % (name, " | ".join("%.1f / %.3f" % s[m] for m in METRICS)))
    for path, dev, pk in preds:
        row("`%s` | as shipped (`--device %s`)" % (shown(path), dev), lambda x, d=pk: x[d])
    row("log-FLOPs regression | fitted on the same %d alone" % a.e2e, lambda x: fs_rows["reg_k"](fit, x))
    L += ["", "The calibrated files by zoo: time MAPE % (training step / inference) and configurations, on the "
          "other networks.", "", "| calibrated file | torchvision | timm (`ADDED4`) | timm, new operators (`ADDED5`) |",
          "|---|---|---|---|"] + zoo_rows
    return L, gap_all


def parse_common(a, prog):
    """a.batches, a.shots and a.predictors (FILE:DEVICE,...) read, or prog exits saying what is wrong:
    (batches, shots, [(path, device)]); a.batch_list = batches."""
    try:
        batches = a.batch_list = [int(b) for b in a.batches.split(",")]
        shots = [int(s) for s in a.shots.split(",")]
    except ValueError:
        sys.exit("%s: --batches and --shots take integers separated by commas" % prog)
    preds = []
    for item in a.predictors.split(","):
        path, _, dev = item.partition(":")
        if not dev:
            sys.exit("%s: --predictors: %r is not FILE:DEVICE" % (prog, item))
        path = os.path.join(ROOT, path) if not os.path.isabs(path) else path
        if not os.path.exists(path):
            sys.exit("%s: %s missing" % (prog, path))
        preds.append((path, dev))
    return batches, shots, preds


def own_lines(a):
    """[(N, the measure.py lines of the first N architectures of a.own, as text)] for each N of
    a.own_archs (file order: the order measure.py measured them)."""
    if not os.path.exists(a.own):
        sys.exit("new_cpu.py: --own %s: no such file" % a.own)
    recs = []  # (architecture, line) of every measured configuration
    for line in open(a.own):
        try:
            r = json.loads(line)
        except ValueError:
            continue  # a line a running measure.py is still writing
        if "train_time_ms" in r:
            recs.append((r["id"], line if line.endswith("\n") else line + "\n"))
    order = list(dict.fromkeys(i for i, _ in recs))  # architectures in the order measured
    try:
        sizes = [len(order) if x == "all" else int(x) for x in a.own_archs.split(",")]
    except ValueError:
        sys.exit("new_cpu.py: --own-archs takes whole numbers or 'all', separated by commas")
    out = []
    for n in sizes:
        if not 30 <= n <= len(order):
            sys.exit("new_cpu.py: --own-archs %d: between 30 and the %d architectures measured" % (n, len(order)))
        keep = set(order[:n])
        out.append((n, "".join(l for i, l in recs if i in keep)))
    return out


def own_calibrated(a, preds):
    """[(FILE, LABEL)]: each shipped predictor (path, device) rescaled to the new CPU by seercalibrate
    --device DEV=LABEL (a factor per metric and batch) on a PerfGraph file of the design-space lines
    of the first N architectures of a.own (make_dataset.py), for each N of a.own_archs: what a user
    with an hour of design-space measurements and no real network gets without training anything."""
    out = []
    for n, text in own_lines(a):
        work = os.path.join(a.work, "own_cal_%d" % n)
        os.makedirs(work, exist_ok=True)
        jl, h5 = os.path.join(work, "measurements.jsonl"), os.path.join(work, "own.h5")
        if not (os.path.exists(jl) and os.path.exists(h5) and open(jl).read() == text):
            with open(jl, "w") as f:
                f.write(text)
            r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts/space/make_dataset.py"), "--specs",
                                os.path.join(ROOT, "datasets/space_cpu"), "--measurements", jl, "--label-prefix",
                                a.label, "--seerconvert", os.path.join(a.build, "seerconvert"), "-o", h5,
                                "--onnx-dir", os.path.join(work, "onnx")], capture_output=True, text=True)
            if r.returncode != 0:
                os.remove(jl)  # not this text's file: made again next time
                sys.exit("new_cpu.py: make_dataset.py failed: %s" % (r.stderr.strip() or r.stdout.strip())[-400:])
        for path, dev in preds:
            seer = os.path.join(work, "%s_cal_%d.seer" % (os.path.splitext(os.path.basename(path))[0], n))
            r = subprocess.run([os.path.join(a.build, "seercalibrate"), path, h5, "--device", "%s=%s" % (dev, a.label),
                                "-o", seer], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("new_cpu.py: seercalibrate %s failed: %s" % (path, r.stderr.strip()[-300:]))
            out.append((seer, a.label))
        a.cal_notes.append("`*_cal_%d`: each shipped file calibrated on the %d architectures' %d lines "
                           "(`seercalibrate --device DEV=%s`, no training)" % (n, n, text.count("\n"), a.label))
    return out


def own_predictors(a):
    """[(FILE, DEVICE)]: train_cpu_predictor.sh on the first N architectures (file order: the order
    measure.py measured them) of a.own, for each N of a.own_archs; labels a.label."""
    out = []
    for n, text in own_lines(a):
        tag = "own_%d" % n + ("_" + a.own_target if a.own_target else "")
        work = os.path.join(a.work, tag)
        os.makedirs(work, exist_ok=True)
        jl = os.path.join(work, "measurements.jsonl")
        seer = os.path.join(work, tag + ".seer")
        if all(map(os.path.exists, (seer, seer + ".note", jl))) and open(jl).read() == text:
            out.append((seer, a.label))  # trained on these very lines by an earlier run
            a.own_notes.append(open(seer + ".note").read().strip())
            continue
        with open(jl, "w") as f:
            f.write(text)
        t0 = time.time()
        r = subprocess.run(["sh", os.path.join(ROOT, "scripts/space/train_cpu_predictor.sh"), "--label", a.label,
                            "--measurements", jl, "--work", work, "-o", seer] +
                           (["--target", a.own_target] if a.own_target else []),
                           env=dict(os.environ, BUILD=a.build, PYTHON=sys.executable), capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("new_cpu.py: train_cpu_predictor.sh failed: %s" % (r.stderr.strip() or r.stdout.strip())[-400:])
        a.own_notes.append("`%s`: %d architectures (%d configurations), %.0f s; its held-out test graphs: %s" % (
            tag, n, text.count("\n"), time.time() - t0, "; ".join(
                " ".join(x.split()[0:1] + x.split()[4:5]) + "%" for x in r.stdout.splitlines() if "MAPE" in x
                and x.startswith("  "))))
        with open(seer + ".note", "w") as f:
            f.write(a.own_notes[-1] + "\n")
        print("new_cpu.py: " + a.own_notes[-1])
        out.append((seer, a.label))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog=__doc__.split("\n", 2)[2], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--measurements", required=True, help="real_networks.py's lines measured on the new CPU")
    ap.add_argument("--name", default=None, help="what to call the new CPU in the report (default: its lines' device name)")
    ap.add_argument("--predictors", default=PREDICTORS, help="FILE:DEVICE,... the shipped predictors to score")
    ap.add_argument("--other", default="benchmarks/real_networks_epyc.jsonl",
                    help="the same networks measured on a known CPU (the oracle baseline; '' for none)")
    ap.add_argument("--other-name", default="the AMD EPYC", help="what to call --other's CPU in the report")
    ap.add_argument("--shots", default="3,5,10", help="networks measured on the new CPU to calibrate with")
    ap.add_argument("--seeds", type=int, default=5, help="draws of those networks, averaged")
    ap.add_argument("--batches", default="1,4,16")
    ap.add_argument("--e2e", type=int, default=10, help="networks measured on the new CPU that the "
                    "end-to-end check calibrates with (seercalibrate, seerpredict); 0: no such check")
    ap.add_argument("--repeat", default=None, help="a second measurement of the same networks on the new CPU "
                    "(real_networks.py --measurements FILE, later): their disagreement, the floor under any predictor")
    ap.add_argument("--label", default="cpu_new", help="the new CPU's device name in the calibrated files")
    ap.add_argument("--own", default=None, metavar="MEASUREMENTS",
                    help="the design space measured on the new CPU (measure.py's lines): predictors trained on "
                         "them by scripts/space/train_cpu_predictor.sh are scored beside the shipped ones")
    ap.add_argument("--exclude-group", default="", metavar="GROUP,...",
                    help="leave out the networks of these groups of real_networks.py (BATCHES_OF_NETS: e.g. 'held out', "
                         "ADDED6, kept for judging one change)")
    ap.add_argument("--own-target", default="", choices=["", "roofline", "roofline_weights", "roofline_light", "roofline_peak", "roofline_dw"],
                    help="with --own: train_cpu_predictor.sh --target (default: its recipe's targets)")
    ap.add_argument("--own-archs", default="all", metavar="N,N,...",
                    help="with --own: train on the first N architectures of that file, for each N ('all': every one)")
    ap.add_argument("--own-use", default="train", choices=["train", "calibrate", "both"],
                    help="with --own: train predictors on those lines (train_cpu_predictor.sh), calibrate each "
                         "shipped predictor to the new CPU on them (seercalibrate, no training), or both")
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="ONNX exports (made when missing)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks/new_cpu.md"))
    a = ap.parse_args()
    a.own_notes, a.cal_notes = [], []
    batches, shots, preds = parse_common(a, "new_cpu.py")
    own = own_predictors(a) if a.own and a.own_use != "calibrate" else []
    if a.own and a.own_use != "train":
        own += own_calibrated(a, preds)
    preds = own + preds
    # each predictor's key in the rows: its device, or its file's name where two share a device
    # or it was trained here (own_N: on N architectures measured on the new CPU)
    devs = [d for _, d in preds]
    preds = [(p, d, d if devs.count(d) == 1 and (p, d) not in own else os.path.splitext(os.path.basename(p))[0])
             for p, d in preds]
    if len(set(k for _, _, k in preds)) < len(preds):
        sys.exit("new_cpu.py: --predictors: two files of one device share a name; rename one")
    if not os.path.exists(os.path.join(a.build, "seerpredict")):
        sys.exit("new_cpu.py: %s/seerpredict missing: build first (README)" % a.build)
    meas = rn.measured(a.measurements)
    if not meas:
        sys.exit("new_cpu.py: %s: no measurements (run benchmarks/real_networks.py --measurements %s first)"
                 % (a.measurements, a.measurements))
    other = rn.measured(os.path.join(ROOT, a.other)) if a.other else {}
    groups = {g: set(members or ()) for g, members, _ in rn.BATCHES_OF_NETS}
    for g in filter(None, a.exclude_group.split(",")):
        if not groups.get(g):
            sys.exit("new_cpu.py: --exclude-group %s: not one of real_networks.py's groups (%s)" % (
                g, ", ".join(k for k, v in groups.items() if v)))
    skip = set().union(*[groups[g] for g in filter(None, a.exclude_group.split(","))])
    # a held-out group (real_networks.py's HELD_OUT) waits for the candidate it judges: never scored here
    nets = [n for n in rn.NETS if n not in skip and n not in rn.HELD_OUT and
            any((n, b) in meas and "train_time_ms" in meas[(n, b)] for b in batches)]
    os.makedirs(a.work, exist_ok=True)
    rows = []
    errors = {n: "ONNX export: " + e for n, e in rn.export_all(nets, a.work, 1, "new_cpu.py").items()}
    for n in nets:
        onnx = os.path.join(a.work, n + ".onnx")
        if n in errors:
            continue
        got = {}
        for path, dev, pk in preds:
            p = rn.predict(argparse.Namespace(build=a.build, predictor=path, device=dev), onnx, batches)
            if isinstance(p, str):
                errors[n] = p
                break
            got[pk] = p
        if n in errors:
            continue
        for b in batches:
            r = meas.get((n, b))
            if not r or "train_time_ms" not in r:
                continue
            row = {"name": n, "batch": b, "flops": got[preds[0][2]][b][0],
                   "y": {m: r[rn.FIELDS[m]] for m in METRICS}}
            for pk, p in got.items():
                row[pk] = p[b][1]
                row[pk + "_in_range"] = p[b][2]
                row[pk + "_disagree"] = {m: p[b][5][m] > p[b][7][m] for m in p[b][5]}
            o = other.get((n, b))
            if o and "train_time_ms" in o:
                row["other"] = {m: o[rn.FIELDS[m]] for m in METRICS}
            rows.append(row)
    if len(rows) < max(shots) + 3:
        sys.exit("new_cpu.py: %d configurations measured, too few to score with --shots %s" % (len(rows), a.shots))
    with_other = [r for r in rows if "other" in r]
    keys = [k for _, _, k in preds]
    name = a.name or ", ".join(sorted(set(r.get("device_name", "?") for r in meas.values())))
    ids = sorted(set("%s at %s MHz" % (r["cpu_id"], r.get("cpu_mhz", "?")) for r in meas.values() if "cpu_id" in r))
    nn = len(set(r["name"] for r in rows))
    L = ["# A CPU no shipped predictor saw: %s" % name, "",
         "Regenerated by `/usr/bin/python3 benchmarks/new_cpu.py %s` on %s." %
         (" ".join('"%s"' % x if " " in x else x for x in sys.argv[1:]), time.strftime("%Y-%m-%d")), "",
         "The new CPU: %s%s, one core (the lines' `cores`), measured by `benchmarks/real_networks.py` as the "
         "design space was (one thread, median of 7 timed runs after 2 warm-up ones; peak RSS of a forked "
         "child). %d configurations: %d networks (torchvision's and timm's ImageNet models, random weights) "
         "at batch %s. %s" %
         (name, " (`cpu_id` %s)" % "; ".join(ids) if ids else "", len(rows), nn, ", ".join(map(str, batches)),
          "No shipped predictor learned it; its design space measured there (`--own`) is what the rows below "
          "marked so calibrated on or trained on." if a.own else
          "No design-space network was measured on it, and no predictor learned it."), "",
         "Cells: MAPE %% / Spearman over those configurations. *+K measured*: each network predicted after "
         "K other networks (drawn at random for it, %d draws averaged) were timed on the new CPU: "
         "`seercalibrate`'s factor per metric and batch (*calibrated*), its `--with-flops` fit (log y = a + "
         "b log prediction + c log FLOPs) or its `--power` fit (a factor per batch and one exponent, y = "
         "(prediction x factor)^b; where it refuses the K drawn, the factors stand in, counted below the table); the baselines fit the same K: the regression log y = a + b log "
         "FLOPs + c log batch on those K alone (no Seer), and, as an oracle no user has, every network's "
         "own measurement on %s (`%s`) rescaled by the K's factors (%d of the %d configurations "
         "have one; that row is scored on those)." % (a.seeds, a.other_name, a.other, len(with_other), len(rows)), "",
         "| predictor on the new CPU | K | train ms | infer ms | train MB | infer MB |", "|---|---|---|---|---|---|"]
    fmt = lambda s: " | ".join("%.1f / %.3f" % s[m] for m in METRICS)  # noqa: E731
    for path, dev, pk in preds:
        L.append("| `%s` as shipped (`--device %s`) | 0 | %s |" % (shown(path), dev, fmt(score(rows, pk))))
    if a.own:  # the baseline without Seer that the design-space lines allow (README's shipped-predictors table)
        reg, (n_reg, _) = rn.regression(a.own)
        for r in rows:
            r["reg_own"] = {m: reg(m, r["flops"], r["batch"]) for m in METRICS}
        L.append("| log-FLOPs regression on `--own`'s %d design-space lines (log y = a + b log FLOPs + c log batch; "
                 "no Seer) | 0 | %s |" % (n_reg, fmt(score(rows, "reg_own"))))
    for k in shots:
        s = score_shots(rows, keys, k, range(a.seeds))
        for _, _, pk in preds:
            L.append("| `%s` calibrated | %d | %s |" % (pk, k, fmt(s[pk + "_cal"])))
            L.append("| `%s` calibrated --with-flops | %d | %s |" % (pk, k, fmt(s[pk + "_fl"])))
            L.append("| `%s` calibrated --power | %d | %s |" % (pk, k, fmt(s[pk + "_pw"])))
        L.append("| log-FLOPs regression on the K alone | %d | %s |" % (k, fmt(s["reg_k"])))
        if len(with_other) >= k + 3:
            so = score_shots(with_other, keys, k, range(a.seeds))
            L.append("| oracle: %s's measurement of each network, calibrated | %d | %s |" % (
                a.other_name.replace("the ", "", 1), k, fmt(so["other_cal"])))
    L += ["", "`--power` refused the K networks drawn (too alike in predicted time, or an exponent outside 0.2 "
          "to 5) for %d of the predictions above; the factors stood in for those." % POWER_REFUSED[0]]
    L += ["", "Median measured / predicted (the new CPU's speed against each predictor's device, the "
          "factor calibration learns): " + "; ".join(
              "`%s`: %s" % (pk, ", ".join("%s %.2f" % (m, np.median([r["y"][m] / r[pk][m] for r in rows]))
                                          for m in METRICS)) for _, _, pk in preds) + "."]
    if a.own_notes:
        L += ["", "Trained on the new CPU (`--own %s`): `scripts/space/train_cpu_predictor.sh --label %s%s` (the recipe of "
              "`predictors/cpu_epyc.seer`: PerfSAGE and a GCN, 120 epochs, 80/10/10 by architecture, blended half and "
              "half with the roofline cost%s) on the design-space architectures measured first on it by "
              "`scripts/measure/measure.py`; none of these networks is in them. %s." % (
                  shown(a.own), a.label, " --target " + a.own_target if a.own_target else "",
                  "; every part on `[model] target = %s`" % a.own_target if a.own_target else "",
                  "; ".join(a.own_notes))]
    if a.cal_notes:
        L += ["", "Calibrated on the new CPU's design space (`--own %s --own-use %s`): the shipped files as they are, "
              "rescaled by `seercalibrate`'s factor per metric and batch fitted on the design-space architectures "
              "measured first on it (`scripts/space/make_dataset.py` on their lines, labels as measured); no real "
              "network is among them. %s." % (shown(a.own), a.own_use, "; ".join(a.cal_notes))]
    if with_other:
        L += ["", "Median new CPU / %s, the same network and batch: " % a.other_name.replace("the ", "", 1) + ", ".join(
            "%s %.2f" % (m, np.median([r["y"][m] / r["other"][m] for r in with_other])) for m in METRICS) + "."]
    L += ["", "## By zoo and batch", "",
          "Time MAPE % (training step / inference) of each predictor as shipped.", "",
          "| networks | batch | configurations | " + " | ".join("`%s`" % d for d in keys) + " |",
          "|---|---|---|" + "---|" * len(keys)]
    for zoo, test in (("torchvision", lambda n: not n.startswith("timm-")),
                      ("timm (`ADDED4`)", lambda n: n in rn.ADDED4),
                      ("timm, operators read since 2026-12-02 (`ADDED5`)", lambda n: n in rn.ADDED5)):
        for b in batches:
            rs = [r for r in rows if test(r["name"]) and r["batch"] == b]
            if rs:
                L.append("| %s | %d | %d | %s |" % (zoo, b, len(rs), " | ".join(
                    "%.1f / %.1f" % (score(rs, d)["train_ms"][0], score(rs, d)["infer_ms"][0]) for d in keys)))
    L += ["", "## Do the warnings tell?", "",
          "`seerpredict` warns when a network lies outside the training data (`in_range` false) and when an "
          "ensemble's members disagree (largest over smallest prediction above the file's threshold per metric, "
          "%.1f where it sets none). Time MAPE %% (training step / "
          "inference) of each predictor as shipped where it warned and where it did not, with the configurations "
          "of each (the spread is per metric, so its counts are training step / inference)." % rn.SPREAD_WARN, "",
          "| predictor | in range | outside | members agree | members disagree |", "|---|---|---|---|---|"]
    for pk in keys:
        def cell(sel):
            parts, counts = [], []
            for m in ("train_ms", "infer_ms"):
                rs = [r for r in rows if sel(r, m)]
                parts.append("%.1f" % np.mean([100 * abs(r[pk][m] / r["y"][m] - 1) for r in rs]) if rs else "-")
                counts.append(str(len(rs)))
            return "%s (%s)" % (" / ".join(parts), " / ".join(counts) if counts[0] != counts[1] else counts[0])
        L.append("| `%s` | %s | %s | %s | %s |" % (
            pk, cell(lambda r, m: r[pk + "_in_range"]), cell(lambda r, m: not r[pk + "_in_range"]),
            cell(lambda r, m: not r[pk + "_disagree"][m]),
            cell(lambda r, m: r[pk + "_disagree"][m])))

    L += ["", "## Each network", "", "Measured on the new CPU, and each predictor's error as shipped (%).", "",
          "| network | batch | GFLOPs | train ms | infer ms | train MB | " +
          " | ".join("`%s` train / infer / MB" % d for d in keys) + " |", "|---|---|---|---|---|---|" + "---|" * len(keys)]
    for r in sorted(rows, key=lambda r: (list(rn.NETS).index(r["name"]), r["batch"])):
        L.append("| %s | %d | %.2f | %.1f | %.1f | %.0f | %s |" % (
            r["name"], r["batch"], r["flops"] / 1e9, r["y"]["train_ms"], r["y"]["infer_ms"], r["y"]["train_mb"],
            " | ".join("%+.0f / %+.0f / %+.0f" % tuple(100 * (r[d][m] / r["y"][m] - 1) for m in ("train_ms", "infer_ms", "train_mb"))
                       for d in keys)))
    again = rn.measured(a.repeat) if a.repeat else {}
    both = [(r, again[(r["name"], r["batch"])]) for r in rows if (r["name"], r["batch"]) in again
            and "train_time_ms" in again[(r["name"], r["batch"])]]
    if both:
        L[L.index("## By zoo and batch") - 1:L.index("## By zoo and batch") - 1] = [
            "", "## The new CPU measured twice", "",
            "`%s`: %d of these configurations measured again by the same script, in new processes, later "
            "(timed runs per configuration: %s). |second - first| / first, as a prediction's error is counted: "
            "the floor under any predictor of this CPU; median timing spread inside one first measurement "
            "(7 runs' (q75 - q25) / median): %.1f%% (training step), %.1f%% (inference)." % (
                a.repeat, len(both), ", ".join(sorted(set(str(x.get("repeats", "?")) for _, x in both))),
                100 * np.median([meas[(r["name"], r["batch"])]["train_spread"] for r, _ in both]),
                100 * np.median([meas[(r["name"], r["batch"])]["infer_spread"] for r, _ in both])), "",
            "| | configurations | " + " | ".join(METRICS) + " |", "|---" * (2 + len(METRICS)) + "|"]
        for b in [None] + sorted(set(r["batch"] for r, _ in both)):
            sel = [(r, x) for r, x in both if b is None or r["batch"] == b]
            tag = "all" if b is None else "batch %d" % b
            L[L.index("## By zoo and batch") - 1:L.index("## By zoo and batch") - 1] = [
                "| second vs first, MAPE %%, %s | %d | " % (tag, len(sel)) + " | ".join("%.1f" % np.mean(
                    [100 * abs(x[rn.FIELDS[m]] - r["y"][m]) / r["y"][m] for r, x in sel]) for m in METRICS) + " |",
                "| median second / first, %s | %d | " % (tag, len(sel)) + " | ".join("%.3f" % np.median(
                    [x[rn.FIELDS[m]] / r["y"][m] for r, x in sel]) for m in METRICS) + " |"]
    if a.e2e:
        lines, gap = end_to_end(a, rows, preds, keys, methods(rows, keys))
        L[L.index("## By zoo and batch") - 1:L.index("## By zoo and batch") - 1] = lines
        print("new_cpu.py: the calibrated files' predictions against this script's emulation: largest gap %.1e" % gap)
    if errors:
        L += ["", "## Not predicted", ""] + ["- %s: %s" % (n, e) for n, e in sorted(errors.items())]
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")
    print("new_cpu.py: wrote %s (%d configurations of %d networks)" % (a.out, len(rows), nn))


if __name__ == "__main__":
    main()
