#!/usr/bin/env python3
"""The roofline cost alone with and without the depthwise convolutions' FLOPs (log_flops_dw, what
[model] target = roofline_dw adds to roofline_peak), fitted on a CPU's design space, scored on the
real networks measured on that CPU by the depthwise kernels they hold.

    /usr/bin/python3 benchmarks/dw_cost.py --space WORK/cpu_xeon26.h5 --device cpu_xeon26 \\
        --real benchmarks/real_networks_xeon26.jsonl --real2 benchmarks/real_networks_xeon26_pass2.jsonl \\
        [--work /tmp/dw-cost] [--out FILE.md]

SPACE: the design space as scripts/space/train_cpu_predictor.sh builds it (WORK/<label>.h5), from a
seerconvert that writes log_flops_dw (2026-12-05, 16:00 UTC or later). The real networks:
real_networks.truth over the passes (--real, --real2 and a third beside it), every network not held
out, converted into WORK/real_<device>.h5. Each network's group comes from its ONNX under --onnx:
no depthwise convolution, depthwise kernels of 3 at most, or one of 5 or more. Each cost is fitted
per metric as prep.c fits it (real_ablation.cost_fit: every subset of terms, non-negative, least
relative squares) on every design-space graph. Cells: MAPE % and, after the slash, the median
signed error % (predicted / measured - 1).
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_ablation as ra  # noqa: E402
import real_networks as rn  # noqa: E402

PEAK = ["log_nodes", "log_flops_total", "log_mem_total", "log_weight_total", "log_mem_kept_acts",
        "log_tensor_bytes_mean"]
VARIANTS = [("roofline_peak (7 terms)", PEAK), ("roofline_dw (8: + log_flops_dw)", PEAK + ["log_flops_dw"])]
GROUPS = ("no depthwise", "depthwise 3x3", "depthwise 5x5 or larger")


def kernel_group(onnx_path):
    """A network's group by the largest kernel of its depthwise convolutions (more than one group,
    one input channel per group, as seerconvert's log_flops_dw counts them)."""
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    dims = {t.name: list(t.dims) for t in m.graph.initializer}
    ks = [dims[n.input[1]][2] for n in m.graph.node
          if n.op_type == "Conv" and len(n.input) > 1 and len(dims.get(n.input[1], ())) >= 3
          and dims[n.input[1]][1] == 1 and any(a.name == "group" and a.i > 1 for a in n.attribute)]
    return GROUPS[0] if not ks else GROUPS[2] if max(ks) >= 5 else GROUPS[1]


def cell(r):
    return "%.1f / %+.0f" % (100 * np.mean(np.abs(r - 1)), 100 * (np.median(r) - 1)) if len(r) else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--space", required=True, help="the design-space PerfGraph file")
    ap.add_argument("--device", required=True, help="its label prefix, e.g. cpu_xeon26")
    ap.add_argument("--real", required=True)
    ap.add_argument("--real2", default="")
    ap.add_argument("--onnx", default="/tmp/seer-real-networks", help="real_networks.py's ONNX exports")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build"))
    ap.add_argument("--work", default="/tmp/dw-cost")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    real = ra.cached_real_h5(a)
    _, dg, dy = ra.read_graphs(a.space, a.device)
    if "log_flops_dw" not in dg:
        sys.exit("dw_cost.py: %s has no global feature log_flops_dw: build it again with this seerconvert "
                 "(scripts/space/make_dataset.py)" % a.space)
    names, rg, ry = ra.read_graphs(real, a.device)
    nets = sorted({n.rsplit("@bs", 1)[0] for n in names})
    group_of = {n: kernel_group(os.path.join(a.onnx, n + ".onnx")) for n in nets}
    groups = np.array([group_of[n.rsplit("@bs", 1)[0]] for n in names])
    head = ["cost", "metric", "design space", "real, all (%d)" % len(names)] + [
        "%s (%d)" % (g, int((groups == g).sum())) for g in GROUPS] + ["last term's price"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, feats in VARIANTS:
        X = np.expm1(np.column_stack([dg[f] for f in feats]))
        R = np.column_stack([np.ones(len(names))] + [np.expm1(rg[f]) for f in feats])
        for m in ("train_ms", "infer_ms"):
            k = rn.METRICS.index(m)
            ok = np.isfinite(dy[:, k]) & (dy[:, k] > 0)
            c = ra.cost_fit(X[ok], dy[ok, k])
            space = np.column_stack([np.ones(ok.sum()), X[ok]]) @ c / dy[ok, k]
            r = R @ c / ry[:, k]
            lines.append("| %s | %s | %s | %s | %s | %.3g |" % (label, m, cell(space), cell(r),
                                                                 " | ".join(cell(r[groups == g]) for g in GROUPS), c[-1]))
    ra.emit(lines, a.out)


if __name__ == "__main__":
    main()
