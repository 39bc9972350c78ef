#!/usr/bin/env python3
"""Training memory with the activations computed in place and not, torchvision's networks and the
design space's, on this machine.

torchvision and timm build their ReLU, ReLU6, Hardswish and SiLU modules in place
(`inplace=True`); the design space's PyTorch builder (scripts/space/space.py torch_model) does not,
but for its version 3 (space.INPLACE_BUILDER, wherever nothing else reads the input).
The ONNX graph is the same either way, so no feature can see it, and a predictor that learned the
design space's memory carries the difference to real networks. This measures it: each network's
training step at one batch (scripts/measure/measure.py's measure_model in a forked child, one
thread, peak RSS of one step, memory only; the median of --runs such processes), once in place
(torchvision's: every such module; the design space's: builder 3) and once not (builder 2, as
measured), and prints the ratio.

    taskset -c 0 /usr/bin/python3 benchmarks/inplace_mem.py [--nets resnet50,densenet121]
        [--specs datasets/space_cpu/specs_d.jsonl --act relu -n 5] [--batch 16]

--specs takes the first N architectures of a specs file with that activation and a 224 input
(CNN stages only). Needs torchvision for --nets.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in ("scripts/measure", "scripts/space", "benchmarks"):
    sys.path.insert(0, os.path.join(ROOT, p))
import measure  # noqa: E402
import real_networks as rn  # noqa: E402
import space  # noqa: E402

ACTS = ("ReLU", "ReLU6", "Hardswish", "SiLU")


def peak_mb(make, shape, classes, batch, inplace, runs):
    """The median over runs (each a fresh forked child) of the training step's peak RSS (MB) of
    make(inplace): a torchvision network with every ACTS module's inplace set, a design-space one
    built by builder 3 (in place) or 2."""
    import torch

    def build():
        torch.manual_seed(0)
        return make(inplace)
    m = argparse.Namespace(device="cpu", warmup=0, repeats=1, threads=1, reference=False)
    peaks = []
    for _ in range(runs):
        res = measure.run_cpu_child(None, batch, m, rn._NoNvml(), measure=lambda: measure.measure_model(
            build(), shape, classes, batch, m, rn._NoNvml()))
        if "train_mem_mb" not in res:
            sys.exit("inplace_mem.py: the training step failed: %s" % res)
        peaks.append(res["train_mem_mb"])
    return sorted(peaks)[len(peaks) // 2]


def torchvision_net(name, inplace):
    """torchvision's network with every ACTS module in place or not."""
    import torchvision
    net = getattr(torchvision.models, name)()
    for mod in net.modules():
        if type(mod).__name__ in ACTS:
            mod.inplace = inplace
    return net


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nets", default="", help="torchvision model names (224 input)")
    ap.add_argument("--specs", default="", help="a design-space specs file")
    ap.add_argument("--act", default="relu", help="with --specs: the activation (relu, relu6, hardswish, silu)")
    ap.add_argument("-n", type=int, default=5, help="with --specs: how many architectures")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3,
                    help="fresh processes per network and way, their median peak (one run's peak moves by ~5%%)")
    a = ap.parse_args()
    if a.runs < 1:
        ap.error("--runs %d: at least 1" % a.runs)
    if not a.nets and not a.specs:
        ap.error("give --nets, --specs or both")
    import torch
    torch.set_num_threads(1)
    todo = []
    for n in (x for x in a.nets.split(",") if x):
        import torchvision
        if not hasattr(torchvision.models, n):
            sys.exit("inplace_mem.py: --nets %s: not a torchvision model" % n)
        todo.append((n, lambda inplace, n=n: torchvision_net(n, inplace), [3, 224, 224], 1000))
    if a.specs:
        try:
            specs = space.read_specs(a.specs)
        except (OSError, ValueError) as e:
            sys.exit("inplace_mem.py: --specs %s: %s" % (a.specs, e))
        picked = [s for s in specs if s.get("act") == a.act and space.family_of(s) == "cnn"
                  and s["input"][1] == 224][:a.n]
        if not picked:
            sys.exit("inplace_mem.py: %s has no CNN architecture with act %s at 224" % (a.specs, a.act))
        for s in picked:
            todo.append(("%s (%s)" % (s["id"], "+".join(st["style"] for st in s["stages"])),
                         lambda inplace, s=s: space.torch_model(s, space.INPLACE_BUILDER if inplace else space.TORCH_BUILDER),
                         s["input"], s["head"]["classes"]))
    print("| network | batch | not in place MB | in place MB | in place / not |")
    print("|---|---|---|---|---|")
    for name, make, shape, classes in todo:
        off, on = (peak_mb(make, shape, classes, a.batch, x, a.runs) for x in (False, True))
        print("| %s | %d | %.0f | %.0f | %.3f |" % (name, a.batch, off, on, on / off), flush=True)


if __name__ == "__main__":
    main()
