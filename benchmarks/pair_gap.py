#!/usr/bin/env python3
"""Would a warning on operator pairs the training data never had tell which real networks a
predictor gets wrong?

A reparameterisable network in its training form (MobileOne, RepGhostNet, FastViT) holds only
operators the design space has, yet puts them in an order it never had (a BatchNormalization fed
by a ReLU or by another BatchNormalization: the identity branch), and the shipped predictors time
it 20-40% fast without a warning. The remedy considered: record in the .seer file the (producer,
consumer) operator pairs of the training graphs' edges and warn on a pair never seen. This script
measures that warning before it is built: for every measured (network, batch) of a real-network
file (real_networks.py's; the networks it holds out left out) it lists the pairs of the network's
Seer graph (seer.onnx_graph, as libseer sees it) that no edge of the training dataset had (pairs
with an operator never seen at all are left to the operator warning), and prints the MAPE and the
mean signed error of the configurations it would warn on against the others, then per pair.

    /usr/bin/python3 benchmarks/pair_gap.py --h5 TRAIN.h5 --predictor predictors/cpu_xeon26.seer \\
        --device cpu_xeon26 --real benchmarks/real_networks_xeon26.jsonl

--widest-sum measures a second statistic the same way (benchmarks/widest_sum_gap.md): the widest sum
a graph adds (widest_sum), warned on above the training graphs' widest, as node counts are; it
prints the MAPE of the networks it would warn on against the others, per width, and how often as
many networks drawn at random are off by as much. --drop-family leaves training graphs out (a
dataset rebuilt now that holds families the file was not trained on).

--pairs A>B[,C>D] measures a warning named in advance (benchmarks/bn_branch_gap.md): the networks with
an edge from operator A to operator B against the others, over every pass of --real (comma-separated,
real_networks.truth: the median of three), the networks the pairs were named from (--named) apart
and out of the chance draw; no training dataset needed.

--route SPECIALIST measures routing instead (benchmarks/route_gap.md): each configuration of --real (every
pass, as --pairs reads them) is predicted by --predictor, unless --predictor reports an operator or a
watched operator pair never trained on (seer_check_range's op and op_pair items) that SPECIALIST,
trained on more, does not report: then SPECIALIST answers. It prints the MAPE of the routed networks
both ways, of the rest, and of all.

TRAIN.h5: the predictor's training dataset (scripts/space/make_dataset.py on the measurement lines
it was trained on); every graph of it is counted, the validation and test splits too, so the
pairs seen are if anything more than the training split's and the warning fires if anything less.
"""
import argparse
import collections
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import real_networks as rn  # noqa: E402
import seer  # noqa: E402

FIELDS = (("train_ms", "train_time_ms"), ("infer_ms", "infer_time_ms"), ("train_mb", "train_mem_mb"))


def train_pairs(path):
    """(op names, op counts, pair counts (n, n): edges from op i to op j) of a PerfGraph file."""
    import h5py
    with h5py.File(path, "r") as f:
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in f["schema/op_types"][:]]
        op, ei = f["node/op"][:].astype(np.int64), f["edge/index"][:].astype(np.int64)
        node_ptr, edge_ptr = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
    base = np.repeat(node_ptr[:-1], np.diff(edge_ptr))  # each edge's graph's first node
    n = len(names)
    pairs = np.bincount(op[ei[:, 0] + base] * n + op[ei[:, 1] + base], minlength=n * n).reshape(n, n)
    return names, np.bincount(op, minlength=n), pairs


def widest_sum(ops, edges, add_ops):
    """The most terms one sum of the graph adds: an Add (or Sum) node's inputs, where an input that
    is itself an Add whose only consumer is this one counts its own inputs (a + b + c written as two
    Adds is one sum of three). A ResNet's residual adds two; a MobileOne block in its training form
    adds three to six branches. 0 without a sum."""
    n = len(ops)
    ins, outs = [[] for _ in range(n)], [[] for _ in range(n)]
    for s, d in edges:
        ins[d].append(s), outs[s].append(d)

    def terms(v):
        return sum(terms(s) if ops[s] in add_ops and len(outs[s]) == 1 else 1 for s in ins[v])
    return max([terms(v) for v in range(n) if ops[v] in add_ops and not (
        len(outs[v]) == 1 and ops[outs[v][0]] in add_ops)] or [0])


def train_widest(path, drop):
    """The widest sum (widest_sum) over the graphs of a PerfGraph file whose family contains none
    of the strings in drop, and how many graphs that was."""
    import h5py
    with h5py.File(path, "r") as f:
        names = [s.decode() if isinstance(s, bytes) else str(s) for s in f["schema/op_types"][:]]
        op, ei = f["node/op"][:], f["edge/index"][:]
        node_ptr, edge_ptr = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
        fam = [s.decode() if isinstance(s, bytes) else str(s) for s in f["graph/family"][:]] \
            if "graph/family" in f else [""] * (len(node_ptr) - 1)
    add_ops = {i for i, s in enumerate(names) if s in ("Add", "Sum")}
    best, kept = 0, 0
    for g in range(len(node_ptr) - 1):
        if any(d in fam[g] for d in drop):
            continue
        kept += 1
        best = max(best, widest_sum(op[node_ptr[g]:node_ptr[g + 1]], ei[edge_ptr[g]:edge_ptr[g + 1]], add_ops))
    return best, kept


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--h5", default="", help="the predictor's training dataset (not with --pairs)")
    ap.add_argument("--predictor", required=True)
    ap.add_argument("--device", required=True, help="the label prefix, e.g. cpu_xeon26")
    ap.add_argument("--real", required=True, help="real_networks.py measurements (JSON lines)")
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="the ONNX exports")
    ap.add_argument("--top", type=int, default=25, help="pairs listed, the most networks first")
    ap.add_argument("--widest-sum", action="store_true",
                    help="measure the warning on the widest sum instead (a network adding more terms in one "
                         "sum than any training graph)")
    ap.add_argument("--drop-family", default="", metavar="S[,S...]",
                    help="leave out the training graphs whose family contains one of these, e.g. the "
                         "families a file was not trained on that its dataset rebuilt now has")
    ap.add_argument("--pairs", default="", metavar="A>B[,C>D...]",
                    help="measure a warning named in advance instead: on a network with an edge from an "
                         "operator A to an operator B (ONNX names); no --h5; --real may name several passes")
    ap.add_argument("--named", default="", metavar="NET[,NET...]",
                    help="with --pairs: the networks the pairs were named from, reported apart and left out "
                         "of the chance draw")
    ap.add_argument("--include-held-out", action="store_true",
                    help="with --pairs or --route: score real_networks.py's held-out networks too")
    ap.add_argument("--route", default="", metavar="SPECIALIST.seer",
                    help="measure routing instead: SPECIALIST answers where --predictor reports an operator "
                         "or watched pair never trained on that SPECIALIST does not; --real may name several passes")
    a = ap.parse_args()
    if a.pairs:
        return pairs_main(a, ap)
    if a.route:
        return route_main(a)
    if not a.h5:
        ap.error("--h5 is required (but with --pairs)")
    for p in (a.h5, a.predictor, a.real):
        if not os.path.exists(p):
            sys.exit("pair_gap: %s: no such file" % p)
    if a.widest_sum:
        return widest_main(a)
    names, op_n, pair_n = train_pairs(a.h5)
    index = {s: i for i, s in enumerate(names)}
    onnx_names = seer.onnx_op_names()
    m = seer.Model(a.predictor)
    rows = []
    for r, p in rn.scored_configs(a.real, a.work):
        g = seer.onnx_graph(p, batch=r["batch"])
        ops = [index.get(onnx_names[i], -1) for i in g[4]]
        gap = set()
        for s, d in g[1]:
            i, j = ops[s], ops[d]
            if min(i, j) >= 0 and op_n[i] and op_n[j] and not pair_n[i, j]:
                gap.add("%s -> %s" % (names[i], names[j]))
        pred = m.predict_onnx(p, batch=r["batch"])
        rows.append((r["name"], gap, [pred["%s_%s" % (a.device, k)] / r[fld] - 1 for k, fld in FIELDS]))
    enough(rows, a)
    print("pair_gap: %d configurations of %d networks in %s; %s; %d of %d operator pairs seen in %s" % (
        len(rows), len({r[0] for r in rows}), a.real, a.predictor, int((pair_n > 0).sum()), pair_n.size, a.h5))
    print()
    print("| operator pair never in the training graphs | networks | configurations | MAPE %: training step / "
          "inference / memory | mean signed error % | the networks |")
    print("|---|---|---|---|---|---|")

    def line(label, sel, who=""):
        e = np.array([r[2] for r in sel]) * 100
        print("| %s | %d | %d | %.1f / %.1f / %.1f | %+.1f / %+.1f / %+.1f | %s |" % (
            label, len({r[0] for r in sel}), len(sel), *np.abs(e).mean(0), *e.mean(0), who))
    line("*any unseen pair: the warning*", [r for r in rows if r[1]])
    line("*none*", [r for r in rows if not r[1]])
    nets = collections.defaultdict(set)
    for name, gap, _ in rows:
        for pair in gap:
            nets[pair].add(name)
    for pair in sorted(nets, key=lambda q: (-len(nets[q]), q))[:a.top]:
        who = sorted(nets[pair])
        line(pair, [r for r in rows if pair in r[1]], ", ".join(who[:6]) + (", ..." if len(who) > 6 else ""))
    if len(nets) > a.top:
        print("\n%d more pairs, each in fewer networks." % (len(nets) - a.top))


def parse_pairs(text):
    """{(A, B)} of "A>B,C>D"; ValueError naming the item that is not A>B."""
    want = set()
    for q in (x.strip() for x in text.split(",") if x.strip()):
        src, gt, dst = q.partition(">")
        if not gt or not src.strip() or not dst.strip():
            raise ValueError("--pairs %s: give A>B, e.g. Relu>BatchNormalization" % q)
        want.add((src.strip(), dst.strip()))
    if not want:
        raise ValueError("--pairs: no pair given")
    return want


def has_pair(ops, edges, want):
    """Whether an edge (s, d) of a graph whose node i is operator ops[i] goes from A to B of want."""
    return any((ops[s], ops[d]) in want for s, d in edges)


def pairs_main(a, ap):
    """--pairs: the configurations of networks with one of the named edges against the others, the
    networks of --named apart, and the chance that as many other networks are off by as much."""
    try:
        want = parse_pairs(a.pairs)
    except ValueError as e:
        ap.error(str(e))
    named = {n for n in a.named.split(",") if n}
    onnx_names = seer.onnx_op_names()
    m = seer.Model(a.predictor)
    rows, fires = [], {}
    for net, b, y, path in passes_configs(a, [a.predictor]):
        if net not in fires:
            g = seer.onnx_graph(path, batch=1)
            fires[net] = has_pair([onnx_names[i] for i in g[4]], g[1], want)
        rows.append((net, fires[net], signed_errors(a, m.predict_onnx(path, batch=b), y)))
    enough(rows, a)
    print("pair_gap --pairs %s: %d configurations of %d networks in %s; %s" % (
        a.pairs, len(rows), len({r[0] for r in rows}), a.real, a.predictor))
    print()
    print("| which | networks | configurations | MAPE %: training step / inference / memory | mean signed error % "
          "| the networks |")
    print("|---|---|---|---|---|---|")
    line = lambda label, sel: net_line(label, sel, 10)
    line("*a named pair: the warning*", [r for r in rows if r[1]])
    line("of them, not among --named", [r for r in rows if r[1] and r[0] not in named])
    line("*no named pair*", [r for r in rows if not r[1]])
    others = [r for r in rows if r[0] not in named]
    by_chance(others, sorted({r[0] for r in others if r[1]}))


def passes_configs(a, files):
    """(network, batch, measured labels, ONNX path) of every configuration of the passes of --real
    (comma-separated, real_networks.truth: the median of three) that has a training-step label and an
    export in --work, real_networks.py's held-out networks only with --include-held-out; exits when
    a pass or one of files is missing."""
    passes = [p for p in a.real.split(",") if p]
    for p in passes + files:
        if not os.path.exists(p):
            sys.exit("pair_gap: %s: no such file" % p)
    for (net, b), y in sorted(rn.truth(passes).items()):
        path = os.path.join(a.work, net + ".onnx")
        if "train_time_ms" in y and os.path.exists(path) and (net not in rn.HELD_OUT or a.include_held_out):
            yield net, b, y, path


def signed_errors(a, pred, y):
    """prediction / measurement - 1 per label of FIELDS, the predictions of device --device."""
    return [pred["%s_%s" % (a.device, k)] / y[fld] - 1 for k, fld in FIELDS]


def enough(rows, a):
    """Exits when fewer than 10 configurations could be scored."""
    if len(rows) < 10:
        sys.exit("pair_gap: %d configurations with an ONNX export in %s: too few" % (len(rows), a.work))


def route_main(a):
    """--route: --predictor's prediction, or the specialist's where --predictor reports a structure
    never trained on that the specialist does not; the MAPE of both answers on the routed networks,
    and of the primary's on the rest."""
    configs = list(passes_configs(a, [a.predictor, a.route]))
    router = seer.Routed(a.predictor, a.route)  # as seerpredict --device routes
    rows = []  # (network, routed, primary's signed errors, the answer's)
    for net, b, y, path in configs:
        pp = router.main.predict_onnx(path, batch=b)
        answer, _, who, _ = router.predict_onnx(path, batch=b)
        rows.append((net, who == "specialist", signed_errors(a, pp, y), signed_errors(a, answer, y)))
    enough(rows, a)
    print("pair_gap --route %s: %d configurations of %d networks in %s; primary %s" % (
        a.route, len(rows), len({r[0] for r in rows}), a.real, a.predictor))
    print()
    print("| which | answered by | networks | configurations | MAPE %: training step / inference / memory "
          "| mean signed error % | the networks |")
    print("|---|---|---|---|---|---|---|")
    routed = [r for r in rows if r[1]]
    for label, sel in (("routed", routed), ("not routed", [r for r in rows if not r[1]]), ("all", rows)):
        for who, k in (("the primary", 2), ("routed", 3)) if label != "not routed" else (("the primary", 2),):
            net_line("%s | %s" % (label, who), [(r[0], r[1], r[k]) for r in sel], 12 if label == "routed" else 0)


def widest_main(a):
    drop = [d for d in a.drop_family.split(",") if d]
    train_w, kept = train_widest(a.h5, drop)
    onnx_names = seer.onnx_op_names()
    add_ops = {i for i, s in enumerate(onnx_names) if s in ("Add", "Sum")}
    m = seer.Model(a.predictor)
    rows, widest = [], {}
    for r, p in rn.scored_configs(a.real, a.work):
        if r["name"] not in widest:
            g = seer.onnx_graph(p, batch=r["batch"])
            widest[r["name"]] = widest_sum(g[4], g[1], add_ops)
        pred = m.predict_onnx(p, batch=r["batch"])
        rows.append((r["name"], widest[r["name"]], [pred["%s_%s" % (a.device, k)] / r[fld] - 1 for k, fld in FIELDS]))
    enough(rows, a)
    print("pair_gap --widest-sum: %d configurations of %d networks in %s; %s; the widest sum of the %d graphs "
          "of %s%s: %d terms" % (len(rows), len({r[0] for r in rows}), a.real, a.predictor, kept, a.h5,
                                 " (families with %s left out)" % ", ".join(drop) if drop else "", train_w))
    print()
    print("| widest sum in the network | networks | configurations | MAPE %: training step / inference / memory "
          "| mean signed error % | the networks |")
    print("|---|---|---|---|---|---|")
    line = lambda label, sel: net_line(label, sel, 8)
    line("*above the training's %d: the warning*" % train_w, [r for r in rows if r[1] > train_w])
    line("*at most %d*" % train_w, [r for r in rows if r[1] <= train_w])
    for w in sorted({r[1] for r in rows}):
        line("%d terms" % w, [r for r in rows if r[1] == w])
    # chance: as many networks drawn at random (seeded), the share whose configurations' MAPE is at
    # least the warned ones', per label
    by_chance(rows, sorted({r[0] for r in rows if r[1] > train_w}))


def net_line(label, sel, shown):
    """A table row of the (network, flag, [signed errors]) rows sel: networks, configurations, MAPE
    and mean signed error per label, the first `shown` networks by name; nothing when sel is empty."""
    if not sel:
        return
    e = np.array([r[2] for r in sel]) * 100
    who = sorted({r[0] for r in sel})
    print("| %s | %d | %d | %.1f / %.1f / %.1f | %+.1f / %+.1f / %+.1f | %s |" % (
        label, len(who), len(sel), *np.abs(e).mean(0), *e.mean(0),
        (", ".join(who[:shown]) + (", ..." if len(who) > shown else "")) if shown else "-"))


def by_chance(rows, warned, draws=2000):
    """Prints how often as many networks of rows as warned, drawn at random (seeded), have a MAPE
    (over their configurations, per label) at least the warned networks'."""
    if not warned:
        return
    nets = sorted({r[0] for r in rows})
    err = {n: np.array([np.abs(r[2]) for r in rows if r[0] == n]) for n in nets}
    mape = lambda sel: np.concatenate([err[n] for n in sel]).mean(0)
    ref, rng = mape(warned), np.random.default_rng(1)
    hits = sum(mape(rng.choice(nets, len(warned), replace=False)) >= ref for _ in range(draws))
    print("\nBy chance: of %d draws of %d networks at random, %s had a MAPE at least the warned networks' "
          "(training step / inference / memory)." % (draws, len(warned), " / ".join(
              "%.1f%%" % (100.0 * h / draws) for h in hits)))


if __name__ == "__main__":
    main()
