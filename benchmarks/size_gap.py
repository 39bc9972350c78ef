#!/usr/bin/env python3
"""How a predictor's error on real networks grows with how far they lie beyond the size of its
training data, per member file.

For every measured (network, batch) of a real-network file (benchmarks/real_networks.py's; the
networks it holds out left out), the network's FLOPs at that batch against the largest FLOPs of
the design-space configurations measured at the same batch (--space): inside that range, up to
twice beyond it, or further. Prints, per batch and size group, the median signed error (predicted
/ measured - 1; measured: --real's line) and the MAPE of each metric, for each --predictor file (an ensemble and, to see
which part extrapolates, its members exported alone: train_cpu_predictor.sh keeps WORK/cost.seer,
WORK/pair.seer, WORK/perfsage.seer ...).

  /usr/bin/python3 benchmarks/size_gap.py --predictor shipped=predictors/cpu_xeon26.seer \\
      --predictor cost=W/cost.seer --device cpu_xeon26 --real benchmarks/real_networks_xeon26.jsonl \\
      --space datasets/space_cpu/measurements_xeon26.jsonl
"""
import argparse
import os
import statistics
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import real_networks as rn  # noqa: E402

FIELDS = (("train_ms", "train_time_ms"), ("infer_ms", "infer_time_ms"), ("train_mb", "train_mem_mb"))
GROUPS = (("inside", 0, 1), ("1-2x beyond", 1, 2), (">2x beyond", 2, float("inf")))


def largest_flops(path):
    """{batch: the largest FLOPs of a measured design-space configuration at that batch}."""
    big = {}
    for r in rn.json_lines(path):
        if "train_time_ms" in r and r.get("flops"):
            big[r["batch"]] = max(big.get(r["batch"], 0), r["flops"])
    return big


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--predictor", action="append", required=True, metavar="NAME=FILE.seer")
    ap.add_argument("--device", required=True, help="the label prefix, e.g. cpu_xeon26")
    ap.add_argument("--real", required=True, help="real_networks.py measurements (JSON lines)")
    ap.add_argument("--space", required=True, help="the design-space measurements the predictors learned")
    ap.add_argument("--batches", default="1,4,16")
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="the ONNX exports (real_networks.py --work)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    files = rn.named_files(ap, a.predictor, "--predictor")
    try:
        batches = [int(b) for b in a.batches.split(",")]
    except ValueError:
        ap.error("--batches %r: batch sizes separated by commas" % a.batches)
    big = largest_flops(a.space)
    missing = [b for b in batches if b not in big]
    if missing:
        sys.exit("size_gap.py: %s: no design-space configuration at batch %s" % (a.space, missing))
    meas = rn.measured(a.real)
    nets = [n for n in rn.NETS if n not in rn.HELD_OUT and any((n, b) in meas for b in batches)]
    for n in nets:
        if not os.path.isfile(os.path.join(a.work, n + ".onnx")):
            sys.exit("size_gap.py: %s.onnx missing under %s (real_networks.py --report-only exports it)" % (n, a.work))
    print("Largest design-space FLOPs per batch (%s): %s.\n" % (
        os.path.relpath(a.space, ROOT), ", ".join("%d: %.1f G" % (b, big[b] / 1e9) for b in batches)))
    print("| predictor | batch | size | configurations | " +
          " | ".join("%s median / MAPE %%" % m for m, _ in FIELDS) + " |")
    print("|---|---|---|---|" + "---|" * len(FIELDS))
    for name, path in files:
        p = types.SimpleNamespace(build=a.build, predictor=path, device=a.device)
        rows = []  # (batch, FLOPs / largest, {metric: signed error})
        for n in nets:
            bs = [b for b in batches if (n, b) in meas and "train_time_ms" in meas[(n, b)]]
            got = rn.predict(p, os.path.join(a.work, n + ".onnx"), bs)
            if isinstance(got, str):
                sys.exit("size_gap.py: %s on %s: %s" % (path, n, got))
            for b in bs:
                rows.append((b, got[b][0] / big[b], {m: got[b][1][m] / meas[(n, b)][f] - 1 for m, f in FIELDS}))
        for b in batches:
            for g, lo, hi in GROUPS:
                sel = [e for bb, x, e in rows if bb == b and lo < x <= hi]
                if not sel:
                    continue
                print("| %s | %d | %s | %d | %s |" % (name, b, g, len(sel), " | ".join(
                    "%+.0f / %.1f" % (100 * statistics.median(e[m] for e in sel),
                                      100 * statistics.mean(abs(e[m]) for e in sel)) for m, _ in FIELDS)))


if __name__ == "__main__":
    main()
