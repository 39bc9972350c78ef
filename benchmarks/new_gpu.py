#!/usr/bin/env python3
"""A GPU the other devices' predictors never saw: their predictions of real networks measured on it,
as shipped and after timing K of the user's own networks (seercalibrate).

    /usr/bin/python3 benchmarks/new_gpu.py [--measurements datasets/space_h200/real_networks_h200.jsonl]

The measurements: torchvision's networks timed on the GPU by `scripts/device-check.sh real`
(benchmarks/real_networks.py --torch-device cuda). The predictors (--predictors FILE:DEVICE,...):
by default the general GPU predictor at two of its GPUs (predictors/transfer_gpu.seer: inference
only, HELP's NAS-Bench-201 and FBNet latencies), two CPU predictors, and, as the reference a user
of this GPU would want, the predictor trained on this GPU's own design-space measurements
(predictors/h200.seer). For each predictor and metric it has:

- as shipped (another device's scale);
- *factor*: seercalibrate's factor per batch (the median of measured / predicted) on K networks;
- *--with-flops*: seercalibrate --with-flops, log y = a + b log(prediction) + c log_flops_total;
- *--with-feature log_nodes*: the same fit on the operator count instead (a GPU at small batches
  spends its time launching one kernel per operator more than computing);
- baselines fitted on the K alone: log y = a + b log FLOPs + c log batch, and the same with
  + d log operators.

Each network is predicted from K others drawn for it at random (--seeds draws averaged): none
helps calibrate its own prediction. The features are the ones seercalibrate reads (the PerfGraph
file's log_flops_total and log_nodes). An end-to-end check runs the real tools on K = 10 networks
(drawn with seed 0): `seercalibrate --device DEV=NEW [--with-flops | --with-feature log_nodes]`,
then `seerpredict --device NEW` on the other networks, and reports the largest gap between the
tools' predictions and this script's arithmetic.
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
import real_ablation  # noqa: E402
import real_networks as rn  # noqa: E402
from new_cpu import parse_common  # noqa: E402
from transfer import batch_factors, spearman  # noqa: E402

METRICS = ["train_ms", "infer_ms", "train_mb"]  # the H200 file's infer_mb also holds the training state
PREDICTORS = ("predictors/transfer_gpu.seer:titan_rtx,predictors/transfer_gpu.seer:2080ti,"
              "predictors/cpu_epyc.seer:cpu_epyc,predictors/cpu_xeon26.seer:cpu_xeon26,predictors/h200.seer:h200")
CALS = [("factor", "a factor per batch", []), ("flops", "--with-flops", ["--with-flops"]),
        ("nodes", "--with-feature log_nodes", ["--with-feature", "log_nodes"])]
NEW = "gpu_new"  # the new GPU's device name in the calibrated files


def seer_json(build, predictor, device, onnx, batches):
    """{batch: {metric: value}} of seerpredict --json for device's metrics (those it predicts)."""
    r = subprocess.run([os.path.join(build, "seerpredict"), predictor, onnx, "--batch", ",".join(map(str, batches)),
                        "--json"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("new_gpu.py: seerpredict %s %s: %s" % (predictor, onnx, r.stderr.strip()[-300:]))
    out = {}
    for x in json.loads(r.stdout)["results"]:
        out[x["batch"]] = {m: x["metrics"]["%s_%s" % (device, m)]["value"] for m in METRICS
                           if "%s_%s" % (device, m) in x["metrics"]}
    return out


REFUSED = {}  # calibration -> predictions for which seercalibrate would refuse the K drawn (the factor stood in)


def lstsq(A, y, a, check=None):
    """exp of the least-squares fit of y on A, at a; None where check(w) says seercalibrate refuses it."""
    w, *_ = np.linalg.lstsq(np.array(A), np.array(y), rcond=None)
    return None if check and not check(w) else float(np.exp(np.dot(w, a)))


def calibrated(fit, r, pk, m, how):
    """What seercalibrate `how` fitted on rows `fit` predicts for row r (None: the fit is refused)."""
    fit = [x for x in fit if m in x[pk]]
    if how == "factor":
        at = batch_factors(np.array([[x[pk][m]] for x in fit]), np.array([[x["y"][m]] for x in fit]),
                           np.array([x["batch"] for x in fit]))
        return r[pk][m] * at(np.array([r["batch"]]))[0, 0]
    feat = "lf" if how == "flops" else "ln"
    A = [[1.0, np.log(x[pk][m]), x[feat]] for x in fit]
    # seercalibrate refuses a fit whose b is not in (0, 10] or whose a or c is 100 or more: the user
    # then calibrates with the factors
    v = lstsq(A, np.log([x["y"][m] for x in fit]), [1.0, np.log(r[pk][m]), r[feat]],
              lambda w: 0 < w[1] <= 10 and abs(w[0]) < 100 and abs(w[2]) < 100)
    if v is None:
        REFUSED[how] = REFUSED.get(how, 0) + 1
        return calibrated(fit, r, pk, m, "factor")
    return v


def regression(fit, r, m, nodes):
    cols = lambda x: [1.0, x["lf"], np.log(x["batch"])] + ([x["ln"]] if nodes else [])  # noqa: E731
    return lstsq([cols(x) for x in fit], np.log([x["y"][m] for x in fit]), cols(r))


def mape_sp(pairs):
    p, y = np.array([q for q, _ in pairs]), np.array([t for _, t in pairs])
    return float(np.mean(100 * np.abs(p - y) / y)), spearman(p, y)


def score_shots(rows, keys, k, seeds):
    """{method: {metric: (MAPE, Spearman)}}, each network predicted from k others drawn for it."""
    names = sorted({r["name"] for r in rows})
    methods = [(pk + ":" + how, (lambda fit, r, m, pk=pk, how=how: calibrated(fit, r, pk, m, how)), pk)
               for pk in keys for how, _, _ in CALS]
    methods += [("reg", lambda fit, r, m: regression(fit, r, m, False), None),
                ("reg_nodes", lambda fit, r, m: regression(fit, r, m, True), None)]
    acc = {name: {m: [] for m in METRICS} for name, _, _ in methods}
    for seed in seeds:
        rng = np.random.default_rng(seed)
        got = {name: {m: [] for m in METRICS} for name, _, _ in methods}
        for n in names:
            pick = set(rng.choice([x for x in names if x != n], size=k, replace=False))
            fit = [r for r in rows if r["name"] in pick]
            for r in (r for r in rows if r["name"] == n):
                for name, f, pk in methods:
                    for m in METRICS:
                        if pk is None or m in r[pk]:
                            got[name][m].append((f(fit, r, m), r["y"][m]))
        for name in got:
            for m in METRICS:
                if got[name][m]:
                    acc[name][m].append(mape_sp(got[name][m]))
    return {name: {m: tuple(np.mean(v, axis=0)) if v else None for m, v in d.items()} for name, d in acc.items()}


def cells(s):
    return " | ".join("%.1f / %.3f" % s[m] if s.get(m) else "-" for m in METRICS)


def end_to_end(a, rows, preds, k):
    """The tools on k networks (seed 0): seercalibrate each predictor three ways, seerpredict the rest."""
    names = sorted({r["name"] for r in rows})
    pick = set(np.random.default_rng(0).choice(names, size=k, replace=False))
    fit = [r for r in rows if r["name"] in pick]
    rest = [r for r in rows if r["name"] not in pick]
    truth = {(r["name"], r["batch"]): dict(r["y_all"]) for r in fit}
    h5 = real_ablation.real_h5(argparse.Namespace(work=a.work, onnx=a.work, build=a.build), truth,
                               device=NEW, name="new_gpu_calibration")
    L = ["", "## End to end: the tools, on %d networks measured on the GPU" % k, "",
         "The %d networks %s (every batch measured) in one PerfGraph file (`seerconvert --manifest`, labels "
         "`%s_*`), `seercalibrate PREDICTOR.seer that.h5 --device DEV=%s [--with-flops | --with-feature "
         "log_nodes] -o X.seer`, then `seerpredict X.seer NET.onnx` on the other %d networks (%d "
         "configurations). *gap*: the largest relative difference between the tools' predictions and this "
         "script's arithmetic (the tables above)." % (k, ", ".join(sorted(pick)), NEW, NEW,
                                                      len({r["name"] for r in rest}), len(rest)), "",
         "| predictor | calibration | %s | gap |" % " | ".join(METRICS), "|---|---|" + "---|" * len(METRICS) + "---|"]
    worst = 0.0
    for path, dev, pk in preds:
        for how, label, flags in CALS:
            out = os.path.join(a.work, "%s_from_%s_%s.seer" % (NEW, pk, how))
            r = subprocess.run([os.path.join(a.build, "seercalibrate"), path, h5, "--device", "%s=%s" % (dev, NEW),
                                "-o", out] + flags, capture_output=True, text=True)
            if r.returncode != 0:
                msg = r.stderr.strip()
                msg = msg[msg.find(" for "):].split(";")[0] if " for " in msg else msg[-160:]
                L.append("| `%s` `%s` | %s | refused:%s | %s |" % (
                    os.path.relpath(path, ROOT), dev, label, msg, " | ".join(["-"] * (len(METRICS) - 1) + ["-"])))
                continue
            pairs, gap = {m: [] for m in METRICS}, 0.0
            for n in sorted({x["name"] for x in rest}):
                got = seer_json(a.build, out, NEW, os.path.join(a.work, n + ".onnx"), a.batch_list)
                for x in (x for x in rest if x["name"] == n):
                    for m, v in got[x["batch"]].items():
                        pairs[m].append((v, x["y"][m]))
                        gap = max(gap, abs(v / calibrated(fit, x, pk, m, how) - 1))
            worst = max(worst, gap)
            L.append("| `%s` `%s` | %s | %s | %.1e |" % (os.path.relpath(path, ROOT), dev, label, " | ".join(
                "%.1f / %.3f" % mape_sp(pairs[m]) if pairs[m] else "-" for m in METRICS), gap))
    return L, worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--measurements", default=os.path.join(ROOT, "datasets/space_h200/real_networks_h200.jsonl"))
    ap.add_argument("--predictors", default=PREDICTORS, help="FILE:DEVICE,... (default %s)" % PREDICTORS)
    ap.add_argument("--shots", default="5,10,20", help="networks timed on the GPU to calibrate with")
    ap.add_argument("--seeds", type=int, default=5, help="draws of those networks, averaged")
    ap.add_argument("--batches", default="1,32,128")
    ap.add_argument("--e2e", type=int, default=10, help="networks of the end-to-end check (0: none)")
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="ONNX exports (made when missing)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks/new_gpu.md"))
    a = ap.parse_args()
    _, shots, preds = parse_common(a, "new_gpu.py")
    preds = [(path, dev, dev) for path, dev in preds]
    if not os.path.exists(os.path.join(a.build, "seercalibrate")):
        sys.exit("new_gpu.py: %s/seercalibrate missing: build first (README)" % a.build)
    meas = rn.measured(a.measurements)
    if not meas:
        sys.exit("new_gpu.py: %s holds no measurements (scripts/device-check.sh real writes them)" % a.measurements)
    nets = sorted({n for n, b in meas if b in a.batch_list and "train_time_ms" in meas[(n, b)]})
    os.makedirs(a.work, exist_ok=True)
    truth = {}
    failed = rn.export_all(nets, a.work, 1, "new_gpu.py")
    if failed:
        sys.exit("new_gpu.py: ONNX export failed: %s" % "; ".join("%s: %s" % kv for kv in sorted(failed.items())))
    for n in nets:
        for b in a.batch_list:
            r = meas.get((n, b))
            if r and "train_time_ms" in r:
                truth[(n, b)] = {m: r[rn.FIELDS[m]] for m in rn.METRICS}
    # the global features seercalibrate reads, from the same PerfGraph conversion it would see
    h5 = real_ablation.real_h5(argparse.Namespace(work=a.work, onnx=a.work, build=a.build), truth,
                               device=NEW, name="new_gpu_all")
    gnames, g, _ = real_ablation.read_graphs(h5, device=NEW)
    feats = {nm: (g["log_flops_total"][i], g["log_nodes"][i]) for i, nm in enumerate(gnames)}
    rows = []
    for (n, b), y in sorted(truth.items()):
        lf, ln = feats["%s@bs%d" % (n, b)]
        rows.append({"name": n, "batch": b, "y": {m: y[m] for m in METRICS}, "y_all": y, "lf": lf, "ln": ln})
    for path, dev, pk in preds:
        for n in nets:
            got = seer_json(a.build, path, dev, os.path.join(a.work, n + ".onnx"), a.batch_list)
            for r in (r for r in rows if r["name"] == n):
                r[pk] = got[r["batch"]]
    keys = [pk for _, _, pk in preds]
    dev_name = ", ".join(sorted({r.get("device_name", "?") for r in meas.values()}))
    L = ["# A GPU the other devices' predictors never saw: %s" % dev_name, "",
         "Regenerated by `/usr/bin/python3 benchmarks/new_gpu.py%s` on %s." % (
             "".join(" " + x for x in sys.argv[1:]), time.strftime("%Y-%m-%d")), "",
         "%d configurations: %d of torchvision's networks at batch %s, measured on the GPU by `scripts/device-check.sh "
         "real` (`%s`). Cells: MAPE %% / Spearman. *K*: networks timed on the GPU that the calibration (or the "
         "baseline) is fitted on, drawn at random for each network predicted (%d draws averaged); 0: as shipped, "
         "on another device's scale. `transfer_gpu.seer` predicts inference only. `h200.seer` is the predictor "
         "trained on this GPU's own design-space measurements: the reference, not a device it never saw." % (
             len(rows), len(nets), ", ".join(map(str, a.batch_list)), os.path.relpath(a.measurements, ROOT),
             a.seeds), "",
         "| predictor | calibration | K | %s |" % " | ".join(METRICS), "|---|---|---|" + "---|" * len(METRICS)]
    for path, dev, pk in preds:
        s = {m: mape_sp([(r[pk][m], r["y"][m]) for r in rows]) for m in METRICS if m in rows[0][pk]}
        L.append("| `%s` `%s` | as shipped | 0 | %s |" % (os.path.relpath(path, ROOT), dev, cells(s)))
    for k in shots:
        s = score_shots(rows, keys, k, range(a.seeds))
        for path, dev, pk in preds:
            for how, label, _ in CALS:
                L.append("| `%s` `%s` | %s | %d | %s |" % (os.path.relpath(path, ROOT), dev, label, k, cells(s[pk + ":" + how])))
        L.append("| log y = a + b log FLOPs + c log batch, on the K alone | - | %d | %s |" % (k, cells(s["reg"])))
        L.append("| the same + d log operators, on the K alone | - | %d | %s |" % (k, cells(s["reg_nodes"])))
    L += ["", "Where seercalibrate would refuse the fit on the K drawn (its b outside (0, 10], or a or c of "
          "100 or more: the predictions do not rise with the measured times), the factors stand in, as a "
          "user would then calibrate: %s." % (", ".join("%s %d predictions" % (dict((h, l) for h, l, _ in CALS)[h], n)
                                                      for h, n in sorted(REFUSED.items())) or "never")]
    if a.e2e:
        e2e, worst = end_to_end(a, rows, preds, a.e2e)
        L += e2e
        if worst > 1e-3:
            L.append("\n**The tools and this script disagree by up to %.1e**: the tables above do not describe "
                     "what seercalibrate does." % worst)
            print("new_gpu.py: the tools and the emulation disagree by %.1e" % worst, file=sys.stderr)
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")
    print("new_gpu.py: wrote %s (%d configurations)" % (a.out, len(rows)))


if __name__ == "__main__":
    main()
