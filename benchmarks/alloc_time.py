#!/usr/bin/env python3
"""How much of a network's CPU inference time is the allocator's?

Each network's inference at one batch (one thread, the median of 7 runs after 2 warm-up ones, in a
fresh process) three times: under glibc's default malloc, with every block served from the heap
(MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at 4 GiB: freed activations are reused instead
of unmapped and mapped again, page faults and all), and under the default again (the run-to-run
noise). Real networks are benchmarks/real_networks.py's names; design-space networks their spec
ids (datasets/space_cpu/specs_*.jsonl). With --report (real_networks.py's markdown report for the
same CPU), the predictor's signed errors at that batch beside each network, and their Spearman
correlation with the heap's gain.

  taskset -c 0 /usr/bin/python3 benchmarks/alloc_time.py --nets resnet18,timm-convnext_atto \\
      --space-ids w000047 --batch 4 --report benchmarks/real_networks_xeon26.md
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEAP = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "4294967296"}


def child(name, batch):
    import torch
    torch.set_num_threads(1)
    if name.startswith("space:"):
        sys.path.insert(0, os.path.join(ROOT, "scripts", "space"))
        import space
        sid = name[len("space:"):]
        spec = None
        for f in sorted(glob.glob(os.path.join(ROOT, "datasets", "space_cpu", "specs_*.jsonl"))):
            for line in open(f):
                if '"%s"' % sid in line and json.loads(line)["id"] == sid:
                    spec = json.loads(line)
        if spec is None:
            sys.exit("alloc_time: no spec %s in datasets/space_cpu" % sid)
        model, x = space.torch_model(spec).eval(), torch.randn(batch, *spec["input"])
    else:
        sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
        import real_networks as rn
        model, x = rn.build(name).eval(), torch.randn(batch, 3, 224, 224)
    with torch.no_grad():
        for _ in range(2):
            model(x)
        ts = []
        for _ in range(7):
            t = time.perf_counter()
            model(x)
            ts.append(time.perf_counter() - t)
    print("%.4f" % (1000 * sorted(ts)[3]))


def run(name, batch, env):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name, "--batch", str(batch)],
                       env=dict(os.environ, **env), capture_output=True, text=True)
    if r.returncode:
        sys.exit("alloc_time: %s: %s" % (name, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]))
    return float(r.stdout.split()[-1])


def errors(report, batch):
    """{network: (training-step error %, inference error %)} of the predictor at batch, from
    real_networks.py's "Each network" table."""
    out = {}
    for line in open(report):
        c = [x.strip() for x in line.split("|")]
        if len(c) > 10 and c[2] == str(batch):
            try:
                out[c[1]] = (int(c[5]), int(c[8]))
            except ValueError:
                pass
    return out


def spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nets", default="", help="real networks, comma-separated")
    ap.add_argument("--space-ids", default="", help="design-space spec ids, comma-separated")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--report", help="real_networks.py's report for this CPU (the predictor's errors)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.batch)
    names = [n for n in a.nets.split(",") if n] + ["space:" + s for s in a.space_ids.split(",") if s]
    if not names:
        sys.exit("alloc_time: give --nets and/or --space-ids")
    err = errors(a.report, a.batch) if a.report else {}
    print("machine: %s; batch %d, one thread" % (next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                                                       if l.startswith("model name")), "?"), a.batch))
    print("| network | default ms | heap ms | default again ms | heap's gain % | run to run % | predictor's error %, "
          "training step / inference |")
    print("|---|---|---|---|---|---|---|")
    gains = {}
    for n in names:
        d1, h, d2 = run(n, a.batch, {}), run(n, a.batch, HEAP), run(n, a.batch, {})
        gains[n] = np.log((d1 + d2) / 2 / h)
        e = err.get(n)
        print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %s |" % (
            n, d1, h, d2, 100 * (np.exp(gains[n]) - 1), 100 * abs(d1 / d2 - 1),
            "%+d / %+d" % e if e else "-"), flush=True)
    real = [n for n in gains if not n.startswith("space:")]
    space = [n for n in gains if n.startswith("space:")]
    for what, ns in (("real", real), ("design space", space)):
        if ns:
            print("%s: %d networks, the heap's gain median %.1f%% (%.1f to %.1f)" % (
                what, len(ns), 100 * np.median([np.exp(gains[n]) - 1 for n in ns]),
                100 * min(np.exp(gains[n]) - 1 for n in ns), 100 * max(np.exp(gains[n]) - 1 for n in ns)))
    scored = [n for n in real if n in err]
    if len(scored) > 2:
        g = [gains[n] for n in scored]
        print("Spearman of the heap's gain with the predictor's signed error (%d networks): training step %.2f, "
              "inference %.2f" % (len(scored), spearman(g, [err[n][0] for n in scored]),
                                  spearman(g, [err[n][1] for n in scored])))


if __name__ == "__main__":
    main()
