#!/usr/bin/env python3
"""The design-space generator and the measurement harness.

    test_space.py SEERCONVERT WORKDIR

- the sampler is deterministic (same seed, same specs; another seed, other specs) and any
  prefix is diverse (the first 10 specs use every stage style and activation); --one-style gives
  networks of one style each, every style among the first 10; --deep gives stage depths inside
  space.DEEP_DEPTHS, past the default's 4 in every stage, and leaves the default sequence as it was;
  --heavy-head gives VGG-style classifiers (one or two hidden layers, up to space.HEAVY_HEAD_MAX
  weights, flattened and pooled) that build, export, convert and count as the others do;
- a spec of every style (all four stages in it) builds in PyTorch and runs a forward pass,
  exports through torch.onnx and directly, and converts (seerconvert);
- seerconvert's FLOPs (libseeronnx) equal the builder's own count exactly, for 32 sampled specs at
  batch 1 and 8, and PyTorch's parameter count equals Seer's;
- the widened families (convnext, vit, deit, mixer): a sample draws every family early, each
  builds, runs, exports both ways and converts; FLOPs and parameters of the direct ONNX equal the
  builder's and PyTorch's, and for the token families torch.onnx's graph has the same FLOPs and
  operator count as the direct one (no BatchNormalization to fold there); torch's own
  nn.TransformerEncoderLayer and a class token expanded to the batch convert too;
- hybrids with --split-ops (mixconv and csp stages, TF-style Pad, timm's unbind) build, export both
  ways and convert with Split, Pad and Squeeze in Seer's graph, FLOPs and parameters equal; the
  default hybrid sequence still draws specs_y.jsonl; CNNs with --slice-ops (ghost and shuffle
  stages) do the same with Slice (and a shuffle's Reshape, Transpose) in Seer's graph, and the
  default CNN sequence stays as it was; --styles mobilenet --se-ops draws mobilenet stages alone,
  with 3x3 and 5x5 depthwise kernels and squeeze-excitation (both ratios), and a network of each
  gate (Hardsigmoid, Sigmoid) builds, exports both ways and converts with GlobalAveragePool, the
  gate and Mul in Seer's graph, FLOPs and parameters equal, a global pool per SE block;
- the PyTorch forward pass frees each intermediate after its last reader (space.TORCH_BUILDER);
- benchmarks/pair_gap.py counts a dataset's operator pairs as a graph-by-graph count does, and the
  widest sum of hand-made graphs and of a dataset (every family dropped: none); --pairs parses A>B
  and fires on an edge in that direction only;
- ref_check.py reads real_networks.py's passes as files of their own (a pass per file);
  real_networks.py's --predictor and --space default to --device's files;
- measure.py's lines record OpenBLAS's kernel set (blas_core), a resume onto lines of another refuses and
  make_dataset.py refuses to mix two; space.blas_warning names the kernels to set on a pre-AVX fallback;
- benchmarks/transfer.py's leave-one-family-out holds out every network with a stage of the
  family (the hybrids of specs_y / specs_z with it), by make_dataset.py's family names;
- under a hypervisor, measure.py appends to a file of this processor measured at another clock
  (another host of the same model) with a warning naming both clocks, and not to one of this clock;
- the harness measures on the CPU, appends JSON lines with every field (the builder version
  among them), resumes without measuring again, and stops at the time budget (drift_now.py
  measures first-pass lines again into a file of its own and divides now by then); make_dataset turns
  it into a PerfGraph file (from specs files or a folder of them, refusing an id two files share), leaving older builders' inference times out with --infer-builder;
  builder_calibrate.py finds a simulated builder effect under a simulated drift and moves the
  shipped CPU predictor's inference, and only that, by the factor its rule gives;
- benchmarks/space_gap.py scores measurements 1.25x a predictor's values at -20.0% in every cell (+60.0% on
  the times with --ref-normalize 1 where the file's median reference is half theirs; -20.0% again with
  --after N, the lines after the first N on the first N lines' reference), reading each configuration's
  first-pass line alone, and refuses an --after past the file's end;
- benchmarks/pick_timm.py's export in a child process under --max-export-gb: an export that touches
  1 GiB under a 0.25 GiB limit is one error row and leaves no file; under 4 GiB it writes its file;
- device_writeback.py turns a lent GPU session's files into the tracked dataset's (new lines
  tagged with the lease, specs.jsonl every architecture measured, of every spec file read) and
  refuses, changing nothing, a run that did not resume the tracked files;
- benchmarks/real_networks.export_all (the real networks' ONNX, which real_ablation.py,
  signed_errors.py, new_cpu.py and new_gpu.py export when missing), one at a time and in two
  worker processes: each missing network written, one already there left alone, a failure
  returned with its error and no file, a second call with nothing missing exporting nothing.
Needs python3-torch, python3-onnx, python3-h5py, and the build's libseeronnx (SEER_LIB_DIR).
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts", "space"))
sys.path.insert(0, os.path.join(ROOT, "python"))
import space  # noqa: E402
import seer  # noqa: E402

fails = 0


def check(c, msg):
    global fails
    if not c:
        fails += 1
        print("FAIL:", msg, file=sys.stderr)


def pair_counts(h5):
    """benchmarks/pair_gap.py's operator pairs of a PerfGraph file against a graph-by-graph count:
    every edge counted once, as (its source's operator, its destination's)."""
    import h5py
    import numpy as np
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import pair_gap
    names, op_n, pairs = pair_gap.train_pairs(h5)
    want = np.zeros_like(pairs)
    with h5py.File(h5, "r") as f:
        op, ei = f["node/op"][:], f["edge/index"][:]
        npt, ept = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
    for g in range(len(npt) - 1):
        for s, d in ei[ept[g]:ept[g + 1]]:
            want[op[npt[g] + s], op[npt[g] + d]] += 1
    check(np.array_equal(pairs, want) and pairs.sum() == len(ei) and op_n.sum() == len(op),
          "pair_gap.train_pairs: %d edges counted, %d in the file; counts %s the graph-by-graph ones" % (
              pairs.sum(), len(ei), "equal" if np.array_equal(pairs, want) else "differ from"))
    conv, bn = names.index("Conv"), names.index("BatchNormalization")
    check(pairs[conv, bn] > 0, "pair_gap.train_pairs: no Conv -> BatchNormalization edge in a CNN dataset")
    # the widest sum: a sum written as a chain of Adds is one sum while each inner Add has no other
    # reader; a residual chain (each sum read again) adds two at a time
    A, X = 1, 0
    cases = [([X, X, A], [(0, 2), (1, 2)], 2),                          # a + b
             ([X, X, A, X, A], [(0, 2), (1, 2), (2, 4), (3, 4)], 3),    # (a + b) + c
             ([X, X, A, X, A, X], [(0, 2), (1, 2), (2, 4), (3, 4), (2, 5)], 2),  # a + b read twice
             ([X, X, A, X, X, A, A], [(0, 2), (1, 2), (3, 5), (4, 5), (2, 6), (5, 6)], 4),
             ([X, X], [(0, 1)], 0)]
    for ops, edges, want in cases:
        got = pair_gap.widest_sum(ops, edges, {A})
        check(got == want, "pair_gap.widest_sum(%s, %s) = %d, want %d" % (ops, edges, got, want))
    # --pairs: a warning named in advance fires on a graph with one of its edges, in that direction only
    want = pair_gap.parse_pairs("Relu>BatchNormalization, BatchNormalization>BatchNormalization")
    check(want == {("Relu", "BatchNormalization"), ("BatchNormalization", "BatchNormalization")},
          "pair_gap.parse_pairs: %s" % want)
    for bad in ("Relu", "Relu>", ">Add", ""):
        try:
            pair_gap.parse_pairs(bad)
            check(False, "pair_gap.parse_pairs(%r) accepted" % bad)
        except ValueError:
            pass
    ops = ["Conv", "Relu", "BatchNormalization", "Add"]
    check(pair_gap.has_pair(ops, [(0, 1), (1, 2), (2, 3)], want), "pair_gap.has_pair: Relu -> BatchNormalization missed")
    check(not pair_gap.has_pair(ops, [(0, 2), (2, 1), (1, 3)], want),
          "pair_gap.has_pair: fired on Conv -> BatchNormalization -> Relu")
    # --route: the structures a range report names (operators, watched pairs), nothing else
    rng = {"out_of_range": [{"kind": "op", "name": "MatMul"}, {"kind": "op_pair", "name": "Relu>BatchNormalization"},
                            {"kind": "node", "name": "log_flops"}, {"kind": "metric", "name": "x_ms"}]}
    check(seer.structural_gap(rng) == {("op", "MatMul"), ("op_pair", "Relu>BatchNormalization")},
          "seer.structural_gap: %s" % seer.structural_gap(rng))
    w, kept = pair_gap.train_widest(h5, [])
    fams = pair_gap.train_widest(h5, ["space/"])
    check(w >= 2 and kept == len(npt) - 1 and fams == (0, 0),
          "pair_gap.train_widest: widest %d over %d graphs (file: %d), %s with every space/ family dropped" % (
              w, kept, len(npt) - 1, fams))


def held_out_bookkeeping():
    """benchmarks/real_networks.py's groups of real networks: each ADDEDn either scored (a group of
    BATCHES_OF_NETS) or held out for the candidate it judges, never both; the tools that score
    named networks refuse a held-out one."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import real_networks as rn
    added = {k: v for k, v in vars(rn).items() if re.fullmatch(r"ADDED\d*", k)}
    grouped = [nets for _, nets, _ in rn.BATCHES_OF_NETS if nets]
    for k, nets in added.items():
        check(any(nets is g for g in grouped) != (set(nets) <= rn.HELD_OUT),
              "real_networks.py: %s is %s" % (k, "scored and held out" if any(nets is g for g in grouped)
                                              else "neither scored nor held out"))
        check(set(nets) <= set(rn.NETS), "real_networks.py: %s not in NETS" % k)
    check(rn.HELD_OUT <= set(rn.NETS), "real_networks.py: HELD_OUT names a network not in NETS")
    if rn.HELD_OUT:
        net = sorted(rn.HELD_OUT)[0]
        rc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "signed_errors.py"), "--nets", net,
                             "--score", "x=" + os.path.join(ROOT, "predictors", "cpu_xeon26.seer")],
                            capture_output=True, text=True)
        check(rc.returncode != 0 and "held out" in rc.stderr and not rc.stdout,
              "signed_errors.py scored the held-out %s: rc %d, %s" % (net, rc.returncode, rc.stderr[-200:]))
    print("real networks: %d groups scored, %d networks held out" % (len(grouped), len(rn.HELD_OUT)))


def transfer_holdout():
    """benchmarks/transfer.py's leave-one-family-out holds out every network with a stage of the
    family (make_dataset.py's /graph/family of the shipped specs), the hybrids of specs_y / specs_z
    among them, and nothing without one."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    sys.path.insert(0, os.path.join(ROOT, "scripts", "space"))
    import make_dataset
    import transfer
    sd = os.path.join(ROOT, "datasets", "space_cpu")
    specs = [json.loads(l) for f in ("specs_r.jsonl", "specs_w.jsonl", "specs_y.jsonl", "specs_z.jsonl")
             for l in open(os.path.join(sd, f))]
    fams = {make_dataset.family(s) for s in specs}
    for member in transfer.NEW_FAMILIES + transfer.STYLES:
        held = {f for f in fams if transfer.holds(f, [member])}
        check(bool(held), "transfer.py: no family of the shipped specs holds %s" % member)
        check(all(member in f.split("/", 1)[1].split("+") for f in held) and
              all(f in held for f in fams if member in f.split("/", 1)[1].split("+")),
              "transfer.py: holds(.., [%s]) disagrees with the family names" % member)
    hybrid = [f for f in fams if "+" in f and transfer.holds(f, ["convnext"])]
    check(bool(hybrid), "transfer.py: no hybrid with a ConvNeXt stage is held out with convnext")
    print("transfer holdout: %d families, %d ConvNeXt hybrids held out with convnext" % (len(fams), len(hybrid)))


def batch_scaling_stats():
    """benchmarks/batch_scaling.py's ratio statistics on cases with a known answer."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import batch_scaling as bs
    meas = {"a": {1: 10.0, 4: 30.0, 16: 100.0}, "b": {1: 5.0, 4: 20.0, 16: 90.0},
            "c": {1: 2.0, 4: 5.0, 16: 22.0}, "d": {1: 1.0, 4: 3.5, 16: 12.0}}
    exact = {n: {b: (v, 7.0 * v) for b, v in d.items()} for n, d in meas.items()}  # a level off, the ratios right
    s = bs.ratio_stats(exact, 4, 16)
    check(s is not None and s[0] == 4 and abs(s[1]) < 1e-9 and abs(s[2] - 1) < 1e-9 and abs(s[3] - s[4]) < 1e-9,
          "batch_scaling: a predictor with every ratio right scores %s" % (s,))
    tenth = {n: {b: (v, v * (1.1 if b == 16 else 1.0)) for b, v in d.items()} for n, d in meas.items()}
    s = bs.ratio_stats(tenth, 4, 16)
    check(abs(s[1] - 10.0) < 1e-9 and abs(s[2] - 1) < 1e-9, "batch_scaling: ratios 10%% high score %s" % (s,))
    flat = {n: {b: (v, 3.0 * b) for b, v in d.items()} for n, d in meas.items()}  # one ratio for all: no ranking
    s = bs.ratio_stats(flat, 4, 16)
    check(math.isnan(s[2]) and abs(s[4] - 4.0) < 1e-9, "batch_scaling: one predicted ratio for all scores %s" % (s,))
    check(bs.ratio_stats({"a": exact["a"]}, 4, 16) is None, "batch_scaling: one network gives a statistic")
    check(abs(bs.spearman([1, 2, 3, 4], [10, 30, 20, 40]) - 0.8) < 1e-9 and
          abs(bs.spearman([1, 2, 2, 3], [1, 2, 2, 3]) - 1) < 1e-9, "batch_scaling: spearman")
    check(abs(bs.quantile([1, 2, 3, 4, 5], 0.95) - 4.8) < 1e-9, "batch_scaling: quantile")
    print("batch scaling: ratio statistics checked")


def real_passes(work):
    """real_networks.truth and disagree on passes with a known answer: one pass its value, two their
    geometric mean, three the median; a configuration only a later pass has is not counted."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import real_networks as rn
    d = os.path.join(work, "passes")
    os.makedirs(d, exist_ok=True)

    def line(name, b, t, i=10.0, mb=100.0):
        return json.dumps({"name": name, "batch": b, "train_time_ms": t, "infer_time_ms": i,
                           "train_mem_mb": mb, "infer_mem_mb": mb})
    files = [os.path.join(d, "x.jsonl"), os.path.join(d, "x_pass2.jsonl"), os.path.join(d, "x_pass3.jsonl")]
    for f, lines in zip(files, ([line("a", 1, 100), line("b", 1, 100), line("c", 4, 50), line("d", 1, 10)],
                                [line("a", 1, 400), line("b", 1, 110), line("c", 4, 50, i=20.0), line("e", 1, 5)],
                                [line("a", 1, 120), line("c", 4, 50, i=11.0)])):
        with open(f, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    check(rn.pass_files(files[0], files[1]) == files, "pass_files: the third pass not found beside the second")
    check(rn.disagree(files[:2], 0.15) == {("a", 1), ("c", 4)}, "disagree: %s" % rn.disagree(files[:2], 0.15))
    t = rn.truth(files)
    check(set(t) == {("a", 1), ("b", 1), ("c", 4), ("d", 1)}, "truth: configurations %s" % sorted(t))
    check(abs(t[("a", 1)]["train_time_ms"] - 120) < 1e-9 and abs(t[("c", 4)]["infer_time_ms"] - 11) < 1e-9,
          "truth: not the median of three: %s %s" % (t[("a", 1)], t[("c", 4)]))
    check(abs(t[("b", 1)]["train_time_ms"] - (100 * 110) ** 0.5) < 1e-9 and abs(t[("d", 1)]["train_time_ms"] - 10) < 1e-9,
          "truth: not the geometric mean of two / the one pass: %s %s" % (t[("b", 1)], t[("d", 1)]))
    with open(os.path.join(d, "gpu.jsonl"), "w") as fh:
        fh.write(json.dumps(dict(json.loads(line("a", 1, 1)), device_name="NVIDIA H200")) + "\n")
    gpu = rn.truth([os.path.join(d, "gpu.jsonl"), files[1]])
    check(abs(gpu[("a", 1)]["train_time_ms"] - 1) < 1e-9, "truth: a CPU pass averaged into a GPU's: %s" % gpu[("a", 1)])
    half = rn.truth(files[:1], lambda r, m: 0.5 if m.endswith("_ms") else 1.0)
    check(abs(half[("a", 1)]["train_time_ms"] - 50) < 1e-9 and abs(half[("a", 1)]["train_mem_mb"] - 100) < 1e-9,
          "truth: scale not applied: %s" % half[("a", 1)])
    import real_ablation
    import types
    for n in "abcd":
        open(os.path.join(d, n + ".onnx"), "w").close()
    args = types.SimpleNamespace(real=files[0], real2=files[1], real3=None, include_held_out=False, judge="",
                                 ref_normalize=0, onnx=d, batch_set={4})
    got = real_ablation.real_truth(args)
    check(set(got) == {("c", 4)} and abs(got[("c", 4)]["infer_ms"] - 11) < 1e-9,
          "real_ablation --batches 4: %s" % got)
    args.batch_set = set()
    check(len(real_ablation.real_truth(args)) == 4, "real_ablation without --batches: not every batch")
    # --cpu-id: one processor's lines of every pass; another's (same machine name) neither scored nor averaged in
    cpu = [os.path.join(d, "cpu.jsonl"), os.path.join(d, "cpu_pass2.jsonl")]
    for f, lines in zip(cpu, ([(line("a", 1, 100), "X 1/1"), (line("b", 1, 100), "X 1/1"), (line("c", 4, 50), "Y 2/2")],
                              [(line("a", 1, 400), "X 1/1"), (line("b", 1, 900), "Y 2/2")])):
        with open(f, "w") as fh:
            fh.write("".join(json.dumps(dict(json.loads(s), cpu_id=c)) + "\n" for s, c in lines))
    args = types.SimpleNamespace(real=cpu[0], real2=cpu[1], real3=None, include_held_out=False, judge="",
                                 ref_normalize=0, onnx=d, batch_set=set(), cpu_id="X 1/1")
    got = real_ablation.real_truth(args)
    check(set(got) == {("a", 1), ("b", 1)} and abs(got[("a", 1)]["train_ms"] - 200) < 1e-9
          and abs(got[("b", 1)]["train_ms"] - 100) < 1e-9, "real_ablation --cpu-id: %s" % got)
    args.cpu_id = ""
    got = real_ablation.real_truth(args)
    check(len(got) == 3 and abs(got[("b", 1)]["train_ms"] - 100) < 1e-9,
          "real_ablation without --cpu-id: not every line, or b's pass of another processor averaged in: %s" % got)
    # the deep nets' sentence names the ones scored and says how many of the twelve they are
    got = real_ablation.deep_text({"densenet121", "mobilenet_v2", "resnet18"})
    check("2 of them scored here): densenet121, mobilenet_v2" in got and "12 named" in got and "resnet18" not in got,
          "real_ablation.deep_text: %s" % got)
    check(real_ablation.deep_text(set()).endswith("0 of them scored here): none"), "real_ablation.deep_text, none")
    print("real networks: passes combined as documented; real_ablation --batches keeps those batches alone, "
          "--cpu-id that processor's lines, and says how many deep nets it scored")


def device_defaults():
    """real_networks.py's --predictor and --space follow --device where not given (the regression
    baseline fitted on the measured machine's design space, not the EPYC's), and stay as given."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import real_networks as rn
    import types
    want = {"cpu_xeon21": ("predictors/cpu_xeon21.seer", "datasets/space_cpu/measurements_xeon21.jsonl"),
            "h200": ("predictors/h200.seer", "datasets/space_h200/measurements.jsonl")}
    for dev, (pred, space_file) in want.items():
        a = types.SimpleNamespace(device=dev, predictor=None, space=None)
        rn.device_defaults(a)
        check((a.predictor, a.space) == (os.path.join(ROOT, pred), os.path.join(ROOT, space_file)),
              "real_networks.device_defaults(%s): %s, %s" % (dev, a.predictor, a.space))
    a = types.SimpleNamespace(device="cpu_xeon21", predictor="p.seer", space="s.jsonl")
    rn.device_defaults(a)
    check((a.predictor, a.space) == ("p.seer", "s.jsonl"), "real_networks.device_defaults replaced given paths")


def predict_wrong_device(build):
    """real_networks.predict with a device the file does not predict: one line naming the metrics it
    lacks and the fix, not a KeyError (real_ablation.py --score and new_cpu.py print it and exit)."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import real_networks as rn
    import types
    onnx = os.path.join(ROOT, "tests", "data", "onnx", "resnet18.onnx")
    a = types.SimpleNamespace(build=build, predictor=os.path.join(ROOT, "predictors", "cpu_xeon26.seer"))
    got = rn.predict(types.SimpleNamespace(device="cpu_epyc", **vars(a)), onnx, [1])
    check(isinstance(got, str) and "predicts no cpu_epyc_train_ms" in got and "--device" in got,
          "predict, wrong device: %r" % (got,))
    ok = rn.predict(types.SimpleNamespace(device="cpu_xeon26", **vars(a)), onnx, [1])
    check(isinstance(ok, dict) and ok[1][1]["train_ms"] > 0, "predict, right device: %r" % (ok,))
    print("real networks: a file without the device's metrics is one error line")


def space_gap_known(build, work):
    """benchmarks/space_gap.py on a case with a known answer: every first-pass measurement 1.25x
    the shipped predictor's value scores -20.0% in every cell; a second pass's lines are not read."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import real_networks as rn
    import types
    pred_file = os.path.join(ROOT, "predictors", "cpu_xeon26.seer")
    specs = space.sample(2, 23, inputs=(64,), prefix="e", styles=("mobilenet",), se_ops=True)
    sp, ms = os.path.join(work, "gap_specs.jsonl"), os.path.join(work, "gap_meas.jsonl")
    lines = []
    for s in specs:
        p = os.path.join(work, s["id"] + "_gap.onnx")
        space.export_direct(s, p)
        pred = rn.predict(types.SimpleNamespace(build=build, predictor=pred_file, device="cpu_xeon26"), p, [1, 4])
        check(not isinstance(pred, str), "space_gap test: seerpredict: %s" % (pred,))
        for b in (1, 4):
            v = pred[b][1]
            lines.append({"id": s["id"], "batch": b, "ref_ms": 3.0, "train_time_ms": 1.25 * v["train_ms"],
                          "infer_time_ms": 1.25 * v["infer_ms"], "train_mem_mb": 1.25 * v["train_mb"]})
    lines += [dict(r, train_time_ms=9 * r["train_time_ms"]) for r in lines]  # a second pass: ignored
    # lines of an architecture of no spec file, timed when the reference ran twice as fast: the file's
    # median reference 1.5 ms, so --ref-normalize 1 puts the measured times at 0.5x, +60% predicted
    lines += [{"id": "x%06d" % k, "batch": 1, "ref_ms": 1.5, "train_time_ms": 1.0} for k in range(20)]
    with open(sp, "w") as f:
        f.writelines(json.dumps(s) + "\n" for s in specs)
    with open(ms, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in lines)
    out = os.path.join(work, "gap.md")
    # --after 2: the second architecture alone (its lines are the file's third and fourth), on the scale
    # of the first two lines' reference (3.0 ms, its own): -20.0 again, where the whole file's gives +60.0
    for extra, want, what in (([], ["2"] + ["-20.0 / 20.0"] * 6, "as measured"),
                              (["--ref-normalize", "1"], ["2"] + ["+60.0 / 60.0"] * 4 + ["-20.0 / 20.0"] * 2,
                               "--ref-normalize 1"),
                              (["--ref-normalize", "1", "--after", "2"], ["1"] + ["-20.0 / 20.0"] * 6,
                               "--after 2 --ref-normalize 1")):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "space_gap.py"), "--predictor", pred_file,
                            "--device", "cpu_xeon26", "--specs", sp, "--measurements", ms, "--build", build, "--out", out]
                           + extra, capture_output=True, text=True)
        row = [x for x in open(out).read().splitlines() if x.startswith("| all |")] if r.returncode == 0 else []
        cells = row[0].strip("| ").split(" | ")[1:] if row else []
        check(cells == want, "space_gap (%s): measured 1.25x predicted scores %s, want %s (rc %d %s)"
              % (what, cells, want, r.returncode, r.stderr[-300:]))
        os.remove(out)
    r = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "space_gap.py"), "--predictor", pred_file,
                        "--device", "cpu_xeon26", "--specs", sp, "--measurements", ms, "--build", build, "--after",
                        str(len(lines))], capture_output=True, text=True)
    check(r.returncode != 0 and "--after %d" % len(lines) in r.stderr and "has %d lines" % len(lines) in r.stderr,
          "space_gap --after past the file's end: want one error line, got rc %d %r" % (r.returncode, r.stderr[-300:]))
    print("space_gap: a known 1.25x gap scores -20.0%, +60.0% on times with the reference at twice the file's, "
          "-20.0% again after the first lines on their reference")


def pick_timm_limit(work):
    """benchmarks/pick_timm.export_limited: an export that allocates more than --max-export-gb fails as
    one row of the table, leaves no file and kills nothing else; one within it writes its file."""
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import pick_timm
    import real_networks as rn
    saved = rn.export_onnx

    def greedy(key, path):  # stands in for torch.onnx: 1 GiB touched, then the file
        block = bytearray(1 << 30)
        block[::4096] = b"x" * len(block[::4096])
        open(path, "w").write("onnx")
        return None
    rn.export_onnx = greedy
    try:
        path = os.path.join(work, "limit.onnx")
        err = pick_timm.export_limited("timm-greedy", path, 0.25)
        check(err and "needs more than --max-export-gb 0.25" in err and not os.path.exists(path),
              "pick_timm.export_limited at 0.25 GiB over a 1 GiB export: %r, file left: %s" % (err, os.path.exists(path)))
        err = pick_timm.export_limited("timm-greedy", path, 4)
        check(err is None and os.path.exists(path), "pick_timm.export_limited at 4 GiB: %r" % (err,))
    finally:
        rn.export_onnx = saved
    print("pick_timm: an export over its memory limit is a row of the table, one within it writes its file")


def fake_export(name, path):
    """Stands in for real_networks.export_onnx in export_all's test: the file, or an error for "bad"."""
    if name == "bad":
        return "RuntimeError: no such network"
    open(path, "w").write("onnx " + name)
    return None


def refuse_export(name, path):
    """Fails every export: a call of export_all with nothing to export never reaches it."""
    return "RuntimeError: exported again"


def export_all_pool(work):
    """benchmarks/real_networks.export_all, one at a time and in two worker processes: a network
    already exported is left as it is, each missing one is written, a failure is returned with its
    error and leaves no file."""
    import real_networks as rn
    for jobs in (1, 2):
        folder = os.path.join(work, "export_all_%d" % jobs)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        open(os.path.join(folder, "old.onnx"), "w").write("kept")
        failed = rn.export_all(["old", "a", "bad", "b"], folder, jobs, "test_space", export=fake_export)
        got = {n: open(os.path.join(folder, n + ".onnx")).read() for n in ("old", "a", "b")
               if os.path.exists(os.path.join(folder, n + ".onnx"))}
        check(failed == {"bad": "RuntimeError: no such network"}, "export_all, %d at a time: failed %r" % (jobs, failed))
        check(got == {"old": "kept", "a": "onnx a", "b": "onnx b"} and not os.path.exists(os.path.join(folder, "bad.onnx")),
              "export_all, %d at a time: files %r" % (jobs, got))
        check(rn.export_all(["old", "a", "b"], folder, jobs, "test_space", export=refuse_export) == {},
              "export_all, %d at a time: a second call exported again or failed" % jobs)
    print("export_all: missing networks exported (one at a time and two), present ones kept, a failure returned")


def device_writeback(work):
    """scripts/measure/device_writeback.py: a lent session's files become the tracked dataset's, new
    lines tagged with the lease, specs.jsonl every architecture measured (from the CNN sample and
    the other families' file), the real networks' file replaced; a run that did not resume the
    tracked files, or an architecture in no spec file, is refused with nothing written."""
    data, out = os.path.join(work, "wb_data"), os.path.join(work, "wb_out")
    for d in (data, out):
        os.makedirs(d, exist_ok=True)

    def put(path, rows):
        with open(path, "w") as f:
            f.writelines(json.dumps(r, sort_keys=True) + "\n" for r in rows)

    def get(path):
        with open(path) as f:
            return [json.loads(x) for x in f]
    s0, s1, w0 = ({"id": "s000000", "width": 8}, {"id": "s000001", "width": 16}, {"id": "w000000", "width": 24})
    old = [{"id": "s000000", "batch": 1, "lease": "run 1"}]
    put(os.path.join(data, "specs.jsonl"), [s0])
    put(os.path.join(data, "measurements.jsonl"), old)
    put(os.path.join(data, "real_networks_h200.jsonl"), [{"name": "alexnet", "batch": 1}])
    put(os.path.join(out, "specs.jsonl"), [s0, s1])
    wfile = os.path.join(work, "wb_specs_w.jsonl")
    put(wfile, [w0])
    new = old + [{"id": "w000000", "batch": 1}, {"id": "s000001", "batch": 1}]
    put(os.path.join(out, "measurements.jsonl"), new)
    put(os.path.join(out, "real_networks_h200.jsonl"), [{"name": "alexnet", "batch": 1}, {"name": "vgg11", "batch": 1}])
    tool = [sys.executable, os.path.join(ROOT, "scripts", "measure", "device_writeback.py"), out,
            "--data", data, "--spec-files", wfile, "--lease", "run 2"]
    r = subprocess.run(tool, capture_output=True, text=True)
    check(r.returncode == 0, "device_writeback.py failed: %s" % r.stderr.strip())
    got = get(os.path.join(data, "measurements.jsonl"))
    check([x.get("lease") for x in got] == ["run 1", "run 2", "run 2"], "writeback leases: %s" % got)
    check(get(os.path.join(data, "specs.jsonl")) == [s0, w0, s1], "writeback specs: %s" % get(os.path.join(data, "specs.jsonl")))
    check(len(get(os.path.join(data, "real_networks_h200.jsonl"))) == 2, "writeback: real networks not replaced")
    # the same files again: their new lines now differ from the tracked ones (tagged): refused, unchanged
    before = open(os.path.join(data, "measurements.jsonl")).read()
    r = subprocess.run(tool, capture_output=True, text=True)
    check(r.returncode != 0 and "did not resume" in r.stderr, "writeback twice not refused: %s" % r.stderr.strip())
    check(open(os.path.join(data, "measurements.jsonl")).read() == before, "a refused writeback changed the file")
    # an architecture in no spec file: refused, nothing written
    put(os.path.join(out, "measurements.jsonl"), get(os.path.join(data, "measurements.jsonl")) + [{"id": "x000009", "batch": 1}])
    os.remove(os.path.join(out, "real_networks_h200.jsonl"))
    r = subprocess.run(tool, capture_output=True, text=True)
    check(r.returncode != 0 and "in no spec file" in r.stderr, "writeback of an unknown architecture: %s" % r.stderr.strip())
    check(open(os.path.join(data, "measurements.jsonl")).read() == before, "a refused writeback changed the file")
    # a line cut off (a run stopped mid-write): named with its line number, nothing written
    with open(os.path.join(out, "measurements.jsonl"), "w") as f:
        f.write(before + '{"id": "s000001", "ba\n')
    r = subprocess.run(tool, capture_output=True, text=True)
    check(r.returncode != 0 and "measurements.jsonl:4: not a JSON line" in r.stderr,
          "writeback of a cut-off line: %s" % r.stderr.strip())
    check(open(os.path.join(data, "measurements.jsonl")).read() == before, "a refused writeback changed the file")
    print("device_writeback: tagged, specs joined, refusals leave the files as they were")


def main():
    seerconvert, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    device_writeback(work)
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    export_all_pool(work)
    a, b, c = space.sample(40, 3), space.sample(40, 3), space.sample(40, 4)
    check(a == b, "the sampler is not deterministic")
    check(a != c, "another seed gives the same specs")
    styles = {st["style"] for s in a[:10] for st in s["stages"]}
    check(styles == set(space.STYLES), "first 10 specs use styles %s" % styles)
    check({s["act"] for s in a[:10]} == set(space.ACTS), "first 10 specs miss an activation")
    one = space.sample(40, 3, inputs=(96, 224), one_style=True)
    check(one == space.sample(40, 3, inputs=(96, 224), one_style=True), "--one-style sampler not deterministic")
    check(all(len({st["style"] for st in s["stages"]}) == 1 for s in one), "--one-style gave a network of two styles")
    check({s["stages"][0]["style"] for s in one[:10]} == set(space.STYLES),
          "first 10 --one-style specs miss a style: %s" % sorted({s["stages"][0]["style"] for s in one[:10]}))
    deep = space.sample(40, 3, inputs=(64, 96), deep=True)
    check(deep == space.sample(40, 3, inputs=(64, 96), deep=True), "--deep sampler not deterministic")
    check(space.sample(40, 3, deep=False) == a, "deep=False changed the default sequence")
    dd = [[st["depth"] for st in sp["stages"]] for sp in deep]
    check(all(lo <= d[i] <= hi for d in dd for i, (lo, hi) in enumerate(space.DEEP_DEPTHS)),
          "--deep: a stage depth outside %s" % (space.DEEP_DEPTHS,))
    check(all(max(d[i] for d in dd) > 4 for i in range(4)), "--deep: a stage never past 4 blocks: %s"
          % [max(d[i] for d in dd) for i in range(4)])
    check({st["style"] for sp in deep[:10] for st in sp["stages"]} == set(space.STYLES), "--deep: first 10 miss a style")

    import torch

    def cnn_round_trip(s, what):
        """A CNN spec builds in PyTorch, runs, exports both ways, converts, and its FLOPs and
        parameters as seerconvert counts them equal the builder's and PyTorch's."""
        m = space.torch_model(s).eval()
        with torch.no_grad():
            y = m(torch.zeros([2] + s["input"]))
        check(tuple(y.shape) == (2, 1000), "%s: output %s" % (what, tuple(y.shape)))
        for how, fn in (("direct", space.export_direct), ("torch", space.export_torch)):
            p = os.path.join(work, "%s_%s.onnx" % (s["id"], how))
            fn(s, p)
            r = subprocess.run([seerconvert, p, "--batch", "4"], capture_output=True, text=True)
            check(r.returncode == 0, "%s (%s export) does not convert: %s" % (what, how, r.stderr.strip()))
        info = seer.onnx_info(os.path.join(work, "%s_direct.onnx" % s["id"]), batch=4)
        check(info["flops"] == space.flops(s, 4), "%s: seerconvert %d FLOPs, builder %d" % (what, info["flops"], space.flops(s, 4)))
        n_params = sum(p.numel() for n, p in m.named_parameters())
        n_bn = sum(mod.running_mean.numel() for mod in m.modules() if isinstance(mod, torch.nn.BatchNorm2d))
        check(info["params"] == n_params, "%s: Seer counts %d parameters, PyTorch %d (+%d BN statistics)"
              % (what, info["params"], n_params, n_bn))
        print("%-13s builds, exports (torch.onnx and direct), converts; %d operators, %.3g GFLOPs at batch 4"
              % (what, info["operators"], info["flops"] / 1e9))

    # builder 3: the activations in place where nothing else reads their input; the same function
    # (outputs and gradients equal version 2's), fewer tensors; GELU has no in-place form
    for s in (dict(deep[0], input=[3, 32, 32]), space.sample(1, 5, inputs=(64,), families=("vit",))[0]):
        torch.manual_seed(0)
        m2 = space.torch_model(s)
        m3 = space.torch_model(s, space.INPLACE_BUILDER)
        m3.load_state_dict(m2.state_dict())
        x = torch.randn([2] + s["input"])
        y2, y3 = m2(x), m3(x.clone())
        y2.square().sum().backward()
        y3.square().sum().backward()
        same = torch.allclose(y2, y3, atol=1e-5) and all(
            torch.allclose(p.grad, q.grad, rtol=1e-4, atol=1e-6) for p, q in zip(m2.parameters(), m3.parameters()))
        n_in = sum(1 for mod in m3.modules() if getattr(mod, "inplace", False))
        gelu = space.family_of(s) != "cnn"  # the token families (ViT here) use GELU
        check(same and (n_in == 0 if gelu else n_in > 0) and not any(getattr(mod, "inplace", False) for mod in m2.modules()),
              "builder 3 on %s: same function %s, %d activations in place" % (s["id"], same, n_in))
    try:
        space.torch_model(a[0], 4)
        check(False, "torch_model accepted builder 4")
    except ValueError:
        pass

    for style in space.STYLES:
        s = dict(a[0])
        s["id"] = "style_" + style
        s["stages"] = [dict(st, style=style, depth=2, groups=2, bottleneck=0.5, growth=16, expand=3)
                       for st in a[0]["stages"]]
        cnn_round_trip(s, style)
    heavy = space.sample(30, 3, inputs=(64, 224), heavy=True)
    check(heavy == space.sample(30, 3, inputs=(64, 224), heavy=True), "--heavy-head sampler not deterministic")
    check(space.sample(40, 3, heavy=False) == a, "heavy=False changed the default sequence")
    hw = [space.head_weights(sp) for sp in heavy]
    check(all(1 <= len(sp["head"]["hidden"]) <= 2 and all(8 <= h <= 4096 for h in sp["head"]["hidden"])
              for sp in heavy), "--heavy-head: hidden widths %s" % [sp["head"]["hidden"] for sp in heavy])
    check(max(hw) <= space.HEAVY_HEAD_MAX and max(hw) > 20e6 and min(hw) < 5e6,
          "--heavy-head: classifier weights %.3g to %.3g, want a spread up to %.3g" % (min(hw), max(hw), space.HEAVY_HEAD_MAX))
    for flat in (True, False):
        sp = next(x for x in heavy if x["head"]["flatten"] == flat and x["input"][1] == 64)
        cnn_round_trip(dict(sp, id="heavy_" + ("flat" if flat else "pooled")), "heavy " + ("flat" if flat else "pooled"))
    fams = space.sample(40, 5, inputs=(64, 96), families=space.FAMILIES[1:])
    check(fams == space.sample(40, 5, inputs=(64, 96), families=space.FAMILIES[1:]), "family sampler not deterministic")
    check({space.family_of(s) for s in fams[:12]} == set(space.FAMILIES[1:]),
          "first 12 specs of a family sample miss a family: %s" % sorted({space.family_of(s) for s in fams[:12]}))
    for fam in space.FAMILIES[1:]:
        s = dict(next(x for x in fams if space.family_of(x) == fam), id="family_" + fam)
        m = space.torch_model(s).eval()
        with torch.no_grad():
            y = m(torch.zeros([2] + s["input"]))
        check(tuple(y.shape) == (2, 1000), "%s: output %s" % (fam, tuple(y.shape)))
        infos = {}
        for how, fn in (("direct", space.export_direct), ("torch", space.export_torch)):
            p = os.path.join(work, "%s_%s.onnx" % (fam, how))
            fn(s, p)
            r = subprocess.run([seerconvert, p, "--batch", "4"], capture_output=True, text=True)
            check(r.returncode == 0, "%s (%s export) does not convert: %s" % (fam, how, r.stderr.strip()))
            if r.returncode == 0:
                infos[how] = seer.onnx_info(p, batch=4)
        if "direct" not in infos:
            continue
        d = infos["direct"]
        check(d["flops"] == space.flops(s, 4), "%s: seerconvert %d FLOPs, builder %d" % (fam, d["flops"], space.flops(s, 4)))
        n_params = sum(p.numel() for p in m.parameters())
        check(d["params"] == n_params, "%s: Seer counts %d parameters, PyTorch %d" % (fam, d["params"], n_params))
        if fam in space.TOKEN_ARCHS and "torch" in infos:
            t = infos["torch"]
            check(t["flops"] == d["flops"] and t["operators"] == d["operators"],
                  "%s: torch.onnx graph %d FLOPs / %d operators, direct %d / %d"
                  % (fam, t["flops"], t["operators"], d["flops"], d["operators"]))
        print("%-10s builds, exports (torch.onnx and direct), converts; %d operators, %.3g GFLOPs at batch 4"
              % (fam, d["operators"], d["flops"] / 1e9))

    # --split-ops: hybrids with the operators real networks use and the others lack (Split, Pad,
    # Squeeze); the default hybrid sequence stays the one specs_y.jsonl was drawn from
    y_ref = space.read_specs(os.path.join(ROOT, "datasets", "space_cpu", "specs_y.jsonl"))[:3]
    check(space.sample(300, 17, inputs=(64, 96, 128, 160, 192, 224), prefix="y", families=("hybrid",))[:3] == y_ref,
          "the hybrid sampler no longer draws specs_y.jsonl's sequence")
    z = space.sample(40, 3, inputs=(64, 96), prefix="z", families=("hybrid",), split_ops=True)
    zst = {st["style"] for s in z for st in s["stages"]}
    check({"mixconv", "csp"} <= zst and {s["tf_pad"] for s in z} == {True, False} and
          {s["qkv"] for s in z} == {"select", "unbind"}, "--split-ops sample: styles %s" % sorted(zst))
    names = seer.onnx_op_names()

    def ops_round_trip(s, need):
        """s builds and runs, exports both ways and converts with every operator of need in Seer's
        graph; the direct export's FLOPs and parameters equal the builder's and PyTorch's."""
        m = space.torch_model(s).eval()
        with torch.no_grad():
            y = m(torch.zeros([2] + s["input"]))
        check(tuple(y.shape) == (2, 1000), "%s: output %s" % (s["id"], tuple(y.shape)))
        for how, fn in (("direct", space.export_direct), ("torch", space.export_torch)):
            p = os.path.join(work, "%s_%s.onnx" % (s["id"], how))
            fn(s, p)
            r = subprocess.run([seerconvert, p, "--batch", "4"], capture_output=True, text=True)
            check(r.returncode == 0, "%s (%s export) does not convert: %s" % (s["id"], how, r.stderr.strip()))
            if r.returncode:
                continue
            ops = {names[i] for i in seer.onnx_graph(p, batch=4)[4]}
            check(need <= ops, "%s (%s export): Seer's graph lacks %s" % (s["id"], how, sorted(need - ops)))
            if how == "direct":
                d = seer.onnx_info(p, batch=4)
                n_params = sum(q.numel() for q in m.parameters())
                check(d["flops"] == space.flops(s, 4) and d["params"] == n_params,
                      "%s: seerconvert %d FLOPs / %d parameters, builder %d / PyTorch %d"
                      % (s["id"], d["flops"], d["params"], space.flops(s, 4), n_params))
        print("%s builds, exports both ways, converts with %s; FLOPs and parameters equal"
              % (s["id"], ", ".join(sorted(need))))
    for want in ("mixconv", "csp"):
        s = dict(next(x for x in z if want in {st["style"] for st in x["stages"]}), id="split_" + want)
        s.update(tf_pad=True, qkv="unbind")
        ops_round_trip(s, {"Split", "Squeeze"} | ({"Pad"} if any(l["op"] == "pad" for l in space.layers(s)) else set()))

    # --slice-ops: CNNs with ghost and shuffle stages (Slice, channel shuffles); the default CNN
    # sequence stays as it was
    check(space.sample(40, 3, slice_ops=False) == a, "slice_ops=False changed the default sequence")
    gs = space.sample(40, 3, inputs=(64, 96), prefix="g", slice_ops=True)
    gst = {st["style"] for s in gs[:12] for st in s["stages"]}
    check(set(space.SLICE_STYLES) <= gst, "--slice-ops: first 12 specs use styles %s" % sorted(gst))
    for want in space.SLICE_STYLES:
        s = dict(next(x for x in gs if want in {st["style"] for st in x["stages"]}), id="slice_" + want)
        ops_round_trip(s, {"Slice"} | ({"Reshape", "Transpose"} if want == "shuffle" else set()))

    # --styles and --se-ops: mobilenet networks with 5x5 depthwise kernels and squeeze-excitation
    # (MobileNetV3's Hardsigmoid gate, EfficientNet's SiLU and Sigmoid); the default CNN sequence
    # stays as it was
    check(space.sample(40, 3, styles=None, se_ops=False) == a, "styles=None, se_ops=False changed the default sequence")
    es = space.sample(40, 23, inputs=(64, 96), prefix="e", styles=("mobilenet",), se_ops=True)
    est = [st for s in es for st in s["stages"]]
    check(es == space.sample(40, 23, inputs=(64, 96), prefix="e", styles=("mobilenet",), se_ops=True),
          "--se-ops sampler not deterministic")
    check({st["style"] for st in est} == {"mobilenet"} and {st["kernel"] for st in est} == {3, 5}
          and any("se" in st for st in est) and any("se" not in st for st in est)
          and {st["se"] for st in est if "se" in st} > {0.25},
          "--styles mobilenet --se-ops: stages %s" % sorted({(st["style"], st["kernel"], st.get("se", 0)) for st in est}))
    for act, gate in (("hardswish", "HardSigmoid"), ("silu", "Sigmoid")):
        s = dict(next(x for x in es if x["act"] == act and any("se" in st for st in x["stages"])), id="se_" + act)
        ops_round_trip(s, {gate, "Mul", "GlobalAveragePool"})
        L = space.layers(s)
        gap = sum(l["op"] == "gap" for l in L)
        check(gap == 1 + sum(st["depth"] for st in s["stages"] if "se" in st) and
              any(l["op"] == "conv" and l["attrs"]["k"] == 5 and l["attrs"]["groups"] > 1 for l in L)
              == any(st["kernel"] == 5 for st in s["stages"]),
              "%s: %d global pools, kernels %s" % (s["id"], gap, [st["kernel"] for st in s["stages"]]))

    # --narrow: CNNs thinned by a width multiplier (LCNet-050, MobileNetV3-Small-050); every style,
    # ResNeXt's groups still dividing its thinner bottleneck; the default CNN sequence unchanged
    check(space.sample(40, 3, narrow=False) == a, "narrow=False changed the default sequence")
    ns = space.sample(60, 24, inputs=(64,), prefix="n", slice_ops=True, se_ops=True, narrow=True)
    check(ns == space.sample(60, 24, inputs=(64,), prefix="n", slice_ops=True, se_ops=True, narrow=True),
          "--narrow sampler not deterministic")
    wide = space.sample(60, 24, inputs=(64,), prefix="n", slice_ops=True, se_ops=True)
    nst = [st for s in ns for st in s["stages"]]
    check({s["stem"]["channels"] for s in ns} == set(space.NARROW_STEMS)
          and min(st["width"] for st in nst) == 8 and all(st["width"] % 8 == 0 for st in nst)
          and max(s["stages"][-1]["width"] for s in ns) < max(s["stages"][-1]["width"] for s in wide)
          and all(space._round8(st["width"] * st["bottleneck"]) % st["groups"] == 0
                  for st in nst if st["style"] == "resnext"),
          "--narrow: stems %s, widths %d to %d" % (sorted({s["stem"]["channels"] for s in ns}),
                                                   min(st["width"] for st in nst), max(st["width"] for st in nst)))
    for want in ("resnext", "shuffle", "mobilenet"):
        s = dict(next(x for x in ns if want in {st["style"] for st in x["stages"]} and x["stem"]["channels"] == 8),
                 id="narrow_" + want)
        ops_round_trip(s, {"Conv"})

    # --rep-ops: mobileone and repvgg stages in their training form (MobileOne, RepVGG, RepGhostNet,
    # FastViT before reparameterisation): per convolution `branches` conv-BN branches, a 1x1 one
    # beside a 3x3, and a BN-only skip where map and width are kept, summed; the default unchanged
    check(space.sample(40, 3, rep_ops=False) == a, "rep_ops=False changed the default sequence")
    rs = space.sample(60, 30, inputs=(64,), prefix="m", rep_ops=True)
    check(rs == space.sample(60, 30, inputs=(64,), prefix="m", rep_ops=True), "--rep-ops sampler not deterministic")
    check(set(space.REP_STYLES) <= {st["style"] for s in rs for st in s["stages"]},
          "--rep-ops drew no %s stage in 60 networks" % "/".join(space.REP_STYLES))
    ro = space.sample(30, 31, inputs=(64,), prefix="m", styles=space.REP_STYLES)
    drawn = {st["branches"] for s in ro for st in s["stages"] if st["style"] == "mobileone"}
    check(drawn == set(space.REP_BRANCHES), "--styles mobileone: branches drawn %s" % sorted(drawn))
    for s in ro:
        L = space.layers(s)
        op_of = {l["name"]: l["op"] for l in L}
        convs = sum(l["op"] == "conv" for l in L)
        skips = sum(l["op"] == "bn" and op_of.get(l["inputs"][0]) != "conv" for l in L)
        want_convs, want_skips, cprev = 1, 0, s["stem"]["channels"]
        for st in s["stages"]:
            d, w = st["depth"], st["width"]
            if st["style"] == "repvgg":  # the first block downsamples: no skip there
                want_convs, want_skips = want_convs + 2 * d, want_skips + d - 1
            else:  # depthwise (k + 1 convolutions, a skip but in the first block), pointwise (k, a skip where the width is kept)
                want_convs += d * (2 * st["branches"] + 1)
                want_skips += (d - 1) + (d - 1) + (cprev == w)
            cprev = w
        check((convs, skips) == (want_convs, want_skips), "%s: %d convolutions and %d BN-only skips, want %d and %d"
              % (s["id"], convs, skips, want_convs, want_skips))
    for want in space.REP_STYLES:
        s = dict(next(x for x in ro if x["stages"][0]["style"] == want and x["stages"][0]["depth"] > 1
                      and x["stages"][0].get("branches", 2) > 1), id="rep_" + want)
        ops_round_trip(s, {"BatchNormalization", "Add", "Conv"})

    # repghost (named in --styles only; --rep-ops never draws it, so specs_m's sequence stays):
    # RepGhostNet's bottleneck, two modules per block, each with one BN-only branch; the first's
    # reads its activation, the second's a BN: the pairs libseer watches (coverage.op_pairs)
    check(all("repghost" not in {st["style"] for st in x["stages"]} for x in rs), "--rep-ops drew repghost")
    rg = space.sample(20, 32, inputs=(64,), prefix="q", styles=("repghost",), rep_ops=True)
    check(all(st["style"] == "repghost" and st["expand"] in (2, 3, 4, 6) for x in rg for st in x["stages"]),
          "--styles repghost: %s" % [st for x in rg for st in x["stages"]][:3])
    for x in rg:
        L = space.layers(x)
        op_of = {l["name"]: l["op"] for l in L}
        fed = [op_of.get(l["inputs"][0]) for l in L if l["op"] == "bn" and op_of.get(l["inputs"][0]) != "conv"]
        blocks = sum(st["depth"] for st in x["stages"])
        check(fed.count("act") == blocks and fed.count("bn") == blocks,
              "%s: BN-only branches read %s, want %d activations and %d BNs" % (x["id"], fed, blocks, blocks))
    ops_round_trip(dict(next(x for x in rg if x["stages"][0]["depth"] > 1), id="rep_repghost"),
                   {"BatchNormalization", "Add", "Conv"})

    # the forward pass frees each intermediate after its last reader (TORCH_BUILDER 2): when layer k
    # runs, no module output whose last reader came before k is alive any more
    import weakref
    for s in [next(x for x in a if want in {st["style"] for st in x["stages"]}) for want in ("densenet", "inception")] + \
            [next(x for x in fams if space.family_of(x) == "vit")]:
        L = space.layers(s)
        last = {}
        for k, l in enumerate(L):
            for i in l["inputs"]:  # a view (flatten, reshape, ...) keeps its base alive: not counted
                last[i] = len(L) if l["op"] in ("flatten", "reshape", "transpose", "select") else k
        m, refs, late = space.torch_model(s).eval(), {}, []
        order = {l["name"]: k for k, l in enumerate(L)}

        def hook(mod, inp, out, name=None):
            k = order[name]
            late.extend(n for n, r in refs.items() if last.get(n, len(L)) < k and r() is not None)
            refs[name] = weakref.ref(out)
        for n, mod in m.mods.items():
            mod.register_forward_hook(lambda mod, i, o, n=n: hook(mod, i, o, n))
        with torch.no_grad():
            m(torch.zeros([2] + s["input"]))
        check(len(refs) > 10 and not late, "%s: %d module outputs alive after their last reader: %s"
              % (s["id"], len(set(late)), sorted(set(late))[:5]))
        if not late:
            print("%s: none of its %d module outputs outlives its last reader" % (s["id"], len(refs)))

    class Enc(torch.nn.Module):  # what torch.onnx writes for torch's own attention and a class token
        def __init__(self):
            super().__init__()
            self.cls = torch.nn.Parameter(torch.zeros(1, 1, 64))
            self.enc = torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, activation="gelu")

        def forward(self, x):
            return self.enc(torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1)).mean(1)
    p = os.path.join(work, "torch_encoder.onnx")
    torch.onnx.export(Enc().eval(), torch.zeros(2, 16, 64), p, input_names=["input"], output_names=["o"],
                      opset_version=17, dynamic_axes={"input": {0: "batch"}, "o": {0: "batch"}})
    r = subprocess.run([seerconvert, p, "--batch", "3"], capture_output=True, text=True)
    check(r.returncode == 0, "nn.TransformerEncoderLayer export does not convert: %s" % r.stderr.strip())
    if r.returncode == 0:
        info = seer.onnx_info(p, batch=3)
        # 17 tokens of 64: qkv 2*17*64*192 + out 2*17*64*64 + attention 2 * 2*17*17*64 + MLP 2 * 2*17*64*128
        mm = 3 * (2 * 17 * 64 * 192 + 2 * 17 * 64 * 64 + 2 * 2 * 17 * 17 * 64 + 2 * 2 * 17 * 64 * 128)
        check(mm < info["flops"] < 1.1 * mm, "torch encoder layer: %d FLOPs, its matrix products alone %d"
              % (info["flops"], mm))
        print("torch.nn.TransformerEncoderLayer + class token converts: %d operators, %d FLOPs at batch 3"
              % (info["operators"], info["flops"]))

    worst = 0
    for s in a[:15] + fams[:15] + deep[:2]:
        p = os.path.join(work, s["id"] + ".onnx")
        space.export_direct(s, p)
        for bs in (1, 8):
            got = seer.onnx_info(p, batch=bs)["flops"]
            if got != space.flops(s, bs):
                worst += 1
                print("FLOPs differ: %s batch %d: seer %d, builder %d" % (s["id"], bs, got, space.flops(s, bs)))
    check(worst == 0, "%d FLOP counts differ" % worst)
    print("FLOPs: seerconvert equals the builder on 32 specs (15 CNN, 15 of the other families, 2 --deep) x 2 batch sizes")

    # the sampler's command line: --min-gflops / --max-gflops keep a slice of the cost range
    sliced = os.path.join(work, "sliced.jsonl")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "space.py"), "sample", "-n", "60",
                    "--seed", "2", "--inputs", "96,224", "--min-gflops", "1", "--max-gflops", "3",
                    "--families", "cnn,vit", "-o", sliced], check=True, capture_output=True)
    gf = [space.flops(json.loads(l), 1) / 1e9 for l in open(sliced)]
    check(0 < len(gf) < 60 and all(1 <= g <= 3 for g in gf),
          "--min-gflops 1 --max-gflops 3 kept %d of 60 specs, GFLOPs %s" % (len(gf), [round(g, 2) for g in gf]))

    specs = os.path.join(work, "specs.jsonl")
    with open(specs, "w") as f:
        for s in sorted(a[:8], key=lambda s: space.flops(s, 1))[:2]:  # the two cheapest
            f.write(json.dumps(s) + "\n")
    out = os.path.join(work, "m.jsonl")
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "measure", "measure.py"), specs, "-o", out,
           "--device", "cpu", "--batches", "1,2", "--repeats", "3", "--warmup", "1"]
    subprocess.run(cmd + ["--limit", "1"], check=True)
    rows = [json.loads(l) for l in open(out)]
    check(len(rows) == 2, "expected 2 measurements, got %d" % len(rows))
    for r in rows:
        for k in ("id", "batch", "flops", "train_time_ms", "infer_time_ms", "train_mem_mb", "train_spread",
                  "device_name", "torch", "precision", "threads", "time", "builder", "parent_mem_mb"):
            check(k in r, "measurement lacks %s: %s" % (k, r))
        check(r.get("train_time_ms", 0) > r.get("infer_time_ms", 1e9), "a training step should take longer than inference")
        check(r.get("ref_ms", 0) > 0, "no reference time: %s" % r)
    subprocess.run(cmd + ["--limit", "1"], check=True)
    check(len(open(out).readlines()) == 2, "the rerun measured again instead of resuming")
    subprocess.run(cmd + ["--time-budget", "0.001"], check=True)
    n = len(open(out).readlines())
    check(n == 3, "with a tiny budget exactly one more configuration is measured, got %d lines" % n)
    # drift_now.py measures first-pass configurations again, elsewhere, and divides now by then
    drift = os.path.join(work, "drift.jsonl")
    if os.path.exists(drift):
        os.remove(drift)
    dn = [sys.executable, os.path.join(ROOT, "scripts", "measure", "drift_now.py"), out, "--groups", "s",
          "--batch", "1", "--min-ms", "0", "--max-ms", "1e9", "--specs", work]
    r = subprocess.run(dn + ["--per-group", "1", "-o", drift], capture_output=True, text=True)
    row = [l for l in r.stdout.splitlines() if l.startswith("| s |")]
    ratios = [float(x) for x in row[0].strip("| ").split("|")[3:]] if row else []
    check(r.returncode == 0 and len(ratios) == 3 and all(0.2 < x < 5 for x in ratios),
          "drift_now.py: rc %d, %r %s" % (r.returncode, row, r.stderr.strip()[-300:]))
    check(len(open(drift).readlines()) == 1 and len(open(out).readlines()) == 3,
          "drift_now.py wrote into the dataset's file, or not one line into its own")
    r = subprocess.run(dn + ["--per-group", "9"], capture_output=True, text=True)
    check(r.returncode != 0 and "fewer than --per-group 9" in r.stderr, "drift_now.py with too few lines: %s" % r.stderr)
    check(all(r.get("builder") == space.TORCH_BUILDER for r in map(json.loads, open(out))),
          "measure.py does not record the builder version %d on every line" % space.TORCH_BUILDER)
    # a second pass measures the first pass's configurations again, tagged, and resumes too
    subprocess.run(cmd + ["--pass", "2", "--limit", "1"], check=True)
    rows = [json.loads(l) for l in open(out)]
    two = [r for r in rows if r.get("pass") == 2]
    check(len(two) == 2 and {(r["id"], r["batch"]) for r in two} == {(r["id"], r["batch"]) for r in rows[:2]},
          "pass 2 measured %s" % [(r["id"], r["batch"]) for r in two])
    subprocess.run(cmd + ["--pass", "2", "--limit", "1"], check=True)
    check(len(open(out).readlines()) == 5, "the second pass did not resume")
    # several specs files: their architectures in turn, so a run stopped early covers all of them alike
    sys.path.insert(0, os.path.join(ROOT, "scripts", "measure"))
    import measure  # noqa: E402
    got = measure.interleave([["a1", "a2", "a3"], ["b1"], []])
    check(got == ["a1", "b1", "a2", "a3"], "interleave: %s" % got)
    # one file, one device: lines from another machine make a resume refuse, and the file stays as it was
    other = os.path.join(work, "m_other.jsonl")
    with open(other, "w") as f:
        f.write(json.dumps(dict(rows[0], device_name="Some Other CPU")) + "\n")
    before = open(other).read()
    rc = subprocess.run(cmd[:4] + [other] + cmd[5:] + ["--limit", "1"], capture_output=True, text=True)
    check(rc.returncode != 0 and "Some Other CPU" in rc.stderr and "own file" in rc.stderr
          and open(other).read() == before, "a file of another device's lines: rc %d, %s" % (rc.returncode, rc.stderr))
    # the same model name on another CPU (two KVM guests both "Intel(R) Xeon(R) Processor"): cpu_id tells them apart
    check("cpu_id" in rows[0], "measure.py does not record cpu_id")
    with open(other, "w") as f:
        f.write(json.dumps(dict(rows[0], cpu_id="GenuineIntel 6/1/1")) + "\n")
    rc = subprocess.run(cmd[:4] + [other] + cmd[5:] + ["--limit", "1"], capture_output=True, text=True)
    check(rc.returncode != 0 and "GenuineIntel 6/1/1" in rc.stderr and "own file" in rc.stderr,
          "a file of the same model name with another cpu_id: rc %d, %s" % (rc.returncode, rc.stderr))
    # lines without cpu_id (written before it was recorded): appended to, with a warning that says so
    old_lines = os.path.join(work, "m_no_cpu_id.jsonl")
    with open(old_lines, "w") as f:
        for r in rows:
            f.write(json.dumps({k: v for k, v in r.items() if k != "cpu_id"}) + "\n")
    rc = subprocess.run(cmd[:4] + [old_lines] + cmd[5:] + ["--limit", "1"], capture_output=True, text=True)
    check(rc.returncode == 0 and "warning: %d lines" % len(rows) in rc.stderr and "--cpu-id" in rc.stderr,
          "a file of lines without cpu_id: rc %d, %s" % (rc.returncode, rc.stderr))
    # the same processor at another clock (one model, another host): appended to, with a warning naming both clocks
    if rows[0].get("cpu_mhz") and space.under_hypervisor():
        slow = os.path.join(work, "m_other_clock.jsonl")
        with open(slow, "w") as f:
            f.write(json.dumps(dict(rows[0], cpu_mhz=rows[0]["cpu_mhz"] * 0.8)) + "\n")
        rc = subprocess.run(cmd[:4] + [slow] + cmd[5:] + ["--limit", "1"], capture_output=True, text=True)
        check(rc.returncode == 0 and "%d MHz" % round(rows[0]["cpu_mhz"] * 0.8) in rc.stderr
              and "another host" in rc.stderr and len(open(slow).readlines()) > 1,
              "a file of this processor at another clock: rc %d, %s" % (rc.returncode, rc.stderr))
        rc = subprocess.run(cmd[:4] + [old_lines] + cmd[5:] + ["--limit", "1"], capture_output=True, text=True)
        check("another host" not in rc.stderr, "a clock warning on lines of this clock: %s" % rc.stderr)
    # one file, one allocator: a resume under other MALLOC_* settings refuses, the file unchanged
    check(rows[0].get("allocator") == space.allocator() and space.allocator({}) == "glibc"
          and space.allocator({"MALLOC_MMAP_THRESHOLD_": "65536"}) == "glibc MALLOC_MMAP_THRESHOLD_=65536"
          and space.allocator({"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}) == "LD_PRELOAD=libjemalloc.so.2",
          "allocator: %s" % rows[0].get("allocator"))
    before = open(out).read()
    rc = subprocess.run(cmd + ["--limit", "2"], capture_output=True, text=True,
                        env=dict(os.environ, MALLOC_MMAP_THRESHOLD_="4294967296"))
    check(rc.returncode != 0 and "measured under the allocator 'glibc'" in rc.stderr
          and "MALLOC_MMAP_THRESHOLD_=4294967296" in rc.stderr and open(out).read() == before,
          "a resume under another allocator: rc %d, %s" % (rc.returncode, rc.stderr))
    heap = os.path.join(work, "m_heap.jsonl")
    with open(heap, "w") as f:
        f.write(json.dumps(dict(rows[0], allocator="glibc MALLOC_MMAP_THRESHOLD_=4294967296")) + "\n")
    # one file, one BLAS kernel set: the lines record OpenBLAS's (this process's, torch loaded), and a
    # resume onto lines of other kernels refuses, the file unchanged; the warning on pre-AVX kernels
    import torch  # noqa: F401  (loads the BLAS that space.blas_core reads)
    check(rows[0].get("blas_core") == space.blas_core() and (space.blas_core() is None or space.blas_core()),
          "blas_core: the lines record %r, this process runs %r" % (rows[0].get("blas_core"), space.blas_core()))
    w = space.blas_warning("Prescott", "fpu sse3 avx2 avx512f")
    check(w is not None and "OPENBLAS_CORETYPE=SkylakeX" in w and "Prescott" in w
          and "OPENBLAS_CORETYPE=Haswell" in (space.blas_warning("Core2", "sse3 avx avx2") or "")
          and space.blas_warning("Prescott", "sse3 avx") is None and space.blas_warning("Haswell", "avx2 avx512f") is None
          and space.blas_warning(None, "avx2") is None, "blas_warning: %s" % w)
    katmai = os.path.join(work, "m_katmai.jsonl")
    with open(katmai, "w") as f:
        f.write(json.dumps(dict(rows[0], blas_core="Katmai")) + "\n")
    if rows[0].get("blas_core"):
        rc = subprocess.run(cmd[:4] + [katmai] + cmd[5:] + ["--limit", "2"], capture_output=True, text=True)
        check(rc.returncode != 0 and "OpenBLAS's Katmai kernels" in rc.stderr and "OPENBLAS_CORETYPE=Katmai" in rc.stderr
              and len(open(katmai).read().splitlines()) == 1, "a resume onto lines of other BLAS kernels: rc %d, %s" % (
                  rc.returncode, rc.stderr[-300:]))
    with open(out, "a") as f:  # a line a running measure.py is still writing
        f.write('{"id": "cut')

    h5 = os.path.join(work, "space.h5")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                    "--measurements", out, "-o", h5, "--seerconvert", seerconvert], check=True)
    import h5py
    import numpy as np
    with h5py.File(h5, "r") as f:
        labels = [x.decode() for x in f["schema/labels"][:]]
        y = f["label/y"][:]
    check(len(y) == 3 and "train_time_ms" in labels, "dataset: %d graphs, labels %s" % (len(y), labels))
    check(np.isnan(y[:, labels.index("train_util_pct")]).all(), "CPU utilisation must be NaN (not measured)")
    r1 = {(r["id"], r["batch"]): r for r in rows if "pass" not in r}
    r2 = {(r["id"], r["batch"]): r for r in rows if r.get("pass") == 2}
    k = sorted(r2)[0]
    want = (r1[k]["train_time_ms"] + r2[k]["train_time_ms"]) / 2
    with h5py.File(h5, "r") as f:
        names = [x.decode() for x in f["graph/name"][:]]
    got = y[names.index("space/%s@bs%d" % k), labels.index("train_time_ms")]
    check(abs(got - want) <= 1e-4 * want, "two passes: label %g, mean of the passes %g" % (got, want))
    card = open(os.path.join(work, "README-space.md")).read()
    def dataset(name, measurements, *opts):
        """make_dataset.py on the test's specs with these options: (labels, graph names)."""
        h5x = os.path.join(work, name + ".h5")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                        "--measurements", measurements, "-o", h5x, "--seerconvert", seerconvert] + list(opts),
                       check=True)
        with h5py.File(h5x, "r") as f:
            return f["label/y"][:], [x.decode() for x in f["graph/name"][:]]
    # NVML's readings of 0 (no busy sample, an energy counter that did not tick): left empty, counted
    nv = os.path.join(work, "m_nvml.jsonl")
    first = [r for r in rows if "pass" not in r]
    with open(nv, "w") as f:
        for i, r in enumerate(first):
            f.write(json.dumps(dict(r, train_util_pct=[0.0, 40.0][i % 2], train_energy_mj=[0.0, 5.0][i % 2])) + "\n")
    ynv, nnv = dataset("nvml", nv, "--card", os.path.join(work, "card_nvml.md"))
    with h5py.File(os.path.join(work, "nvml.h5"), "r") as f:
        lnv = [x.decode() for x in f["schema/labels"][:]]
    for i, r in enumerate(first):
        row = ynv[nnv.index("space/%s@bs%d" % (r["id"], r["batch"]))]
        u, e = row[lnv.index("train_util_pct")], row[lnv.index("train_energy_mj")]
        check((np.isnan(u) and np.isnan(e)) if i % 2 == 0 else (u == 40.0 and e == 5.0),
              "NVML reading %d: utilisation %s, energy %s" % (i, u, e))
    zeros = (len(first) + 1) // 2
    check("NVML readings of 0 left empty (not resolved over the timed steps): train_energy_mj %d, train_util_pct %d"
          % (zeros, zeros) in open(os.path.join(work, "card_nvml.md")).read(), "the card counts the NVML zeros")
    # a line whose recorded FLOPs are not its spec's (measured from another sample sharing the ids): refused
    wrong = os.path.join(work, "m_wrong_sample.jsonl")
    with open(wrong, "w") as f:
        for i, r in enumerate(first):
            f.write(json.dumps(dict(r, flops=r["flops"] * 2) if i == 1 else r) + "\n")
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                         "--measurements", wrong, "-o", os.path.join(work, "wrong.h5"), "--seerconvert", seerconvert],
                        capture_output=True, text=True)
    check(rc.returncode != 0 and "m_wrong_sample.jsonl:2: architecture %s at batch %d was measured with"
          % (first[1]["id"], first[1]["batch"]) in rc.stderr and "another sample" in rc.stderr
          and not os.path.exists(os.path.join(work, "wrong.h5")),
          "a line of another sample: rc %d, %s" % (rc.returncode, rc.stderr[-300:]))
    # --specs FOLDER: every specs*.jsonl in it, the same dataset; an id in two files is refused
    import shutil
    sdir = os.path.join(work, "specs_dir")
    shutil.rmtree(sdir, ignore_errors=True)
    os.makedirs(sdir)
    shutil.copy(specs, os.path.join(sdir, "specs_a.jsonl"))
    with open(os.path.join(sdir, "notes.txt"), "w") as f:
        f.write("not a specs file\n")
    h5d = os.path.join(work, "space_dir.h5")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", sdir,
                    "--measurements", out, "-o", h5d, "--seerconvert", seerconvert], check=True)
    with h5py.File(h5d, "r") as f:
        check(np.array_equal(f["label/y"][:], y, equal_nan=True), "--specs FOLDER gave other labels than the file")
    shutil.copy(specs, os.path.join(sdir, "specs_b.jsonl"))
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", sdir,
                         "--measurements", out, "-o", h5d + ".dup", "--seerconvert", seerconvert],
                        capture_output=True, text=True)
    check(rc.returncode != 0 and "specs_a.jsonl and in" in rc.stderr and "--prefix" in rc.stderr
          and not os.path.exists(h5d + ".dup"), "an id in two specs files: rc %d, %s" % (rc.returncode, rc.stderr))
    # lines of two machines in one dataset are refused (they would be averaged as passes)
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                         "--measurements", out + "," + other, "-o", h5d + ".mixed", "--seerconvert", seerconvert],
                        capture_output=True, text=True)
    check(rc.returncode != 0 and "GenuineIntel 6/1/1" in rc.stderr and "one per device" in rc.stderr
          and not os.path.exists(h5d + ".mixed"), "two CPUs' lines in one dataset: rc %d, %s" % (rc.returncode, rc.stderr))
    # lines of two allocators in one dataset are refused too
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                         "--measurements", out + "," + heap, "-o", h5d + ".heap", "--seerconvert", seerconvert],
                        capture_output=True, text=True)
    check(rc.returncode != 0 and "under the allocator 'glibc MALLOC_MMAP_THRESHOLD_=4294967296'" in rc.stderr
          and not os.path.exists(h5d + ".heap"), "two allocators' lines in one dataset: rc %d, %s" % (rc.returncode, rc.stderr))
    # and lines of two BLAS kernel sets
    if json.loads(open(out).readline()).get("blas_core"):
        if os.path.exists(h5d + ".blas"):  # a file an earlier, failing run left
            os.remove(h5d + ".blas")
        rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                             "--measurements", out + "," + os.path.join(work, "m_katmai.jsonl"), "-o", h5d + ".blas",
                             "--seerconvert", seerconvert], capture_output=True, text=True)
        check(rc.returncode != 0 and "OpenBLAS's Katmai kernels" in rc.stderr and "one kernel set" in rc.stderr
              and not os.path.exists(h5d + ".blas"), "two BLAS kernel sets' lines in one dataset: rc %d, %s" % (
                  rc.returncode, rc.stderr))
    # lines written before cpu_id was recorded cannot be told from this processor's: read with a
    # warning; --cpu-id keeps one processor's lines (the AMD EPYC file holds two processors)
    unrec = os.path.join(work, "m_unrecorded.jsonl")
    with open(unrec, "w") as f:
        for r in rows:  # twice as slow, so that a label averaged with them shows it
            u = {k: v for k, v in r.items() if k != "cpu_id"}
            u.update({m: 2 * r[m] for m in ("train_time_ms", "infer_time_ms") if r.get(m)})
            f.write(json.dumps(u) + "\n")
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                         "--measurements", out + "," + unrec, "-o", h5d + ".unrec", "--seerconvert", seerconvert],
                        capture_output=True, text=True)
    check(rc.returncode == 0 and "warning" in rc.stderr and "unrecorded %d" % len(rows) in rc.stderr
          and "--cpu-id" in rc.stderr, "lines with and without cpu_id: rc %d, %s" % (rc.returncode, rc.stderr))
    yc, _ = dataset("space_cpu_id", out + "," + unrec, "--cpu-id", rows[0]["cpu_id"])
    check(np.array_equal(yc, y, equal_nan=True), "--cpu-id: other labels than the processor's own lines")
    card_c = open(os.path.join(work, "README-space_cpu_id.md")).read()
    check("unrecorded %d" % len(rows) in card_c and "%d lines of the others left out" % len(rows) in card_c,
          "--cpu-id: the card does not count the processors' lines")
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                         "--measurements", out, "-o", h5d + ".none", "--seerconvert", seerconvert, "--cpu-id", "unrecorded"],
                        capture_output=True, text=True)
    check(rc.returncode != 0 and "no line" in rc.stderr and not os.path.exists(h5d + ".none"),
          "--cpu-id of no line: rc %d, %s" % (rc.returncode, rc.stderr))
    # --ref-normalize: each time scaled by median(ref_ms) / its ref_ms

    yr, names_r = dataset("space_ref", out, "--ref-normalize")
    refs = sorted(r["ref_ms"] for r in rows)
    k1 = sorted(r1)[0]
    got = yr[names_r.index("space/%s@bs%d" % k1), labels.index("infer_time_ms")]
    ones = [r for r in rows if (r["id"], r["batch"]) == k1]
    want = sum(r["infer_time_ms"] * refs[len(refs) // 2] / r["ref_ms"] for r in ones) / len(ones)
    check(abs(got - want) <= 1e-4 * want, "--ref-normalize: label %g, expected %g" % (got, want))
    check("normalised to the reference" in open(os.path.join(work, "README-space_ref.md")).read(),
          "the card does not say the times were normalised")
    # --ref-normalize 0.5: scaled by the square root of that ratio; ref_check.py reads both passes
    yh, names_h = dataset("space_refh", out, "--ref-normalize", "0.5")
    got = yh[names_h.index("space/%s@bs%d" % k1), labels.index("infer_time_ms")]
    want = sum(r["infer_time_ms"] * (refs[len(refs) // 2] / r["ref_ms"]) ** 0.5 for r in ones) / len(ones)
    check(abs(got - want) <= 1e-4 * want, "--ref-normalize 0.5: label %g, expected %g" % (got, want))
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "measure", "ref_check.py"), out,
                         "--windows", "1,3"], capture_output=True, text=True)
    check(rc.returncode == 0 and "2 measured in two or more passes" in rc.stdout and "| 1 |" in rc.stdout
          and "| 3 | 1 |" in rc.stdout, "ref_check.py: %s%s" % (rc.stdout, rc.stderr))
    # real_networks.py's passes, files of their own whose lines carry no "pass": one file a pass
    p1, p2 = os.path.join(work, "rn_pass1.jsonl"), os.path.join(work, "rn_pass2.jsonl")
    for path, t in ((p1, (100.0, 100.0)), (p2, (120.0, 100.0))):
        with open(path, "w") as f:
            for name, v in zip(("net_a", "net_b"), t):
                f.write(json.dumps({"name": name, "batch": 1, "ref_ms": 2.0, "train_time_ms": v,
                                    "infer_time_ms": v}) + "\n")
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "measure", "ref_check.py"),
                         p1 + "," + p2, "--powers", "0"], capture_output=True, text=True)
    # net_a: (120 - 100) / 110 = 18.2%, net_b: 0; the median of the two 9.1%
    check(rc.returncode == 0 and "2 measured in two or more passes" in rc.stdout and
          "| 1 | 0 | 9.1% |" in rc.stdout, "ref_check.py on two real-network pass files: %s%s" % (rc.stdout, rc.stderr))
    # --ref-window K: a line's reference is the median ref_ms of the K lines of its file nearest it
    import make_dataset
    syn = [{"ref_ms": v} for v in (1.0, 10.0, 1.0, 2.0)] + [{}] + [{"ref_ms": 3.0}]
    make_dataset.smooth_refs(syn, 3)
    check([r.get("ref_window_ms") for r in syn] == [1.0, 1.0, 2.0, 2.0, None, 2.0],
          "smooth_refs: %s" % [r.get("ref_window_ms") for r in syn])
    yw, names_w = dataset("space_refw", out, "--ref-normalize", "1", "--ref-window", "3")
    recs = []
    for line in open(out):  # its last line is cut (a measure.py still writing): left out, as make_dataset does
        try:
            recs.append(json.loads(line))
        except ValueError:
            pass
    make_dataset.smooth_refs(recs, 3)
    onesw = [r for r in recs if (r["id"], r["batch"]) == k1]
    want = sum(r["infer_time_ms"] * refs[len(refs) // 2] / r["ref_window_ms"] for r in onesw) / len(onesw)
    got = yw[names_w.index("space/%s@bs%d" % k1), labels.index("infer_time_ms")]
    check(abs(got - want) <= 1e-4 * want, "--ref-window 3: label %g, expected %g" % (got, want))
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "make_dataset.py"), "--specs", specs,
                         "--measurements", out, "-o", h5d + ".win", "--ref-window", "3", "--seerconvert", seerconvert],
                        capture_output=True, text=True)
    check(rc.returncode != 0 and "only with --ref-normalize" in rc.stderr and not os.path.exists(h5d + ".win"),
          "--ref-window without --ref-normalize: rc %d, %s" % (rc.returncode, rc.stderr[-200:]))
    for tool in (("space", "make_dataset.py"), ("measure", "ref_check.py"), ("measure", "drift_now.py"),
                 ("measure", "measure.py"), ("space", "space.py")):  # argparse formats every help text
        rc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", *tool), "--help"], capture_output=True, text=True)
        check(rc.returncode == 0 and "usage" in rc.stdout, "%s --help: %s" % (tool[1], rc.stderr[-300:]))
    for tool in ("size_gap.py", "op_gap.py", "signed_errors.py", "mem_per_byte.py", "cost_terms.py", "kept_bytes.py",
                 "inplace_mem.py", "batch_scaling.py", "space_gap.py", "pick_timm.py", "dw_cost.py", "dw_backward.py",
                 "pair_gap.py", "new_cpu.py", "real_ablation.py", "space_batch_ratio.py"):
        rc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", tool), "--help"], capture_output=True, text=True)
        check(rc.returncode == 0 and "usage" in rc.stdout, "%s --help: %s" % (tool, rc.stderr[-300:]))
    held_out_bookkeeping()
    device_defaults()
    pair_counts(h5d)
    transfer_holdout()
    batch_scaling_stats()
    real_passes(work)
    space_gap_known(os.path.dirname(os.path.abspath(seerconvert)), work)
    predict_wrong_device(os.path.dirname(os.path.abspath(seerconvert)))
    pick_timm_limit(work)
    # cost_terms.kept_bytes, the bytes autograd keeps counted from the graph, against what PyTorch
    # keeps for the same network and batch (benchmarks/kept_bytes.py's measure)
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import cost_terms
    import kept_bytes
    by_id = {s["id"]: s for s in map(json.loads, open(specs))}
    with h5py.File(h5d, "r") as f:
        gnames = [x.decode() for x in f["graph/name"][:]]
    rule = cost_terms.kept_bytes(h5d) / 2 ** 20
    for g, n in enumerate(gnames):
        sid, b = n.split("/")[-1].rsplit("@bs", 1)
        torch.manual_seed(0)
        kept = kept_bytes.autograd_kept_mb(space.torch_model(by_id[sid]), by_id[sid]["input"], int(b))
        check(0.75 < rule[g] / kept < 1.35, "kept_bytes: %s counts %.3f MB, autograd keeps %.3f" % (n, rule[g], kept))
    # cost_terms.py --size-split: the fit sees the smaller architectures only, every batch of one on one side
    ct = [sys.executable, os.path.join(ROOT, "benchmarks", "cost_terms.py"), "--space", h5d, "--real", h5d]
    rc = subprocess.run(ct + ["--size-split", "0.5"], capture_output=True, text=True)
    with h5py.File(h5d, "r") as f:
        gnames = [x.decode() for x in f["graph/name"][:]]
    fit_line = re.search(r"Fit on the (\d+) design-space graphs .* the other (\d+) held out", rc.stdout)
    check(rc.returncode == 0 and fit_line and int(fit_line.group(1)) + int(fit_line.group(2)) == len(gnames)
          and 0 < int(fit_line.group(2)) and "largest 50% unseen" in rc.stdout
          and rc.stdout.count("| memory |") == 11, "cost_terms.py --size-split 0.5: rc %d, %s %s"
          % (rc.returncode, rc.stdout[:300], rc.stderr[-300:]))
    rc = subprocess.run(ct + ["--fit-on", "cnn"], capture_output=True, text=True)
    check(rc.returncode == 0 and "Fit on the design space's CNNs only (%d graphs of %d)" % (len(gnames), len(gnames))
          in rc.stdout, "cost_terms.py --fit-on cnn: rc %d, %s %s" % (rc.returncode, rc.stdout[:200], rc.stderr[-200:]))
    rc = subprocess.run(ct + ["--fit-on", "others"], capture_output=True, text=True)
    check(rc.returncode != 0 and "has no such graph" in rc.stderr, "cost_terms.py --fit-on others on CNNs only: rc %d, %s"
          % (rc.returncode, rc.stderr[-200:]))
    rc = subprocess.run(ct + ["--size-split", "0.5", "--size-by", "bytes"], capture_output=True, text=True)
    check(rc.returncode == 0 and re.search(r"Fit on the \d+ design-space graphs of architectures at most [\d.e+]+ "
                                           r"counted MB per sample", rc.stdout),
          "cost_terms.py --size-by bytes: rc %d, %s %s" % (rc.returncode, rc.stdout[:200], rc.stderr[-200:]))
    rc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "mem_per_byte.py"), "--space", h5d,
                         "--real", h5d + ".missing"], capture_output=True, text=True)
    check(rc.returncode != 0 and "no such file" in rc.stderr, "mem_per_byte.py, a missing file: rc %d, %s"
          % (rc.returncode, rc.stderr[-200:]))
    rc = subprocess.run(ct + ["--size-split", "1.5"], capture_output=True, text=True)
    check(rc.returncode != 0 and "--size-split 1.5" in rc.stderr, "cost_terms.py --size-split 1.5: rc %d, %s"
          % (rc.returncode, rc.stderr[-200:]))
    check("separate passes" in card and "2 configurations" in card, "the card does not report the two passes")
    # --infer-builder: inference times of lines from an older builder left empty, the rest kept
    old = os.path.join(work, "m_old.jsonl")
    keys = [(r["id"], r["batch"]) for r in rows]
    gpu = next(r for r in rows if r is not rows[0] and keys.count((r["id"], r["batch"])) == 1)  # measured once
    with open(old, "w") as f:
        for r in rows:
            if r is gpu:  # as a GPU line records it (the forward pass's own memory): all its inference labels go
                r = dict({k: v for k, v in r.items() if k != "builder"}, infer_reserved_mb=r["train_mem_mb"])
            f.write(json.dumps({k: v for k, v in r.items() if k != "builder"} if r is rows[0] else r) + "\n")
    yb, names_b = dataset("space_builder", old, "--infer-builder", "2")
    ig, im = names_b.index("space/%s@bs%d" % (gpu["id"], gpu["batch"])), labels.index("infer_mem_mb")
    check(np.isnan(yb[ig, labels.index("infer_time_ms")]) and np.isnan(yb[ig, im])
          and not np.isnan(yb[ig, labels.index("train_mem_mb")]),
          "--infer-builder 2 on a GPU line: inference time %g, memory %g" % (yb[ig, labels.index("infer_time_ms")], yb[ig, im]))
    k0 = (rows[0]["id"], rows[0]["batch"])
    i0, it, tt = names_b.index("space/%s@bs%d" % k0), labels.index("infer_time_ms"), labels.index("train_time_ms")
    two0 = [r for r in rows if (r["id"], r["batch"]) == k0 and r is not rows[0]]  # its pass-2 line keeps it
    want = two0[0]["infer_time_ms"] if two0 else None
    check((np.isnan(yb[i0, it]) if want is None else abs(yb[i0, it] - want) <= 1e-4 * want) and not np.isnan(yb[i0, tt]),
          "--infer-builder 2: the builder-1 line's inference %g (want %s), training %g" % (yb[i0, it], want, yb[i0, tt]))
    check(not np.isnan(yb[i0, im]), "--infer-builder 2 emptied a CPU line's memory (the training step's peak)")
    others = [i for i, n in enumerate(names_b) if n not in ("space/%s@bs%d" % k0, "space/%s@bs%d" % (gpu["id"], gpu["batch"]))]
    check(not np.isnan(yb[others, it]).any(), "--infer-builder 2 emptied builder-2 inference times")
    check("2 measurements' inference times (and on a GPU their memory, utilisation and energy) left empty"
          in open(os.path.join(work, "README-space_builder.md")).read(),
          "the card does not count the emptied inference times")
    # builder_calibrate.py: each pass-1 configuration measured again by builder 2 on a machine 1.25x
    # slower, inference 0.8x by the builder: the effect comes out 0.8, and the shipped CPU predictor's
    # inference moves by the median of infer_2 x predicted_train / train_2 / predicted_infer
    pairs_path = os.path.join(work, "m_pairs.jsonl")
    firsts = [r for r in rows if "pass" not in r]
    with open(pairs_path, "w") as f:
        for r in firsts:
            f.write(json.dumps({k: v for k, v in r.items() if k != "builder"}) + "\n")
            f.write(json.dumps(dict(r, builder=2, train_time_ms=1.25 * r["train_time_ms"],
                                    infer_time_ms=1.25 * 0.8 * r["infer_time_ms"])) + "\n")
    model, calibrated = os.path.join(ROOT, "predictors", "cpu_epyc.seer"), os.path.join(work, "b2.seer")
    bc = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "space", "builder_calibrate.py"), model,
                         pairs_path, "-o", calibrated, "--min-pairs", "3", "--specs", specs, "--build",
                         os.path.dirname(seerconvert)], capture_output=True, text=True)
    check(bc.returncode == 0 and "with it taken out 0.800" in bc.stdout and "drift (training step, second / "
          "first) 1.250" in bc.stdout, "builder_calibrate.py: %s%s" % (bc.stdout, bc.stderr))
    # every first pass of builder 1, every second of builder 2 (the EPYC file): --infer-builder 2
    # leaves no configuration two inference times, and the card says so instead of failing
    yp, names_p = dataset("space_pairs_b2", pairs_path, "--infer-builder", "2")
    cardp = open(os.path.join(work, "README-space_pairs_b2.md")).read()
    check("(0 with two inference times)" in cardp and not np.isnan(yp[:, it]).any(),
          "--infer-builder 2 on two passes of two builders: the card or the labels are wrong")
    with open(pairs_path + ".b2", "w") as f:
        f.writelines(l for l in open(pairs_path) if '"builder": 2' in l)
    y2, _ = dataset("space_b2", pairs_path + ".b2", "--label-prefix", "cpu_epyc")
    preds = {}
    for name, path in (("before", model), ("after", calibrated)):
        csv_path = os.path.join(work, name + ".csv")
        subprocess.run([os.path.join(os.path.dirname(seerconvert), "seerpredict"), path,
                        os.path.join(work, "space_b2.h5"), "--predictions", csv_path], check=True,
                       capture_output=True)
        head = open(csv_path).readline().strip().split(",")
        preds[name] = np.loadtxt(csv_path, delimiter=",", skiprows=1, usecols=[head.index("cpu_epyc_train_ms"),
                                 head.index("cpu_epyc_infer_ms")], ndmin=2)
    tt2, it2 = labels.index("train_time_ms"), labels.index("infer_time_ms")  # the same column order
    want = np.median(y2[:, it2] * preds["before"][:, 0] / y2[:, tt2] / preds["before"][:, 1])  # batches of < 3 graphs: one factor
    moved = preds["after"] / preds["before"]
    check(np.allclose(moved[:, 1], want, rtol=1e-4) and np.allclose(moved[:, 0], 1, rtol=1e-6),
          "builder_calibrate.py: inference moved by %s, want %g; training step by %s" % (moved[:, 1], want, moved[:, 0]))
    if fails:
        print("test_space: %d check(s) failed" % fails, file=sys.stderr)
        return 1
    print("test_space: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
