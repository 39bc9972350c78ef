#!/usr/bin/env python3
"""The narrow-network pilot of 2026-12-05 (datasets/space_cpu/README.md, "specs_n"): 16 of the last
200 architectures of specs_e.jsonl (seeded draw), at 224x224, each at its own width (specs_full)
and thinned as space.py sample --narrow later does (specs_thin: a stem of 8 or 16 channels, every
stage's width times 0.25, 0.35 or 0.5). Run from the repository root:

    /usr/bin/python3 benchmarks/results/narrow_pilot/make.py benchmarks/results/narrow_pilot
"""
import copy
import json
import os
import random
import sys

sys.path.insert(0, "scripts/space")
import space  # noqa: E402

out_dir = sys.argv[1]
rng = random.Random(5)
specs = [json.loads(l) for l in open("datasets/space_cpu/specs_e.jsonl")][-200:]
thin, full = [], []
for s in rng.sample(specs, 16):
    o = copy.deepcopy(s)
    f = rng.choice((0.25, 0.35, 0.5))
    s["stem"]["channels"] = rng.choice((8, 16))
    for st in s["stages"]:
        st["width"] = max(8, space._round8(st["width"] * f))
    s["input"], o["input"] = [3, 224, 224], [3, 224, 224]
    s["id"], o["id"] = "n" + s["id"][1:], "o" + o["id"][1:]
    thin.append(s)
    full.append(o)
order = {s["id"][1:]: i for i, s in enumerate(json.loads(l) for l in open("datasets/space_cpu/specs_e.jsonl"))}
full.sort(key=lambda s: order[s["id"][1:]])  # the full-width file in specs_e's order, as measured
for name, S in (("specs_thin.jsonl", thin), ("specs_full.jsonl", full)):
    with open(os.path.join(out_dir, name), "w") as fo:
        fo.write("".join(json.dumps(s, sort_keys=True) + "\n" for s in S))
