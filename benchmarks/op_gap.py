#!/usr/bin/env python3
"""Which operators real networks use that a predictor's training data never had, and what the
networks holding them cost in error.

For every measured (network, batch) of a real-network file (benchmarks/real_networks.py's; the
networks it holds out left out), the predictor's range check (libseer seer_check_range, as
seerpredict warns) lists the operator types the training graphs never held. Prints, per such
operator, how many networks hold it and the MAPE of their configurations, against the networks
with no unseen operator; --space-specs marks the operators a design-space file's direct ONNX
export holds (a family measured since the predictor was trained, e.g. specs_z.jsonl).

  /usr/bin/python3 benchmarks/op_gap.py --predictor predictors/cpu_xeon26.seer --device cpu_xeon26 \\
      --real benchmarks/real_networks_xeon26.jsonl --space-specs datasets/space_cpu/specs_z.jsonl
"""
import argparse
import collections
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "scripts", "space"))
import real_networks as rn  # noqa: E402
import seer  # noqa: E402

FIELDS = (("train_ms", "train_time_ms"), ("infer_ms", "infer_time_ms"), ("train_mb", "train_mem_mb"))


def spec_ops(path, limit):
    """The operator names of Seer's graphs of the first limit specs of a design-space file."""
    import space
    names, ops = seer.onnx_op_names(), set()
    with tempfile.TemporaryDirectory() as d:
        for s in space.read_specs(path)[:limit]:
            p = os.path.join(d, s["id"] + ".onnx")
            space.export_direct(s, p)
            ops |= {names[i] for i in seer.onnx_graph(p, batch=1)[4]}
    return ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--predictor", required=True)
    ap.add_argument("--device", required=True, help="the label prefix, e.g. cpu_xeon26")
    ap.add_argument("--real", required=True, help="real_networks.py measurements (JSON lines)")
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="the ONNX exports")
    ap.add_argument("--space-specs", default="", help="a design-space specs file whose operators to mark")
    ap.add_argument("--space-limit", type=int, default=60, help="how many of its specs to export (default 60)")
    a = ap.parse_args()
    m = seer.Model(a.predictor)
    rows = []
    for r, p in rn.scored_configs(a.real, a.work):
        g = seer.onnx_graph(p, batch=r["batch"])
        pred = m.predict_onnx(p, batch=r["batch"])
        gap = {it["name"] for it in m.check_range(*g)["out_of_range"] if it["kind"] == "op"}
        ape = [abs(pred["%s_%s" % (a.device, k)] / r[fld] - 1) for k, fld in FIELDS]
        rows.append((r["name"], gap, ape))
    if len(rows) < 10:
        sys.exit("op_gap: %d configurations with an ONNX export in %s: too few" % (len(rows), a.work))
    covered = spec_ops(a.space_specs, a.space_limit) if a.space_specs else set()
    nets = collections.defaultdict(set)
    for name, gap, _ in rows:
        for op in gap:
            nets[op].add(name)
    print("op_gap: %d configurations of %d networks in %s; %s" % (
        len(rows), len({r[0] for r in rows}), a.real, a.predictor))
    print()
    mark = "| in %s |" % os.path.basename(a.space_specs) if a.space_specs else "|"
    print("| operator never in the training data | networks | configurations | MAPE %: training step / inference / memory " + mark)
    print("|---|---|---|---" + ("|---|" if a.space_specs else "|"))

    def line(label, sel, extra=""):
        e = np.array([r[2] for r in sel]) * 100
        print("| %s | %d | %d | %.1f / %.1f / %.1f |%s" % (label, len({r[0] for r in sel}), len(sel),
                                                          *e.mean(0), extra))
    for op in sorted(nets, key=lambda o: (-len(nets[o]), o)):
        line(op, [r for r in rows if op in r[1]], (" %s |" % ("yes" if op in covered else "no")) if a.space_specs else "")
    line("*any unseen operator*", [r for r in rows if r[1]], " |" if a.space_specs else "")
    line("*none*", [r for r in rows if not r[1]], " |" if a.space_specs else "")


if __name__ == "__main__":
    main()
