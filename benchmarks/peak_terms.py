#!/usr/bin/env python3
"""What a training step's peak memory holds beside the bytes it keeps: the roofline cost alone,
fitted on a CPU's design space, scored on the real networks measured on that CPU, with one more
term or none.

    /usr/bin/python3 benchmarks/peak_terms.py --space WORK/cpu_epyc.h5 --device cpu_epyc \\
        --real benchmarks/real_networks_epyc.jsonl --real2 benchmarks/real_networks_epyc_pass2.jsonl \\
        [--work /tmp/peak-terms] [--out FILE.md]

SPACE: the design space as scripts/space/train_cpu_predictor.sh builds it (WORK/<label>.h5, labels
<device>_<metric>, with /graph/family). The real networks: real_networks.py's measurements (the
geometric mean of the two passes where both exist), every one that is not held out
(real_networks.HELD_OUT; timm's ADDED4, spent, included), converted with the build's seerconvert into
WORK/real_<device>.h5.

Rows: the cost of `[model] target = roofline_kept_acts` (six terms: 1, nodes, FLOPs, bytes, weight
bytes, the bytes kept for the backward pass), then with a seventh: the largest operator's bytes
(`log_mem_max`) or the mean activation tensor's (`log_tensor_bytes_mean`, what `target =
roofline_peak` adds); each fitted per metric as prep.c fits it (real_ablation.cost_fit: every
subset of terms, non-negative, least relative squares), on every design-space graph and on its CNNs
alone (cost_terms.is_cnn: families of CNN stage styles only). Columns: memory MAPE % on the design
space (the fit's own graphs) and on the real networks, all and by group (EfficientNets; other CNNs;
token networks: ViT, Swin, ConvNeXt, MaxViT and timm's attention models), the median predicted /
measured of each group, and the time MAPEs (training step / inference) on the real networks.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cost_terms  # noqa: E402
import real_ablation as ra  # noqa: E402
import real_networks as rn  # noqa: E402

SIX = ["log_nodes", "log_flops_total", "log_mem_total", "log_weight_total", "log_mem_kept_acts"]
VARIANTS = [("roofline_kept_acts (six terms)", SIX),
            ("+ the largest operator's bytes (log_mem_max)", SIX + ["log_mem_max"]),
            ("+ the mean activation tensor's bytes (roofline_peak)", SIX + ["log_tensor_bytes_mean"])]
# torchvision's attention and ConvNeXt networks (real_ablation.TRANSFORMERS) and timm's
TOKENS = ra.TRANSFORMERS + ("timm-vit", "timm-swin", "timm-coat", "timm-davit", "timm-nest", "timm-edgenext",
                            "timm-caformer", "timm-flexivit", "timm-gcvit", "timm-pit", "timm-levit",
                            "timm-mobilevit", "timm-convnextv2")


def real_group(name):
    net = name.rsplit("@bs", 1)[0]
    if "efficientnet" in net:
        return "EfficientNets"
    return "tokens" if net.startswith(TOKENS) else "CNNs"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--space", required=True)
    ap.add_argument("--device", required=True)
    ap.add_argument("--real", required=True)
    ap.add_argument("--real2", default="")
    ap.add_argument("--onnx", default="/tmp/seer-real-networks")
    ap.add_argument("--build", default="build")
    ap.add_argument("--work", default="/tmp/peak-terms")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    real = ra.cached_real_h5(a)
    _, dg, dy = ra.read_graphs(a.space, a.device)
    names, rg, ry = ra.read_graphs(real, a.device)
    groups = np.array([real_group(n) for n in names])
    cnn = np.array([cost_terms.is_cnn(f) for f in cost_terms.families(a.space)])
    mb, ms, mi = (rn.METRICS.index(m) for m in ("train_mb", "train_ms", "infer_ms"))
    lines = ["| cost | fitted on | memory: design space | real, all (%d) | EfficientNets (%d) | CNNs (%d) | "
             "token networks (%d) | predicted / measured: EfficientNets, CNNs, tokens | time, real: training "
             "step / inference |" % ((len(names),) + tuple(int((groups == g).sum())
                                                           for g in ("EfficientNets", "CNNs", "tokens"))),
             "|---|---|---|---|---|---|---|---|---|"]
    for label, feats in VARIANTS:
        X = np.expm1(np.column_stack([dg[f] for f in feats]))
        R = np.column_stack([np.ones(len(names))] + [np.expm1(rg[f]) for f in feats])
        for fit_on, rows in (("every graph", np.ones(len(X), bool)), ("its CNNs", cnn)):
            def fit(k):
                ok = rows & np.isfinite(dy[:, k]) & (dy[:, k] > 0)
                c = ra.cost_fit(X[ok], dy[ok, k])
                space = np.mean(np.abs(np.column_stack([np.ones(ok.sum()), X[ok]]) @ c / dy[ok, k] - 1)) * 100
                return space, R @ c / ry[:, k]
            space, r = fit(mb)
            e = np.abs(r - 1) * 100
            cells = ["%.1f" % e[groups == g].mean() for g in ("EfficientNets", "CNNs", "tokens")]
            med = ", ".join("%.2f" % np.median(r[groups == g]) for g in ("EfficientNets", "CNNs", "tokens"))
            time = "-"
            if fit_on == "every graph":
                time = " / ".join("%.1f" % (np.mean(np.abs(fit(k)[1] - 1)) * 100) for k in (ms, mi))
            lines.append("| %s | %s | %.1f | %.1f | %s | %s | %s |" % (label, fit_on, space, e.mean(),
                                                                     " | ".join(cells), med, time))
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
