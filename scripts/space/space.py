#!/usr/bin/env python3
"""PerfSeer's design space, widened: a seeded sampler of RegNet-style CNNs, ConvNeXt-style
networks, ViT / DeiT transformers and MLP-Mixers, their layer graph, a PyTorch builder,
weight-stripped ONNX (through PyTorch, or written directly for scale), and FLOP counts.

    space.py sample -n 1000 --seed 1 -o specs.jsonl        # JSON specs, diverse in any prefix
    space.py sample -n 400 --families convnext,vit,deit,mixer --prefix w -o w.jsonl
    space.py sample -n 600 --one-style --prefix h -o h.jsonl   # one stage style per network
    space.py sample -n 300 --heavy-head --prefix v -o v.jsonl  # VGG / AlexNet-style classifiers
    space.py sample -n 300 --families hybrid --prefix y -o y.jsonl  # convolutions, then attention
    space.py sample -n 300 --families hybrid --split-ops --prefix z -o z.jsonl  # + Split, Pad, Squeeze
    space.py sample -n 300 --slice-ops --prefix g -o g.jsonl   # CNNs with ghost / shuffle stages: Slice
    space.py onnx specs.jsonl --out DIR [--torch] [--limit N]   # DIR/<id>.onnx, dynamic batch
    space.py flops specs.jsonl [--batch 1]                  # the builder's own FLOP count

A CNN spec (family cnn): stem (3x3 conv, stride 2, 32 channels, BN, activation), four stages
that halve the resolution and widen the channels, each in one style:
  vgg        plain 3x3 conv-BN-act layers;
  inception  blocks of four concatenated branches (1x1; 1x1-3x3; 1x1-3x3-3x3; 3x3 max pool-1x1);
  resnext    bottleneck residual blocks (1x1, grouped 3x3, 1x1; projection shortcut);
  densenet   a transition (1x1 conv, 2x2 average pool) then dense layers (BN-act-1x1 conv to 4k,
             BN-act-3x3 conv to k, concatenated: growth rate k);
  mobilenet  inverted residual blocks (1x1 expand by t, depthwise 3x3, 1x1 project); with
             --se-ops each stage also draws a 3x3 or 5x5 depthwise kernel and a
             squeeze-excitation or none (MobileNetV3, EfficientNet, LCNet: after the depthwise
             convolution a global pool, a 1x1 with bias to a quarter of the expanded or of the
             input channels, ReLU (SiLU in a SiLU network), a 1x1 with bias back, Hardsigmoid
             (Sigmoid in a SiLU network), the map multiplied by it);
  ghost      (--slice-ops) GhostNet bottlenecks: ghost modules (a 1x1 to half the channels, a
             depthwise 3x3 for the other half, concatenated, cut by a Slice), a depthwise
             stride-2 3x3 between them in the first block, residual;
  shuffle    (--slice-ops) ShuffleNetV2 units: the channels halved by two Slices (or two branches
             where the block downsamples), 1x1, depthwise 3x3, 1x1 on one half, concatenated, and
             a channel shuffle (Reshape, Transpose, Reshape);
  convnext   (family convnext: all four stages) LayerNorm + 2x2 stride-2 convolution, then
             blocks of depthwise 7x7 convolution, LayerNorm, inverted MLP (Linear to t*C, GELU,
             Linear back), layer scale and a residual add, channels-last as torchvision's;
  mobileone  (--rep-ops) MobileOne blocks as they train before reparameterisation: a depthwise
             3x3 as 1, 2 or 4 parallel conv-BN branches, a 1x1 depthwise conv-BN branch and a
             BN-only skip (where the map is kept), summed, activation; then a pointwise 1x1 as
             the same number of conv-BN branches and a BN-only skip (where the width is kept),
             summed, activation (MobileOne, and the blocks of FastViT and RepGhostNet);
  repvgg     (--rep-ops) RepVGG blocks: a 3x3 conv-BN, a 1x1 conv-BN and a BN-only skip (where
             the map and width are kept), summed, activation;
  repghost   (named in --styles only) RepGhostNet's bottleneck in its training form: a module
             (1x1 conv-BN-activation, a depthwise 3x3 conv-BN on it plus a BN-only branch of it,
             summed, activation) to expand x the width, [a depthwise stride-2 conv-BN], a second
             module without activations (its BN-only branch reads a BN), and a residual add
             (GhostNet's shortcut where the block downsamples or widens);
with sampled depth, width and the style's parameters; head: global average pool and a linear
layer to 1,000 classes (--heavy-head: as VGG and AlexNet, the last feature map flattened whole or
pooled, then one or two hidden Linear-activation layers 1,024 to 4,096 wide before the classes: up
to HEAVY_HEAD_MAX weights, where the pooled head has at most a million). One activation per model
(relu, relu6, hardswish, silu; GELU in ConvNeXt). With --narrow (any style) the network is thinned
as a width multiplier thins LCNet-050 or MobileNetV3-Small-050: a stem of 8 to 24 channels and
every stage's width times 0.25 to 0.75.
Token families: patch embedding (p x p convolution, stride p, p in 8/16/32) to a (T, D) sequence;
  vit    a class token or mean pooling, learned positions, pre-norm encoder blocks (LayerNorm,
         multi-head self-attention with 64-wide heads as timm writes it, residual; LayerNorm, MLP
         with GELU, residual), D from 192 (ViT-Ti) to 768 (ViT-B), depth 2-12, MLP ratio 2-4;
  deit   the same with DeiT's class and distillation tokens and their two heads averaged;
  mixer  MLP-Mixer blocks (LayerNorm, token-mixing MLP over the transposed sequence, residual;
         LayerNorm, channel-mixing MLP, residual), mean pooling.
Family hybrid (CoAtNet, MobileViT, EdgeNeXt and their kind: convolution first, attention where
the map is small): the CNN stem, two or three stages of mobilenet, resnext or convnext style
(GELU or SiLU), then one or two attention stages: a 3x3 stride-2 conv-BN-activation to the
stage width (a multiple of 32), the map's pixels as a (HW, C) sequence, pre-norm encoder blocks
(LayerNorm, multi-head self-attention with 32-wide heads, residual; LayerNorm, MLP with GELU,
residual), and back to a (C, H, W) map; the pooled head. With --split-ops a convolution stage
may also be
  mixconv    MixNet's inverted residual: the expanded channels split in two to four groups
             (Split), a depthwise convolution of kernel 3, 5, 7 or 9 on each, concatenated;
  csp        CSPNet's stage: a 3x3 stride-2 convolution, a 1x1, half its channels (Split) through
             residual blocks (1x1, 3x3), concatenated with the other half, a 1x1;
and each network draws TF-style padding (stride-2 convolutions after an explicit Pad of
unequal sides, as timm's tf_ models) and q, k, v taken apart as timm does (unbind: Split, then
Squeeze) or by index (Gather).

Input 3x224x224, or drawn from --inputs. Every architecture expands to one layer graph
(`layers`), which the PyTorch builder, the direct ONNX writer and the FLOP count all read, so
they cannot disagree about the architecture.

FLOP conventions are Seer's (src/onnx/perfgraph_build.h): a multiply-add is 2, BN 2 per
element, activations and Add 1 per element (SiLU = Sigmoid + Mul: 2; GELU as torch.onnx writes
it, Div, Erf, Add, Mul, Mul: 5; a squeeze-excitation's Sigmoid or HardSigmoid 1 per element of
its (C, 1, 1) gate, its Mul 1 per element of the map), LayerNorm 5, Softmax 3, pools k*k per output, global pool and
mean 1 per input element, Gemm / MatMul 2 per multiply-add plus 1 per output for a bias.
"""
import argparse
import json
import math
import os
import random
import sys

STYLES = ("vgg", "inception", "resnext", "densenet", "mobilenet")
SLICE_STYLES = ("ghost", "shuffle")  # drawn besides STYLES with --slice-ops
REP_STYLES = ("mobileone", "repvgg")  # drawn besides STYLES with --rep-ops
# named with --styles only (never drawn by --rep-ops, so that specs_m.jsonl's sequence stays): RepGhostNet's
# bottleneck, whose fusion BN reads a ReLU in its first module and a BN in its second
NAMED_STYLES = ("repghost",)
REP_BRANCHES = (1, 2, 4)  # a mobileone stage's conv-BN branches per convolution (MobileOne-S1..S4: 1, S0: 4)
ACTS = ("relu", "relu6", "hardswish", "silu")
TOKEN_ARCHS = ("vit", "deit", "mixer")
# families sample() draws with --families; "cnn" is the RegNet-style space above
FAMILIES = ("cnn", "convnext") + TOKEN_ARCHS + ("hybrid",)


# Version of torch_model's forward pass, recorded by scripts/measure/measure.py on every line it
# measures ("builder"). 1 kept every intermediate tensor until the forward pass returned, which made
# a no-grad forward pass up to 1.4x slower on large networks than the same network written as an
# idiomatic nn.Module (benchmarks/RESULTS.md, "The design space's forward pass held every
# activation"); 2 frees each intermediate after its last use, as such a module does. Training steps
# keep the activations autograd needs either way.
TORCH_BUILDER = 2
# 3 is 2 with the activations computed in place (ReLU, ReLU6, Hardswish, SiLU; GELU has no in-place
# form) wherever nothing else reads their input, as torchvision and timm build them; the ONNX graph
# is the same. Only benchmarks/inplace_mem.py builds it: a training step's peak at batch 16 moved by
# 0.87 to 1.08 (median 0.97), within one process's noise (benchmarks/RESULTS.md, "The EPYC's
# memory"), so the measurements stay version 2.
INPLACE_BUILDER = 3
BUILDERS = (TORCH_BUILDER, INPLACE_BUILDER)


def same_machine(a, b):
    """Two measurement lines (or a line and measure.py's machine info) from one machine: the same
    device_name, and the same cpu_id where both record one (two KVM guests can share a model name;
    lines written before cpu_id existed are told apart by the name alone). measure.py refuses to
    append to another machine's file and make_dataset.py to mix two machines' lines by this rule."""
    ia, ib = a.get("cpu_id"), b.get("cpu_id")
    return a.get("device_name") == b.get("device_name") and (ia is None or ib is None or ia == ib)


def under_hypervisor():
    """Whether this Linux runs as a virtual machine's guest (the "hypervisor" CPU flag)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(l.startswith("flags") and " hypervisor" in l for l in f)
    except OSError:
        return False


def clock_warning(path, lines, info, tool):
    """A warning (or None) when lines of one machine's file (same_machine) were measured where the
    hypervisor reported another clock than info's (cpu_mhz, more than 2% apart): the same processor
    model on another host, e.g. a 2.1 and a 2.3 GHz Xeon both GenuineIntel 6/207/2 (benchmarks/
    RESULTS.md, "The fourth CPU measured twice"). Not refused: the lines record cpu_mhz, and a
    level shift is what make_dataset.py --ref-normalize takes out. Only under a hypervisor, whose
    clock stays as it reports it; a bare-metal /proc/cpuinfo gives the moment's frequency."""
    mine = info.get("cpu_mhz") if under_hypervisor() else None
    theirs = {}
    for r in lines:
        c = r.get("cpu_mhz")
        if mine and c and abs(c / mine - 1) > 0.02:
            theirs[round(c)] = theirs.get(round(c), 0) + 1
    if not theirs:
        return None
    return ("%s: warning: %s holds %s measured where the hypervisor reported %s, this host reports %.0f MHz: "
            "the same processor on another host, whose times can differ by the clocks' ratio; every line "
            "records cpu_mhz (make_dataset.py --ref-normalize takes a level shift out)" % (
                tool, path, " and ".join("%d lines" % n for n in theirs.values()),
                " and ".join("%d MHz" % c for c in theirs), mine))


def allocator(env=None):
    """The memory allocator a measurement ran under, as a line records it ("allocator"): "glibc"
    for glibc's malloc as it comes, else what changes it, e.g. "glibc MALLOC_MMAP_THRESHOLD_=4294967296"
    or "LD_PRELOAD=libjemalloc.so.2". It moves times as well as peak memory: serving every block from
    the heap runs CPU inference 0 to 40% faster, network by network (benchmarks/RESULTS.md,
    "How much of a CPU time is the allocator's"). env: os.environ by default."""
    env = os.environ if env is None else env
    parts = ["%s=%s" % (k, env[k]) for k in sorted(env) if k.startswith("MALLOC_") or k.startswith("GLIBC_TUNABLES")]
    pre = " ".join(os.path.basename(p) for p in env.get("LD_PRELOAD", "").replace(":", " ").split())
    if pre:
        parts.insert(0, "LD_PRELOAD=%s" % pre)
    return "glibc" if not parts else (" ".join(parts) if pre else "glibc " + " ".join(parts))


def same_allocator(a, b):
    """Two measurement lines (or a line and measure.py's info) under one allocator; lines written
    before the field existed were measured under glibc's as it comes."""
    return a.get("allocator", "glibc") == b.get("allocator", "glibc")


# OpenBLAS's kernels older than AVX: what its runtime detection falls back to on a processor newer
# than the release knows (OpenBLAS 0.3.21, Debian 12's, on family 6 model 207: Prescott)
PRE_AVX_CORES = ("Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Katmai", "Coppermine",
                 "Northwood", "Banias", "Athlon", "Opteron", "Opteron_SSE3", "Barcelona", "Nano")


def blas_core(maps="/proc/self/maps"):
    """The kernel set of the OpenBLAS this process has loaded (openblas_get_corename: "SkylakeX",
    "Haswell", "Prescott", ...), as a line records it ("blas_core"); None when no OpenBLAS is loaded
    (PyTorch with MKL, or before torch is imported). Debian's PyTorch runs its matrix products
    (Linear, MatMul; not its convolutions, which are oneDNN's) through the system BLAS, and an
    OpenBLAS that does not know the processor runs its SSE3 kernels: 4x slower products on the same
    machine (benchmarks/RESULTS.md, "A fourth CPU, and the BLAS kernels it ran"). OPENBLAS_CORETYPE
    chooses the kernels."""
    import ctypes
    try:
        with open(maps) as f:
            paths = sorted({l.split()[-1] for l in f if len(l.split()) >= 6 and "openblas" in l.split()[-1]})
    except OSError:
        return None
    for p in paths:
        try:
            get = ctypes.CDLL(p).openblas_get_corename
        except (OSError, AttributeError):
            continue
        get.restype = ctypes.c_char_p
        name = get()
        return name.decode() if name else None
    return None


def blas_warning(core, cpu_flags):
    """A warning line when OpenBLAS runs kernels older than AVX on a processor with AVX2 (its flags
    from /proc/cpuinfo), else None."""
    if core not in PRE_AVX_CORES or "avx2" not in cpu_flags.split():
        return None
    best = "SkylakeX" if "avx512f" in cpu_flags.split() else "Haswell"
    return ("OpenBLAS runs its %s (pre-AVX) kernels on this processor, which has AVX2%s: it does not know "
            "the processor, and matrix products run about 4x slower than they can; set "
            "OPENBLAS_CORETYPE=%s to measure what the processor does (lines record blas_core: one file, "
            "one kernel set)" % (core, " and AVX-512" if best == "SkylakeX" else "", best))


def same_blas(a, b):
    """Two measurement lines (or a line and measure.py's info) with one BLAS kernel set, where both
    record one (lines written before blas_core existed cannot be told apart)."""
    ca, cb = a.get("blas_core"), b.get("blas_core")
    return ca is None or cb is None or ca == cb


def _round8(x):

    return max(8, int(round(x / 8.0)) * 8)


# --deep: each stage's depth log-uniform between these bounds instead of 1 to 4, the range of the
# hand-designed networks (ResNet-152 3, 8, 36, 3 blocks; DenseNet-201 6, 12, 48, 32 layers)
DEEP_DEPTHS = ((1, 6), (2, 12), (2, 36), (1, 24))
# --heavy-head: the classifier's weights at most this many (VGG-16's three Linear layers: 124 M,
# AlexNet's 59 M); a draw over it halves its hidden widths until it fits
HEAVY_HEAD_MAX = 150e6


def _heavy_head(rng, spec):
    """A VGG / AlexNet-style classifier for a CNN spec: the last feature map flattened whole (VGG,
    AlexNet) or globally pooled first, then one or two hidden layers (Linear, the activation)."""
    head = {"classes": spec["head"]["classes"], "flatten": rng.random() < 0.75,
            "hidden": [_round8(math.exp(rng.uniform(math.log(1024), math.log(4096)))) for _ in range(rng.choice((1, 2)))]}
    while head_weights(dict(spec, head=head)) > HEAVY_HEAD_MAX:
        head["hidden"] = [_round8(x / 2) for x in head["hidden"]]
    return head


def sample_one(rng, idx, inputs=None, one_style=False, deep=False, heavy=False, slice_ops=False, styles=None,
               se_ops=False, narrow=False, rep_ops=False):
    """A CNN spec: each stage's style drawn on its own, or (one_style) one style for all four, as
    the hand-designed families are (ResNet, DenseNet, MobileNet, VGG, GoogLeNet), which a draw per
    stage almost never gives (1 network in 125 for a given style). deep: stage depths from
    DEEP_DEPTHS; heavy: a VGG-style classifier (_heavy_head); slice_ops: stages may also be ghost
    (GhostNet) or shuffle (ShuffleNetV2); styles: draw the stage styles from these alone (e.g.
    ("mobilenet",)); se_ops: mobilenet stages draw a depthwise kernel (3 or 5) and a
    squeeze-excitation ("se": its width as a fraction of the expanded channels, or none);
    narrow: the network thinned as width multipliers thin MobileNet, LCNet or ShuffleNet (_narrow);
    rep_ops: stages may also be mobileone or repvgg (REP_STYLES: the training form of networks
    reparameterised for inference, MobileOne, RepVGG, RepGhostNet, FastViT)."""
    act = rng.choice(ACTS)
    w = _round8(rng.uniform(24, 128))
    stages = []
    styles = tuple(styles) if styles else (STYLES + (SLICE_STYLES if slice_ops else ())
                                           + (REP_STYLES if rep_ops else ()))
    whole = rng.choice(styles) if one_style else None  # drawn only when asked: seed 1's sequence stays
    for s in range(4):
        style = whole or rng.choice(styles)
        if s:
            w = _round8(w * rng.uniform(1.25, 2.5))
        w = min(w, 1024)
        if deep:
            lo, hi = DEEP_DEPTHS[s]
            depth = max(lo, min(hi, int(round(math.exp(rng.uniform(math.log(lo), math.log(hi + 0.49)))))))
        else:
            depth = rng.randint(1, 4)
        st = {"style": style, "width": w, "depth": depth}
        if style == "resnext":
            st["bottleneck"] = rng.choice((0.25, 0.5, 1.0))
            mid = _round8(w * st["bottleneck"])
            st["groups"] = rng.choice([g for g in (1, 2, 4, 8, 16, 32) if mid % g == 0])
        elif style == "densenet":
            st["growth"] = rng.choice((12, 16, 24, 32))
        elif style == "mobilenet":
            st["expand"] = rng.choice((1, 3, 6))
        elif style in ("ghost", "repghost"):
            st["expand"] = rng.choice((2, 3, 4, 6))
        elif style == "mobileone":
            st["branches"] = rng.choice(REP_BRANCHES)
        stages.append(st)
    # drawn last, and only when asked, so that the default sequence (seed 1) is unchanged
    hw = rng.choice(inputs) if inputs else 224
    spec = {"id": "s%06d" % idx, "input": [3, hw, hw], "act": act,
            "stem": {"channels": 32, "kernel": 3, "stride": 2}, "stages": stages,
            "head": {"classes": 1000}}
    if heavy:  # drawn last and only when asked, so that the default sequence stays as it was
        spec["head"] = _heavy_head(rng, spec)
    if se_ops:  # after everything else, likewise: MobileNetV3 / EfficientNet's 5x5 and squeeze-excitation
        for st in stages:
            if st["style"] == "mobilenet":
                st["kernel"] = rng.choice((3, 5))
                # a quarter of the expanded channels (MobileNetV3, LCNet) or of the input's (EfficientNet)
                se = rng.choice((0.0, 0.25, 0.25 / st["expand"]))
                if se:
                    st["se"] = se
    if narrow:  # likewise last
        _narrow(rng, spec)
    return spec


NARROW_FACTORS = (0.25, 0.35, 0.5, 0.75)
NARROW_STEMS = (8, 16, 24)


def _narrow(rng, spec):
    """--narrow: a stem of 8 to 24 channels and every stage's width times one factor of
    NARROW_FACTORS (multiples of 8, at least 8), as LCNet-050, MobileNetV3-Small-050 or
    ShuffleNetV2-0.5x are thinned; a ResNeXt stage's groups halved until they divide its thinner
    bottleneck."""
    f = rng.choice(NARROW_FACTORS)
    spec["stem"]["channels"] = rng.choice(NARROW_STEMS)
    for st in spec["stages"]:
        st["width"] = _round8(st["width"] * f)
        if st["style"] == "resnext":
            while _round8(st["width"] * st["bottleneck"]) % st["groups"]:
                st["groups"] //= 2


def sample_family(rng, idx, fam, inputs=None, one_style=False, deep=False, heavy=False, split_ops=False,
                  slice_ops=False, styles=None, se_ops=False, narrow=False, rep_ops=False):
    """One spec of a family: cnn (sample_one), convnext (four ConvNeXt stages after the common
    stem: depthwise 7x7, LayerNorm, inverted MLP with GELU, layer scale), vit / deit (patch
    embedding, pre-norm encoder blocks; ViT-Ti to ViT-B widths, 64-wide heads), mixer or hybrid
    (split_ops: its convolution stages also mixconv or csp, TF-style explicit padding and timm's
    unbind of q, k and v drawn per network)."""
    if fam == "cnn":
        return sample_one(rng, idx, inputs, one_style, deep, heavy, slice_ops, styles, se_ops, narrow, rep_ops)
    hw = rng.choice(inputs) if inputs else 224
    spec = {"id": "s%06d" % idx, "input": [3, hw, hw], "head": {"classes": 1000}}
    if fam == "hybrid":  # convolution stages, then attention over the feature map (CoAtNet, MobileViT)
        n_attn, w, stages = rng.choice((1, 2)), _round8(rng.uniform(24, 96)), []
        conv_styles = ("mobilenet", "resnext", "convnext") + (("mixconv", "csp") if split_ops else ())
        for s in range(4):
            if s:
                w = min(1024, _round8(w * rng.uniform(1.5, 2.5)))
            if s >= 4 - n_attn:
                w = max(64, int(round(w / 32.0)) * 32)  # 32-wide heads
                stages.append({"style": "attention", "width": w, "depth": rng.randint(1, 5 if s == 2 else 3),
                               "mlp": rng.choice((2, 3, 4))})
                continue
            st = {"style": rng.choice(conv_styles), "width": w, "depth": rng.randint(1, 3)}
            if st["style"] == "mobilenet":
                st["expand"] = rng.choice((3, 4, 6))
            elif st["style"] == "mixconv":
                st.update(expand=rng.choice((3, 6)), kernels=rng.choice(([3, 5], [3, 5, 7], [3, 5, 7, 9])))
            elif st["style"] == "csp":
                st["bottleneck"] = rng.choice((0.5, 1.0))
            elif st["style"] == "resnext":
                st["bottleneck"] = rng.choice((0.25, 0.5))
                st["groups"] = rng.choice([g for g in (1, 8, 16, 32) if _round8(w * st["bottleneck"]) % g == 0])
            else:
                st.update(expand=rng.choice((2, 3, 4)), kernel=7)
            stages.append(st)
        spec.update(act=rng.choice(("gelu", "silu")), stem={"channels": 32, "kernel": 3, "stride": 2}, stages=stages)
        if split_ops:  # drawn last and only when asked, so that the default sequence stays as it was
            spec.update(tf_pad=rng.random() < 0.5, qkv=rng.choice(("select", "unbind")))
        return spec
    if fam == "convnext":
        w, stages = _round8(rng.uniform(32, 128)), []
        for s in range(4):
            if s:
                w = min(1024, _round8(w * rng.uniform(1.5, 2.5)))
            stages.append({"style": "convnext", "width": w, "depth": rng.randint(1, 6 if s == 2 else 3),
                           "expand": rng.choice((2, 3, 4)), "kernel": 7})
        spec.update(act="gelu", stem={"channels": 32, "kernel": 3, "stride": 2}, stages=stages)
        return spec
    spec["arch"] = fam
    spec["patch"] = rng.choice([p for p in (8, 16, 32) if hw // p >= 2])
    spec["depth"] = rng.randint(2, 12)
    if fam in ("vit", "deit"):
        spec["dim"] = rng.choice((192, 256, 320, 384, 448, 512, 640, 768))
        spec["heads"] = spec["dim"] // 64
        spec["mlp"] = rng.choice((2, 3, 4))
        spec["pool"] = "cls" if fam == "deit" else rng.choice(("cls", "mean"))
    else:
        spec["dim"] = rng.choice((128, 192, 256, 384, 512, 640, 768))
        spec["token_mlp"] = _round8(spec["dim"] * rng.choice((0.25, 0.5, 1.0)))
        spec["channel_mlp"] = spec["dim"] * rng.choice((2, 4))
    return spec


def family_of(spec):
    """The family a spec belongs to (cnn, convnext, vit, deit, mixer, hybrid)."""
    if spec.get("arch") in TOKEN_ARCHS:
        return spec["arch"]
    if any(st["style"] == "attention" for st in spec["stages"]):
        return "hybrid"
    return "convnext" if all(st["style"] == "convnext" for st in spec["stages"]) else "cnn"


def _features(spec, slice_ops=False, se_ops=False, narrow=False, rep_ops=False):
    v = []
    for st in spec["stages"]:
        v += [1.0 if st["style"] == s else 0.0 for s in STYLES]
        v += [math.log2(st["width"]) / 4.0, st["depth"] / 4.0]
    if slice_ops:  # appended, and only when asked: the default vectors (and orders) stay as they were
        v += [float(sum(st["style"] == s for st in spec["stages"])) for s in SLICE_STYLES]
    if se_ops:  # likewise: stages with a 5x5 depthwise, stages with a squeeze-excitation
        v += [float(sum(st.get("kernel") == 5 for st in spec["stages"])), float(sum("se" in st for st in spec["stages"]))]
    if narrow:  # likewise: the stem's width (the stages' are above)
        v.append(math.log2(spec["stem"]["channels"]) / 4.0)
    if rep_ops:  # likewise: stages of each reparameterisable style
        v += [float(sum(st["style"] == s for st in spec["stages"])) for s in REP_STYLES]
    v += [1.0 if spec["act"] == a else 0.0 for a in ACTS]
    v.append(math.log10(flops(spec, 1)) / 3.0)
    v.append(math.log2(spec["input"][1] / 224.0))
    if "hidden" in spec["head"]:  # --heavy-head: every spec of the sample has one, so they spread over it too
        v.append(math.log10(head_weights(spec)) / 2.0)
    return v


def head_weights(spec):
    """The classifier's Linear weights (without biases) of a CNN spec."""
    L = layers(spec)
    shapes = {l["name"]: l["shape"] for l in L}
    start = max(i for i, l in enumerate(L) if l["op"] == "flatten")
    return sum(shapes[l["inputs"][0]][-1] * l["attrs"]["cout"] for l in L[start:] if l["op"] == "linear")


def _features_any(spec):
    """Diversity features over several families: the family (weighted so that families spread
    first), size, depth, width, input size and FLOPs; CNN specs add their per-stage features."""
    fam = family_of(spec)
    v = [2.0 if fam == f else 0.0 for f in FAMILIES]
    v.append(math.log10(flops(spec, 1)) / 3.0)
    v.append(math.log2(spec["input"][1] / 224.0))
    if fam in TOKEN_ARCHS:
        v += [math.log2(spec["dim"]) / 4.0, spec["depth"] / 6.0, math.log2(spec["patch"]) / 2.0]
    else:
        v += [math.log2(spec["stages"][-1]["width"]) / 4.0, sum(st["depth"] for st in spec["stages"]) / 6.0, 0.0]
    return v + (_features(spec)[:28] if fam == "cnn" else [0.0] * 28)  # the stages


def sample(n, seed, diverse=2000, inputs=None, prefix="s", families=None, one_style=False, deep=False, heavy=False,
           split_ops=False, slice_ops=False, styles=None, se_ops=False, narrow=False, rep_ops=False):
    """n specs; the first min(n, diverse) in greedy farthest-point order over a candidate pool
    (styles, widths, depths, activation, log FLOPs), so that any prefix spreads over the space.
    families (names from FAMILIES) draws each spec's family first; None is the CNN space alone,
    the sequence every earlier sample was drawn from. one_style: every CNN in one stage style;
    deep: stage depths as the hand-designed networks have them (DEEP_DEPTHS); heavy: CNNs with a
    VGG / AlexNet-style classifier (_heavy_head); split_ops: hybrids with the operators Split, Pad
    and Squeeze (sample_family); slice_ops: CNNs whose stages may also be ghost (GhostNet) or shuffle
    (ShuffleNetV2): the operator Slice, and channel shuffles; styles: CNN stages drawn from these
    styles alone; se_ops: mobilenet stages with 3x3 or 5x5 depthwise kernels and squeeze-excitation
    (the operators Sigmoid or HardSigmoid and a broadcast Mul); narrow: CNNs thinned by a width
    multiplier, with a stem of 8 to 24 channels (_narrow); rep_ops: CNNs whose stages may also be
    mobileone or repvgg, convolutions in their training form of parallel conv-BN branches and a
    BN-only skip, summed (_rep_conv)."""
    rng = random.Random(seed)
    pool_n = n if n <= 1 else min(4 * n, n + 8000)
    if families:
        pool = [sample_family(rng, i, rng.choice(families), inputs, one_style, deep, heavy, split_ops, slice_ops,
                              styles, se_ops, narrow, rep_ops) for i in range(pool_n)]
    else:
        pool = [sample_one(rng, i, inputs, one_style, deep, heavy, slice_ops, styles, se_ops, narrow, rep_ops)
                for i in range(pool_n)]
    k = min(n, diverse)
    if k > 1:
        import numpy as np
        X = np.array([_features_any(s) if families else _features(s, slice_ops, se_ops, narrow, rep_ops)
                      for s in pool])
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
# A layer: dict(name, op, inputs (names), attrs, shape = its output's shape without the batch
# dimension: (C, H, W) for images, (T, D) for token sequences, (D,) for vectors; "x" is the
# input). Operators, each with one meaning in the builder, the ONNX writer and the FLOP count:
#   conv (cout, k, stride, pad, groups, bias), bn, act (kind: relu relu6 hardswish silu gelu),
#   maxpool / avgpool (k, stride, pad), add, concat (channels), gap, flatten,
#   linear (cout; over the last axis: Gemm on vectors, MatMul + Add on sequences),
#   ln (LayerNormalization over the last axis), reshape (shape), transpose (perm, batch fixed),
#   matmul (two inputs, batched over the leading axes), scale (multiply by a constant s),
#   softmax (last axis), select (axis, index: drops the axis), mean (axis: ReduceMean),
#   cls (k learned tokens prepended to a sequence), pos (a learned tensor of the input's shape
#   added), gamma (a learned per-channel scale over the last axis), pad (pads: top, left,
#   bottom, right zeros around a map), split (axis, sizes, unbind: a tuple of parts, one Split)
#   part (axis, index, size, squeeze: one of a split's parts; squeeze drops the axis), slice
#   (axis, start, end: a Slice of one axis) and mul (two inputs, the second broadcast to the
#   first's shape: a squeeze-excitation's (C, 1, 1) gate times its (C, H, W) map). Activation
#   kinds sigmoid and hardsigmoid are a squeeze-excitation's gates.


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class _Graph:
    def __init__(self, input_shape, act, tf_pad=False, qkv="select"):
        self.L, self.shapes, self.act_kind = [], {"x": tuple(input_shape)}, act
        self.tf_pad, self.qkv = tf_pad, qkv

    def add(self, op, inputs, **attrs):
        name = "l%d" % len(self.L)
        x = self.shapes[inputs[0]]
        if op in ("conv", "maxpool", "avgpool"):
            c, h, w = x
            k, s, p = attrs["k"], attrs["stride"], attrs["pad"]
            out = (attrs["cout"] if op == "conv" else c, (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1)
        elif op == "pad":
            c, h, w = x
            t, l, b, r = attrs["pads"]
            out = (c, h + t + b, w + l + r)
        elif op == "slice":
            ax = attrs["axis"]
            out = x[:ax] + (attrs["end"] - attrs["start"],) + x[ax + 1:]
        elif op == "part":
            ax = attrs["axis"]
            out = x[:ax] + (() if attrs.get("squeeze") else (attrs["size"],)) + x[ax + 1:]
        elif op == "concat":
            out = (sum(self.shapes[i][0] for i in inputs),) + x[1:]
        elif op == "gap":
            out = (x[0], 1, 1)
        elif op == "flatten":
            out = (_numel(x),)
        elif op == "linear":
            out = x[:-1] + (attrs["cout"],)
        elif op == "reshape":
            out = tuple(attrs["shape"])
            assert _numel(out) == _numel(x), (x, out)
        elif op == "transpose":
            out = tuple(x[p] for p in attrs["perm"])
        elif op == "matmul":
            y = self.shapes[inputs[1]]
            assert x[:-2] == y[:-2] and x[-1] == y[-2], (x, y)
            out = x[:-1] + (y[-1],)
        elif op in ("select", "mean"):
            out = x[: attrs["axis"]] + x[attrs["axis"] + 1:]
        elif op == "cls":
            out = (x[0] + attrs["k"],) + x[1:]
        else:  # bn, act, add, ln, scale, softmax, pos, gamma keep the shape
            out = x
        self.shapes[name] = out
        self.L.append({"name": name, "op": op, "inputs": list(inputs), "attrs": attrs, "shape": out})
        return name

    def conv(self, x, cout, k, stride=1, groups=1):
        """A k x k convolution without bias, padded to keep the map (k // 2 on each side), or with
        tf_pad and a stride as TensorFlow's SAME pads (timm's tf_ models: an explicit Pad of
        possibly unequal sides, then the convolution unpadded)."""
        pad = k // 2
        if self.tf_pad and stride > 1:
            c, h, w = self.shapes[x]
            tot = [max((-(-n // stride) - 1) * stride + k - n, 0) for n in (h, w)]
            if any(tot):
                x = self.add("pad", [x], pads=(tot[0] // 2, tot[1] // 2, tot[0] - tot[0] // 2, tot[1] - tot[1] // 2))
            pad = 0
        return self.add("conv", [x], cout=cout, k=k, stride=stride, pad=pad, groups=groups)

    def cba(self, x, cout, k, stride=1, groups=1, act=True):
        y = self.add("bn", [self.conv(x, cout, k, stride, groups)])
        return self.add("act", [y], kind=self.act_kind) if act else y

    def split(self, x, sizes, axis=0, squeeze=False):
        """x cut along axis into parts of these sizes (one Split); squeeze: parts of size 1 with
        the axis dropped (torch.unbind: Split, then a Squeeze per part)."""
        s = self.add("split", [x], axis=axis, sizes=list(sizes), unbind=squeeze)
        return [self.add("part", [s], axis=axis, index=i, size=n, squeeze=squeeze) for i, n in enumerate(sizes)]

    def linear(self, x, cout):
        return self.add("linear", [x], cout=cout)

    def mlp(self, x, hidden, cout):
        return self.linear(self.add("act", [self.linear(x, hidden)], kind="gelu"), cout)

    def attention(self, x, heads):
        """Multi-head self-attention over a (T, D) sequence, as timm and torchvision's ViTs write
        it: one qkv projection, heads split by reshape and transpose, softmax(q k^T / sqrt(d)) v."""
        T, D = self.shapes[x]
        dh = D // heads
        qkv = self.add("transpose", [self.add("reshape", [self.linear(x, 3 * D)], shape=(T, 3, heads, dh))],
                       perm=(1, 2, 0, 3))                                   # (3, H, T, dh)
        if self.qkv == "unbind":  # timm's q, k, v = qkv.unbind(0)
            q, k, v = self.split(qkv, (1, 1, 1), squeeze=True)
        else:
            q, k, v = (self.add("select", [qkv], axis=0, index=i) for i in range(3))
        kt = self.add("transpose", [k], perm=(0, 2, 1))                     # (H, dh, T)
        a = self.add("softmax", [self.add("scale", [self.add("matmul", [q, kt])], s=1.0 / math.sqrt(dh))])
        o = self.add("transpose", [self.add("matmul", [a, v])], perm=(1, 0, 2))  # (T, H, dh)
        return self.linear(self.add("reshape", [o], shape=(T, D)), D)

    def patches(self, dim, patch):
        """Patch embedding: a patch x patch convolution with stride patch, then (D, h, w) -> (h w, D)."""
        y = self.add("conv", ["x"], cout=dim, k=patch, stride=patch, pad=0, groups=1, bias=True)
        d, h, w = self.shapes[y]
        return self.add("transpose", [self.add("reshape", [y], shape=(d, h * w))], perm=(1, 0))

    def ln2d(self, x):
        """LayerNorm over the channels of an image (torchvision's LayerNorm2d: to channels-last and back)."""
        y = self.add("ln", [self.add("transpose", [x], perm=(1, 2, 0))])
        return self.add("transpose", [y], perm=(2, 0, 1))


def _split_channels(c, n):
    """c channels in n groups as MixNet cuts them: equal, the first taking what is left over."""
    sizes = [c // n] * n
    sizes[0] += c - sum(sizes)
    return sizes


def _ghost(g, x, cout, act=True):
    """GhostNet's module: a 1x1 convolution to half the channels (rounded up), a depthwise 3x3 on
    those for the other half, concatenated and cut to cout (a Slice, as GhostNet writes it)."""
    init = -(-cout // 2)
    p = g.cba(x, init, 1, act=act)
    y = g.add("concat", [p, g.cba(p, init, 3, groups=init, act=act)])
    return g.add("slice", [y], axis=0, start=0, end=cout)


def _channel_shuffle(g, x, groups=2):
    """ShuffleNet's channel shuffle: (C, H, W) -> (groups, C / groups, H, W), swap, back."""
    c, h, w = g.shapes[x]
    y = g.add("transpose", [g.add("reshape", [x], shape=(groups, c // groups, h, w))], perm=(1, 0, 2, 3))
    return g.add("reshape", [y], shape=(c, h, w))


def _squeeze_excite(g, x, mid):
    """Squeeze-excitation as torchvision's MobileNetV3 and EfficientNet write it: a global pool, a
    1x1 with bias to mid channels, ReLU (SiLU in a SiLU network), a 1x1 with bias back, Hardsigmoid
    (Sigmoid in a SiLU network), and the map multiplied by that gate."""
    c = g.shapes[x][0]
    silu = g.act_kind == "silu"
    p = g.add("conv", [g.add("gap", [x])], cout=mid, k=1, stride=1, pad=0, groups=1, bias=True)
    p = g.add("conv", [g.add("act", [p], kind="silu" if silu else "relu")], cout=c, k=1, stride=1, pad=0, groups=1, bias=True)
    return g.add("mul", [x, g.add("act", [p], kind="sigmoid" if silu else "hardsigmoid")])


def _rep_conv(g, x, cout, k, stride=1, groups=1, convs=1):
    """A convolution in the training form of networks reparameterised for inference (MobileOne,
    RepVGG, RepGhostNet, FastViT as timm builds them untrained): `convs` k x k conv-BN branches, a
    1x1 conv-BN branch beside them where k > 1, and a BN-only skip where the map and its channels
    are kept, summed by a chain of Adds, then the activation."""
    branches = [g.cba(x, cout, k, stride, groups, act=False) for _ in range(convs)]
    if k > 1:
        branches.append(g.cba(x, cout, 1, stride, groups, act=False))
    if stride == 1 and g.shapes[x][0] == cout:
        branches.append(g.add("bn", [x]))
    y = branches[0]
    for b in branches[1:]:
        y = g.add("add", [y, b])
    return g.add("act", [y], kind=g.act_kind)


def _repghost(g, x, cout, act=True):
    """RepGhostNet's module in its training form (timm's RepGhostModule): a 1x1 conv-BN (with the
    activation in a block's first module), a depthwise 3x3 conv-BN on it, and a BN-only branch of
    the same (its fusion BN) added to that, then the activation: the BN reads a ReLU (first module)
    or a BN (second)."""
    p = g.cba(x, cout, 1, act=act)
    y = g.add("add", [g.cba(p, cout, 3, groups=cout, act=False), g.add("bn", [p])])
    return g.add("act", [y], kind=g.act_kind) if act else y


def _cnn_layers(spec):
    g = _Graph(spec["input"], spec["act"], spec.get("tf_pad", False), spec.get("qkv", "select"))
    add, cba, shapes, act_kind = g.add, g.cba, g.shapes, spec["act"]
    st = spec["stem"]
    x = cba("x", st["channels"], st["kernel"], st["stride"])
    for stage in spec["stages"]:
        style, w, d = stage["style"], stage["width"], stage["depth"]
        if style == "attention":  # downsampling conv-BN-act, then pre-norm encoder blocks over its pixels
            x = cba(x, w, 3, 2)
            c, h, wd = shapes[x]
            t = add("transpose", [add("reshape", [x], shape=(c, h * wd))], perm=(1, 0))  # (HW, C)
            for _ in range(d):
                t = add("add", [t, g.attention(add("ln", [t]), c // 32)])
                t = add("add", [t, g.mlp(add("ln", [t]), stage["mlp"] * c, c)])
            x = add("reshape", [add("transpose", [t], perm=(1, 0))], shape=(c, h, wd))
            continue
        if style == "csp":  # CSPNet: down, 1x1, half the channels through residual blocks, concat, 1x1
            half = w // 2
            a, b = g.split(cba(cba(x, w, 3, 2), w, 1), (half, w - half))
            mid = _round8(half * stage["bottleneck"])
            for _ in range(d):
                a = add("act", [add("add", [cba(cba(a, mid, 1), half, 3, act=False), a])], kind=act_kind)
            x = cba(add("concat", [a, b]), w, 1)
            continue
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
                y = cba(y, c_mid, stage.get("kernel", 3), s, groups=c_mid)
                if stage.get("se"):
                    y = _squeeze_excite(g, y, _round8(c_mid * stage["se"]))
                y = cba(y, w, 1, act=False)
                x = add("add", [y, x]) if (s == 1 and cin == w) else y
            elif style == "mixconv":  # MixNet: the depthwise convolution's channels in groups of kernel sizes
                y = cba(x, cin * stage["expand"], 1)
                parts = g.split(y, _split_channels(shapes[y][0], len(stage["kernels"])))
                y = add("concat", [g.conv(p, shapes[p][0], k, s, groups=shapes[p][0])
                                   for p, k in zip(parts, stage["kernels"])])
                y = add("act", [add("bn", [y])], kind=act_kind)
                y = cba(y, w, 1, act=False)
                x = add("add", [y, x]) if (s == 1 and cin == w) else y
            elif style == "ghost":  # GhostNet's bottleneck: ghost module, [depthwise stride 2], ghost module
                y = _ghost(g, x, _round8(cin * stage["expand"]))
                if s == 2:
                    y = cba(y, shapes[y][0], 3, 2, groups=shapes[y][0], act=False)
                y = _ghost(g, y, w, act=False)
                sc = x if (s == 1 and cin == w) else cba(cba(x, cin, 3, s, groups=cin, act=False), w, 1, act=False)
                x = add("add", [y, sc])
            elif style == "repghost":  # RepGhostNet's bottleneck: module, [depthwise stride 2], module, shortcut
                mid = _round8(cin * stage["expand"])
                y = _repghost(g, x, mid)
                if s == 2:
                    y = cba(y, mid, 3, 2, groups=mid, act=False)
                y = _repghost(g, y, w, act=False)
                sc = x if (s == 1 and cin == w) else cba(cba(x, cin, 3, s, groups=cin, act=False), w, 1, act=False)
                x = add("add", [y, sc])
            elif style == "mobileone":  # MobileOne's block: a depthwise 3x3, then a pointwise 1x1, each reparameterisable
                y = _rep_conv(g, x, cin, 3, s, groups=cin, convs=stage["branches"])
                x = _rep_conv(g, y, w, 1, convs=stage["branches"])
            elif style == "repvgg":  # RepVGG's block: a dense 3x3 with its 1x1 and BN-only branches
                x = _rep_conv(g, x, w, 3, s)
            elif style == "shuffle":  # ShuffleNetV2's unit: halves (Slice) or two branches, concat, shuffle
                half = w // 2
                if s == 1 and cin == w:
                    keep = add("slice", [x], axis=0, start=0, end=half)
                    b = add("slice", [x], axis=0, start=half, end=cin)
                else:
                    keep = cba(cba(x, cin, 3, s, groups=cin, act=False), half, 1)
                    b = x
                b = cba(b, half, 1)
                b = cba(cba(b, half, 3, s, groups=half, act=False), half, 1)
                x = _channel_shuffle(g, add("concat", [keep, b]))
            elif style == "convnext":
                if i == 0:  # downsampling: LayerNorm, 2x2 convolution with stride 2
                    x = add("conv", [g.ln2d(x)], cout=w, k=2, stride=2, pad=0, groups=1, bias=True)
                k = stage.get("kernel", 7)
                y = add("conv", [x], cout=w, k=k, stride=1, pad=k // 2, groups=w, bias=True)
                y = add("ln", [add("transpose", [y], perm=(1, 2, 0))])      # channels-last
                y = add("gamma", [g.mlp(y, stage["expand"] * w, w)])        # inverted MLP, layer scale
                x = add("add", [x, add("transpose", [y], perm=(2, 0, 1))])
    head = spec["head"]
    x = add("flatten", [x if head.get("flatten") else add("gap", [x])])
    for h in head.get("hidden", ()):  # --heavy-head: VGG's classifier (its Dropout a no-op in eval)
        x = add("act", [add("linear", [x], cout=h)], kind=act_kind)
    add("linear", [x], cout=head["classes"])
    return g.L


def _token_layers(spec):
    """ViT / DeiT (pre-norm encoder blocks; class token, DeiT's distillation token too, or mean
    pooling) and MLP-Mixer (token-mixing and channel-mixing MLPs)."""
    g = _Graph(spec["input"], "gelu")
    add, arch, D = g.add, spec["arch"], spec["dim"]
    x = g.patches(D, spec["patch"])
    if arch in ("vit", "deit"):
        k = 2 if arch == "deit" else (1 if spec["pool"] == "cls" else 0)
        if k:
            x = add("cls", [x], k=k)
        x = add("pos", [x])
        for _ in range(spec["depth"]):
            x = add("add", [x, g.attention(add("ln", [x]), spec["heads"])])
            x = add("add", [x, g.mlp(add("ln", [x]), spec["mlp"] * D, D)])
    else:  # mixer
        T = g.shapes[x][0]
        for _ in range(spec["depth"]):
            y = add("transpose", [add("ln", [x])], perm=(1, 0))             # (D, T)
            x = add("add", [x, add("transpose", [g.mlp(y, spec["token_mlp"], T)], perm=(1, 0))])
            x = add("add", [x, g.mlp(add("ln", [x]), spec["channel_mlp"], D)])
    x = add("ln", [x])
    C = spec["head"]["classes"]
    if arch == "deit":  # class and distillation heads, averaged (DeiT's inference)
        a = g.linear(add("select", [x], axis=0, index=0), C)
        b = g.linear(add("select", [x], axis=0, index=1), C)
        add("scale", [add("add", [a, b])], s=0.5)
    elif arch == "vit" and spec["pool"] == "cls":
        g.linear(add("select", [x], axis=0, index=0), C)
    else:
        g.linear(add("mean", [x], axis=0), C)
    return g.L


def layers(spec):
    return _token_layers(spec) if spec.get("arch") in TOKEN_ARCHS else _cnn_layers(spec)


def flops(spec, batch=1):
    """FLOPs of one forward pass at a batch size, Seer's conventions."""
    total = 0
    shapes = {"x": tuple(spec["input"])}
    for l in layers(spec):
        x = shapes[l["inputs"][0]]
        out, n_in = _numel(l["shape"]), _numel(x)
        op, a = l["op"], l["attrs"]
        if op == "conv":
            total += 2 * out * (x[0] // a["groups"]) * a["k"] * a["k"] + (out if a.get("bias") else 0)
        elif op == "bn":
            total += 2 * out
        elif op == "act":
            total += {"silu": 2, "gelu": 5}.get(a["kind"], 1) * out  # GELU: Div, Erf, Add, Mul, Mul
        elif op in ("maxpool", "avgpool"):
            total += out * a["k"] * a["k"]
        elif op in ("add", "mul", "scale", "pos", "gamma"):
            total += out
        elif op in ("gap", "mean"):
            total += n_in
        elif op == "linear":
            total += 2 * out * x[-1] + out
        elif op == "matmul":
            total += 2 * out * x[-1]
        elif op == "ln":
            total += 5 * out
        elif op == "softmax":
            total += 3 * out
        shapes[l["name"]] = l["shape"]
    return total * batch


# ---- PyTorch ----

def torch_model(spec, builder=TORCH_BUILDER):
    import torch
    import torch.nn as nn
    if builder not in BUILDERS:
        raise ValueError("torch_model: builder %r: one of %s" % (builder, BUILDERS))
    L = layers(spec)
    shapes = {"x": tuple(spec["input"])}
    acts = {"relu": nn.ReLU, "relu6": nn.ReLU6, "hardswish": nn.Hardswish, "silu": nn.SiLU, "gelu": nn.GELU,
            "sigmoid": nn.Sigmoid, "hardsigmoid": nn.Hardsigmoid}

    last, readers = {}, {}  # each value's last reader (the forward pass drops it there), its readers
    for k, l in enumerate(L):
        for i in l["inputs"]:
            last[i] = k
            readers[i] = readers.get(i, 0) + 1
    op_of = {l["name"]: l["op"] for l in L}

    def in_place(l):
        """builder 3: this activation may overwrite its input: read by nothing else, a tensor of its
        own (not a view: a slice or reshape shares another's storage), written by an operator whose
        backward pass does not read its own output (an activation's does). GELU has no in-place
        form; a squeeze-excitation's gate is not in place in torchvision either."""
        i = l["inputs"][0]
        return (builder == INPLACE_BUILDER and l["attrs"]["kind"] not in ("gelu", "sigmoid", "hardsigmoid")
                and readers.get(i) == 1
                and op_of.get(i) in ("conv", "bn", "add", "concat", "linear", "ln"))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.mods = nn.ModuleDict()
            self.params = nn.ParameterDict()
            for l in L:
                a, x = l["attrs"], shapes[l["inputs"][0]]
                m, op = None, l["op"]
                if op == "conv":
                    m = nn.Conv2d(x[0], a["cout"], a["k"], a["stride"], a["pad"], groups=a["groups"],
                                  bias=bool(a.get("bias")))
                elif op == "bn":
                    m = nn.BatchNorm2d(x[0])
                elif op == "act":
                    m = acts[a["kind"]](inplace=True) if in_place(l) else acts[a["kind"]]()
                elif op == "maxpool":
                    m = nn.MaxPool2d(a["k"], a["stride"], a["pad"])
                elif op == "avgpool":
                    m = nn.AvgPool2d(a["k"], a["stride"], a["pad"])
                elif op == "gap":
                    m = nn.AdaptiveAvgPool2d(1)
                elif op == "flatten":
                    m = nn.Flatten()
                elif op == "linear":
                    m = nn.Linear(x[-1], a["cout"])
                elif op == "ln":
                    m = nn.LayerNorm(x[-1])
                elif op == "cls":
                    self.params[l["name"]] = nn.Parameter(torch.zeros(1, a["k"], x[-1]))
                elif op == "pos":
                    self.params[l["name"]] = nn.Parameter(torch.zeros((1,) + x))
                elif op == "gamma":
                    self.params[l["name"]] = nn.Parameter(torch.full((x[-1],), 1e-6))
                if m is not None:
                    self.mods[l["name"]] = m
                shapes[l["name"]] = l["shape"]

        def forward(self, x):
            v = {"x": x}
            for k, l in enumerate(L):
                ins, a, op, n = [v[i] for i in l["inputs"]], l["attrs"], l["op"], l["name"]
                for i in set(l["inputs"]):
                    if last[i] == k:
                        del v[i]
                if op == "add":
                    y = ins[0] + ins[1]
                elif op == "mul":
                    y = ins[0] * ins[1]
                elif op == "concat":
                    y = torch.cat(ins, 1)
                elif op == "pad":
                    t, left, b, r = a["pads"]
                    y = torch.nn.functional.pad(ins[0], (left, r, t, b))
                elif op == "split":
                    d = a["axis"] + 1
                    y = torch.unbind(ins[0], d) if a["unbind"] else torch.split(ins[0], a["sizes"], d)
                elif op == "part":
                    y = ins[0][a["index"]]
                elif op == "slice":
                    y = ins[0][(slice(None),) * (a["axis"] + 1) + (slice(a["start"], a["end"]),)]
                elif op == "reshape":
                    y = ins[0].reshape((-1,) + tuple(a["shape"]))
                elif op == "transpose":
                    y = ins[0].permute((0,) + tuple(p + 1 for p in a["perm"]))
                elif op == "matmul":
                    y = torch.matmul(ins[0], ins[1])
                elif op == "scale":
                    y = ins[0] * a["s"]
                elif op == "softmax":
                    y = ins[0].softmax(-1)
                elif op == "select":
                    y = ins[0].select(a["axis"] + 1, a["index"])
                elif op == "mean":
                    y = ins[0].mean(a["axis"] + 1)
                elif op == "cls":
                    y = torch.cat([self.params[n].expand(ins[0].shape[0], -1, -1), ins[0]], 1)
                elif op == "pos":
                    y = ins[0] + self.params[n]
                elif op == "gamma":
                    y = ins[0] * self.params[n]
                else:
                    y = self.mods[n](ins[0])
                v[n] = y
                del ins, y  # nothing but v holds a value past its last reader
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
    torch.onnx.export(m, x, tmp, input_names=["input"], output_names=["logits"], opset_version=17,
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
    model = strip_weights(onnx.load(tmp))
    os.remove(tmp)
    onnx.save(model, path)


# ---- ONNX written directly (no PyTorch: for datasets of 100k graphs) ----

def export_direct(spec, path):
    """The layer graph as ONNX (opset 17), written the way torch.onnx.export writes each layer
    (Linear on a sequence as MatMul + Add, GELU as x * 0.5 * (1 + erf(x / sqrt 2)), scalars as
    Constant nodes), so that a model a user exports looks like the ones Seer was trained on."""
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

    def ints(name, values):
        inits.append(numpy_helper.from_array(np.array(values, "int64"), name))
        return name

    def const(name, value):
        nodes.append(h.make_node("Constant", [], [name], name=name + "_c",
                                 value=numpy_helper.from_array(np.array(value, "float32"), name)))
        return name

    def node(op, ins, out, name, **attrs):
        nodes.append(h.make_node(op, ins, [out], name=name, **attrs))
        return out

    val = {"x": "input"}
    L = layers(spec)
    for l in L:
        n, a, x = l["name"], l["attrs"], shapes[l["inputs"][0]]
        ins = [val[i] for i in l["inputs"]]
        out = "logits" if l is L[-1] else n + "_out"
        op = l["op"]
        if op == "conv":
            w = [weight(n + ".w", [a["cout"], x[0] // a["groups"], a["k"], a["k"]])]
            w += [weight(n + ".b", [a["cout"]])] if a.get("bias") else []
            node("Conv", ins + w, out, n, kernel_shape=[a["k"]] * 2, strides=[a["stride"]] * 2,
                 pads=[a["pad"]] * 4, group=a["groups"])
        elif op == "bn":
            node("BatchNormalization", ins + [weight(n + s, [x[0]]) for s in (".g", ".b", ".m", ".v")], out, n)
        elif op == "act":
            k = a["kind"]
            if k == "relu":
                node("Relu", ins, out, n)
            elif k == "relu6":
                lo = numpy_helper.from_array(np.array(0, "float32"), n + ".lo")
                hi = numpy_helper.from_array(np.array(6, "float32"), n + ".hi")
                inits.extend([lo, hi])
                node("Clip", ins + [lo.name, hi.name], out, n)
            elif k == "hardswish":
                node("HardSwish", ins, out, n)
            elif k == "sigmoid":
                node("Sigmoid", ins, out, n)
            elif k == "hardsigmoid":  # as torch.onnx writes nn.Hardsigmoid
                node("HardSigmoid", ins, out, n, alpha=1.0 / 6)
            elif k == "gelu":
                e = node("Erf", [node("Div", ins + [const(n + ".sqrt2", math.sqrt(2))], n + "_d", n + "_div")], n + "_e", n + "_erf")
                y = node("Mul", ins + [node("Add", [e, const(n + ".one", 1.0)], n + "_a", n + "_add")], n + "_m", n + "_mul")
                node("Mul", [y, const(n + ".half", 0.5)], out, n)
            else:
                node("Mul", ins + [node("Sigmoid", ins, n + "_sig", n + "_s")], out, n)
        elif op in ("maxpool", "avgpool"):
            node("MaxPool" if op == "maxpool" else "AveragePool", ins, out, n,
                 kernel_shape=[a["k"]] * 2, strides=[a["stride"]] * 2, pads=[a["pad"]] * 4)
        elif op == "add":
            node("Add", ins, out, n)
        elif op == "mul":
            node("Mul", ins, out, n)
        elif op == "concat":
            node("Concat", ins, out, n, axis=1)
        elif op == "gap":
            node("GlobalAveragePool", ins, out, n)
        elif op == "flatten":
            node("Flatten", ins, out, n)
        elif op == "linear":
            if len(x) == 1:
                node("Gemm", ins + [weight(n + ".w", [a["cout"], x[0]]), weight(n + ".b", [a["cout"]])], out, n, transB=1)
            else:
                y = node("MatMul", ins + [weight(n + ".w", [x[-1], a["cout"]])], n + "_mm", n + "_matmul")
                node("Add", [y, weight(n + ".b", [a["cout"]])], out, n)
        elif op == "ln":
            node("LayerNormalization", ins + [weight(n + ".g", [x[-1]]), weight(n + ".b", [x[-1]])], out, n,
                 axis=-1, epsilon=1e-5)
        elif op == "reshape":
            node("Reshape", ins + [ints(n + ".shape", [-1] + list(a["shape"]))], out, n)
        elif op == "transpose":
            node("Transpose", ins, out, n, perm=[0] + [p + 1 for p in a["perm"]])
        elif op == "matmul":
            node("MatMul", ins, out, n)
        elif op == "scale":
            node("Mul", ins + [const(n + ".s", a["s"])], out, n)
        elif op == "softmax":
            node("Softmax", ins, out, n, axis=-1)
        elif op == "select":
            node("Gather", ins + [ints(n + ".index", a["index"])], out, n, axis=a["axis"] + 1)
        elif op == "mean":
            node("ReduceMean", ins, out, n, axes=[a["axis"] + 1], keepdims=0)
        elif op == "cls":  # as torch exports tokens.expand(x.shape[0], -1, -1): Shape, Gather, Expand
            b = node("Gather", [node("Shape", ins, n + "_shape", n + "_sh"), ints(n + ".zero", [0])], n + "_b", n + "_g")
            shp = node("Concat", [b, ints(n + ".ones", [1, 1])], n + "_bs", n + "_cat", axis=0)
            tok = node("Expand", [weight(n + ".tokens", [1, a["k"], x[-1]]), shp], n + "_tok", n + "_expand")
            node("Concat", [tok] + ins, out, n, axis=1)
        elif op == "pos":
            node("Add", ins + [weight(n + ".pos", [1] + list(x))], out, n)
        elif op == "gamma":
            node("Mul", ins + [weight(n + ".gamma", [x[-1]])], out, n)
        elif op == "pad":  # ONNX's pads: every axis's start, then every axis's end
            t, left, b, r = a["pads"]
            node("Pad", ins + [ints(n + ".pads", [0, 0, t, left, 0, 0, b, r])], out, n, mode="constant")
        elif op == "split":
            out = ["%s_out%d" % (n, i) for i in range(len(a["sizes"]))]
            nodes.append(h.make_node("Split", ins + [ints(n + ".split", a["sizes"])], out, name=n, axis=a["axis"] + 1))
        elif op == "slice":
            node("Slice", ins + [ints(n + ".starts", [a["start"]]), ints(n + ".ends", [a["end"]]),
                                 ints(n + ".axes", [a["axis"] + 1])], out, n)
        elif op == "part":  # a Split's output; squeezed (torch.unbind) by a Squeeze of its own
            out = ins[0][a["index"]]
            if a["squeeze"]:
                out = node("Squeeze", [out, ints(n + ".axes", [a["axis"] + 1])], n + "_out", n)
        else:
            raise ValueError("%s: no ONNX for layer op %s" % (spec["id"], op))
        val[n] = out
        shapes[n] = l["shape"]
    g = h.make_graph(
nodes, spec["id"], [h.make_tensor_value_info("input", T.FLOAT, ["batch"] + spec["input"])],
                     [h.make_tensor_value_info("logits", T.FLOAT, ["batch", spec["head"]["classes"]])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="seer space.py")
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
    s.add_argument("--max-gflops", type=float, default=0,
                   help="keep only specs of at most this many GFLOPs at batch 1 (after the diverse "
                        "ordering, so the kept ones keep its order; fewer than -n may remain)")
    s.add_argument("--min-gflops", type=float, default=0,
                   help="keep only specs of at least this many GFLOPs at batch 1 (a slice of large "
                        "networks, as ImageNet models are, for a run of its own)")
    s.add_argument("--families", default="",
                   help="families to draw from, comma-separated, of %s (default: cnn alone, the "
                        "sequence of every earlier sample)" % ",".join(FAMILIES))
    s.add_argument("--one-style", action="store_true",
                   help="every CNN in one stage style throughout (all ResNeXt, all DenseNet, ...), "
                        "as hand-designed networks are")
    s.add_argument("--heavy-head", action="store_true",
                   help="CNNs with a VGG / AlexNet-style classifier: the last map flattened whole or pooled, "
                        "one or two hidden layers of 1024 to 4096 (up to %.0f M weights)" % (HEAVY_HEAD_MAX / 1e6))
    s.add_argument("--deep", action="store_true",
                   help="CNN stages as deep as hand-designed networks' (%s blocks per stage, log-uniform; "
                        "default 1 to 4)" % ", ".join("%d-%d" % d for d in DEEP_DEPTHS))
    s.add_argument("--split-ops", action="store_true",
                   help="hybrids whose convolution stages may also be mixconv (MixNet) or csp (CSPNet), with "
                        "TF-style explicit padding and timm's unbind of q, k, v drawn per network: the "
                        "operators Split, Pad and Squeeze (needs --families hybrid)")
    s.add_argument("--slice-ops", action="store_true",
                   help="CNNs whose stages may also be ghost (GhostNet) or shuffle (ShuffleNetV2): the "
                        "operator Slice and channel shuffles (the cnn family: without --families, or with it)")
    s.add_argument("--styles", default="",
                   help="CNN stage styles to draw from, comma-separated, of %s (default: all of them, and "
                        "%s with --slice-ops)" % (",".join(STYLES), ",".join(SLICE_STYLES)))
    s.add_argument("--se-ops", action="store_true",
                   help="mobilenet stages draw a 3x3 or 5x5 depthwise kernel and a squeeze-excitation or none "
                        "(MobileNetV3, EfficientNet: the operators Sigmoid or HardSigmoid and a broadcast Mul)")
    s.add_argument("--narrow", action="store_true",
                   help="CNNs thinned as width multipliers thin LCNet, MobileNetV3-Small or ShuffleNetV2: a stem "
                        "of %s channels, every stage's width times one of %s (at least 8)"
                        % ("/".join(map(str, NARROW_STEMS)), "/".join(map(str, NARROW_FACTORS))))
    s.add_argument("--rep-ops", action="store_true",
                   help="CNNs whose stages may also be mobileone (MobileOne's depthwise and pointwise blocks, "
                        "%s conv-BN branches each) or repvgg (RepVGG's 3x3 blocks) in their training form: "
                        "parallel conv-BN branches, a 1x1 one and a BN-only skip, summed, as MobileOne, RepVGG, "
                        "RepGhostNet and FastViT train before they are reparameterised"
                        % "/".join(map(str, REP_BRANCHES)))
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
        if a.min_gflops and a.max_gflops and a.min_gflops > a.max_gflops:
            ap.error("--min-gflops %g is above --max-gflops %g: no spec would be kept" % (a.min_gflops, a.max_gflops))
        inputs = tuple(int(x) for x in a.inputs.split(",")) if a.inputs else None
        fams = tuple(f for f in a.families.split(",") if f)
        bad = [f for f in fams if f not in FAMILIES]
        if bad:
            ap.error("--families: unknown family %s (choose from %s)" % (",".join(bad), ",".join(FAMILIES)))
        if a.split_ops and "hybrid" not in fams:
            ap.error("--split-ops draws hybrids: give --families hybrid (alone or with others)")
        if (a.slice_ops or a.styles or a.se_ops or a.narrow or a.rep_ops) and fams and "cnn" not in fams:
            ap.error("--slice-ops, --styles, --se-ops, --narrow and --rep-ops draw CNN stages: leave --families "
                     "out, or include cnn")
        styles = tuple(x for x in a.styles.split(",") if x)
        known = STYLES + SLICE_STYLES + REP_STYLES + NAMED_STYLES
        bad = [x for x in styles if x not in known]
        if bad:
            ap.error("--styles: unknown style %s (choose from %s)" % (",".join(bad), ",".join(known)))
        if a.se_ops and styles and "mobilenet" not in styles:
            ap.error("--se-ops changes mobilenet stages: include mobilenet in --styles")
        specs = sample(a.n, a.seed, inputs=inputs, prefix=a.prefix, families=fams or None,
                       one_style=a.one_style, deep=a.deep, heavy=a.heavy_head, split_ops=a.split_ops,
                       slice_ops=a.slice_ops, styles=styles or None, se_ops=a.se_ops, narrow=a.narrow,
                       rep_ops=a.rep_ops)
        if a.max_gflops or a.min_gflops:
            hi = a.max_gflops * 1e9 if a.max_gflops else float("inf")
            specs = [sp for sp in specs if a.min_gflops * 1e9 <= flops(sp, 1) <= hi]
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
