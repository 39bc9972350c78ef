#!/usr/bin/env python3
"""How much of the bytes seerconvert counts a training step keeps resident, by size, on the design
space and on the real networks.

For every architecture measured at batch 4 and 16, the training memory's slope per sample,
(memory at 16 - memory at 4) / 12, takes the process's base and the weights (which do not grow
with the batch) out; divided by the counted bytes per sample over the same step (the operators'
input and output tensors, weights excluded, from the graphs' node features: cost_terms.py's
count) it is the share of counted bytes resident at the peak. Prints its median per bin of
counted MB per sample, for the design space (by id prefix) and the real networks side by side,
with the median share of those bytes in the light operators (cost_terms.py's LIGHT: views and
elementwise, which `roofline_light` prices apart from the rest):
whether real networks hold less per counted byte than design-space networks of their size, or
whether they are only larger than the data.

    /usr/bin/python3 benchmarks/mem_per_byte.py --space SPACE.h5 --real REAL.h5

SPACE.h5, REAL.h5: as cost_terms.py reads them (make_dataset.py's dataset; real_ablation.real_h5's
file of the real networks with their measurements).
"""
import argparse
import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cost_terms import LIGHT, METRICS, label, read  # noqa: E402

BINS = (0, 20, 80, 150, 250, 400, 700, 2000, float("inf"))


def slopes(path):
    """[(architecture, resident MB per sample, counted MB per sample, the light operators' share of
    those)] of the architectures measured at batch 4 and 16."""
    names, _, _, by_op, ops, ys, _ = read(path)
    light = [ops.index(o) for o in LIGHT if o in ops]
    y = label(ys, METRICS[2][1], path)
    at = {}
    for i, n in enumerate(names):
        arch, eq, b = n.rpartition("@bs")
        if eq:
            at[(arch, int(b))] = i
    out = []
    for (arch, b), i in sorted(at.items()):
        j = at.get((arch, 4))
        if b == 16 and j is not None and np.isfinite(y[i]) and np.isfinite(y[j]):
            step = by_op[i] - by_op[j]
            counted = step.sum() / 12 / 2 ** 20
            if counted > 0:
                out.append((arch, (y[i] - y[j]) / 12, counted, step[light].sum() / step.sum()))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--space", required=True)
    ap.add_argument("--real", required=True)
    a = ap.parse_args()
    for p in (a.space, a.real):
        if not os.path.exists(p):
            sys.exit("mem_per_byte.py: %s: no such file" % p)
    sets = [("design space", slopes(a.space)), ("real networks", slopes(a.real))]
    for what, s in sets:
        if not s:
            sys.exit("mem_per_byte.py: %s: no architecture measured at both batch 4 and 16" % what)
    print("| counted MB per sample | " + " | ".join("%s: architectures / resident per counted byte / light share "
                                                    "(medians)" % w for w, _ in sets) + " | design space by id prefix |")
    print("|---|---|---|---|")
    for lo, hi in zip(BINS, BINS[1:]):
        cells = []
        for _, s in sets:
            v = [(r / c, li) for _, r, c, li in s if lo <= c < hi]
            cells.append("%d / %.2f / %.2f" % (len(v), np.median([x for x, _ in v]), np.median([x for _, x in v]))
                         if v else "0 / - / -")
        pre = collections.Counter(arch.split("/")[-1][0] for arch, _, c, _ in sets[0][1] if lo <= c < hi)
        print("| %s | %s | %s |" % ("%g-%g" % (lo, hi) if hi < float("inf") else "%g+" % lo, " | ".join(cells),
                                     ", ".join("%s %d" % kv for kv in sorted(pre.items())) or "-"))


if __name__ == "__main__":
    main()
