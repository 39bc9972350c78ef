#!/usr/bin/env python3
"""Einsum shape inference against numpy.einsum on random equations (seeded): one to three
operands, repeated labels (diagonals), '...' anywhere in a term with broadcast and size-1
dimensions, explicit and implicit outputs, mismatched sizes and labels no input has. seerconvert
must give numpy's output shape wherever numpy accepts the equation and refuse it, with one line,
wherever numpy refuses it.
usage: einsum_check.py SEERCONVERT [CASES [SEED]]"""
import os
import random
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h

LABELS = "abcdeAB"


def random_case(rng):
    """(equation, input shapes)."""
    sizes = {c: rng.choice([1, 2, 3, 4]) for c in LABELS}
    ell = [rng.choice([1, 2, 3]) for _ in range(rng.randint(0, 2))]
    terms, shapes = [], []
    for _ in range(rng.randint(1, 3)):
        k = rng.randint(0, 3)
        labs = rng.sample(LABELS, k) if rng.random() < 0.8 else [rng.choice(LABELS) for _ in range(k)]
        t, shp = "".join(labs), [sizes[c] for c in labs]
        if rng.random() < 0.3:  # an ellipsis: a suffix of the shared broadcast dims, or ones
            pos = rng.randint(0, len(labs))
            e = ell[rng.randint(0, len(ell)):] if ell else []
            if rng.random() < 0.2:
                e = [1] * len(e)
            t, shp = "".join(labs[:pos]) + "..." + "".join(labs[pos:]), shp[:pos] + e + shp[pos:]
        if shp and rng.random() < 0.1:  # a size that does not match
            shp[rng.randrange(len(shp))] += 1
        terms.append(t)
        shapes.append(shp)
    eq = ",".join(terms)
    if rng.random() < 0.6:  # explicit output
        labs = sorted(set("".join(terms).replace(".", "")))
        out = "".join(rng.sample(labs, rng.randint(0, len(labs)))) + ("z" if rng.random() < 0.1 else "")
        eq += "->" + ("..." if "..." in eq and rng.random() < 0.8 else "") + out
    return eq, shapes


def main():
    seerconvert = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    bad = agree = refused = 0
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "e.onnx")
        for _ in range(cases):
            eq, shapes = random_case(rng)
            try:
                want = list(np.einsum(eq, *[np.zeros(s, np.float32) for s in shapes]).shape)
            except ValueError:
                want = None
            ins = ["x%d" % i for i in range(len(shapes))]
            g = h.make_graph([h.make_node("Einsum", ins, ["y"], name="e", equation=eq)], "einsum",
                             [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in zip(ins, shapes)],
                             [h.make_tensor_value_info("y", T.FLOAT, None)])
            onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)]), path)
            r = subprocess.run([seerconvert, path, "--shapes"], capture_output=True, text=True)
            what = "%s on %s" % (eq, shapes)
            if r.returncode not in (0, 1) or (r.returncode == 1 and len(r.stderr.strip().splitlines()) != 1):
                print("FAIL %s: exit %d, %s" % (what, r.returncode, r.stderr[-300:]))
                bad += 1
            elif r.returncode == 1:
                if want is not None:
                    print("FAIL %s: refused (%s), numpy gives %s" % (what, r.stderr.strip(), want))
                    bad += 1
                else:
                    refused += 1
            else:
                y = [l.split("\t")[1] for l in r.stdout.splitlines() if l.startswith("y\t")]
                got = [] if not y or y[0] == "scalar" else [int(v) for v in y[0].split("x")]
                if want is None or got != want:
                    print("FAIL %s: seer %s, numpy %s" % (what, got, "refuses" if want is None else want))
                    bad += 1
                else:
                    agree += 1
    print("einsum_check: %d random equations: %d shaped as numpy does, %d refused as numpy does, %d wrong"
          % (cases, agree, refused, bad))
    sys.exit(1 if bad or agree < cases // 2 else 0)


if __name__ == "__main__":
    main()
