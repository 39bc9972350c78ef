#!/usr/bin/env python3
"""drift_now.py MEASUREMENTS.jsonl --groups r,y,z [--per-group 12] [--batch 4] [-o OUT.jsonl]

How far has this machine drifted since each part of a measurements file was measured? Draws
--per-group architectures of each id prefix in --groups (e.g. r: specs_r.jsonl, measured first;
z: the latest) among the first-pass lines at --batch (training step between --min-ms and
--max-ms, with a reference timing), measures them again now, interleaved (r, y, z, r, y, z, ...)
so that a drift during the run falls on every group alike, with measure.py's own protocol
(--repeats 7 --warmup 2 --threads 1, into OUT, not into the dataset), and prints per group the
geometric mean of now / then for the training step, the inference and the reference network
(ref_ms). Equal ratios across groups: the labels of the groups are comparable; unequal: part of
the difference between the groups' labels is the machine's, not the networks'. Run it on the
core the measurements use (taskset -c 1 ...), with that core otherwise idle.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SPECS = os.path.join(HERE, "..", "..", "datasets", "space_cpu")
sys.path.insert(0, os.path.join(HERE, "..", "space"))
from make_dataset import read_specs  # noqa: E402


def gmean(x):
    return math.exp(sum(math.log(v) for v in x) / len(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("measurements")
    ap.add_argument("--groups", required=True, help="id prefixes, comma-separated (e.g. r,y,z)")
    ap.add_argument("--per-group", type=int, default=12)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--min-ms", type=float, default=30, help="training step at least this (ms), then")
    ap.add_argument("--max-ms", type=float, default=600, help="and at most this: a short run")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--specs", default=SPECS, help="specs files, or a folder of specs*.jsonl (default datasets/space_cpu)")
    ap.add_argument("-o", default="", help="the new measurements (default: a temporary file)")
    a = ap.parse_args()
    groups = [g for g in a.groups.split(",") if g]
    if not groups or a.per_group < 1:
        ap.error("--groups needs at least one prefix and --per-group a positive number")
    first = {}
    with open(a.measurements) as f:
        for n, line in enumerate(f, 1):
            try:
                d = json.loads(line)
            except ValueError:
                sys.exit("drift_now: %s line %d: not JSON" % (a.measurements, n))
            if d.get("pass", 1) == 1 and d.get("batch") == a.batch and d.get("train_time_ms") and d.get("ref_ms"):
                first[d["id"]] = d
    specs = read_specs(a.specs)  # make_dataset's: a folder's specs*.jsonl, ids checked unique
    rng, picked = random.Random(a.seed), {}
    for g in groups:
        ids = sorted(i for i, d in first.items() if i.startswith(g) and i in specs
                     and a.min_ms <= d["train_time_ms"] <= a.max_ms)
        if len(ids) < a.per_group:
            sys.exit("drift_now: group %s: %d first-pass lines at batch %d between %g and %g ms, fewer than "
                     "--per-group %d" % (g, len(ids), a.batch, a.min_ms, a.max_ms, a.per_group))
        picked[g] = rng.sample(ids, a.per_group)
    order = [picked[g][i] for i in range(a.per_group) for g in groups]
    with tempfile.TemporaryDirectory() as tmp:
        sp = os.path.join(tmp, "specs.jsonl")
        with open(sp, "w") as f:
            for i in order:
                f.write(json.dumps(specs[i], sort_keys=True) + "\n")
        out = a.o or os.path.join(tmp, "now.jsonl")
        if os.path.exists(out):
            sys.exit("drift_now: %s exists: give a new file (-o)" % out)
        cmd = [sys.executable, os.path.join(HERE, "measure.py"), sp, "-o", out, "--device", "cpu",
               "--batches", str(a.batch), "--repeats", "7", "--warmup", "2", "--threads", "1"]
        print("drift_now: measuring %d configurations again (%s)" % (len(order), " ".join(cmd[1:])), file=sys.stderr)
        if subprocess.run(cmd).returncode:
            sys.exit("drift_now: measure.py failed")
        with open(out) as f:
            now = [json.loads(line) for line in f if line.strip()]
    print("| group | configurations | reference then (median ms) | now / then: training step | inference | reference |")
    print("|---|---|---|---|---|---|")
    for g in groups:
        rows = [(d, first[d["id"]]) for d in now if d["id"] in picked[g] and d.get("train_time_ms")]
        if not rows:
            print("| %s | 0 | - | - | - | - |" % g)
            continue
        then_ref = sorted(f["ref_ms"] for _, f in rows)[len(rows) // 2]
        print("| %s | %d | %.2f | %.3f | %.3f | %.3f |" % (
            g, len(rows), then_ref, gmean([n["train_time_ms"] / f["train_time_ms"] for n, f in rows]),
            gmean([n["infer_time_ms"] / f["infer_time_ms"] for n, f in rows]),
            gmean([n["ref_ms"] / f["ref_ms"] for n, f in rows])))


if __name__ == "__main__":
    main()
