#!/usr/bin/env python3
"""The Python binding and the safetensors export.

    test_python.py MODEL.seer DATA.h5 PREDS.csv MODEL.safetensors NET.onnx SEERPREDICT

- the binding's predictions for the graphs of PREDS.csv (graph id, fp32 prediction per metric,
  written by test_export from the C API) equal the C ones;
- predict_onnx equals seerpredict --json on the same ONNX file and batch sizes;
- the safetensors file obeys the format's rules (header length, JSON, dtypes, offsets that tile
  the buffer), and broken variants of it are refused;
- a SeerNet forward pass written here in numpy from the safetensors weights and the JSON sidecar
  alone (schema, normalisation, architecture) reproduces libseer's predictions: the export is
  complete enough for another framework;
- errors arrive as SeerError with the file named.
Needs python3-numpy and python3-h5py; the build's libseer.so/libseeronnx.so (SEER_LIB_DIR).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import seer  # noqa: E402
import seer_safetensors  # noqa: E402

failures = 0


def check(cond, msg):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", msg, file=sys.stderr)


def relerr(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))) if a.size else 0.0


def numpy_seernet(t, arch, xn, xe, xg, src, dst):
    """SeerNet forward for one graph (equations of src/model/seernet.c), float64."""
    H, L, agg = arch["hidden"], arch["blocks"], arch["agg"]

    def lin(name, x):
        return x @ t[name + ".weight"].astype(np.float64).T + t[name + ".bias"]

    def mlp(name, x):
        return lin(name + ".2", np.maximum(lin(name + ".0", x), 0))

    def attn_pool(h, name):
        s = lin(name, h)[:, 0] if len(h) else np.zeros(0)
        if not len(h):
            return np.zeros(H)
        a = np.exp(s - s.max())
        return (a / a.sum()) @ h

    N = len(xn)
    h, e, g = mlp("enc_node", xn), mlp("enc_edge", xe), mlp("enc_global", xg[None, :])[0]
    z = attn_pool(h, "gnpb.attn")
    for l in range(L):
        b = "block%d." % l
        m = mlp(b + "phi_e", np.concatenate([e, h[src], h[dst], np.repeat(g[None], len(e), 0)], 1))
        e = e + m
        mean = np.zeros((N, H))
        np.add.at(mean, dst, m)
        cnt = np.bincount(dst, minlength=N)[:, None]
        mean = mean / np.maximum(cnt, 1)
        if agg == "synmm":
            mx = np.full((N, H), -np.inf)
            np.maximum.at(mx, dst, m)
            mx[cnt[:, 0] == 0] = 0
            a = np.concatenate([mx, mean], 1)
        else:
            a = mean
        h = h + mlp(b + "phi_v", np.concatenate([a, h + z, np.repeat(g[None], N, 0)], 1))
        z = mlp(b + "phi_z", (attn_pool(h, b + "attn") + z)[None])[0]
        r = lin(b + "readout", np.concatenate([h.max(0), h.mean(0)])[None])[0]
        g = g + mlp(b + "phi_u", np.concatenate([r, z, g])[None])[0]
    return np.array([mlp("head%d" % k, g[None])[0, 0] for k in range(arch["outputs"])])


def main():
    model_path, data, preds_csv, st_path, onnx_path, seerpredict = sys.argv[1:7]
    m = seer.Model(model_path)
    M = m.n_metrics
    rows = np.loadtxt(preds_csv, delimiter=",", ndmin=2)
    ids, c_pred = rows[:, 0].astype(int), rows[:, 1:]
    with h5py.File(data, "r") as f:
        npt, ept = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
        xn, xe, ei, xg = f["node/x"][:], f["edge/x"][:], f["edge/index"][:], f["global/x"][:]
    graphs = [(xn[npt[g]:npt[g + 1]], ei[ept[g]:ept[g + 1]], xe[ept[g]:ept[g + 1]], xg[g]) for g in ids]

    # 1. binding == C API (same library, same inputs: identical)
    py = m.predict_batch(graphs)
    check(py.shape == c_pred.shape, "shape %s vs %s" % (py.shape, c_pred.shape))
    err = relerr(py, c_pred)
    print("binding vs C API: %d graphs x %d metrics, worst relative difference %.3g" % (len(ids), M, err))
    check(err <= 1e-12, "binding predictions differ from the C API's by %.3g" % err)
    one = m.predict(*graphs[0])
    check(relerr(one, c_pred[0]) <= 1e-6, "single-graph predict differs: %s vs %s" % (one, c_pred[0]))

    # 2. predict_onnx == seerpredict --json
    out = subprocess.run([seerpredict, model_path, onnx_path, "--batch", "1,8", "--json"],
                         capture_output=True, text=True, check=True).stdout
    res = json.loads(out)["results"]
    for r in res:
        py_onnx, rng = m.predict_onnx(onnx_path, batch=r["batch"], with_range=True)
        for name, v in r["metrics"].items():
            check(abs(py_onnx[name] - v["value"]) <= 1e-5 * abs(v["value"]),
                  "onnx batch %d %s: binding %g, seerpredict %g" % (r["batch"], name, py_onnx[name], v["value"]))
        # the training-range report: the same as seerpredict's
        check(rng["in_range"] == r["in_range"] and rng["count"] == r["out_of_range_count"],
              "range report: binding %s/%d, seerpredict %s/%d" % (rng["in_range"], rng["count"],
                                                                  r["in_range"], r["out_of_range_count"]))
        check([(i["kind"], i["name"]) for i in rng["out_of_range"][:len(r["out_of_range"])]]
              == [(i["kind"], i["name"]) for i in r["out_of_range"]], "out_of_range lists differ")
        # the share of operators of types never trained on: the same both ways, and the op items' count
        unseen = sum(i["value"] for i in rng["out_of_range"] if i["kind"] == "op") / r["operators"]
        check(rng["unseen_op_share"] is not None and abs(rng["unseen_op_share"] - r["unseen_op_share"]) < 1e-6
              and abs(r["unseen_op_share"] - unseen) < 1e-6 and r["unseen_op_share_warn"] == seer.UNSEEN_OP_WARN,
              "unseen_op_share: binding %s, seerpredict %s, from the op items %s" % (
                  rng["unseen_op_share"], r["unseen_op_share"], unseen))
    print("predict_onnx vs seerpredict --json: %d batch sizes agree (values and range reports)" % len(res))
    # MobileOne's identity branches (a BatchNormalization reading a ReLU), which no training cell has:
    # the binding reports the watched pair as seerpredict does, with its edges
    mo = os.path.join(os.path.dirname(onnx_path), "mobileone_s1.onnx")
    rm = json.loads(subprocess.run([seerpredict, model_path, mo, "--json"], capture_output=True, text=True,
                                   check=True).stdout)["results"][0]
    _, rng_mo = m.predict_onnx(mo, batch=rm["batch"], with_range=True)
    pairs = [(i["name"], i["value"]) for i in rng_mo["out_of_range"] if i["kind"] == "op_pair"]
    check(pairs and pairs == [(i["name"], i["value"]) for i in rm["out_of_range"] if i["kind"] == "op_pair"]
          and pairs[0][0] == "Relu>BatchNormalization" and pairs[0][1] >= 10,
          "mobileone_s1: binding pairs %s, seerpredict %s" % (pairs, rm["out_of_range"]))
    print("operator pairs never trained on, in mobileone_s1: %s (binding and seerpredict)" % pairs)
    # a transformer to a model of convolution cells: most of its operators (MatMul, Softmax,
    # LayerNormalization, ...) are of types it never trained on: above UNSEEN_OP_WARN, a line of its own
    vit = os.path.join(os.path.dirname(onnx_path), "vit_b_16.onnx")
    rv = json.loads(subprocess.run([seerpredict, model_path, vit, "--json"], capture_output=True, text=True,
                                   check=True).stdout)["results"][0]
    txt = subprocess.run([seerpredict, model_path, vit], capture_output=True, text=True, check=True).stdout
    line = "warning: %.0f%% of its operators are of types the training data never had" % (100 * rv["unseen_op_share"])
    check(rv["unseen_op_share"] > seer.UNSEEN_OP_WARN and line in txt,
          "vit_b_16: share %s, no line %r in %s" % (rv["unseen_op_share"], line, txt[:400]))
    known = subprocess.run([seerpredict, model_path, onnx_path], capture_output=True, text=True, check=True).stdout
    check(res[0]["unseen_op_share"] <= seer.UNSEEN_OP_WARN and "of types the training data never had" not in known,
          "%s (unseen share %s) warned of unseen operators: %s" % (onnx_path, res[0]["unseen_op_share"], known[:400]))
    print("unseen operators: %.0f%% of vit_b_16's, %.1f%% of %s's; the line for the first only" % (
        100 * rv["unseen_op_share"], 100 * res[0]["unseen_op_share"], os.path.basename(onnx_path)))
    # a 3-D network: windows over three spatial dimensions, which no feature describes, are a guess
    # whatever the ranges say: one "structure" item, in both reports, and a warning line
    c3 = os.path.join(os.path.dirname(onnx_path), "conv3d.onnx")
    r3 = json.loads(subprocess.run([seerpredict, model_path, c3, "--batch", "2", "--json"], capture_output=True,
                                   text=True, check=True).stdout)["results"][0]
    _, rng3 = m.predict_onnx(c3, batch=2, with_range=True)
    st = [i for i in r3["out_of_range"] if i["kind"] == "structure"]
    check(r3["in_range"] is False and len(st) == 1 and st[0]["value"] == 4, "conv3d: %s" % r3)
    check(rng3["in_range"] is False and rng3["count"] == r3["out_of_range_count"]
          and [(i["kind"], i["name"]) for i in rng3["out_of_range"] if i["kind"] == "structure"]
          == [(i["kind"], i["name"]) for i in st], "conv3d: binding %s, seerpredict %s" % (rng3, r3))
    check(seer.onnx_info(c3, batch=2)["deep_windows"] == 4 and seer.onnx_info(onnx_path)["deep_windows"] == 0,
          "onnx_info deep_windows")
    txt = subprocess.run([seerpredict, model_path, c3, "--batch", "2"], capture_output=True, text=True,
                         check=True).stdout
    check("warning: 4 operators sliding a window over 3 or more spatial dimensions" in txt, txt)
    print("a 3-D network: 4 windows over three spatial dimensions reported (JSON, binding, text)")
    # an operator newer than the model is its Other (the shipped PerfSAGE reads operator types)
    shipped = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "predictors", "transfer_gpu.seer")
    po = m if m.uses_op_types else seer.Model(shipped)
    check(po.uses_op_types and "Other" in po.op_types, "%s reads no operator types" % shipped)
    names = seer.onnx_op_names()
    ids = seer.onnx_graph(onnx_path, batch=1)[4]
    renamed = list(names)
    renamed[ids[0]] = "AddedLater"
    got, plain = po.remap_ops(ids, renamed), po.remap_ops(ids, names)
    want = [po.op_types.index("Other") if k == ids[0] else p for k, p in zip(ids, plain)]
    check(list(got) == want and want != list(plain),
          "an operator the model never saw is not mapped to its Other")
    print("an operator the model never saw predicts as its Other")
    # a dataset graph pushed out of range is reported; the same graph as read is not (for features)
    base = m.check_range(*graphs[0])
    pushed = m.check_range(graphs[0][0] * 0 + 1e9, *graphs[0][1:])
    check(base["in_range"] is not None and pushed["in_range"] is False and pushed["count"] > base["count"]
          and all(i["kind"] == "node" for i in pushed["out_of_range"][:pushed["count"] - base["count"]]),
          "check_range: %s / %s" % (base, pushed))
    # ids given as floats: whole numbers pass, a fraction, a NaN or a value beyond int32 is refused
    # (a cast would truncate or wrap them silently)
    g0 = graphs[0]
    check(relerr(m.predict(g0[0], g0[1].astype(np.float64), *g0[2:]), m.predict(*g0)) == 0,
          "whole-number float edge ids predict differently")
    for what, ei in (("a fraction", g0[1] + 0.5), ("a NaN", g0[1] * np.nan), ("2^33", g0[1].astype(np.int64) + 2**33)):
        try:
            m.predict(g0[0], ei, *g0[2:])
            check(False, "edge_index with %s accepted" % what)
        except seer.SeerError as e:
            check("edge_index" in str(e), "edge_index with %s: %s" % (what, e))
    print("edge ids: floats holding whole numbers accepted; a fraction, a NaN, 2^33 refused")
    spread = m.member_spread(*graphs[0])  # a single model: its one member agrees with itself
    check(sorted(spread) == sorted(n for n, _ in m.metrics) and set(spread.values()) == {1.0},
          "member_spread of a single model: %s" % spread)
    check(m.spread_warn == {n: seer.SPREAD_WARN for n, _ in m.metrics}, "spread_warn of a single model: %s" % m.spread_warn)
    # the shipped CPU ensemble sets its own thresholds (seerexport --spread-warn), one per metric
    ens = seer.Model(shipped.replace("transfer_gpu.seer", "cpu_xeon26.seer"))
    w = ens.spread_warn
    check(sorted(w) == sorted(n for n, _ in ens.metrics) and all(1 < v < 3 and v != seer.SPREAD_WARN for v in w.values()),
          "spread_warn of the shipped cpu_xeon26.seer: %s" % w)
    print("spread_warn: %.1f for a single model; the shipped CPU ensemble's own: %s" % (
        seer.SPREAD_WARN, ", ".join("%.2f" % v for v in w.values())))

    g = seer.onnx_graph(onnx_path, batch=8)
    check(relerr(m.predict(*g), list(res[1]["metrics"][n]["value"] for n, _ in m.metrics)) <= 1e-5,
          "onnx_graph arrays predict differently")

    # 3. safetensors rules, and broken variants refused
    tensors, meta = seer_safetensors.read(st_path)
    check(meta.get("producer") == "seerexport", "metadata %s" % meta)
    raw = open(st_path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    first = next(k for k in header if k != "__metadata__")
    bad = {
        "truncated": raw[:-4],
        "header length past the end": struct.pack("<Q", len(raw)) + raw[8:],
        "not JSON": raw[:8] + b"x" + raw[9:],
    }
    h2 = dict(header)
    h2[first] = dict(h2[first], data_offsets=[h2[first]["data_offsets"][0] + 4, h2[first]["data_offsets"][1] + 4])
    bad["overlapping offsets"] = None, h2
    h3 = dict(header)
    h3[first] = dict(h3[first], shape=[h3[first]["shape"][0] + 1] + h3[first]["shape"][1:])
    bad["shape and length disagree"] = None, h3
    with tempfile.TemporaryDirectory() as d:
        for what, blob in bad.items():
            if isinstance(blob, tuple):
                js = json.dumps(blob[1]).encode()
                blob = struct.pack("<Q", len(js)) + js + raw[8 + n:]
            p = os.path.join(d, "bad.safetensors")
            open(p, "wb").write(blob)
            try:
                seer_safetensors.read(p)
                check(False, "safetensors reader accepted a file with %s" % what)
            except ValueError:
                pass
    print("safetensors: %d tensors follow the format rules; %d broken variants refused" % (len(tensors), len(bad)))

    # 4. an independent numpy forward from safetensors + sidecar reproduces libseer
    side = json.load(open(st_path[:-len(".safetensors")] + ".json"))
    arch, nrm = side["architecture"], side["normalisation"]
    check(side["schema"]["metrics"] == [n for n, _ in m.metrics], "sidecar metrics")
    t64 = {k: v.astype(np.float64) for k, v in tensors.items()}
    worst = 0.0
    for k, (gx, gi, ge, gg) in enumerate(graphs[:40]):
        sx = lambda a, kind: (a.astype(np.float64) - np.array(nrm[kind + "_mean"])) / np.array(nrm[kind + "_std"])
        out = numpy_seernet(t64, arch, sx(gx, "node"), sx(ge, "edge"), sx(gg, "global"),
                            gi[:, 0].astype(int), gi[:, 1].astype(int))
        y = np.exp(out * np.array(nrm["label_sigma"]) + np.array(nrm["label_mu"]))
        worst = max(worst, relerr(y, c_pred[k]))
    print("numpy forward from safetensors + sidecar vs libseer: worst relative difference %.3g" % worst)
    check(worst <= 1e-4, "numpy forward differs from libseer by %.3g" % worst)

    # 5. errors
    try:
        seer.Model(os.path.join(os.path.dirname(model_path), "missing.seer"))
        check(False, "a missing model loaded")
    except seer.SeerError as e:
        check("missing.seer" in str(e), "error does not name the file: %s" % e)
    try:
        m.predict(graphs[0][0][:, :3], *graphs[0][1:])
        check(False, "a graph with the wrong feature width was accepted")
    except seer.SeerError as e:
        check("feature widths" in str(e), "message: %s" % e)
    m.close()
    if failures:
        print("test_python: %d check(s) failed" % failures, file=sys.stderr)
        return 1
    print("test_python: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
