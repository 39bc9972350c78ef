#!/usr/bin/env python3
"""Specs + measurements -> a PerfGraph dataset (through seerconvert) and its dataset card.

    make_dataset.py --specs specs.jsonl --measurements measurements.jsonl -o datasets/<device>.h5
                    [--onnx-dir DIR] [--seerconvert build/seerconvert] [--card README.md]

Writes the weight-stripped ONNX model of every measured architecture (space.py's direct writer),
a manifest with one row per measured (architecture, batch): the six PerfSeer metrics
train/infer x time (ms) / memory (MB) / utilisation (%) plus energy per iteration (mJ) where the
device reported it, empty (NaN, masked in training) where it did not or where the configuration
ran out of memory; runs seerconvert on it; and writes a dataset card next to the file (counts,
ranges, the protocol, how to rebuild).

    make_dataset.py --scale 134912 -o /tmp/space_134k.h5      # generator only: synthetic labels

--scale N samples N (architecture, batch) graphs without measuring, with a synthetic label
(log-linear in FLOPs with noise, named synthetic_ms), to build the large datasets that the
scale benchmarks load; the card says the labels are synthetic.
"""
import argparse
import csv
import glob
import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import space  # noqa: E402

METRICS = ["train_time_ms", "infer_time_ms", "train_mem_mb", "infer_mem_mb", "train_util_pct",
           "infer_util_pct", "train_energy_mj", "infer_energy_mj"]
INFER_GPU = ["infer_time_ms", "infer_mem_mb", "infer_util_pct", "infer_energy_mj"]


def label_name(metric, prefix):
    """train_time_ms -> <prefix>_train_ms, infer_mem_mb -> <prefix>_infer_mb, train_util_pct ->
    <prefix>_trainutil_pct (so that the device is everything before the last two parts)."""
    if not prefix or metric == "synthetic_ms":
        return metric
    phase, what, unit = metric.split("_")
    return "%s_%s_%s" % (prefix, phase if what in ("time", "mem") else phase + what, unit)


def family(spec):
    """/graph/family of a design-space network: space/ and its stage styles, sorted and unique
    (space/densenet+vgg, space/convnext), or space/ and its architecture (space/vit,
    space/deit, space/mixer). Leaving a style out holds out every family that names it."""
    if spec.get("arch") in space.TOKEN_ARCHS:
        return "space/" + spec["arch"]
    return "space/" + "+".join(sorted({st["style"] for st in spec["stages"]}))


def group_of(sid):
    """The split group of an architecture id: its number, offset per id prefix (s000123 -> 123,
    w000123 -> 23000123) so that samples drawn with another --prefix never share a group."""
    head = sid.rstrip("0123456789")
    num = int(sid[len(head):])
    return num if head == "s" else num + 1000000 * sum((ord(c) - 96) for c in head)


def normalize_ref(r, ref_median, power=1.0):
    """A measurement's times on the scale of the median reference speed: x (median / ref)^power
    (power 1: the configuration slowed exactly as the reference did; scripts/measure/ref_check.py
    measures which power makes separate passes agree). ref is the line's ref_window_ms where
    smooth_refs set one, else its own ref_ms."""
    out, f = dict(r), (ref_median / r.get("ref_window_ms", r["ref_ms"])) ** power
    for m in ("train_time_ms", "infer_time_ms"):
        if out.get(m) is not None:
            out[m] = out[m] * f
    return out


def smooth_refs(records, window):
    """Sets ref_window_ms on each record of one measurements file (in file order, the order it
    was measured in) that has ref_ms: the median ref_ms of the window lines with one nearest it in
    that order. The reference network is small and its single timings noisy; over a window they
    follow the machine's drift, which moves every network measured then (scripts/measure/
    drift_now.py). window 1: the line's own ref_ms."""
    idx = [i for i, r in enumerate(records) if r.get("ref_ms")]
    seq, h = [records[i]["ref_ms"] for i in idx], window // 2
    for j, i in enumerate(idx):
        lo = max(0, min(j - h, len(seq) - window))
        w = sorted(seq[lo:lo + window])
        records[i]["ref_window_ms"] = w[len(w) // 2] if len(w) % 2 else 0.5 * (w[len(w) // 2 - 1] + w[len(w) // 2])


def processor(r):
    """A line's processor as --cpu-id names it: its cpu_id, or "unrecorded"."""
    return r.get("cpu_id") or "unrecorded"


def processors_text(counts):
    """{processor: lines} as "AuthenticAMD 25/1/1 3,352, unrecorded 12,182" (most lines first)."""
    return ", ".join("%s %s" % (p, format(n, ",")) for p, n in sorted(counts.items(), key=lambda kv: -kv[1]))


def pass_disagreement(v):
    """(max - min) / mean of one configuration's times from separate passes."""
    return (max(v) - min(v)) / (sum(v) / len(v))


def combine_passes(rs):
    """One configuration measured in several passes (measure.py --pass): each metric the mean of
    the passes that measured it, and the disagreement (max - min) / mean of the two times."""
    if len(rs) == 1:
        return rs[0]
    out = dict(rs[0])
    for m in METRICS:
        v = [r[m] for r in rs if r.get(m) is not None and not r.get("oom")]
        out[m] = sum(v) / len(v) if v else None
    out["passes"] = len(rs)
    for m in ("train_time_ms", "infer_time_ms"):
        v = [r[m] for r in rs if r.get(m) is not None and not r.get("oom")]
        if len(v) > 1:
            out[m.split("_")[0] + "_pass_spread"] = pass_disagreement(v)
    return out


def read_specs(arg):
    """{id: spec} from space.py sample files, comma-separated; a folder stands for every
    specs*.jsonl in it (datasets/space_cpu: each sample measured into the same file). An id in
    two files is refused: their measurements could not be told apart."""
    paths = []
    for p in arg.split(","):
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "specs*.jsonl")))
            if not found:
                sys.exit("make_dataset.py: --specs %s: a folder without specs*.jsonl files" % p)
            paths += found
        else:
            paths.append(p)
    specs, where = {}, {}
    for p in paths:
        if not os.path.exists(p):
            sys.exit("make_dataset.py: --specs %s: no such file" % p)
        for s in space.read_specs(p):
            if s["id"] in where:
                sys.exit("make_dataset.py: architecture id %s is in %s and in %s: give each sample its "
                         "own prefix (space.py sample --prefix)" % (s["id"], where[s["id"]], p))
            specs[s["id"]], where[s["id"]] = s, p
    return specs


def fmt(v):
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else "%.9g" % v


def unresolved(metric, v, a):
    """NVML's readings (utilisation, energy) of 0: the 20 ms utilisation sampler saw no busy sample,
    or the energy counter did not tick over ten short steps (datasets/space_h200/README.md): not
    measured, so left empty (masked in training) and counted per metric for the card."""
    if v is not None and v <= 0 and (metric.endswith("_util_pct") or metric.endswith("_energy_mj")):
        a.unresolved = getattr(a, "unresolved", {})
        a.unresolved[metric] = a.unresolved.get(metric, 0) + 1
        return None
    return v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--specs", help="specs file(s) from space.py sample, comma-separated, or a folder "
                                    "(every specs*.jsonl in it)")
    ap.add_argument("--measurements", help="measure.py output file(s), comma-separated")
    ap.add_argument("-o", required=True)
    ap.add_argument("--onnx-dir", default=None)
    ap.add_argument("--seerconvert", default=os.path.join(ROOT, "build", "seerconvert"))
    ap.add_argument("--card", default=None)
    ap.add_argument("--scale", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-other-load", type=float, default=None,
                    help="leave out configurations measured while the other cores were busier than "
                         "this (measure.py's other_load, the busy share of the other cores); "
                         "the card gives the count")
    ap.add_argument("--ref-normalize", nargs="?", type=float, const=1.0, default=None, metavar="POWER",
                    help="scale each time label by (median(ref_ms) / its configuration's ref_ms)^POWER "
                         "(default 1; ref_ms: the reference network measure.py times before it), taking "
                         "the machine's speed drift out; configurations measured without ref_ms are left "
                         "out (counted). scripts/measure/ref_check.py measures which POWER helps: about 0.6 on the "
                         "development Xeon with each line's own reference; 1 with --ref-window 201 "
                         "(benchmarks/RESULTS.md)")
    ap.add_argument("--ref-window", type=int, default=1, metavar="K",
                    help="with --ref-normalize: each line's reference is the median ref_ms of the K lines "
                         "of its file measured nearest it (default 1: its own). On the 2.6 GHz Xeon's 1,322 "
                         "configurations measured twice, K 201 and POWER 1 bring the passes' disagreement "
                         "from 11.0 / 12.1%% (raw) to 4.6 / 4.2%% (training step / inference): the small "
                         "reference's single timings are noisy, its drift over an hour is the machine's")
    ap.add_argument("--infer-builder", type=int, default=None, metavar="N",
                    help="leave the inference times of configurations measured with a PyTorch builder "
                         "older than N empty (NaN: not learned from, not scored): measure.py records "
                         "space.TORCH_BUILDER per line, lines without it are version 1, whose no-grad "
                         "forward pass held every activation (space.py says why 2 is the one to use)")
    ap.add_argument("--cpu-id", default=None, metavar="ID",
                    help="keep only the lines measured on this processor (their cpu_id, e.g. "
                         "'AuthenticAMD 25/1/1'; 'unrecorded': the lines written before measure.py "
                         "recorded one); the card counts every processor's lines either way")
    ap.add_argument("--label-prefix", default="",
                    help="name the labels in DESIGN.md's convention <device>_<metric>_<unit> with this "
                         "device (cpu_xeon: cpu_xeon_train_ms, cpu_xeon_infer_mb, ...), which "
                         "seerpredict --device reads; default: the harness's names (train_time_ms, ...)")
    a = ap.parse_args()
    if a.ref_window < 1 or (a.ref_window > 1 and a.ref_normalize is None):
        ap.error("--ref-window %d: a positive number of lines, and only with --ref-normalize" % a.ref_window)
    out = os.path.abspath(a.o)
    onnx_dir = a.onnx_dir or os.path.splitext(out)[0] + "_onnx"
    os.makedirs(onnx_dir, exist_ok=True)
    t0 = time.time()
    rows, labels = [], METRICS
    if a.scale:
        batches = [1, 2, 4, 8, 16, 32, 64, 128, 256]
        n_arch = (a.scale + len(batches) - 1) // len(batches)
        specs = space.sample(n_arch, a.seed, diverse=0)
        rng = random.Random(a.seed)
        labels = ["synthetic_ms"]
        for s in specs:
            for b in batches:
                if len(rows) == a.scale:
                    break
                ms = 0.02 * (space.flops(s, b) / 1e9) ** 0.9 * math.exp(rng.gauss(0, 0.05)) + 0.05
                rows.append((s, b, {"synthetic_ms": ms}))
        device = "none (synthetic labels)"
    else:
        specs = read_specs(a.specs)
        device = None
        a.processors = {}  # processor(r) -> lines read
        passes = {}  # (id, batch) -> the records of its passes, in file order
        flops_ok = set()  # (id, batch) whose recorded FLOPs matched the spec
        first = None  # (the first line's record, where it is)
        first_blas = None  # the same, of the first line that records blas_core
        for mpath in a.measurements.split(","):
            lines, recs = open(mpath).read().split("\n"), []
            for i, line in enumerate(lines):
                if not line.strip():
                    continue
                try:
                    recs.append((i, json.loads(line)))
                except ValueError:
                    if i >= len(lines) - 2:  # the line a running measure.py is writing
                        print("make_dataset.py: %s: the last line is incomplete (still being measured?): "
                              "left out" % mpath, file=sys.stderr)
                        continue
                    sys.exit("make_dataset.py: %s:%d: not a JSON line" % (mpath, i + 1))
            for _, r in recs:
                a.processors[processor(r)] = a.processors.get(processor(r), 0) + 1
            if a.cpu_id is not None:  # another processor's lines: left out before they time anything
                a.other_cpu = getattr(a, "other_cpu", 0) + sum(1 for _, r in recs if processor(r) != a.cpu_id)
                recs = [(i, r) for i, r in recs if processor(r) == a.cpu_id]
            if a.ref_window > 1:  # every line of the file, the ones left out below too, times the machine
                smooth_refs([r for _, r in recs], a.ref_window)
            for i, r in recs:
                if r["id"] not in specs:
                    sys.exit("make_dataset.py: %s: measured architecture %s is in none of the specs files %s"
                             % (mpath, r["id"], a.specs))
                # the FLOPs measure.py recorded must be the spec's: two samples can share an id
                # (space.py sample numbers each from s000000), so a line read against another
                # sample's specs would give its label to a different network
                key = (r["id"], r["batch"])
                if "flops" in r and key not in flops_ok:
                    want = space.flops(specs[r["id"]], r["batch"])
                    if abs(want - r["flops"]) > 1e-9 * max(1.0, abs(r["flops"])):
                        sys.exit("make_dataset.py: %s:%d: architecture %s at batch %d was measured with %.6g FLOPs, "
                                 "but the spec of that id in %s has %.6g: these measurements come from another "
                                 "sample; give the specs file they were measured from (--specs)"
                                 % (mpath, i + 1, r["id"], r["batch"], r["flops"], a.specs, want))
                    flops_ok.add(key)
                device = device or r.get("device_name")
                # one dataset, one device: another machine's line would be averaged with this one's
                # as a second pass
                if first is None:
                    first = (r, "%s:%d" % (mpath, i + 1))
                elif not space.same_machine(r, first[0]):
                    sys.exit("make_dataset.py: %s:%d: measured on %s (cpu_id %s), but %s on %s (cpu_id %s): one "
                             "dataset holds one device's labels; build one per device (--label-prefix names them)"
                             % (mpath, i + 1, r.get("device_name"), r.get("cpu_id", "-"), first[1],
                                first[0].get("device_name"), first[0].get("cpu_id", "-")))
                elif not space.same_allocator(r, first[0]):
                    sys.exit("make_dataset.py: %s:%d: measured under the allocator %r, but %s under %r: the "
                             "allocator moves times and memory, so one dataset holds one allocator's labels"
                             % (mpath, i + 1, r.get("allocator", "glibc"), first[1], first[0].get("allocator", "glibc")))
                if r.get("blas_core") and first_blas is None:
                    first_blas = (r, "%s:%d" % (mpath, i + 1))
                elif not space.same_blas(r, first_blas[0] if first_blas else {}):
                    sys.exit("make_dataset.py: %s:%d: measured with OpenBLAS's %s kernels, but %s with its %s ones: "
                             "the kernels move every matrix product's time, so one dataset holds one kernel set's "
                             "labels" % (mpath, i + 1, r["blas_core"], first_blas[1], first_blas[0]["blas_core"]))
                if a.max_other_load is not None and r.get("other_load", 0) > a.max_other_load:

                    a.left_out = getattr(a, "left_out", 0) + 1
                    continue
                if a.infer_builder is not None and r.get("builder", 1) < a.infer_builder \
                        and r.get("infer_time_ms") is not None:
                    # a GPU line measured the forward pass's own memory, utilisation and energy,
                    # which the old builder's held activations moved too (on a CPU the memory
                    # is the training step's peak, the same under either builder)
                    gone = INFER_GPU if "infer_reserved_mb" in r else ["infer_time_ms"]
                    r = dict(r, **{m: None for m in gone})
                    a.infer_dropped = getattr(a, "infer_dropped", 0) + 1
                r = dict(r, **{m: unresolved(m, r.get(m), a) for m in METRICS})
                passes.setdefault((r["id"], r["batch"]), []).append(r)
        if a.ref_normalize is not None:
            refs = sorted(r["ref_ms"] for rs in passes.values() for r in rs if r.get("ref_ms"))
            if not refs:
                sys.exit("make_dataset.py: --ref-normalize: no measurement records ref_ms (measured "
                         "before measure.py timed its reference); drop the option")
            a.ref_median, a.no_ref = refs[len(refs) // 2], 0
            for key in list(passes):
                kept = [normalize_ref(r, a.ref_median, a.ref_normalize) for r in passes[key] if r.get("ref_ms")]
                a.no_ref += len(passes[key]) - len(kept)
                if kept:
                    passes[key] = kept
                else:
                    del passes[key]
        for (sid, b), rs in passes.items():
            rows.append((specs[sid], b, combine_passes(rs)))
        if a.cpu_id is None and len(a.processors) > 1:
            print("make_dataset.py: warning: the lines read come from %s: lines without a cpu_id were "
                  "measured before measure.py recorded it, so whether they share a processor with the "
                  "others cannot be checked (the AMD EPYC file holds two: datasets/space_cpu/README.md); "
                  "--cpu-id ID keeps one processor's lines" % processors_text(a.processors), file=sys.stderr)
        if a.cpu_id is not None and not rows:
            sys.exit("make_dataset.py: --cpu-id %r: no line of %s was measured on it (the lines' processors: %s)"
                     % (a.cpu_id, a.measurements, processors_text(a.processors)))
    written = set()
    for s, _, _ in rows:
        if s["id"] not in written:
            space.export_direct(s, os.path.join(onnx_dir, s["id"] + ".onnx"))
            written.add(s["id"])
    manifest = os.path.join(onnx_dir, "manifest.csv")
    with open(manifest, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["onnx", "batch", "name", "group", "family"] + [label_name(m, a.label_prefix) for m in labels])
        for s, b, r in rows:
            vals = [fmt(None if r.get("oom") else r.get(m)) for m in labels]
            w.writerow([s["id"] + ".onnx", b, "space/%s@bs%d" % (s["id"], b), group_of(s["id"]),
                        family(s)] + vals)
    src = "PerfSeer design space (scripts/space/space.py), %s" % ("synthetic labels" if a.scale else
                                                                   "measured with scripts/measure/measure.py")
    subprocess.run([a.seerconvert, "--manifest", manifest, "-o", out, "--source", src, "--device", device or "?"],
                   check=True)
    print("make_dataset.py: %d graphs of %d architectures -> %s in %.0f s" % (len(rows), len(written), out, time.time() - t0))
    if a.card or not a.scale:
        card = a.card or os.path.join(os.path.dirname(out), "README-%s.md" % os.path.splitext(os.path.basename(out))[0])
        write_card(card, out, rows, labels, device, a)


def write_card(path, out, rows, labels, device, a):
    lines = ["# %s" % os.path.basename(out), "",
             "PerfGraph dataset (datasets/FORMAT.md) of networks from PerfSeer's design space, widened "
             "(scripts/space/space.py: CNNs of four VGG / Inception / ResNeXt / DenseNet / MobileNet-style "
             "stages, ConvNeXt, ViT, DeiT, MLP-Mixer), %s." % ("with synthetic labels (throughput benchmarks only)" if a.scale
                                                    else "measured on %s" % device), ""]
    archs = len({s["id"] for s, _, _ in rows})
    if getattr(a, "unresolved", None):
        lines.append("- NVML readings of 0 left empty (not resolved over the timed steps): %s"
                     % ", ".join("%s %d" % kv for kv in sorted(a.unresolved.items())))
    if getattr(a, "infer_builder", None) is not None:
        lines.append("- inference labels only from PyTorch builder version %d or later (--infer-builder): "
                     "%d measurements' inference times (and on a GPU their memory, utilisation and "
                     "energy) left empty" % (a.infer_builder, getattr(a, "infer_dropped", 0)))
    if getattr(a, "ref_normalize", None) is not None:
        lines.append("- times normalised to the reference network's median speed (--ref-normalize %g: x "
                     "(median(ref_ms) / ref_ms)^%g; median ref_ms %.3f ms); measurements without ref_ms "
                     "left out: %d" % (a.ref_normalize, a.ref_normalize, a.ref_median, a.no_ref)
                     + ("; each line's ref_ms the median of the %d lines of its file measured nearest it "
                        "(--ref-window)" % a.ref_window if a.ref_window > 1 else ""))
    if getattr(a, "processors", None):
        lines.append("- processors of the lines read (cpu_id, lines): %s" % processors_text(a.processors)
                     + ("; kept: %s only (--cpu-id), %d lines of the others left out" % (a.cpu_id, a.other_cpu)
                        if a.cpu_id is not None else ""))
    if a.max_other_load is not None:
        lines.append("- left out: %d configurations measured while the other cores were more than "
                     "%.0f%% busy (--max-other-load)" % (getattr(a, "left_out", 0), 100 * a.max_other_load))
    lines.append("- graphs: %d (%d architectures; batch sizes %s)" % (
        len(rows), archs, ",".join(str(b) for b in sorted({b for _, b, _ in rows}))))
    fams = {}
    for s, _, _ in rows:
        fams.setdefault(space.family_of(s), set()).add(s["id"])
    lines.append("- families (architectures): %s" % ", ".join("%s %d" % (f, len(fams[f])) for f in sorted(fams)))
    fl = [space.flops(s, b) for s, b, _ in rows]
    lines.append("- FLOPs per graph: %.3g to %.3g" % (min(fl), max(fl)))
    for m in labels:
        v = [r.get(m) for _, _, r in rows if r.get(m) is not None and not r.get("oom")]
        if v:
            lines.append("- %s: %d measured, %.4g to %.4g (median %.4g)" % (m, len(v), min(v), max(v), sorted(v)[len(v) // 2]))
        else:
            lines.append("- %s: not measured on this device (NaN)" % m)
    oom = sum(1 for _, _, r in rows if r.get("oom"))
    lines.append("- out of memory (not measured): %d" % oom)
    if not a.scale:
        sp = sorted(r.get("train_spread", 0) for _, _, r in rows if "train_spread" in r)
        si = sorted(r.get("infer_spread", 0) for _, _, r in rows if "infer_spread" in r)
        if sp:
            lines.append("- timing spread ((q75 - q25) / median of the repeats), median over configurations: "
                         "train %.2f%%, infer %.2f%%" % (100 * sp[len(sp) // 2], 100 * si[len(si) // 2]))
        pt = sorted(r["train_pass_spread"] for _, _, r in rows if "train_pass_spread" in r)
        pi = sorted(r["infer_pass_spread"] for _, _, r in rows if "infer_pass_spread" in r)
        def q(v, f):  # a quantile of a sorted list, "-" when empty
            return "%.2f%%" % (100 * v[int(f * (len(v) - 1))]) if v else "-"
        if pt:
            # with --infer-builder the inference times of older passes are dropped, so fewer
            # configurations have two inference times than two training steps
            lines.append("- measured in two or more separate passes (measure.py --pass 2): %d configurations "
                         "(%d with two inference times), labels the mean of the passes; disagreement "
                         "between passes ((max - min) / mean), median: train %s, infer %s; 90th percentile: "
                         "train %s, infer %s" % (len(pt), len(pi), q(pt, 0.5), q(pi, 0.5), q(pt, 0.9), q(pi, 0.9)))
        r0 = next((r for _, _, r in rows if "warmup" in r), rows[0][2])
        lines += ["", "Protocol: scripts/measure/measure.py (see its --help): per configuration %s warm-up "
                  "runs then %s timed runs, median; training step = zero_grad + forward + cross-entropy + "
                  "backward + SGD step, inference = no-grad forward; torch %s, %s, %s thread(s)."
                  % (r0.get("warmup", "?"), r0.get("repeats", "?"), r0.get("torch"), r0.get("precision"),
                     r0.get("threads"))]
        lines += ["", "Rebuild: `python3 scripts/space/space.py sample -n N --seed S -o specs.jsonl`, "
                  "`python3 scripts/measure/measure.py specs.jsonl -o measurements.jsonl --device cpu|cuda ...`, "
                  "`python3 scripts/space/make_dataset.py --specs specs.jsonl --measurements measurements.jsonl -o %s`."
                  % os.path.relpath(out, ROOT)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("dataset card -> %s" % path)


if __name__ == "__main__":
    main()
