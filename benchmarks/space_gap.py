#!/usr/bin/env python3
"""A predictor on design-space architectures it never trained on: the signed error of each metric
by batch and by what the networks' stages hold.

For every architecture of --specs measured in --measurements (every batch of it there, first pass),
the architecture's direct ONNX export (scripts/space/space.py export_direct) goes through
seerpredict (real_networks.predict); each cell is the median of (predicted / measured - 1) in %
and, after the slash, the MAPE, over that group's configurations. Groups (any stage of the network):
a squeeze-excitation and a 5x5 depthwise kernel, one of them, neither (space.py sample --se-ops);
narrow besides, networks whose stem has fewer than 32 channels (space.py sample --narrow); mobileone
and repvgg besides, networks with a stage of that style (space.py sample --rep-ops).
Use it on a spec file measured after the predictor was trained (its card names the lines it
trained on): whether the shipped predictor is already wrong on a region of the space a new sample
covers, and in which direction, before a retrain is spent on it.

    /usr/bin/python3 benchmarks/space_gap.py --predictor predictors/cpu_xeon26.seer --device cpu_xeon26 \\
        --specs datasets/space_cpu/specs_e.jsonl --measurements datasets/space_cpu/measurements_xeon26.jsonl

Measured times are taken as they are, or with --ref-normalize P [--ref-window K] put on the scale
of the whole file's median reference time as make_dataset.py puts the labels the predictor learned
(x (median ref_ms / the line's)^P, the line's the median of the K lines measured nearest it);
the reference network's median time (ref_ms) of these lines and of the whole file are printed.
A predictor trained with --ref-normalize is scored on its own scale only with the same P and K:
the machine drifts (the reference 3.22 ms in the median of the first 16,973 lines of
measurements_xeon26.jsonl, 3.44 ms in the 431 after them), and raw times then read as a bias.

--after N scores only the configurations first measured after the file's first N lines (the
predictor's card names the file it trained on and its length): what a sample measured since adds.
The reference's median is then that of the first N lines, the scale the predictor's labels had;
the window of --ref-window still runs over the whole file.

    /usr/bin/python3 benchmarks/space_gap.py --predictor predictors/cpu_xeon26.seer --device cpu_xeon26 \\
        --specs datasets/space_cpu/specs_n.jsonl --measurements datasets/space_cpu/measurements_xeon26.jsonl \\
        --after 16973 --ref-normalize 1 --ref-window 201
"""
import argparse
import collections
import os
import statistics
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "space"))
import make_dataset  # noqa: E402
import real_networks as rn  # noqa: E402
import space  # noqa: E402

LINE_KEY = {"train_ms": "train_time_ms", "infer_ms": "infer_time_ms", "train_mb": "train_mem_mb"}


GROUPS = ("se+k5", "se", "k5", "plain", "narrow") + space.REP_STYLES + ("all",)


def groups(spec):
    """The groups of a network: what its stages hold (se+k5, se, k5 or plain), narrow besides when
    its stem has fewer than 32 channels (space.py sample --narrow), mobileone and repvgg besides when
    a stage is of that style (space.py sample --rep-ops), and all."""
    se = any("se" in st for st in spec.get("stages", ()))
    k5 = any(st.get("kernel") == 5 and st["style"] == "mobilenet" for st in spec.get("stages", ()))
    out = ["se+k5" if se and k5 else "se" if se else "k5" if k5 else "plain"]
    if spec.get("stem", {}).get("channels", 32) < 32:
        out.append("narrow")
    out += [s for s in space.REP_STYLES if any(st["style"] == s for st in spec.get("stages", ()))]
    return out + ["all"]


def cell(errs):
    if not errs:
        return "-"
    return "%+.1f / %.1f" % (100 * statistics.median(errs), 100 * statistics.mean(abs(e) for e in errs))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--predictor", required=True, help="a .seer file")
    ap.add_argument("--device", required=True, help="its device name (label prefix), e.g. cpu_xeon26")
    ap.add_argument("--specs", required=True, help="the spec file (space.py sample)")
    ap.add_argument("--measurements", required=True, help="measure.py's lines (one machine)")
    ap.add_argument("--ref-normalize", type=float, default=None, metavar="P",
                    help="times x (the file's median ref_ms / the line's)^P, as make_dataset.py --ref-normalize")
    ap.add_argument("--ref-window", type=int, default=1, metavar="K",
                    help="the line's ref_ms the median of the K lines nearest it (make_dataset.py --ref-window)")
    ap.add_argument("--after", type=int, default=0, metavar="N",
                    help="only configurations first measured after the file's first N lines (the reference's median "
                         "then that of those N lines)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default="", help="also write the table here (markdown)")
    a = ap.parse_args()
    for p in (a.predictor, a.specs, a.measurements, os.path.join(a.build, "seerpredict")):
        if not os.path.exists(p):
            sys.exit("space_gap: %s: no such file (build with `cmake --build build` for seerpredict)" % p)
    if a.ref_window < 1 or (a.ref_window > 1 and a.ref_normalize is None):
        ap.error("--ref-window %d: a positive number of lines, and only with --ref-normalize" % a.ref_window)
    specs = {s["id"]: s for s in space.read_specs(a.specs)}
    lines = rn.json_lines(a.measurements)
    if a.after < 0 or a.after >= len(lines):
        sys.exit("space_gap: --after %d: %s has %d lines; give how many of them the predictor trained on"
                 % (a.after, a.measurements, len(lines)))
    refs = [r["ref_ms"] for r in lines[:a.after or len(lines)] if r.get("ref_ms")]
    if not refs:
        sys.exit("space_gap: %s: no line of the first %d has ref_ms (measure.py writes it)" % (a.measurements, a.after or len(lines)))
    ref_file = statistics.median(refs)
    if a.ref_normalize is not None:
        if a.ref_window > 1:
            make_dataset.smooth_refs(lines, a.ref_window)
        lines = [make_dataset.normalize_ref(r, ref_file, a.ref_normalize) if r.get("ref_ms") else r for r in lines]
    first, before = {}, set()  # before: configurations measured within the first --after lines
    for n, r in enumerate(lines):  # the first line of each (id, batch): the first pass
        if r.get("id") in specs and "train_time_ms" in r:
            if n < a.after:
                before.add((r["id"], r["batch"]))
            else:
                first.setdefault((r["id"], r["batch"]), r)
    first = {k: r for k, r in first.items() if k not in before}
    if not first:
        sys.exit("space_gap: %s holds no measured line of %s's architectures%s" % (
            a.measurements, a.specs, " after its first %d lines" % a.after if a.after else ""))
    by_arch = collections.defaultdict(dict)
    for (i, b), r in first.items():
        by_arch[i][b] = r
    pa = types.SimpleNamespace(build=a.build, predictor=a.predictor, device=a.device)
    errs = collections.defaultdict(list)  # (group, batch, metric) -> signed errors
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (i, meas) in enumerate(sorted(by_arch.items())):
            p = os.path.join(tmp, i + ".onnx")
            space.export_direct(specs[i], p)
            pred = rn.predict(pa, p, sorted(meas))
            os.remove(p)
            if isinstance(pred, str):
                failed.append("%s: %s" % (i, pred))
                continue
            for b, r in meas.items():
                vals = pred[b][1]
                for m, key in LINE_KEY.items():
                    if r.get(key) and vals.get(m) and vals[m] > 0:
                        e = vals[m] / r[key] - 1
                        for g in groups(specs[i]):
                            errs[(g, b, m)].append(e)
            if (k + 1) % 50 == 0:
                print("space_gap: %d/%d architectures" % (k + 1, len(by_arch)), file=sys.stderr)
    shown = [g for g in GROUPS if any(key[0] == g for key in errs)]
    batches = sorted({b for _, b, _ in errs})
    ref_here = statistics.median(r["ref_ms"] for r in first.values() if r.get("ref_ms"))
    norm = ("times as measured" if a.ref_normalize is None else "times x (%.2f ms / the line's reference%s)^%g"
            % (ref_file, " over %d lines" % a.ref_window if a.ref_window > 1 else "", a.ref_normalize))
    out = ["`%s` (%s) on %d architectures of `%s` (%d configurations), measured in `%s`%s; %s." % (
        a.predictor, a.device, len(by_arch) - len(failed), a.specs, len(first), a.measurements,
        " after its first %d lines" % a.after if a.after else "", norm),
        "Cells: median signed error %% (predicted / measured - 1) / MAPE %%; reference network %.2f ms "
        "in the median of these lines, %.2f ms in %s." % (
            ref_here, ref_file, "the first %d lines'" % a.after if a.after else "the whole file's"), ""]
    head = ["group", "archs"] + ["%s bs%d" % (m, b) for m in LINE_KEY for b in batches]
    out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g in shown:
        n = sum(1 for i in by_arch if g in groups(specs[i]))
        out.append("| %s | %d | " % (g, n) + " | ".join(cell(errs[(g, b, m)]) for m in LINE_KEY for b in batches) + " |")
    if failed:
        out += ["", "Not predicted (%d): %s" % (len(failed), "; ".join(failed[:5]))]
    print("\n".join(out))
    if a.out:
        with open(a.out + ".tmp", "w") as f:
            f.write("\n".join(out) + "\n")
        os.replace(a.out + ".tmp", a.out)


if __name__ == "__main__":
    main()
