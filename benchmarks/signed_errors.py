#!/usr/bin/env python3
"""Signed errors of predictor files on named real networks, network by network (a markdown table).

    benchmarks/signed_errors.py --nets timm-coat_mini,timm-nfnet_f0 \
        --score shipped=predictors/cpu_xeon26.seer --score candidate=W/cpu_xeon26.seer

Each cell is (predicted / measured - 1) in % for the training step, inference and training
memory; measured is the geometric mean of --real and --real2 (real_networks.py's files) where
both have the network and batch, the median of three where --real3 retook it. Predictions: real_networks.predict (`seerpredict FILE NET.onnx
--batch B,... --json`, labels of --device), the ONNX from --onnx (real_networks.py --work). real_ablation.py gives the MAPE by group; this shows
which networks moved.
"""
import argparse
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nets", required=True, help="comma-separated names as in real_networks.py")
    ap.add_argument("--score", action="append", required=True, metavar="NAME=FILE.seer")
    ap.add_argument("--device", default="cpu_xeon26", help="the files' device name (label prefix)")
    ap.add_argument("--real", default=os.path.join(ROOT, "benchmarks", "real_networks_xeon26.jsonl"))
    ap.add_argument("--real2", default=os.path.join(ROOT, "benchmarks", "real_networks_xeon26_pass2.jsonl"))
    ap.add_argument("--real3", default="", help="the third pass (default: --real2's name with pass3, when it exists)")
    ap.add_argument("--onnx", default="/tmp/seer-real-networks",
                    help="folder of NET.onnx; a network missing there is exported first")
    ap.add_argument("--jobs", type=int, default=1, help="ONNX exports at once (about 10 s each on one core)")
    ap.add_argument("--batches", default="1,4,16")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    nets = [n for n in a.nets.split(",") if n]
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import real_networks as rn
    held = [n for n in nets if n in rn.HELD_OUT]
    if held:  # a held-out set is scored once, by real_ablation.py --judge, before anything else looks
        sys.exit("signed_errors: %s: held out (real_networks.py HELD_OUT) until real_ablation.py --judge scores "
                 "the candidate they wait for; after the verdict move the set into BATCHES_OF_NETS" % ", ".join(held))
    files = rn.named_files(ap, a.score, "--score")
    batches = [int(x) for x in a.batches.split(",")]
    meas = rn.truth(rn.pass_files(a.real, a.real2, a.real3 or None))
    print("| network | batch | measured training step / inference ms | "
          + " | ".join("%s: training step / inference / memory %%" % n for n, _ in files) + " |")
    print("|---|---|---|" + "---|" * len(files))
    failed = rn.export_all(nets, a.onnx, a.jobs, "signed_errors")
    if failed:
        sys.exit("signed_errors: ONNX export failed under %s: %s" % (
            a.onnx, "; ".join("%s: %s" % kv for kv in sorted(failed.items()))))
    for n in nets:
        onnx = os.path.join(a.onnx, n + ".onnx")
        bs = [b for b in batches if (n, b) in meas]
        preds = []  # per file: {batch: {metric: value}}, one seerpredict call for every batch
        for _, path in files:
            got = rn.predict(types.SimpleNamespace(build=a.build, predictor=path, device=a.device), onnx, bs) if bs else {}
            if isinstance(got, str):
                sys.exit("signed_errors: seerpredict %s %s: %s" % (path, onnx, got))
            preds.append({b: got[b][1] for b in bs})
        for b in bs:
            m = meas[(n, b)]
            cells = [" / ".join("%+.0f" % (100 * (p[b][pk] / m[mk] - 1)) for pk, mk in
                                (("train_ms", "train_time_ms"), ("infer_ms", "infer_time_ms"), ("train_mb", "train_mem_mb")))
                     for p in preds]
            print("| %s | %d | %.0f / %.0f | %s |" % (n, b, m["train_time_ms"], m["infer_time_ms"], " | ".join(cells)))


if __name__ == "__main__":
    main()
