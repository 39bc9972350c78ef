"""PerfGraph (DESIGN.md, format version 1) from an operator list, in Python.

A small graph builder for scripts that know their network's structure (the NAS-Bench-201 builder,
later the design-space generator): add operators with their input values and output shape, and the
builder computes the node, edge and global features of DESIGN.md and writes the HDF5 file.

Cost conventions (the same ones seerconvert documents):
  - a multiply-add counts as 2 FLOPs; Conv/Gemm add 1 FLOP per output for a bias;
  - BatchNormalization (inference form) 2 FLOPs per element, Relu 1, Add 1 per output element,
    AveragePool k*k per output element, GlobalAveragePool H*W per output element, Flatten 0;
  - bytes read = input tensors + weights, bytes written = output tensor, all float32 (4 bytes);
  - weight bytes: Conv Cout*Cin/groups*kh*kw (+Cout bias), BN 4*C (scale, bias, mean, var),
    Gemm in*out + out.
Magnitudes are stored as log1p, small geometric parameters raw, shares in [0, 1].
"""
import math

import numpy as np

OP_TYPES = ["Conv", "BatchNormalization", "Relu", "AveragePool", "Add",
            "GlobalAveragePool", "Flatten", "Gemm", "MaxPool", "Concat", "Mul", "Other"]

NODE_FEATURES = [
    "kernel_h", "kernel_w", "stride_h", "stride_w", "pad_h", "pad_w", "dilation", "log_groups",
    "has_bias",
    "log_in_channels", "log_in_h", "log_in_w", "log_out_channels", "log_out_h", "log_out_w",
    "log_batch",
    "log_flops", "log_mem_bytes", "log_weight_bytes", "log_intensity",
    "flops_share", "mem_share", "weight_share",
]
EDGE_FEATURES = ["log_bytes", "log_n", "log_c", "log_h", "log_w"]
GLOBAL_FEATURES = [
    "log_nodes", "log_edges", "density",
    "log_flops_total", "log_flops_mean", "log_flops_median", "log_flops_max",
    "log_mem_total", "log_mem_mean", "log_mem_median", "log_mem_max",
    "log_weight_total", "log_weight_mean", "log_weight_median", "log_weight_max",
    "log_tensor_bytes_mean", "log_intensity", "log_batch",
]

F32 = 4


def shape4(shape):
    """Pad a tensor shape to (N, C, H, W)."""
    s = list(shape) + [1] * (4 - len(shape))
    return s[:4]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Graph:
    """Operators in topological order; a value is (producer node id or None, shape)."""

    def __init__(self, batch):
        self.batch = batch
        self.ops = []      # dicts: op, attrs, in_shapes, out_shape, flops, weights
        self.edges = []    # (src, dst, shape)

    def add(self, op, inputs, out_shape, **attrs):
        nid = len(self.ops)
        in_shapes = []
        for v in inputs:
            producer, shape = v
            in_shapes.append(shape)
            if producer is not None:
                self.edges.append((producer, nid, shape))
        flops, weights = cost(op, in_shapes, out_shape, attrs)
        self.ops.append(dict(op=op, attrs=attrs, in_shapes=in_shapes, out_shape=out_shape,
                             flops=flops, weights=weights))
        return (nid, out_shape)

    def features(self):
        n = len(self.ops)
        mem = np.zeros(n)
        flops = np.zeros(n)
        wbytes = np.zeros(n)
        for i, o in enumerate(self.ops):
            rd = sum(numel(s) for s in o["in_shapes"]) * F32 + o["weights"] * F32
            wr = numel(o["out_shape"]) * F32
            mem[i] = rd + wr
            flops[i] = o["flops"]
            wbytes[i] = o["weights"] * F32
        tf, tm, tw = flops.sum(), mem.sum(), wbytes.sum()
        xn = np.zeros((n, len(NODE_FEATURES)), np.float32)
        for i, o in enumerate(self.ops):
            a = o["attrs"]
            k = a.get("kernel", (0, 0))
            s = a.get("stride", (0, 0))
            p = a.get("pad", (0, 0))
            ins = shape4(o["in_shapes"][0]) if o["in_shapes"] else [self.batch, 0, 0, 0]
            outs = shape4(o["out_shape"])
            xn[i] = [k[0], k[1], s[0], s[1], p[0], p[1], a.get("dilation", 1 if k[0] else 0),
                     math.log1p(a.get("groups", 1 if k[0] else 0)), float(a.get("bias", False)),
                     math.log1p(ins[1]), math.log1p(ins[2]), math.log1p(ins[3]),
                     math.log1p(outs[1]), math.log1p(outs[2]), math.log1p(outs[3]),
                     math.log1p(self.batch),
                     math.log1p(flops[i]), math.log1p(mem[i]), math.log1p(wbytes[i]),
                     math.log1p(flops[i] / mem[i] if mem[i] > 0 else 0.0),
                     flops[i] / tf if tf > 0 else 0.0, mem[i] / tm if tm > 0 else 0.0,
                     wbytes[i] / tw if tw > 0 else 0.0]
        e = len(self.edges)
        index = np.zeros((e, 2), np.int32)
        xe = np.zeros((e, len(EDGE_FEATURES)), np.float32)
        tbytes = np.zeros(e)
        for j, (src, dst, shape) in enumerate(self.edges):
            index[j] = (src, dst)
            s4 = shape4(shape)
            tbytes[j] = numel(shape) * F32
            xe[j] = [math.log1p(tbytes[j])] + [math.log1p(d) for d in s4]

        def stats(v):
            if len(v) == 0:
                return [0.0] * 4
            return [math.log1p(v.sum()), math.log1p(v.mean()), math.log1p(float(np.median(v))),
                    math.log1p(v.max())]
        xg = np.array([math.log1p(n), math.log1p(e), e / (n * (n - 1)) if n > 1 else 0.0]
                      + stats(flops) + stats(mem) + stats(wbytes)
                      + [math.log1p(tbytes.mean() if e else 0.0),
                         math.log1p(tf / tm if tm > 0 else 0.0), math.log1p(self.batch)],
                      np.float32)
        ops = np.array([OP_TYPES.index(o["op"]) for o in self.ops], np.int32)
        return xn, ops, index, xe, xg, dict(flops=tf, mem=tm, weights=tw / F32)


def cost(op, in_shapes, out_shape, a):
    """(FLOPs, weight count) of one operator; see the module docstring for the conventions."""
    out = numel(out_shape)
    if op == "Conv":
        cin = in_shapes[0][1]
        kh, kw = a["kernel"]
        g = a.get("groups", 1)
        cout = out_shape[1]
        w = cout * (cin // g) * kh * kw + (cout if a.get("bias") else 0)
        f = 2 * out * (cin // g) * kh * kw + (out if a.get("bias") else 0)
        return f, w
    if op == "Gemm":
        fin = in_shapes[0][1]
        fout = out_shape[1]
        return 2 * out * fin + out, fin * fout + fout
    if op == "BatchNormalization":
        return 2 * out, 4 * out_shape[1]
    if op in ("Relu", "Add", "Mul"):
        return out, 0
    if op in ("AveragePool", "MaxPool"):
        kh, kw = a["kernel"]
        return out * kh * kw, 0
    if op == "GlobalAveragePool":
        s = in_shapes[0]
        return out * s[2] * s[3], 0
    return 0, 0


def write_h5(path, graphs, labels, label_names, names, groups, source, device):
    """Write graphs (list of Graph.features() tuples) as a PerfGraph version-1 file."""
    import h5py
    G = len(graphs)
    node_ptr = np.zeros(G + 1, np.int64)
    edge_ptr = np.zeros(G + 1, np.int64)
    for i, g in enumerate(graphs):
        node_ptr[i + 1] = node_ptr[i] + len(g[1])
        edge_ptr[i + 1] = edge_ptr[i] + len(g[2])
    st = h5py.string_dtype()
    with h5py.File(path + ".tmp", "w") as f:
        f.attrs["format"] = "seer-perfgraph"
        f.attrs["version"] = np.int64(1)
        f.attrs["source"] = source
        f.attrs["device"] = device
        f["graph/node_ptr"] = node_ptr
        f["graph/edge_ptr"] = edge_ptr
        f.create_dataset("graph/name", data=np.array(names, dtype=object), dtype=st)
        f["graph/group"] = np.asarray(groups, np.int64)
        f["node/x"] = np.concatenate([g[0] for g in graphs]).astype(np.float32)
        f["node/op"] = np.concatenate([g[1] for g in graphs]).astype(np.int32)
        f["edge/index"] = np.concatenate([g[2] for g in graphs]).astype(np.int32).reshape(-1, 2)
        f["edge/x"] = np.concatenate([g[3] for g in graphs]).astype(np.float32).reshape(
            -1, len(EDGE_FEATURES))
        f["global/x"] = np.stack([g[4] for g in graphs]).astype(np.float32)
        f["label/y"] = np.asarray(labels, np.float32).reshape(G, len(label_names))
        for key, vals in (("node_features", NODE_FEATURES), ("edge_features", EDGE_FEATURES),
                          ("global_features", GLOBAL_FEATURES), ("op_types", OP_TYPES),
                          ("labels", label_names)):
            f.create_dataset("schema/" + key, data=np.array(vals, dtype=object), dtype=st)
    import os
    os.replace(path + ".tmp", path)
