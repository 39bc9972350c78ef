#!/usr/bin/env python3
"""What the other core's work does to a CPU timing: the same networks timed beside an idle core, a
memory-bound neighbour and a compute-bound one.

Seer's CPU measurements pin the timed process to one core while the other core trains or converts
(each line's other_load). The two cores of these virtual machines share caches and memory
bandwidth, so a neighbour that streams through memory can slow the memory-bound operators
(depthwise convolutions, BatchNormalization, their backward passes) far more than the arithmetic
ones, and far more than it slows the small reference network timed before each configuration
(ref_ms, which make_dataset.py --ref-normalize divides out). This script times each network with
measure.py's protocol (scripts/measure/measure.py measure_model: a training step and a no-grad
forward pass, the median of --repeats after --warmup, in a forked child, ref_ms first) on --core
while --other runs one of:

  idle     nothing
  stream   numpy copies between two 64 MiB arrays (memory bandwidth; beyond every cache)
  compute  256 x 256 matrix products (arithmetic; inside the core's own cache)

The conditions rotate network by network (idle, stream, compute, then stream, compute, idle, ...),
so the machine's slow drift falls on all three alike. Each network runs --rounds times in each
condition; the report gives the median time per condition and the ratios to idle.

    /usr/bin/python3 benchmarks/denormals.py ...   # subnormal floats, the other suspect
    /usr/bin/python3 benchmarks/neighbour.py --real timm-mixnet_s,resnet50 --rounds 2 --out FILE.md

Needs two cores (it pins itself; nothing else should run on either).
"""
import argparse
import multiprocessing as mp

import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "scripts/measure"))
import measure  # noqa: E402
import real_networks as rn  # noqa: E402
from denormals import append_line, emit  # noqa: E402

CONDITIONS = ["idle", "stream", "compute"]


def neighbour(kind, core, stop):
    """The other core's load until stop is set."""
    os.sched_setaffinity(0, {core})
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    if kind == "stream":
        a = np.ones(8 << 20)  # 64 MiB of float64
        b = np.empty_like(a)
        while not stop.is_set():
            np.copyto(b, a)
            np.copyto(a, b)
    elif kind == "compute":
        a = np.random.default_rng(0).random((256, 256), dtype=np.float32)
        while not stop.is_set():
            for _ in range(50):
                a = (a @ a) * (1.0 / 256)


def timed(name, batch, m):
    side = rn.NETS[name][0]
    return measure.run_cpu_child(None, batch, m, rn._NoNvml(), measure=lambda: rn.measure_net(name, side, batch, m))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", required=True, help="benchmarks/real_networks.py's network names, comma-separated")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2, help="timings of each network in each condition")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--core", type=int, default=0, help="the core that times")
    ap.add_argument("--other", type=int, default=1, help="the neighbour's core")
    ap.add_argument("--jsonl", default=None, help="append every timing here")
    ap.add_argument("--out", default=None, help="write the report (markdown) here; stdout otherwise")
    a = ap.parse_args()
    nets = [n for n in a.real.split(",") if n]
    for n in nets:
        if n not in rn.NETS:
            sys.exit("neighbour.py: --real: unknown network %r (benchmarks/real_networks.py's NETS)" % n)
    cores = os.sched_getaffinity(0)
    if a.core == a.other or not {a.core, a.other} <= cores:
        sys.exit("neighbour.py: --core %d and --other %d: two different cores of this process's %s"
                 % (a.core, a.other, sorted(cores)))
    os.sched_setaffinity(0, {a.core})
    import torch
    torch.set_num_threads(1)
    m = argparse.Namespace(device="cpu", warmup=a.warmup, repeats=a.repeats, threads=1, reference=True)
    res = {}  # (net, condition) -> [result]
    t0, k = time.time(), 0
    for r in range(a.rounds):
        for n in nets:
            order = CONDITIONS[k % 3:] + CONDITIONS[:k % 3]
            k += 1
            for c in order:
                stop, p = mp.Event(), None
                if c != "idle":
                    p = mp.Process(target=neighbour, args=(c, a.other, stop), daemon=True)
                    p.start()
                    time.sleep(0.5)
                out = timed(n, a.batch, m)
                if p:
                    stop.set()
                    p.join()
                if "train_time_ms" not in out:
                    sys.exit("neighbour.py: %s batch %d (%s): %s" % (n, a.batch, c, out))
                out.update({"name": n, "batch": a.batch, "condition": c, "round": r})
                res.setdefault((n, c), []).append(out)
                append_line(a.jsonl, out)
                print("  %s batch %d, %s: training step %.1f ms, inference %.1f ms, reference %.2f ms (%.0f s)" % (
                    n, a.batch, c, out["train_time_ms"], out["infer_time_ms"], out["ref_ms"], time.time() - t0), flush=True)
    emit(report(nets, res), a.out)


def report(nets, res):
    med = {key: {f: float(np.median([o[f] for o in v])) for f in ("train_time_ms", "infer_time_ms", "ref_ms")}
           for key, v in res.items()}
    L = ["| network | idle: training step / inference / reference ms | stream: x training step / inference / reference | compute: x training step / inference / reference |",
         "|---|---|---|---|"]
    ratios = {c: [] for c in CONDITIONS[1:]}
    for n in nets:
        i = med[(n, "idle")]
        cells = []
        for c in CONDITIONS[1:]:
            x = med[(n, c)]
            q = [x[f] / i[f] for f in ("train_time_ms", "infer_time_ms", "ref_ms")]
            ratios[c].append(q)
            cells.append("%.2f / %.2f / %.2f" % tuple(q))
        L.append("| %s | %.1f / %.1f / %.2f | %s |" % (n, i["train_time_ms"], i["infer_time_ms"], i["ref_ms"], " | ".join(cells)))
    L.append("| median | | %s |" % " | ".join("%.2f / %.2f / %.2f" % tuple(np.median(np.array(ratios[c]), axis=0))
                                               for c in CONDITIONS[1:]))
    return L


if __name__ == "__main__":
    main()
