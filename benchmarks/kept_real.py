#!/usr/bin/env python3
"""seerconvert's three counts of the bytes a training step keeps (log_mem_kept, log_mem_kept_silu,
log_mem_kept_acts) against what PyTorch's autograd keeps, on the real networks of
benchmarks/real_networks.py, and how much of each graph's counted bytes the operators computing a
weight from weights alone move (a weight transposed, reshaped or standardised at run time, as
torch.onnx writes a model without constant folding).

    /usr/bin/python3 benchmarks/kept_real.py [--nets resnet18,vit_b_16,...] [--batch 2]
        [--onnx /tmp/seer-real-networks] [--out benchmarks/kept_real.md]

Each network is built as real_networks.py builds it (torchvision's or timm's, untrained) and run
once forward with a loss at --batch under torch.autograd.graph.saved_tensors_hooks
(kept_bytes.autograd_kept_mb: each saved storage once, less the weights and the input); its ONNX
(real_networks.py --work, exported as real_networks.py exports) is converted by seerconvert at the
same batch. The last column reads the ONNX itself, whatever the converter does with those
operators: the float tensors computed from initializers alone, their bytes read and written,
against seerconvert's memory traffic at batch 1 and 16. The networks held out for a verdict
(real_networks.HELD_OUT) are left out. Needs python3-torch, python3-torchvision, python3-onnx,
python3-h5py and timm for timm's models.
"""
import argparse
import csv
import gc
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import kept_bytes as kb  # noqa: E402
import real_networks as rn  # noqa: E402

COUNTS = ("log_mem_kept", "log_mem_kept_silu", "log_mem_kept_acts")
FLOAT = {1, 10, 11, 16}  # ONNX float, float16, double, bfloat16
ELEM = {1: 4, 10: 2, 11: 8, 16: 2}
DEFAULT = ("resnet18,resnet50,mobilenet_v2,efficientnet_b0,densenet121,vgg16,mnasnet1_0,shufflenet_v2_x1_0,"
           "squeezenet1_0,inception_v3,regnet_y_8gf,vit_b_16,vit_b_32,swin_t,swin_s,convnext_tiny,maxvit_t,"
           "timm-flexivit_base,timm-vit_base_r50_s16_224,timm-swinv2_base_window8_256,timm-caformer_b36,"
           "timm-nasnetalarge,timm-pit_ti_224,timm-levit_128,timm-mobilevit_s,timm-coat_mini,"
           "timm-xcit_nano_12_p8_224,timm-twins_svt_base,timm-convit_tiny,timm-ghostnet_100,timm-mixnet_s,"
           "timm-tiny_vit_5m_224,timm-efficientvit_b0,timm-pvt_v2_b0,timm-gcvit_xxtiny,timm-crossvit_9_240,"
           "timm-cait_s24_224,timm-edgenext_xx_small,timm-fastvit_t8")


def weight_bytes_computed(path):
    """Bytes read and written by the ONNX nodes computing a float tensor from initializers alone."""
    import onnx
    g = onnx.load(path, load_external_data=False).graph
    init = {t.name: int(np.prod(t.dims)) * ELEM.get(t.data_type, 4) for t in g.initializer
            if t.data_type in FLOAT}
    data = {i.name for i in g.input} - {t.name for t in g.initializer}
    total = 0.0
    for node in g.node:
        if any(x in data for x in node.input if x):
            data.update(node.output)
        elif node.op_type != "Constant":
            read = sum(init.get(x, 0) for x in node.input if x)
            if read:
                total += 2 * read  # a transpose or reshape writes what it reads
    return total


def traffic_mb(build, path, batch):
    out = subprocess.run([os.path.join(build, "seerconvert"), path, "--batch", str(batch)], capture_output=True,
                         text=True)
    m = re.search(r"memory traffic ([\d.]+) MB", out.stdout)
    if out.returncode or not m:
        sys.exit("kept_real.py: seerconvert %s: %s" % (path, (out.stderr or out.stdout).strip()[:300]))
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nets", default=DEFAULT)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--onnx", default="/tmp/seer-real-networks", help="real_networks.py's --work (NET.onnx)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    import h5py
    import torch
    torch.set_num_threads(1)
    nets = [n for n in a.nets.split(",") if n and n not in rn.HELD_OUT]
    for n in nets:
        if n not in rn.NETS:
            sys.exit("kept_real.py: --nets %s: not a network of benchmarks/real_networks.py" % n)
        if not os.path.exists(os.path.join(a.onnx, n + ".onnx")):
            sys.exit("kept_real.py: %s: no %s.onnx in %s (run benchmarks/real_networks.py --report-only first)"
                     % (n, n, a.onnx))
    with tempfile.TemporaryDirectory() as tmp:
        man, h5 = os.path.join(tmp, "m.csv"), os.path.join(tmp, "k.h5")
        with open(man, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["onnx", "batch", "name", "group", "family", "y_ms"])
            for i, n in enumerate(nets):
                w.writerow([os.path.join(a.onnx, n + ".onnx"), a.batch, n, i, "real", 1.0])
        r = subprocess.run([os.path.join(a.build, "seerconvert"), "--manifest", man, "-o", h5, "--threads", "1"],
                           capture_output=True, text=True)
        if r.returncode:
            sys.exit("kept_real.py: seerconvert: " + r.stderr.strip())
        with h5py.File(h5, "r") as f:
            gf = [x.decode() for x in f["/schema/global_features"][:]]
            missing = [c for c in COUNTS if c not in gf]
            if missing:
                sys.exit("kept_real.py: %s has no %s (rebuild seerconvert)" % (a.build, ", ".join(missing)))
            gx = f["/global/x"][:].astype(np.float64)
    lines = ["| network | autograd keeps, MiB | " + " | ".join("`%s` / autograd" % c for c in COUNTS) +
             " | bytes of operators computing weights from weights: share of seerconvert's memory traffic as this build counts it, batch 1 / 16 |",
             "|---|---|" + "---|" * len(COUNTS) + "---|"]
    logs = {c: [] for c in COUNTS}
    print("\n".join(lines), flush=True)
    for i, n in enumerate(nets):
        side = rn.NETS[n][0]
        ag = kb.autograd_kept_mb(rn.build(n), (3, side, side), a.batch)
        gc.collect()
        ratios = [np.expm1(gx[i, gf.index(c)]) / 2 ** 20 / ag for c in COUNTS]
        for c, q in zip(COUNTS, ratios):
            logs[c].append(abs(np.log(q)))
        path = os.path.join(a.onnx, n + ".onnx")
        wb = weight_bytes_computed(path) / 1e6
        line = "| %s | %.1f | %s | %.1f%% / %.1f%% |" % (n, ag, " | ".join("%.3f" % q for q in ratios),
                                                         100 * wb / traffic_mb(a.build, path, 1),
                                                         100 * wb / traffic_mb(a.build, path, 16))
        lines.append(line)
        print(line, flush=True)
    summary = ("\nOver the %d networks at batch %d, the mean |log(count / autograd)| and the networks within 5%%: %s."
               % (len(nets), a.batch, "; ".join("`%s` %.3f, %d" % (c, np.mean(logs[c]), sum(x < np.log(1.05)
                                                                                           for x in logs[c]))
                                               for c in COUNTS)))
    print(summary)
    if a.out:
        with open(a.out, "w") as f:
            f.write("# The bytes a training step keeps: seerconvert's counts against autograd on real networks\n\n"
                    "Regenerated by `/usr/bin/python3 benchmarks/kept_real.py --out %s` (batch %d).\n\n"
                    % (a.out, a.batch)

                    + "\n".join(lines) + "\n" + summary + "\n")


if __name__ == "__main__":
    main()
