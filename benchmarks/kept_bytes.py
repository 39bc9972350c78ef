#!/usr/bin/env python3
"""The bytes autograd keeps for the backward pass, counted by cost_terms.py's operator rule from a
PerfGraph file, against what PyTorch itself keeps, network by network.

cost_terms.kept_bytes counts, from the graph alone, the tensors the training step keeps for the
backward pass (a convolution its input, a ReLU its output, a sum nothing; each tensor once). This
checks the rule: each network is built in PyTorch (torchvision's by name, the design space's from
datasets/space_cpu/specs*.jsonl by id), one forward pass and loss at --batch run under
torch.autograd.graph.saved_tensors_hooks, and the storages it saves are summed (each once); the
rule's count is read from the PerfGraph files at the same batch. Also printed: seerconvert's
counted bytes (every operator's inputs and outputs) and the measured peak, whose share of the
counted bytes differs between design-space and real CNNs where the kept share does not
(benchmarks/RESULTS.md, "The EPYC's memory").

    /usr/bin/python3 benchmarks/kept_bytes.py --real REAL.h5 --space SPACE.h5
        [--nets resnet18,resnet50] [--ids h000028,r000187] [--batch 16]

REAL.h5, SPACE.h5: as cost_terms.py reads them (real_ablation.py's WORK/real.h5 and a
make_dataset.py file). Without --nets / --ids: every torchvision network of REAL.h5 and the first
12 design-space CNNs of SPACE.h5 at 224, at --batch.
"""
import argparse
import gc
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts", "space"))
import cost_terms as ct  # noqa: E402
import make_dataset  # noqa: E402
import space  # noqa: E402


def autograd_kept_mb(model, shape, batch):
    """MB of the storages autograd saves in one training forward pass and loss (each once), less
    the weights (the cost prices their bytes apart) and the input image (no operator of the graph
    writes it), as cost_terms.kept_bytes counts."""
    import torch
    seen = {}

    def pack(t):
        st = t.storage()
        seen[st.data_ptr()] = st.nbytes()
        return t.detach()  # no backward runs; a tensor holding its own grad_fn would be a cycle the
        # garbage collector frees late (22 GB after a dozen networks)
    model.train()
    x = torch.randn(batch, *shape)
    skip = {p.storage().data_ptr() for p in model.parameters()} | {x.storage().data_ptr()}
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = model(x)
        torch.nn.functional.cross_entropy(y, torch.zeros(batch, dtype=torch.long))
    del x, y
    gc.collect()
    return sum(nb for ptr, nb in seen.items() if ptr not in skip) / 2 ** 20


def rows_of(path):
    """{name@bsB: (counted MB less weights, rule's kept MB, measured memory MB)}."""
    names, base, total, _, _, ys, _ = ct.read(path)
    mem = ct.label(ys, ct.METRICS[2][1], path)
    kept = ct.kept_bytes(path)
    return {n.split("/")[-1]: ((total[i] - base[i, 2]) / 2 ** 20, kept[i] / 2 ** 20, mem[i]) for i, n in enumerate(names)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", required=True)
    ap.add_argument("--space", required=True)
    ap.add_argument("--nets", default="", help="torchvision networks of REAL.h5 (default: all of them)")
    ap.add_argument("--ids", default="", help="design-space ids of SPACE.h5 (default: its first 12 CNNs at 224)")
    ap.add_argument("--batch", type=int, default=16)
    a = ap.parse_args()
    for p in (a.real, a.space):
        if not os.path.exists(p):
            sys.exit("kept_bytes.py: %s: no such file (see --help)" % p)
    import torch
    import torchvision
    torch.set_num_threads(1)
    torch.manual_seed(0)
    real, spc = rows_of(a.real), rows_of(a.space)
    at = "@bs%d" % a.batch
    specs = make_dataset.read_specs(os.path.join(os.path.dirname(HERE), "datasets", "space_cpu"))
    nets = [n for n in a.nets.split(",") if n] or sorted(k[:-len(at)] for k in real if k.endswith(at)
                                                          and hasattr(torchvision.models, k[:-len(at)]))
    ids = [i for i in a.ids.split(",") if i] or [k[:-len(at)] for k in sorted(spc) if k.endswith(at)
                                                 and k[:-len(at)] in specs
                                                 and space.family_of(specs[k[:-len(at)]]) == "cnn"
                                                 and specs[k[:-len(at)]]["input"][1] == 224][:12]
    todo = []
    for n in nets:
        if n + at not in real or not hasattr(torchvision.models, n):
            sys.exit("kept_bytes.py: --nets %s: not a torchvision network of %s at batch %d" % (n, a.real, a.batch))
        todo.append(("torchvision", n, lambda n=n: getattr(torchvision.models, n)(), [3, 224, 224], real[n + at]))
    for i in ids:
        if i + at not in spc or i not in specs:
            sys.exit("kept_bytes.py: --ids %s: not a design-space graph of %s at batch %d" % (i, a.space, a.batch))
        todo.append(("design space", "%s (%s)" % (i, "+".join(st["style"] for st in specs[i].get("stages", []))),
                     lambda i=i: space.torch_model(specs[i]), specs[i]["input"], spc[i + at]))
    print("| kind | network | counted MB | kept, the rule MB | kept, autograd MB | rule / autograd | "
          "autograd / counted | measured peak MB |")
    print("|---|---|---|---|---|---|---|---|")
    ratio = {}
    for kind, name, make, shape, (counted, rule, peak) in todo:
        kept = autograd_kept_mb(make(), shape, a.batch)
        ratio.setdefault(kind, []).append((rule / kept, kept / counted))
        print("| %s | %s | %.0f | %.0f | %.0f | %.2f | %.3f | %.0f |" % (kind, name, counted, rule, kept, rule / kept,
                                                                        kept / counted, peak), flush=True)
    for kind, r in ratio.items():
        r = np.array(r)
        print("\n%s: rule / autograd median %.2f (%.2f to %.2f); autograd / counted median %.3f"
              % (kind, np.median(r[:, 0]), r[:, 0].min(), r[:, 0].max(), np.median(r[:, 1])))


if __name__ == "__main__":
    main()
