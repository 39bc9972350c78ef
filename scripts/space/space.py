#!/usr/bin/env python3
"""PerfSeer's design space: a seeded sampler of RegNet-style CNNs, their layer graph, a PyTorch
builder, weight-stripped ONNX (through PyTorch, or written directly for scale), and FLOP counts.

    space.py sample -n 1000 --seed 1 -o specs.jsonl        # JSON specs, diverse in any prefix
    space.py onnx specs.jsonl --out DIR [--torch] [--limit N]   # DIR/<id>.onnx, dynamic batch
    space.py flops specs.jsonl [--batch 1]                  # the builder's own FLOP count

A spec: stem (3x3 conv, stride 2, 32 channels, BN, activation), four stages that halve the
resolution and widen the channels, each in one style:
  vgg        plain 3x3 conv-BN-act layers;
  inception  blocks of four concatenated branches (1x1; 1x1-3x3; 1x1-3x3-3x3; 3x3 max pool-1x1);
  resnext    bottleneck residual blocks (1x1, grouped 3x3, 1x1; projection shortcut);
  densenet   a transition (1x1 conv, 2x2 average pool) then dense layers (BN-act-1x1 conv to 4k,
             BN-act-3x3 conv to k, concatenated: growth rate k);
  mobilenet  inverted residual blocks (1x1 expand by t, depthwise 3x3, 1x1 project);
with sampled depth, width and the style's parameters; head: global average pool and a linear
layer to 1,000 classes; input 3x224x224. One activation per model (relu, relu6, hardswish,
silu). Every architecture expands to one layer graph (`layers`), which the PyTorch builder, the
direct ONNX writer and the FLOP count all read, so they cannot disagree about the architecture.

FLOP conventions are Seer's (src/onnx/perfgraph_build.h): a multiply-add is 2, BN 2 per
element, activations and Add 1 per element (SiLU = Sigmoid + Mul: 2), pools k*k per output,
global pool 1 per input element, Gemm 2 per multiply-add plus 1 per output for the bias.
"""
import argparse
import json
import math
import os
import random
import sys

STYLES = ("vgg", "inception", "resnext", "densenet", "mobilenet")
ACTS = ("relu", "relu6", "hardswish", "silu")


def _round8(x):
    return max(8, int(round(x / 8.0)) * 8)


def sample_one(rng, idx, inputs=None):
    act = rng.choice(ACTS)
    w = _round8(rng.uniform(24, 128))
    stages = []
    for s in range(4):
        style = rng.choice(STYLES)
        if s:
            w = _round8(w * rng.uniform(1.25, 2.5))
        w = min(w, 1024)
        st = {"style": style, "width": w, "depth": rng.randint(1, 4)}
        if style == "resnext":
            st["bottleneck"] = rng.choice((0.25, 0.5, 1.0))
            mid = _round8(w * st["bottleneck"])
            st["groups"] = rng.choice([g for g in (1, 2, 4, 8, 16, 32) if mid % g == 0])
        elif style == "densenet":
            st["growth"] = rng.choice((12, 16, 24, 32))
        elif style == "mobilenet":
            st["expand"] = rng.choice((1, 3, 6))
        stages.append(st)
    # drawn last, and only when asked, so that the default sequence (seed 1) is unchanged
    hw = rng.choice(inputs) if inputs else 224
    return {"id": "s%06d" % idx, "input": [3, hw, hw], "act": act,
            "stem": {"channels": 32, "kernel": 3, "stride": 2}, "stages": stages,
            "head": {"classes": 1000}}


def _features(spec):
    v = []
    for st in spec["stages"]:
        v += [1.0 if st["style"] == s else 0.0 for s in STYLES]
        v += [math.log2(st["width"]) / 4.0, st["depth"] / 4.0]
    v += [1.0 if spec["act"] == a else 0.0 for a in ACTS]
    v.append(math.log10(flops(spec, 1)) / 3.0)
    v.append(math.log2(spec["input"][1] / 224.0))
    return v


def sample(n, seed, diverse=2000, inputs=None, prefix="s"):
    """n specs; the first min(n, diverse) in greedy farthest-point order over a candidate pool
    (styles, widths, depths, activation, log FLOPs), so that any prefix spreads over the space."""
    rng = random.Random(seed)
    pool_n = n if n <= 1 else min(4 * n, n + 8000)
    pool = [sample_one(rng, i, inputs) for i in range(pool_n)]
    k = min(n, diverse)
    if k > 1:
        import numpy as np
        X = np.array([_features(s) for s in pool])
        chosen = [0]
        d = ((X - X[0]) ** 2).sum(1)
        for _ in range(k - 1):
            i = int(np.argmax(d))
            chosen.append(i)
            d = np.minimum(d, ((X - X[i]) ** 2).sum(1))
        rest = [i for i in range(pool_n) if i not in set(chosen)][: n - k]
        order = chosen + rest
    else:
        order = list(range(n))
    out = []
    for j, i in enumerate(order[:n]):
        s = dict(pool[i])
        s["id"] = "%s%06d" % (prefix, j)
        out.append(s)
    return out


# ---- the layer graph ----
# A layer: dict(name, op, inputs (names), attrs, shape = (C, H, W) of its output; "x" is the
# input). ops: conv (cout, k, stride, pad, groups), bn, act (kind), maxpool / avgpool (k, stride,
# pad), add, concat, gap, flatten, linear (cout).

def layers(spec):
    L = []
    C, H, W = spec["input"]
    shapes = {"x": (C, H, W)}
    act_kind = spec["act"]

    def add(op, inputs, **attrs):
        name = "l%d" % len(L)
        c, h, w = shapes[inputs[0]]
        if op == "conv":
            k, s, p = attrs["k"], attrs["stride"], attrs["pad"]
            h, w = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
            c = attrs["cout"]
        elif op in ("maxpool", "avgpool"):
            k, s, p = attrs["k"], attrs["stride"], attrs["pad"]
            h, w = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        elif op == "concat":
            c = sum(shapes[i][0] for i in inputs)
        elif op == "gap":
            h = w = 1
        elif op == "flatten":
            h = w = 1
        elif op == "linear":
            c = attrs["cout"]
        shapes[name] = (c, h, w)
        L.append({"name": name, "op": op, "inputs": list(inputs), "attrs": attrs, "shape": (c, h, w)})
        return name

    def cba(x, cout, k, stride=1, groups=1, act=True):
        y = add("bn", [add("conv", [x], cout=cout, k=k, stride=stride, pad=k // 2, groups=groups)])
        return add("act", [y], kind=act_kind) if act else y

    st = spec["stem"]
    x = cba("x", st["channels"], st["kernel"], st["stride"])
    for stage in spec["stages"]:
        style, w, d = stage["style"], stage["width"], stage["depth"]
        for i in range(d):
            s = 2 if i == 0 else 1
            cin = shapes[x][0]
            if style == "vgg":
                x = cba(x, w, 3, s)
            elif style == "inception":
                b = max(8, w // 4)
                b1 = cba(x, b, 1, s)
                b2 = cba(cba(x, b, 1), b, 3, s)
                b3 = cba(cba(cba(x, b, 1), b, 3), b, 3, s)
                b4 = cba(add("maxpool", [x], k=3, stride=s, pad=1), b, 1)
                x = add("concat", [b1, b2, b3, b4])
            elif style == "resnext":
                mid = _round8(w * stage["bottleneck"])
                y = cba(cba(cba(x, mid, 1), mid, 3, s, groups=stage["groups"]), w, 1, act=False)
                sc = x if (s == 1 and cin == w) else cba(x, w, 1, s, act=False)
                x = add("act", [add("add", [y, sc])], kind=act_kind)
            elif style == "densenet":
                if i == 0:  # transition: 1x1 to the stage width, 2x2 average pool
                    x = add("avgpool", [cba(x, w, 1)], k=2, stride=2, pad=0)
                k = stage["growth"]
                y = add("act", [add("bn", [x])], kind=act_kind)
                y = add("act", [add("bn", [add("conv", [y], cout=4 * k, k=1, stride=1, pad=0, groups=1)])], kind=act_kind)
                y = add("conv", [y], cout=k, k=3, stride=1, pad=1, groups=1)
                x = add("concat", [x, y])
            elif style == "mobilenet":
                t = stage["expand"]
                y = x if t == 1 else cba(x, cin * t, 1)
                c_mid = shapes[y][0]
                y = cba(y, c_mid, 3, s, groups=c_mid)
                y = cba(y, w, 1, act=False)
                x = add("add", [y, x]) if (s == 1 and cin == w) else y
    x = add("flatten", [add("gap", [x])])
    add("linear", [x], cout=spec["head"]["classes"])
    return L


def flops(spec, batch=1):
    """FLOPs of one forward pass at a batch size, Seer's conventions."""
    total = 0
    shapes = {"x": tuple(spec["input"])}
    for l in layers(spec):
        c, h, w = l["shape"]
        cin, hin, win = shapes[l["inputs"][0]]
        out = c * h * w
        op, a = l["op"], l["attrs"]
        if op == "conv":
            total += 2 * out * (cin // a["groups"]) * a["k"] * a["k"]
        elif op == "bn":
            total += 2 * out
        elif op == "act":
            total += 2 * out if a["kind"] == "silu" else out
        elif op in ("maxpool", "avgpool"):
            total += out * a["k"] * a["k"]
        elif op == "add":
            total += out
        elif op == "gap":
            total += cin * hin * win
        elif op == "linear":
            total += 2 * c * cin + c
        shapes[l["name"]] = l["shape"]
    return total * batch


# ---- PyTorch ----

def torch_model(spec):
    import torch
    import torch.nn as nn
    L = layers(spec)
    shapes = {"x": tuple(spec["input"])}
    acts = {"relu": nn.ReLU, "relu6": nn.ReLU6, "hardswish": nn.Hardswish, "silu": nn.SiLU}

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.mods = nn.ModuleDict()
            for l in L:
                a, cin = l["attrs"], shapes[l["inputs"][0]][0]
                if l["op"] == "conv":
                    m = nn.Conv2d(cin, a["cout"], a["k"], a["stride"], a["pad"], groups=a["groups"], bias=False)
                elif l["op"] == "bn":
                    m = nn.BatchNorm2d(cin)
                elif l["op"] == "act":
                    m = acts[a["kind"]]()
                elif l["op"] == "maxpool":
                    m = nn.MaxPool2d(a["k"], a["stride"], a["pad"])
                elif l["op"] == "avgpool":
                    m = nn.AvgPool2d(a["k"], a["stride"], a["pad"])
                elif l["op"] == "gap":
                    m = nn.AdaptiveAvgPool2d(1)
                elif l["op"] == "flatten":
                    m = nn.Flatten()
                elif l["op"] == "linear":
                    m = nn.Linear(cin, a["cout"])
                else:
                    m = None
                if m is not None:
                    self.mods[l["name"]] = m
                shapes[l["name"]] = l["shape"]

        def forward(self, x):
            v = {"x": x}
            for l in L:
                ins = [v[i] for i in l["inputs"]]
                if l["op"] == "add":
                    v[l["name"]] = ins[0] + ins[1]
                elif l["op"] == "concat":
                    v[l["name"]] = torch.cat(ins, 1)
                else:
                    v[l["name"]] = self.mods[l["name"]](ins[0])
            return v[L[-1]["name"]]

    return Net()


def strip_weights(model):
    """Weight-stripped ONNX: initializers keep name, type and dims, lose their values."""
    for t in model.graph.initializer:
        if t.data_type == 1 and len(t.dims) and t.raw_data:
            t.ClearField("raw_data")
        del t.float_data[:]
    return model


def export_torch(spec, path):
    import onnx
    import torch
    m = torch_model(spec).eval()
    x = torch.zeros([1] + spec["input"])
    tmp = path + ".full"
    torch.onnx.export(m, x, tmp, input_names=["input"], output_names=["logits"], opset_version=13,
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
    model = strip_weights(onnx.load(tmp))
    os.remove(tmp)
    onnx.save(model, path)


# ---- ONNX written directly (no PyTorch: for datasets of 100k graphs) ----

def export_direct(spec, path):
    import numpy as np
    from onnx import TensorProto as T, helper as h, numpy_helper
    nodes, inits = [], []
    shapes = {"x": tuple(spec["input"])}

    def weight(name, dims):
        t = T()
        t.name, t.data_type = name, T.FLOAT
        t.dims.extend(dims)
        inits.append(t)
        return name

    val = {"x": "input"}
    for l in layers(spec):
        n, a, cin = l["name"], l["attrs"], shapes[l["inputs"][0]][0]
        ins = [val[i] for i in l["inputs"]]
        out = n + "_out"
        op = l["op"]
        if op == "conv":
            nodes.append(h.make_node("Conv", ins + [weight(n + ".w", [a["cout"], cin // a["groups"], a["k"], a["k"]])], [out],
                                     name=n, kernel_shape=[a["k"]] * 2, strides=[a["stride"]] * 2,
                                     pads=[a["pad"]] * 4, group=a["groups"]))
        elif op == "bn":
            nodes.append(h.make_node("BatchNormalization", ins + [weight(n + s, [cin]) for s in (".g", ".b", ".m", ".v")],
                                     [out], name=n))
        elif op == "act":
            k = a["kind"]
            if k == "relu":
                nodes.append(h.make_node("Relu", ins, [out], name=n))
            elif k == "relu6":
                lo = numpy_helper.from_array(np.array(0, "float32"), n + ".lo")
                hi = numpy_helper.from_array(np.array(6, "float32"), n + ".hi")
                inits.extend([lo, hi])
                nodes.append(h.make_node("Clip", ins + [lo.name, hi.name], [out], name=n))
            elif k == "hardswish":
                nodes.append(h.make_node("HardSwish", ins, [out], name=n))
            else:
                nodes.append(h.make_node("Sigmoid", ins, [n + "_sig"], name=n + "_s"))
                nodes.append(h.make_node("Mul", ins + [n + "_sig"], [out], name=n))
        elif op in ("maxpool", "avgpool"):
            nodes.append(h.make_node("MaxPool" if op == "maxpool" else "AveragePool", ins, [out], name=n,
                                     kernel_shape=[a["k"]] * 2, strides=[a["stride"]] * 2, pads=[a["pad"]] * 4))
        elif op == "add":
            nodes.append(h.make_node("Add", ins, [out], name=n))
        elif op == "concat":
            nodes.append(h.make_node("Concat", ins, [out], name=n, axis=1))
        elif op == "gap":
            nodes.append(h.make_node("GlobalAveragePool", ins, [out], name=n))
        elif op == "flatten":
            nodes.append(h.make_node("Flatten", ins, [out], name=n))
        elif op == "linear":
            out = "logits"
            nodes.append(h.make_node("Gemm", ins + [weight(n + ".w", [a["cout"], cin]), weight(n + ".b", [a["cout"]])],
                                     [out], name=n, transB=1))
        val[n] = out
        shapes[n] = l["shape"]
    g = h.make_graph(nodes, spec["id"], [h.make_tensor_value_info("input", T.FLOAT, ["batch"] + spec["input"])],
                     [h.make_tensor_value_info("logits", T.FLOAT, ["batch", spec["head"]["classes"]])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 14)], producer_name="seer space.py")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def read_specs(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("-n", type=int, default=1000)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("-o", required=True)
    s.add_argument("--inputs", default="",
                   help="input sizes to draw from, e.g. 64,96,128,160,192,224 (default: 224 only)")
    s.add_argument("--prefix", default="s", help="id prefix (a second sample must not reuse ids)")
    o = sub.add_parser("onnx")
    o.add_argument("specs")
    o.add_argument("--out", required=True)
    o.add_argument("--torch", action="store_true",
                   help="export through torch.onnx instead of writing the layer graph directly "
                        "(PyTorch folds BatchNormalization into the convolutions in eval mode, so "
                        "that graph is the inference-fused one)")
    o.add_argument("--limit", type=int, default=0)
    f = sub.add_parser("flops")
    f.add_argument("specs")
    f.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    if a.cmd == "sample":
        inputs = tuple(int(x) for x in a.inputs.split(",")) if a.inputs else None
        specs = sample(a.n, a.seed, inputs=inputs, prefix=a.prefix)
        tmp = a.o + ".tmp"
        with open(tmp, "w") as fo:
            for sp in specs:
                fo.write(json.dumps(sp, sort_keys=True) + "\n")
        os.replace(tmp, a.o)
        print("%d specs -> %s" % (len(specs), a.o))
    elif a.cmd == "onnx":
        specs = read_specs(a.specs)[: a.limit or None]
        os.makedirs(a.out, exist_ok=True)
        for i, sp in enumerate(specs):
            p = os.path.join(a.out, sp["id"] + ".onnx")
            (export_torch if a.torch else export_direct)(sp, p)
            if (i + 1) % 100 == 0:
                print("%d/%d" % (i + 1, len(specs)), file=sys.stderr)
        print("%d ONNX models -> %s" % (len(specs), a.out))
    else:
        for sp in read_specs(a.specs):
            print("%s\t%d" % (sp["id"], flops(sp, a.batch)))


if __name__ == "__main__":
    main()
