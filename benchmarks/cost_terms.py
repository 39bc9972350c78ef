#!/usr/bin/env python3
"""Which bytes the roofline cost should count: the cost alone, fitted on the design space, scored
on the real networks, with the operators' bytes counted different ways.

    /usr/bin/python3 benchmarks/cost_terms.py --space SPACE.h5 --real REAL.h5 [--out FILE.md]

SPACE.h5: the CPU design space as make_dataset.py builds it (benchmarks/real_ablation.py leaves
one in its work folder, WORK/A.h5). REAL.h5: the torchvision networks with their measurements
(real_ablation.py's WORK/real.h5). Labels cpu_epyc_train_ms, ... in either file, or
make_dataset.py's own names. Per metric the five-term cost of `[model] target = roofline_weights`
(1, nodes, FLOPs, bytes, weight bytes; non-negative least relative squares, real_ablation.cost_fit,
which is prep.c's fit) is fitted on every design-space graph and scored on the real ones, once with the
bytes as seerconvert counts them (every operator's input and output tensors) and once for each
rule below that counts some operators' bytes as zero (from the graphs' node features: each node's
log_mem_bytes minus its weights' bytes, summed by operator type):

  views         Reshape, Flatten, Squeeze, Unsqueeze, Slice, Expand, Split, Transpose: views of
                their input in PyTorch (no copy; a Transpose is copied when a later operator needs
                it contiguous);
  layout        the views and Concat and Gather (which do copy);
  elementwise   Add, Mul, Div and Erf (what torch.onnx writes a GELU, a layer scale and a residual
                sum as; PyTorch's GELU is one operator).

Then, with seerconvert's bytes, a sixth term: the bytes of the depthwise convolutions (Conv nodes
with groups = input channels > 1) counted again on their own, so that the fit can price a byte
moved by a depthwise layer above a byte of the rest (the cost as shipped has no such term); and
`[model] target = roofline_light`'s split: the light operators' bytes (LIGHT below, seerconvert's
log_mem_light) and the rest's as two terms, each priced by the fit. Last, three finer counts, each
group its own term (scipy's nnls, the same least relative squares): seerconvert's bytes by
operator group (GROUPS below); each tensor counted once (the largest of the edges leaving one
node: a tensor read by three operators is one tensor) by the group of the operator that wrote it,
the bytes autograd could keep for the backward pass; each tensor once by its size (below 1, 8,
32 MiB and above: glibc's allocator keeps freed blocks below its mapping threshold); and, one
term, the bytes autograd keeps by an operator rule (kept_bytes below: a convolution keeps its
input, a ReLU its output, a sum nothing), then the same with SiLU (a sigmoid and a product as
exported) keeping its input alone, as PyTorch's does.

Cells: MAPE %, on the design space (the fit's own graphs) and on the real networks, all of them,
the ViT / Swin / ConvNeXt ones and the rest; the last two columns, the median measured / predicted
of the real networks and of the rest.

--fit-on cnn fits on the design space's CNNs only (graphs whose family is made of CNN stage
styles), --fit-on others on the rest (ConvNeXt, the token families, the hybrids): whether a
family's own data predicts the real networks of its kind.

--size-split Q asks how each count extrapolates in size on the design space alone: the fit sees
only the architectures below the Q quantile of FLOPs per sample (--size-by bytes: of seerconvert's
bytes per sample; every batch of one architecture on one side), and two more columns score it
on the larger ones it never saw (MAPE and median measured / predicted), as a real network larger
than the training data is predicted.
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from real_ablation import TRANSFORMERS, cost_fit, emit  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts", "space"))
import space  # noqa: E402

VIEWS = ["Reshape", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Expand", "Split", "Transpose"]
LIGHT = VIEWS + ["Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Erf"]  # onnx_ops.h's OPF_LIGHT rows
RULES = [("seerconvert's bytes", []), ("views free", VIEWS), ("layout free", VIEWS + ["Concat", "Gather"]),
         ("views and elementwise free", VIEWS + ["Add", "Mul", "Div", "Erf"])]
CNN_STYLES = space.STYLES + space.SLICE_STYLES  # the design space's CNN stage styles
# glibc's malloc maps a block of its own above a threshold that grows with the blocks freed, up to
# 32 MiB; below it blocks come from (and return to) its heap, which keeps them: the finer count by size
SIZE_BINS_MB = (1, 8, 32)
# the finer counts' operator groups (every other operator: one more group)
GROUPS = {"conv": ["Conv"], "batchnorm": ["BatchNormalization"], "layernorm": ["LayerNormalization"],
          "relu": ["Relu", "Clip", "LeakyRelu"], "sigmoid": ["Sigmoid", "HardSigmoid"], "hardswish": ["HardSwish"],
          "erf": ["Erf"], "add": ["Add", "Sub"], "mul": ["Mul", "Div"],
          "pool": ["MaxPool", "AveragePool", "GlobalAveragePool", "ReduceMean"], "concat": ["Concat"],
          "matmul": ["MatMul", "Gemm"], "views": VIEWS, "softmax": ["Softmax"]}
# a metric's label: make_dataset.py's own name or <device>_<suffix> (--label-prefix DEVICE)
METRICS = [("training step", ("train_time_ms", "_train_ms")), ("inference", ("infer_time_ms", "_infer_ms")),
           ("memory", ("train_mem_mb", "_train_mb"))]


def label(ys, names, path):
    own, suffix = names
    hit = [l for l in ys if l == own or l.endswith(suffix)]
    if len(hit) != 1:
        sys.exit("cost_terms.py: %s has %s of the labels %s or *%s" % (path, "none" if not hit else "several", own, suffix))
    return ys[hit[0]]


def read(path):
    """Names, the cost's terms but bytes (n x 3: nodes, FLOPs, weight bytes), seerconvert's bytes,
    bytes by operator type (n x ops), operator names, and the labels by name."""
    import h5py
    with h5py.File(path, "r") as f:
        dec = lambda d: [x.decode() if isinstance(x, bytes) else x for x in f[d][:]]  # noqa: E731
        gf, nf, ops, labels = dec("/schema/global_features"), dec("/schema/node_features"), \
            dec("/schema/op_types"), dec("/schema/labels")
        names, xg, y = dec("/graph/name"), f["/global/x"][:].astype(np.float64), f["/label/y"][:]
        ptr, op, xn = f["/graph/node_ptr"][:], f["/node/op"][:], f["/node/x"][:]
    # depthwise convolutions: groups = input channels > 1 (both stored as log1p)
    lg, lc = xn[:, nf.index("log_groups")], xn[:, nf.index("log_in_channels")]
    dw = (op == ops.index("Conv")) & (lg > 0) & (np.abs(lg - lc) < 1e-3)
    g = lambda c: np.expm1(xg[:, gf.index(c)])  # noqa: E731
    base = np.column_stack([g("log_nodes"), g("log_flops_total"), g("log_weight_total")])
    node_bytes = np.expm1(xn[:, nf.index("log_mem_bytes")].astype(np.float64)) - \
        np.expm1(xn[:, nf.index("log_weight_bytes")].astype(np.float64))
    by_op = np.zeros((len(names), len(ops)))
    np.add.at(by_op, (np.repeat(np.arange(len(names)), np.diff(ptr)), op), node_bytes)
    dw_bytes = np.zeros(len(names))
    np.add.at(dw_bytes, np.repeat(np.arange(len(names)), np.diff(ptr))[dw], node_bytes[dw])
    return names, base, g("log_mem_total"), by_op, ops, {l: y[:, k].astype(np.float64) for k, l in enumerate(labels)}, \
        dw_bytes


def families(path):
    """/graph/family of every graph."""
    import h5py
    with h5py.File(path, "r") as f:
        return [x.decode() if isinstance(x, bytes) else x for x in f["/graph/family"][:]]


def is_cnn(family):
    """A design-space family made of CNN stage styles only (space/resnext+vgg, space/ghost, ...)."""
    return family.startswith("space/") and all(s in CNN_STYLES for s in family[len("space/"):].split("+"))


def graph_tensors(path):
    """The operator names, and per graph (its edges (src, dst) local to it, its nodes' operators,
    their weight bytes, the bytes each node writes: the largest edge leaving it, edge feature
    log_bytes), for the counts below that take each tensor once."""
    import h5py
    with h5py.File(path, "r") as f:
        dec = lambda d: [x.decode() if isinstance(x, bytes) else x for x in f[d][:]]  # noqa: E731
        ef, nf, ops = dec("/schema/edge_features"), dec("/schema/node_features"), dec("/schema/op_types")
        index, eptr, op = f["/edge/index"][:], f["/graph/edge_ptr"][:], f["/node/op"][:]
        nptr = f["/graph/node_ptr"][:]
        nbytes = np.expm1(f["/edge/x"][:, ef.index("log_bytes")].astype(np.float64))
        wbytes = np.expm1(f["/node/x"][:, nf.index("log_weight_bytes")].astype(np.float64))

    def each():
        for g in range(len(eptr) - 1):
            e, o = index[eptr[g]:eptr[g + 1]], op[nptr[g]:nptr[g + 1]]
            written = np.zeros(len(o))  # graph inputs (no writer) are not counted
            np.maximum.at(written, e[:, 0], nbytes[eptr[g]:eptr[g + 1]])
            yield e, o, wbytes[nptr[g]:nptr[g + 1]], written
    return ops, each()


def tensor_bytes(path):
    """Each graph's tensors counted once (graph_tensors), by the operator type that wrote them
    (n x ops) and by size (n x bins: below each of SIZE_BINS_MB, and above the last)."""
    ops, graphs = graph_tensors(path)
    out, sized = [], []
    for _, o, _, written in graphs:
        out.append(np.bincount(o, weights=written, minlength=len(ops)))
        sized.append(np.bincount(np.digitize(written / 2 ** 20, SIZE_BINS_MB), weights=written,
                                 minlength=len(SIZE_BINS_MB) + 1))
    return np.array(out).reshape(-1, len(ops)), np.array(sized).reshape(-1, len(SIZE_BINS_MB) + 1)


# what PyTorch's autograd keeps for the backward pass, by operator (the ONNX operator a module exports
# as): its data inputs (average pools too: PyTorch's backward reads the input), its output, or
# nothing (sums, concatenations, views, a Div or Erf: torch.onnx writes GELU as
# x * 0.5 * (1 + erf(x / sqrt 2)), which PyTorch's GELU runs keeping x). seerconvert's OPF_KEEPS_IN
# and OPF_KEEPS_OUT rows (src/onnx/onnx_ops.h) are these lists: its global feature log_mem_kept is
# kept_bytes below, computed in C
KEEPS_INPUTS = ("Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization", "LayerNormalization",
                "InstanceNormalization", "LeakyRelu", "PRelu", "Clip", "HardSigmoid", "HardSwish", "Gelu",
                "Mul", "Pow", "MaxPool", "GlobalMaxPool", "AveragePool", "GlobalAveragePool", "Einsum", "ReduceMax",
                "ReduceL2", "Sin", "Cos")
KEEPS_OUTPUT = ("Relu", "Sigmoid", "Tanh", "Softmax", "Sqrt", "Exp")


def kept_bytes(path, silu=False):
    """Each graph's bytes autograd keeps by KEEPS_INPUTS and KEEPS_OUTPUT, each tensor once (a
    node's output: the largest edge leaving it), and MaxPool's indices (int64: twice its output).
    A Mul keeps its inputs unless it multiplies one tensor by a constant (a product with a weight,
    such as a layer scale, keeps its input), and the Mul of a GELU (reading the Add that reads the
    Erf) keeps x only. Against what autograd keeps (benchmarks/kept_bytes.py, batch 16): the
    same bytes on most CNNs, torchvision's and the design space's; 1.26 to 1.33 where SiLU is
    written as a sigmoid and a product, 1.13 to 1.62 on torchvision's attention. seerconvert's
    log_mem_kept is this count. silu=True (seerconvert's log_mem_kept_silu): a Sigmoid whose one
    reader is a Mul that also reads the Sigmoid's input is a SiLU, which keeps that input alone
    (PyTorch's SiLU), not the sigmoid's output and the product's two inputs. seerconvert's
    log_mem_kept_acts (the silu count less the tensors computed from weights alone) has no
    counterpart here: a PerfGraph file does not say which operators read the graph's input
    (benchmarks/kept_real.py sets all three of seerconvert's counts against autograd)."""

    ops, graphs = graph_tensors(path)
    ins = np.isin(np.arange(len(ops)), [ops.index(o) for o in KEEPS_INPUTS if o in ops])
    outs = np.isin(np.arange(len(ops)), [ops.index(o) for o in KEEPS_OUTPUT if o in ops])
    code = {name: ops.index(name) if name in ops else -1 for name in ("MaxPool", "Mul", "Add", "Erf", "Sigmoid")}
    kept = []
    for e, o, wbytes, written in graphs:
        reads = ins[o[e[:, 1]]]  # the edges into an operator that keeps its inputs
        into_mul = o[e[:, 1]] == code["Mul"]
        scaled = (np.bincount(e[:, 1], minlength=len(o)) < 2) & (wbytes <= 64)
        reads &= ~(into_mul & scaled[e[:, 1]])  # a product with a constant (not a weight) keeps nothing
        gelu_add = np.zeros(len(o), bool)  # an Add reading an Erf: GELU's (1 + erf)
        gelu_add[e[(o[e[:, 1]] == code["Add"]) & (o[e[:, 0]] == code["Erf"]), 1]] = True
        reads &= ~(into_mul & gelu_add[e[:, 0]])
        keep = outs[o].copy()  # the tensors (by writer) kept
        if silu:
            sig = np.zeros(len(o), bool)  # SiLU's sigmoids: their output kept by nobody
            for v in np.where(o == code["Sigmoid"])[0]:
                out_to, src = e[e[:, 0] == v, 1], e[e[:, 1] == v, 0]
                sig[v] = len(out_to) == 1 and o[out_to[0]] == code["Mul"] and len(src) == 1 and \
                    src[0] in e[e[:, 1] == out_to[0], 0]
            reads &= ~sig[e[:, 0]]
            keep &= ~sig
        keep[e[reads, 0]] = True
        kept.append(written[keep].sum() + 2 * written[o == code["MaxPool"]].sum())
    return np.array(kept)


def by_group(by_op, ops):
    """by_op's columns summed by GROUPS (and one column for the rest)."""
    cols, used = [], set()
    for names in GROUPS.values():
        idx = [ops.index(o) for o in names if o in ops]
        used |= set(idx)
        cols.append(by_op[:, idx].sum(1))
    cols.append(by_op[:, [i for i in range(len(ops)) if i not in used]].sum(1))
    return np.column_stack(cols)


def nnls_fit(X, y):
    """cost_fit's objective, min sum (A c / y - 1)^2 over c >= 0 with A = [1, X], by scipy's nnls
    (cost_fit tries every subset of terms: too many with a term per group)."""
    try:
        from scipy.optimize import nnls
    except ImportError:
        sys.exit("cost_terms.py: the finer counts need scipy (Debian: apt-get install python3-scipy)")
    return nnls(np.column_stack([np.ones(len(X)), X]) / y[:, None], np.ones(len(y)))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--space", required=True)
    ap.add_argument("--real", required=True)
    ap.add_argument("--out", default="")
    ap.add_argument("--size-split", type=float, default=0, metavar="Q",
                    help="fit on the design-space architectures below this quantile of FLOPs per sample "
                         "(e.g. 0.8), score on the rest too (default 0: fit on all)")
    ap.add_argument("--size-by", choices=("flops", "bytes"), default="flops",
                    help="with --size-split: rank the architectures by FLOPs (default) or counted bytes per sample")
    ap.add_argument("--labels", default="", help="score these labels (comma-separated, in both files) instead of "
                    "the CPU's training step, inference and memory: e.g. the GPU spaces' 1080ti_infer_ms,...")
    ap.add_argument("--fit-on", choices=("all", "cnn", "others"), default="all",
                    help="fit on every design-space graph (default), its CNNs only or the rest only")
    a = ap.parse_args()
    for p in (a.space, a.real):
        if not os.path.exists(p):
            sys.exit("cost_terms.py: %s: no such file (benchmarks/real_ablation.py writes WORK/A.h5 and "
                     "WORK/real.h5)" % p)
    if not 0 <= a.size_split < 1:
        sys.exit("cost_terms.py: --size-split %g: a quantile in (0, 1), or 0 for none" % a.size_split)
    snames, sb, st, sops, ops, sy, sdw = read(a.space)
    small = np.ones(len(snames), bool)  # the graphs the fit sees
    if a.size_split:
        batch = np.array([float(n.rsplit("@bs", 1)[1]) if "@bs" in n else 1.0 for n in snames])
        arch = [n.rsplit("@bs", 1)[0] for n in snames]
        per = dict(zip(arch, (sb[:, 1] if a.size_by == "flops" else st) / batch))  # one size per architecture
        cut = np.quantile(list(per.values()), a.size_split)
        small = np.array([per[k] <= cut for k in arch])
    kind = np.ones(len(snames), bool)  # the design-space graphs of the --fit-on kind
    if a.fit_on != "all":
        kind = np.array([is_cnn(f) for f in families(a.space)]) == (a.fit_on == "cnn")
        if not kind.any():
            sys.exit("cost_terms.py: --fit-on %s: %s has no such graph" % (a.fit_on, a.space))
    rnames, rb, rt, rops, rops_names, ry, rdw = read(a.real)
    if rops_names != ops:
        sys.exit("cost_terms.py: %s and %s have different operator lists (convert both with one seerconvert)"
                 % (a.space, a.real))
    # the finer counts: nodes, FLOPs, weight bytes and a term per group of operators
    (s_writer, s_sized), (r_writer, r_sized) = tensor_bytes(a.space), tensor_bytes(a.real)
    finer = [("bytes by operator group (a term each)", (np.column_stack([sb, by_group(sops, ops)]),
                                                         np.column_stack([rb, by_group(rops, ops)]))),
             ("each tensor once, by its writer's group", (np.column_stack([sb, by_group(s_writer, ops)]),
                                                          np.column_stack([rb, by_group(r_writer, ops)]))),
             ("each tensor once, by size (%s MiB)" % " / ".join("%g" % b for b in SIZE_BINS_MB),
              (np.column_stack([sb, s_sized]), np.column_stack([rb, r_sized]))),
             ("the bytes autograd keeps (by operator rule)", (np.column_stack([sb, kept_bytes(a.space)]),
                                                              np.column_stack([rb, kept_bytes(a.real)]))),
             ("the same, SiLU keeping its input alone", (np.column_stack([sb, kept_bytes(a.space, True)]),
                                                          np.column_stack([rb, kept_bytes(a.real, True)])))]
    tf = np.array([n.startswith(TRANSFORMERS) for n in rnames])
    L = ["| metric | bytes counted | design space (fit) | real networks | ViT / Swin / ConvNeXt | the rest | "
         "real: measured / predicted | the rest: measured / predicted |"
         + (" design space, largest %.0f%% unseen | its measured / predicted |" % (100 - 100 * a.size_split)
            if a.size_split else ""),
         "|---|---|---|---|---|---|---|---|" + ("---|---|" if a.size_split else "")]
    if a.fit_on != "all":
        L.insert(0, "Fit on the design space's %s only (%d graphs of %d).\n" % (
            "CNNs" if a.fit_on == "cnn" else "networks other than CNNs", kind.sum(), len(kind)))
    if a.size_split:
        L.insert(0, "Fit on the %d design-space graphs of architectures at most %.3g %s per sample (quantile %g), "
                 "the other %d held out.\n" % ((small & kind).sum(), cut / 1e9 if a.size_by == "flops" else cut / 2 ** 20,
                                                "GFLOPs" if a.size_by == "flops" else "counted MB", a.size_split,
                                                (~small & kind).sum()))
    def terms(base, total, by_op, cols):  # nodes, FLOPs, bytes but the dropped operators', weight bytes
        return np.column_stack([base[:, :2], total - by_op[:, cols].sum(1), base[:, 2]])

    metrics = METRICS
    if a.labels:
        missing = [l for l in a.labels.split(",") if l not in sy or l not in ry]
        if missing:
            sys.exit("cost_terms.py: --labels: %s not in both files" % ", ".join(missing))
        metrics = [(l, None) for l in a.labels.split(",")]
    for title, names in metrics:
        y, r = (sy[title], ry[title]) if names is None else (label(sy, names, a.space), label(ry, names, a.real))
        ok, rok = np.isfinite(y) & (y > 0), np.isfinite(r) & (r > 0)
        light = [ops.index(o) for o in LIGHT if o in ops]
        for rule, drop in RULES + [("seerconvert's bytes + depthwise bytes again", None),
                                   ("light bytes priced apart (roofline_light)", LIGHT)] + finer:
            if isinstance(drop, tuple):  # a finer count: its columns as they are
                ax, rx = drop
            else:
                cols = [ops.index(o) for o in drop or [] if o in ops]
                ax, rx = terms(sb, st, sops, cols), terms(rb, rt, rops, cols)
            if drop is None:
                ax, rx = np.column_stack([ax, sdw]), np.column_stack([rx, rdw])
            elif drop is LIGHT:
                ax, rx = np.column_stack([ax, sops[:, light].sum(1)]), np.column_stack([rx, rops[:, light].sum(1)])
            fit = ok & small & kind
            c = (nnls_fit if isinstance(drop, tuple) else cost_fit)(ax[fit], y[fit])
            every = np.column_stack([np.ones(len(ax)), ax]) @ c
            pred = np.column_stack([np.ones(len(rx)), rx]) @ c
            e, re = np.abs(every[fit] / y[fit] - 1), np.abs(pred[rok] / r[rok] - 1)
            part = lambda sel: "%.1f" % (100 * re[sel].mean()) if sel.any() else "-"  # noqa: E731
            big = ok & ~small & kind
            rest = rok & ~tf
            L.append("| %s | %s | %.1f | %.1f | %s | %s | %.2f | %s |" % (
                title, rule, 100 * e.mean(), 100 * re.mean(), part(tf[rok]), part(~tf[rok]),
                np.median(r[rok] / pred[rok]), "%.2f" % np.median(r[rest] / pred[rest]) if rest.any() else "-") +
                (" %.1f | %.2f |" % (
                    100 * np.abs(every[big] / y[big] - 1).mean(), np.median(y[big] / every[big])) if a.size_split else ""))
    emit(L, a.out)


if __name__ == "__main__":
    main()
