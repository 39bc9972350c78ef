#!/usr/bin/env python3
"""Denormals: how much of a CPU timing is subnormal floating point, not the network's work.

On x86, an arithmetic instruction whose operand or result is subnormal (|x| < 1.2e-38 in fp32)
takes a microcode assist, tens to a hundred times slower. A randomly initialised network trained
on random data (scripts/measure/measure.py's protocol) can fill its gradients, and after a few SGD
steps its activations, with such values, and then the same graph takes far longer than its
operators' work says: a cost no predictor reading the graph can see. This script builds each
configuration twice from one seed in a forked child, and times them as measure.py's measure_model
does (SGD with momentum on one random batch: --warmup then --repeats training steps, then as many
no-grad forward passes; the median) with the two copies' steps interleaved: one with the CPU's
default (subnormals computed), the other with flush-to-zero (`torch.set_flush_denormal(True)`,
switched on and off around its steps: subnormal results and inputs read as 0). Each copy follows
its own values, and the machine's drift falls on both alike. The ratio default / flushed of the
medians is the slowdown subnormals cause. Measured on 2026-12-04 (benchmarks/denormals.md): x1.01 to
x1.04 in the median over design-space and real networks, not what moves Seer's CPU labels.

    taskset -c 0 /usr/bin/python3 benchmarks/denormals.py [--real resnet18,timm-ghostnet_100]
        [--space datasets/space_cpu/specs_r.jsonl --space-n 40] [--batches 1,4] [--out FILE.md]

Real networks come from benchmarks/real_networks.py's list (torchvision, timm); the design-space
ones are --space-n specifications drawn seeded from --space.
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "scripts/measure"))
sys.path.insert(0, os.path.join(ROOT, "scripts/space"))
import measure  # noqa: E402
import real_networks as rn  # noqa: E402
import space  # noqa: E402


def paired(build, shape, classes, batch, m):
    """{train,infer}_time_ms{,_ftz}: two copies of the model (one seed) timed with their steps
    interleaved, the second under flush-to-zero; in a forked child."""
    def go():
        import torch
        import torch.nn.functional as F
        torch.set_num_threads(m.threads)
        copies = []
        for flush in (False, True):
            torch.manual_seed(0)
            model = build()
            c = classes or getattr(model, "num_classes", 1000) or getattr(model, "num_features", 1000)  # as real_networks.measure_net
            torch.manual_seed(0)  # measure_model's data and optimiser, for each copy alike
            opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
            x = torch.randn([batch] + list(shape))
            y = torch.randint(0, c, (batch,))
            copies.append((flush, model, opt, x, y))

        def train(model, opt, x, y):
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(model(x), y).backward()
            opt.step()

        def infer(model, opt, x, y):
            with torch.no_grad():
                model(x)
        out = {}
        for phase, step in (("train", train), ("infer", infer)):
            ts = {False: [], True: []}
            for i in range(m.warmup + m.repeats):
                for flush, model, opt, x, y in (copies if i % 2 == 0 else copies[::-1]):
                    model.train(phase == "train")
                    torch.set_flush_denormal(flush)
                    t0 = time.perf_counter()
                    step(model, opt, x, y)
                    dt = (time.perf_counter() - t0) * 1e3
                    torch.set_flush_denormal(False)
                    if i >= m.warmup:
                        ts[flush].append(dt)
            out[phase + "_time_ms"] = float(np.median(ts[False]))
            out[phase + "_time_ms_ftz"] = float(np.median(ts[True]))
        return out
    return measure.run_cpu_child(None, batch, m, rn._NoNvml(), measure=go)


def configs(a):
    """[(label, family, build, input shape, classes)] of the real networks and the drawn specs."""
    out = []
    for n in [n for n in a.real.split(",") if n]:
        if n not in rn.NETS:
            sys.exit("denormals.py: --real: unknown network %r (benchmarks/real_networks.py's NETS)" % n)
        side = rn.NETS[n][0]

        def build(n=n):
            return rn.build(n)
        out.append((n, "real", build, [3, side, side], None))
    if a.space_n:
        specs = space.read_specs(a.space)
        for s in random.Random(a.seed).sample(specs, min(a.space_n, len(specs))):
            def build(s=s):
                return space.torch_model(s)
            out.append((s["id"], space.family_of(s), build, s["input"], s["head"]["classes"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", default="", help="real networks (benchmarks/real_networks.py's names), comma-separated")
    ap.add_argument("--space", default=os.path.join(ROOT, "datasets/space_cpu/specs_r.jsonl"))
    ap.add_argument("--space-n", type=int, default=0, help="design-space specifications drawn from --space")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", default="1")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--jsonl", default=None, help="append each configuration's two timings here")
    ap.add_argument("--out", default=None, help="write the report (markdown) here; stdout otherwise")
    a = ap.parse_args()
    try:
        batches = [int(b) for b in a.batches.split(",")]
    except ValueError:
        sys.exit("denormals.py: --batches %r: give batch sizes separated by commas" % a.batches)
    if a.space_n and not os.path.exists(a.space):
        sys.exit("denormals.py: --space %s missing" % a.space)
    cs = configs(a)
    if not cs:
        sys.exit("denormals.py: nothing to time: give --real and/or --space-n")
    m = argparse.Namespace(device="cpu", warmup=a.warmup, repeats=a.repeats, threads=a.threads, reference=False)
    rows, t0 = [], time.time()
    for b in batches:
        for label, fam, build, shape, classes in cs:
            res = paired(build, shape, classes, b, m)
            if "train_time_ms" not in res:
                print("  %s batch %d: %s" % (label, b, res), flush=True)
                continue
            row = {"name": label, "family": fam, "batch": b,
                   "train_ms": res["train_time_ms"], "train_ms_ftz": res["train_time_ms_ftz"],
                   "infer_ms": res["infer_time_ms"], "infer_ms_ftz": res["infer_time_ms_ftz"]}

            rows.append(row)
            append_line(a.jsonl, row)
            print("  %d/%d %s batch %d: training step %.1f / %.1f ms (x%.2f), inference %.1f / %.1f ms (x%.2f) (%.0f s)" % (
                len(rows), len(cs) * len(batches), label, b, row["train_ms"], row["train_ms_ftz"],
                row["train_ms"] / row["train_ms_ftz"], row["infer_ms"], row["infer_ms_ftz"],
                row["infer_ms"] / row["infer_ms_ftz"], time.time() - t0), flush=True)
    emit(report(a, rows), a.out)


def append_line(path, rec):
    """Appends rec to path as one JSON line (nothing when path is None)."""
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")


def emit(lines, out):
    """The report's lines to the file out, or to stdout when out is None."""
    text = "\n".join(lines) + "\n"
    if out:
        with open(out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)



def report(a, rows):
    L = ["| configuration | family | batch | training step ms (default / flushed) | x | inference ms | x |",
         "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: -r["train_ms"] / r["train_ms_ftz"]):
        L.append("| %s | %s | %d | %.1f / %.1f | %.2f | %.1f / %.1f | %.2f |" % (
            r["name"], r["family"], r["batch"], r["train_ms"], r["train_ms_ftz"], r["train_ms"] / r["train_ms_ftz"],
            r["infer_ms"], r["infer_ms_ftz"], r["infer_ms"] / r["infer_ms_ftz"]))
    groups = {}
    for r in rows:
        groups.setdefault("real" if r["family"] == "real" else "design space", []).append(r)
    S = ["| set | configurations | training step: median x | share above x1.10 | max | inference: median x | share above x1.10 | max |",
         "|---|---|---|---|---|---|---|---|"]
    for g, rs in sorted(groups.items()):
        t = np.array([r["train_ms"] / r["train_ms_ftz"] for r in rs])
        i = np.array([r["infer_ms"] / r["infer_ms_ftz"] for r in rs])
        S.append("| %s | %d | %.2f | %.0f%% | %.2f | %.2f | %.0f%% | %.2f |" % (
            g, len(rs), np.median(t), 100 * np.mean(t > 1.1), t.max(), np.median(i), 100 * np.mean(i > 1.1), i.max()))
    return S + [""] + L


if __name__ == "__main__":
    main()
