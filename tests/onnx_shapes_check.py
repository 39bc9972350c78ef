#!/usr/bin/env python3
"""Checks seerconvert's shape inference against onnx's own (onnx.shape_inference) on ONNX files:
every tensor onnx infers a full static shape for must have the same shape in `seerconvert
--shapes`. The leading input dimension is set to BATCH for both. onnx (1.12) shapes no Einsum
output, so those take numpy.einsum's shape on seer's input shapes (zero-stride arrays: no memory).
usage: onnx_shapes_check.py SEERCONVERT BATCH MODEL.onnx..."""
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference


def fold_float_concats(m):
    """onnx (1.12) reads a Resize's scales only from a Constant or an initializer, where torch.onnx
    writes a Concat of two Constants for a symbolic batch: each such Concat becomes one Constant of
    the same values, so that onnx shapes what follows it."""
    const = {n.output[0]: n for n in m.graph.node if n.op_type == "Constant"}
    for node in m.graph.node:
        if node.op_type != "Concat" or not all(i in const for i in node.input):
            continue
        parts = [numpy_helper.to_array(next(a.t for a in const[i].attribute if a.name == "value")) for i in node.input]
        if not all(p.dtype == np.float32 and p.ndim == 1 for p in parts):
            continue
        folded = helper.make_node("Constant", [], [node.output[0]],
                                  value=numpy_helper.from_array(np.concatenate(parts), node.output[0]))
        node.CopyFrom(folded)


def onnx_shapes(path, batch):
    m = onnx.load(path)
    fold_float_concats(m)
    for i in m.graph.input:
        d = i.type.tensor_type.shape.dim
        if len(d):
            d[0].ClearField("dim_param")
            d[0].dim_value = batch
    m = shape_inference.infer_shapes(m)
    out = {}
    for vi in list(m.graph.value_info) + list(m.graph.output) + list(m.graph.input):
        t = vi.type.tensor_type
        if not t.HasField("shape"):
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if all(v is not None for v in dims):
            out[vi.name] = dims
    return out


def einsum_shapes(path, got):
    """numpy.einsum's output shape of every Einsum node whose inputs seer shaped."""
    out = {}
    for node in onnx.load(path).graph.node:
        if node.op_type != "Einsum" or not all(i in got for i in node.input):
            continue
        eq = next(a.s.decode() for a in node.attribute if a.name == "equation")
        xs = [np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), got[i], [0] * len(got[i]))
              for i in node.input]
        out[node.output[0]] = list(np.einsum(eq, *xs).shape)
    return out


def main():
    seerconvert, batch, paths = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    bad = 0
    for path in paths:
        ref = onnx_shapes(path, batch)
        got = {}
        text = subprocess.run([seerconvert, path, "--shapes", "--batch", str(batch)], check=True,
                              capture_output=True, text=True).stdout
        for line in text.splitlines():
            name, shape = line.split("\t")
            got[name] = [] if shape == "scalar" else [int(v) for v in shape.split("x")]
        ref.update(einsum_shapes(path, got))
        missing = [n for n in ref if n not in got]
        diff = [(n, ref[n], got[n]) for n in ref if n in got and ref[n] != got[n]]
        print("%s: %d tensors shaped by onnx, %d compared, %d differ, %d missing"
              % (path, len(ref), len(ref) - len(missing), len(diff), len(missing)))
        for n, r, g in diff[:5]:
            print("  %s: onnx %s, seer %s" % (n, r, g))
        for n in missing[:5]:
            print("  %s: not shaped by seer" % n)
        bad += len(diff) + len(missing)
        if len(ref) < 10:
            print("  too few tensors shaped by onnx to compare")
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
