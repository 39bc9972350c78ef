#!/usr/bin/env python3
"""Writes tests/data/onnx/allops.onnx: a small model (opset 17, weights stripped, symbolic batch)
that uses every operator seerconvert infers shapes for, including the Shape -> Gather ->
Unsqueeze -> Concat -> Reshape subgraph exporters emit (it must fold away) and Einsum in its
explicit, implicit and "..." forms, so the shape check
against onnx.shape_inference covers them all. Gelu (opset 20, outside 7-18) is not included.
usage: scripts/onnx_allops.py [OUT.onnx]"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
inits, nodes = [], []


def w(name, dims):
    t = T()
    t.name, t.data_type = name, T.FLOAT
    t.dims.extend(dims)
    inits.append(t)
    return name


def c64(name, vals):
    inits.append(numpy_helper.from_array(np.array(vals, np.int64), name))
    return name


def n(op, ins, outs=None, **attrs):
    outs = outs or ["%s_%d" % (op.lower(), len(nodes))]
    nodes.append(h.make_node(op, ins, outs, name="n%d_%s" % (len(nodes), op), **attrs))
    return outs[0] if len(outs) == 1 else outs


x = n("Conv", ["x", w("c1w", [8, 3, 3, 3]), w("c1b", [8])], strides=[2, 2], pads=[1, 1, 1, 1])
x = n("BatchNormalization", [x, w("bn_s", [8]), w("bn_b", [8]), w("bn_m", [8]), w("bn_v", [8])])
x = n("Relu", [x])
x = n("Conv", [x, w("dw", [8, 1, 3, 3])], group=8, pads=[1, 1, 1, 1])
x = n("Clip", [x, n("Constant", [], value=numpy_helper.from_array(np.array(0, np.float32))),
               n("Constant", [], value=numpy_helper.from_array(np.array(6, np.float32)))])
x = n("HardSwish", [x])
x = n("InstanceNormalization", [x, w("in_s", [8]), w("in_b", [8])])
x = n("LeakyRelu", [x], alpha=0.1)
x = n("PRelu", [x, w("prelu", [8, 1, 1])])
y = n("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
z = n("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
x = n("Concat", [y, z], axis=1)
a, b = n("Split", [x, c64("split", [6, 10])], ["sa", "sb"], axis=1)
a = n("Sigmoid", [a])
b = n("HardSigmoid", [b])
b = n("Tanh", [b])
b = n("Slice", [b, c64("st", [0, 0]), c64("en", [6, 100]), c64("ax", [1, 2]), c64("sp", [1, 1])])
x = n("Concat", [a, b], axis=1)
x = n("ConvTranspose", [x, w("ct", [12, 12, 2, 2])], strides=[2, 2])
x = n("Pad", [x, c64("pads", [0, 0, 1, 1, 0, 0, 1, 1])])
x = n("Resize", [x, "", n("Constant", [], value=numpy_helper.from_array(
    np.array([1, 1, 0.5, 0.5], np.float32)))], mode="nearest")
g = n("GlobalMaxPool", [x])
x = n("Mul", [x, n("Sigmoid", [g])])
x = n("Sub", [x, n("ReduceMean", [x], axes=[2, 3], keepdims=1)])
x = n("Div", [x, n("Sqrt", [n("Add", [n("Pow", [x, n("Constant", [], value=numpy_helper.from_array(
    np.array(2, np.float32)))]), n("Constant", [], value=numpy_helper.from_array(np.array(1, np.float32)))])])])
x = n("Erf", [x])
x = n("Dropout", [x])
x = n("Identity", [x])
# the operators added for timm's models: Exp, Sin, Cos, CumSum (axis as an input), ReduceSum (axes
# an input since opset 13), ReduceL2 and ReduceMax (axes an attribute before opset 18), Tile
x = n("Exp", [n("Sin", [n("Cos", [x])])])
x = n("CumSum", [x, n("Constant", [], value=numpy_helper.from_array(np.array(1, np.int64)))])
x = n("Sub", [x, n("ReduceSum", [x, c64("rs_axes", [2, 3])], keepdims=1)])
x = n("Div", [x, n("ReduceL2", [x], axes=[1], keepdims=1)])
x = n("Add", [x, n("ReduceMax", [n("Tile", [x, c64("reps", [1, 2, 1, 1])])], axes=[1], keepdims=1)])
# tokens: (B, C, H, W) -> (B, H*W, C) through a shape subgraph, then a transformer-style block
s = n("Shape", [x])
bsz = n("Unsqueeze", [n("Gather", [s, n("Constant", [], value=numpy_helper.from_array(np.array(0, np.int64)))], axis=0),
                     c64("ax0", [0])])
ch = n("Unsqueeze", [n("Gather", [s, n("Constant", [], value=numpy_helper.from_array(np.array(1, np.int64)))], axis=0),
                    c64("ax0b", [0])])
shape = n("Concat", [bsz, ch, c64("m1", [-1])], axis=0)
t = n("Reshape", [x, shape])
t = n("Transpose", [t], perm=[0, 2, 1])
t = n("LayerNormalization", [t, w("ln_s", [12]), w("ln_b", [12])], axis=-1)
q = n("MatMul", [t, w("wq", [12, 12])])
k = n("Transpose", [n("MatMul", [t, w("wk", [12, 12])])], perm=[0, 2, 1])
att = n("Softmax", [n("MatMul", [q, k])], axis=-1)
t = n("MatMul", [att, t])
# Einsum as attention code writes it (MaxViT's exports): explicit, implicit (the output in label
# order), "..." broadcasting, one operand
wmix = n("Einsum", [w("ea", [12, 5]), w("eb", [5, 12])], equation="ij,jk")
e = n("Einsum", [t, wmix], equation="bnc,cd->bnd")
e = n("Einsum", [n("Einsum", [e, e], equation="...nc,...mc->...nm"), e], equation="bnm,bmc->bnc")
t = n("Einsum", [n("Einsum", [e], equation="bnc")], equation="bcn -> bnc")
t = n("Cast", [t], to=T.FLOAT)
m = n("Where", [n("Cast", [t], to=T.BOOL), t, n("Expand", [w("e1", [1, 1, 12]), c64("eshape", [1, 1, 12])])])
t = n("Unsqueeze", [m, c64("ax1", [1])])
t = n("Squeeze", [t, c64("ax1b", [1])])
t = n("Flatten", [n("GlobalAveragePool", [n("Unsqueeze", [n("Transpose", [t], perm=[0, 2, 1]), c64("ax3", [3])])])])
t = n("Gemm", [t, w("fc", [10, 12]), w("fcb", [10])], transB=1)
cos = n("ConstantOfShape", [c64("cs", [1, 10])])
# integer shape arithmetic as Swin's shifted windows write it: Mod, Range, Not, ScatterND
i64 = lambda v: n("Constant", [], value=numpy_helper.from_array(np.array(v, np.int64)))  # noqa: E731
rg = n("Range", [i64(0), n("Mod", [i64(17), i64(7)]), i64(1)])
sc = n("ScatterND", [n("ConstantOfShape", [c64("cs3", [3])]), n("Unsqueeze", [rg, c64("ax1c", [1])]), w("upd", [3])])
sc = n("Where", [n("Not", [n("Equal", [rg, rg])]), sc, sc])
n("Add", [n("Add", [t, cos]), n("ReduceMean", [sc], axes=[0], keepdims=0)], ["y"])

graph = h.make_graph(nodes, "allops", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 32, 32])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests/data/onnx/allops.onnx")
onnx.save(model, out)
print("wrote %s: %d nodes" % (out, len(nodes)))

# ---- malformed models for tests/test_onnx.c (each must be refused with a clear message) ----
def tiny(nodes_, inputs, name):
    g = h.make_graph(nodes_, name, inputs, [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    onnx.save(m, os.path.join(os.path.dirname(out), name + ".onnx"))


xin = [h.make_tensor_value_info("x", T.FLOAT, ["batch", 4])]
tiny([h.make_node("Relu", ["b"], ["a"], name="r1"), h.make_node("Relu", ["a"], ["b"], name="r2"),
      h.make_node("Add", ["x", "a"], ["y"], name="add")], xin, "bad_cycle")
tiny([h.make_node("Relu", ["x"], ["a"], name="r1"), h.make_node("Add", ["a", "nowhere"], ["y"], name="add")],
     xin, "bad_dangling")
tiny([h.make_node("Relu", ["x"], ["y"], name="r1")],
     [h.make_tensor_value_info("x", T.FLOAT, ["batch", 0, 4])], "bad_zero_dim")
tiny([h.make_node("FooBar", ["x"], ["a"], name="mystery"), h.make_node("Relu", ["a"], ["y"], name="r")],
     xin, "bad_unsupported")
print("wrote bad_cycle, bad_dangling, bad_zero_dim, bad_unsupported")

# ---- opset 9 (attribute forms of Slice, Pad, Split, Unsqueeze, Squeeze) and external data ----
nodes, inits = [], []
x9 = n("Slice", ["x"], starts=[0, 0], ends=[3, 30], axes=[1, 2])
x9 = n("Pad", [x9], pads=[0, 0, 1, 1, 0, 0, 1, 1])
s1, s2 = n("Split", [x9], ["s1", "s2"], axis=1, split=[1, 2])
x9 = n("Concat", [n("Squeeze", [n("Unsqueeze", [s1], axes=[0])], axes=[0]), s2], axis=1)
x9 = n("Conv", [x9, w("c9", [4, 3, 3, 3])])
n("Flatten", [n("GlobalAveragePool", [x9])], ["y"])
g9 = h.make_graph(nodes, "opset9", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 32, 32])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
onnx.save(h.make_model(g9, opset_imports=[h.make_opsetid("", 9)]),
          os.path.join(os.path.dirname(out), "opset9.onnx"))
# a weight whose data lives in an external file that is not there
for t in inits:
    if t.name == "c9":
        t.data_location = T.EXTERNAL
        e = t.external_data.add()
        e.key, e.value = "location", "missing_weights.bin"
onnx.save(h.make_model(g9, opset_imports=[h.make_opsetid("", 9)]),
          os.path.join(os.path.dirname(out), "external_data.onnx"))
print("wrote opset9.onnx, external_data.onnx")

# ---- LayerNorm as opset 13 exporters write it, and as one opset-17 node (test_onnx: one graph) ----
def layernorm_model(decomposed, shared=False):
    """shared: the centred tensor also feeds a node outside the pattern (not a LayerNorm)."""
    global nodes, inits
    nodes, inits = [], []
    t = "x"
    for i in range(3):  # three blocks: enough tensors for the shape check against onnx's
        t = n("MatMul", [t, w("wm%d" % i, [16, 16])])
        if decomposed:
            f32 = lambda v: n("Constant", [], value=numpy_helper.from_array(np.array(v, np.float32)))  # noqa: E731
            d = n("Sub", [t, n("ReduceMean", [t], axes=[-1])])
            var = n("ReduceMean", [n("Pow", [d, f32(2.0)])], axes=[-1])
            t = n("Div", [d, n("Sqrt", [n("Add", [var, f32(1e-5)])])])
            t = n("Add", [n("Mul", [t, w("ln_s%d" % i, [16])]), w("ln_b%d" % i, [16])])
            if shared:
                t = n("Add", [t, n("Relu", [d])])
        else:
            t = n("LayerNormalization", [t, w("ln_s%d" % i, [16]), w("ln_b%d" % i, [16])], axis=-1, epsilon=1e-5)
        t = n("Relu", [t], ["y"] if i == 2 else None)
    gl = h.make_graph(nodes, "layernorm", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 8, 16])],
                      [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(gl, opset_imports=[h.make_opsetid("", 13 if decomposed else 17)])


onnx.save(layernorm_model(True), os.path.join(os.path.dirname(out), "layernorm_opset13.onnx"))
onnx.save(layernorm_model(False), os.path.join(os.path.dirname(out), "layernorm_opset17.onnx"))
onnx.save(layernorm_model(True, shared=True), os.path.join(os.path.dirname(out), "layernorm_shared.onnx"))
print("wrote layernorm_opset13.onnx, layernorm_opset17.onnx, layernorm_shared.onnx")


# ---- Hardswish as opset 13 exporters write it (x * HardSigmoid(x), alpha 1/6), and as one
# opset-14 node (test_onnx: one graph, fused or not); a squeeze-excitation's HardSigmoid gating
# another tensor stays a HardSigmoid in both ----
def hardswish_model(decomposed):
    global nodes, inits
    nodes, inits = [], []
    t = "x"
    for i in range(3):
        t = n("BatchNormalization", [n("Conv", [t, w("hc%d" % i, [8, 8 if i else 3, 3, 3])], pads=[1, 1, 1, 1])] +
              [w("hbn%d_%s" % (i, s), [8]) for s in "sbmv"])
        t = n("Mul", [t, n("HardSigmoid", [t], alpha=1.0 / 6)]) if decomposed else n("HardSwish", [t])
    gate = n("HardSigmoid", [n("Conv", [n("GlobalAveragePool", [t]), w("hse", [8, 8, 1, 1]), w("hseb", [8])])],
             alpha=1.0 / 6)
    n("Flatten", [n("GlobalAveragePool", [n("Mul", [t, gate])])], ["y"])
    gh = h.make_graph(nodes, "hardswish", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 16, 16])],
                      [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(gh, opset_imports=[h.make_opsetid("", 13 if decomposed else 14)])


onnx.save(hardswish_model(True), os.path.join(os.path.dirname(out), "hardswish_opset13.onnx"))
onnx.save(hardswish_model(False), os.path.join(os.path.dirname(out), "hardswish_opset14.onnx"))
print("wrote hardswish_opset13.onnx, hardswish_opset14.onnx")

# ---- a 3-D network (video, volumes): windows over three spatial dimensions, which the node
# features describe only two of (seerpredict warns; tests/test_onnx.c, tests/test_python.py) ----
nodes, inits = [], []
v = n("Relu", [n("Conv", ["x", w("c3w", [4, 3, 3, 3, 3]), w("c3b", [4])], pads=[1, 1, 1, 1, 1, 1])])
v = n("MaxPool", [v], kernel_shape=[2, 2, 2], strides=[2, 2, 2])
v = n("Relu", [n("Conv", [v, w("c3w2", [8, 4, 1, 3, 3])], pads=[0, 1, 1, 0, 1, 1])])
v = n("AveragePool", [v], kernel_shape=[2, 2, 2], strides=[2, 2, 2])
n("Gemm", [n("Flatten", [n("GlobalAveragePool", [v])]), w("fc3", [10, 8])], ["y"], transB=1)
g3 = h.make_graph(nodes, "conv3d", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 8, 16, 16])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
onnx.save(h.make_model(g3, opset_imports=[h.make_opsetid("", 13)]), os.path.join(os.path.dirname(out), "conv3d.onnx"))
print("wrote conv3d.onnx")

# ---- TensorFlow's "same" padding as timm computes it at run time (tf_efficientnet_*, NASNet,
# ViT-hybrid stems): pad = max((ceil(size / stride) - 1) * stride + (k - 1) * dilation + 1 - size, 0),
# split pad // 2 before and the rest after, in floating point from the input's Shape (Cast, Div,
# Ceil, Clip, Floor, Cast back). On a 33x33 input, k = 3, stride 2: 17x17 out, so the convolution's
# multiply-adds are 17 * 17 * 8 * 27 = 62,424 (a floor instead of the ceil would give 16x16) ----
nodes, inits = [], []
f32 = lambda v: n("Constant", [], value=numpy_helper.from_array(np.array(v, np.float32)))  # noqa: E731
shp = n("Shape", ["x"])
before, after = [], []
for axis in (2, 3):
    size = n("Cast", [n("Gather", [shp, n("Constant", [], value=numpy_helper.from_array(np.array(axis, np.int64)))],
                        axis=0)], to=T.FLOAT)
    out_sz = n("Ceil", [n("Div", [size, f32(2.0)])])
    pad = n("Sub", [n("Add", [n("Mul", [n("Sub", [out_sz, f32(1.0)]), f32(2.0)]), f32(3.0)]), size])
    pad = n("Clip", [pad, f32(0.0)])
    lo = n("Floor", [n("Div", [pad, f32(2.0)])])
    before.append(n("Unsqueeze", [n("Cast", [lo], to=T.INT64), c64("ax_b%d" % axis, [0])]))
    after.append(n("Unsqueeze", [n("Cast", [n("Sub", [pad, lo])], to=T.INT64), c64("ax_a%d" % axis, [0])]))
pads = n("Concat", [c64("zeros_b", [0, 0])] + before + [c64("zeros_a", [0, 0])] + after, axis=0)
n("Conv", [n("Pad", ["x", pads]), w("same_w", [8, 3, 3, 3])], ["y"], strides=[2, 2])
gs = h.make_graph(nodes, "same_pad", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 3, 33, 33])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
onnx.save(h.make_model(gs, opset_imports=[h.make_opsetid("", 13)]), os.path.join(os.path.dirname(out), "same_pad.onnx"))
print("wrote same_pad.onnx")

# ---- recurrent layers: a bidirectional LSTM with batch first (layout 1), then a GRU (layout 0).
# Parameters: LSTM W 2*32*16 + R 2*32*8 + B 2*64 = 1,664, GRU W 12*16 + R 12*4 = 240, a MatMul on
# the LSTM's last state 8*4 = 32; multiply-adds per sequence element and batch row, W's and R's
# sizes: 10 * (1024 + 512) + 10 * (192 + 48), and the MatMul's 32: 17,792 at batch 1 ----
nodes, inits = [], []
y1, yh, _ = n("LSTM", ["x", w("lstm_w", [2, 32, 16]), w("lstm_r", [2, 32, 8]), w("lstm_b", [2, 64])],
              ["lstm_y", "lstm_yh", "lstm_yc"], hidden_size=8, direction="bidirectional", layout=1)
t = n("Transpose", [n("Reshape", [y1, c64("rnn_shape", [0, 10, 16])])], perm=[1, 0, 2])
g = n("GRU", [t, w("gru_w", [1, 12, 16]), w("gru_r", [1, 12, 4])], ["gru_y", "gru_yh"], hidden_size=4)[0]
last = n("MatMul", [n("ReduceMean", [yh], axes=[1], keepdims=0), w("rnn_fc", [8, 4])])
n("Add", [n("ReduceMean", [g], axes=[0, 1], keepdims=0), last], ["y"])
gr = h.make_graph(nodes, "rnn", [h.make_tensor_value_info("x", T.FLOAT, ["batch", 10, 16])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
onnx.save(h.make_model(gr, opset_imports=[h.make_opsetid("", 14)]), os.path.join(os.path.dirname(out), "rnn.onnx"))
print("wrote rnn.onnx")
