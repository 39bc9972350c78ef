#!/usr/bin/env python3
"""PyTorch reference of SeerNet (the same model as src/model/seernet.c, parameter names included).

  seernet_ref.py dump OUT.seerdump [--agg mean|synmm] [--blocks L] [--hidden H] [--seed S]
      Builds a small batch of edge-case graphs (an empty graph, a single node, isolated nodes, a
      huge-degree node, self loops, parallel edges, random graphs), random float32 weights (torch's
      default init), and computes in float64 the predictions, the masked MSE loss and every
      parameter gradient. Writes them in Seer's container format (magic SEERDUMP) for
      tests/test_reference.c, which runs the C model on the same batch and weights (llm.c's method).

  seernet_ref.py bench --data datasets/nb201_brpnas.h5 [--hidden 256 --blocks 1 --batch 128 --steps 30
                 --threads 2 --label titan_rtx_256_ms]
      Training throughput (graphs/s) of this reference on the CPU, for benchmarks/bench_train_cpu.sh.

  seernet_ref.py infer MODEL.safetensors --data datasets/nb201_brpnas.h5 [--graphs 300 --batch 64
                 --threads 1 --onnx NET.onnx --predictions OUT.csv]
      Inference speed of this reference with the weights of a seerexport --safetensors file (and
      its JSON sidecar): single-graph latency and batched throughput on the dataset's first
      graphs, and single-graph latency on ONNX models (converted through libseeronnx), for
      benchmarks/bench_infer.sh. --predictions writes graph,prediction... for comparison.

Needs torch (Debian: python3-torch), numpy; h5py for bench.
"""
import argparse
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from seer_container import crc32c  # noqa: E402


def mlp(fin, hid, fout):
    return nn.Sequential(nn.Linear(fin, hid), nn.ReLU(), nn.Linear(hid, fout))


class Block(nn.Module):
    def __init__(self, H, agg):
        super().__init__()
        aw = 2 * H if agg == "synmm" else H
        self.phi_e = mlp(4 * H, H, H)
        self.phi_v = mlp(aw + 2 * H, H, H)
        self.attn = nn.Linear(H, 1)
        self.phi_z = mlp(H, H, H)
        self.readout = nn.Linear(2 * H, H)
        self.phi_u = mlp(3 * H, H, H)


def seg_max(x, seg, n):
    """Row-wise max per segment; empty segments give 0 (as the C op)."""
    out = torch.zeros(n, x.shape[1], dtype=x.dtype)
    return out.scatter_reduce(0, seg[:, None].expand(-1, x.shape[1]), x, "amax", include_self=False)


def seg_mean(x, seg, n):
    out = torch.zeros(n, x.shape[1], dtype=x.dtype).index_add(0, seg, x)
    cnt = torch.zeros(n, dtype=x.dtype).index_add(0, seg, torch.ones(len(seg), dtype=x.dtype))
    return out / cnt.clamp(min=1)[:, None]


def attn_pool(h, score, ng, G):
    s = score[:, 0]
    smax = torch.zeros(G, dtype=h.dtype).scatter_reduce(0, ng, s, "amax", include_self=False)
    e = torch.exp(s - smax[ng].detach())
    z = torch.zeros(G, dtype=h.dtype).index_add(0, ng, e)
    alpha = e / z[ng]
    return torch.zeros(G, h.shape[1], dtype=h.dtype).index_add(0, ng, alpha[:, None] * h)


class SeerNet(nn.Module):
    def __init__(self, H, L, Fn, Fe, Fg, M, agg="mean", head_hidden=None):
        super().__init__()
        self.H, self.L, self.agg = H, L, agg
        self.enc_node = mlp(Fn, H, H)
        self.enc_edge = mlp(Fe, H, H)
        self.enc_global = mlp(Fg, H, H)
        self.gnpb = nn.Module()
        self.gnpb.attn = nn.Linear(H, 1)
        for l in range(L):
            setattr(self, "block%d" % l, Block(H, agg))
        self.M = M
        for m in range(M):
            setattr(self, "head%d" % m, mlp(H, head_hidden or H, 1))

    def forward(self, xn, xe, xg, src, dst, ng, eg, G):
        N = xn.shape[0]
        h, e, g = self.enc_node(xn), self.enc_edge(xe), self.enc_global(xg)
        z = attn_pool(h, self.gnpb.attn(h), ng, G)
        for l in range(self.L):
            b = getattr(self, "block%d" % l)
            m = b.phi_e(torch.cat([e, h[src], h[dst], g[eg]], 1))
            e = e + m
            if self.agg == "synmm":
                a = torch.cat([seg_max(m, dst, N), seg_mean(m, dst, N)], 1)
            else:
                a = seg_mean(m, dst, N)
            h = h + b.phi_v(torch.cat([a, h + z[ng], g[ng]], 1))
            z = b.phi_z(attn_pool(h, b.attn(h), ng, G) + z)
            r = b.readout(torch.cat([seg_max(h, ng, G), seg_mean(h, ng, G)], 1))
            g = g + b.phi_u(torch.cat([r, z, g], 1))
        return torch.cat([getattr(self, "head%d" % m)(g) for m in range(self.M)], 1)


def masked_mse(pred, t):
    """Sum over labels of each label's MSE over its measured (non-NaN) graphs."""
    mask = ~torch.isnan(t)
    losses = []
    for m in range(t.shape[1]):
        k = mask[:, m]
        if k.any():
            losses.append(((pred[k, m] - t[k, m]) ** 2).mean())
    return torch.stack(losses).sum()


# ---- Seer's container format (src/common/container.h) ----
KV_STR, KV_I64, KV_F64, KV_I64ARR = 1, 2, 3, 4
DT = {np.dtype(np.float32): 0, np.dtype(np.int64): 3, np.dtype(np.float64): 4}


def write_container(path, magic, kvs, tensors):
    """Seer's container (src/common/container.h), with its CRC-32C checksums (flags bit 1)."""
    h = bytearray(magic)
    h += struct.pack("<IIQQ", 1, 1, len(kvs), len(tensors))
    for key, typ, val in kvs:
        kb = key.encode()
        h += struct.pack("<Q", len(kb)) + kb + struct.pack("<I", typ)
        if typ == KV_STR:
            vb = val.encode()
            h += struct.pack("<Q", len(vb)) + vb
        elif typ == KV_I64:
            h += struct.pack("<q", val)
        elif typ == KV_I64ARR:
            h += struct.pack("<Q", len(val)) + struct.pack("<%dq" % len(val), *val)
    off = 0
    blobs = []
    for name, arr in tensors:
        arr = np.ascontiguousarray(arr)
        nb = name.encode()
        h += struct.pack("<Q", len(nb)) + nb + struct.pack("<II", DT[arr.dtype], arr.ndim)
        h += struct.pack("<%dQ" % arr.ndim, *arr.shape) + struct.pack("<Q", off)
        h += struct.pack("<I", crc32c(arr.tobytes()))
        blobs.append((off, arr.tobytes()))
        off = (off + arr.nbytes + 63) // 64 * 64
    h += struct.pack("<I", crc32c(h))
    h += b"\0" * ((64 - len(h) % 64) % 64)
    data = bytearray(off)
    for o, b in blobs:
        data[o:o + len(b)] = b
    with open(path, "wb") as f:
        f.write(bytes(h) + bytes(data))


def edge_case_graphs(rng):
    """(nodes, edges) per graph: the cases of tests/testgraphs.h plus random graphs."""
    graphs = [(6, [(1, 2), (2, 3), (3, 3), (1, 3), (1, 3), (4, 5), (2, 5), (5, 4)]),
              (1, []), (0, []), (12, [(i + 1, 0) for i in range(11)]), (5, [])]
    for _ in range(6):
        n = int(rng.integers(2, 11))
        ne = int(rng.integers(0, 2 * n + 1))
        graphs.append((n, [(int(rng.integers(n)), int(rng.integers(n))) for _ in range(ne)]))
    return graphs


def dump(args):
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    Fn, Fe, Fg, M, H = 5, 3, 4, 2, args.hidden
    graphs = edge_case_graphs(rng)
    G = len(graphs)
    node_ptr = np.cumsum([0] + [n for n, _ in graphs]).astype(np.int64)
    edge_ptr = np.cumsum([0] + [len(e) for _, e in graphs]).astype(np.int64)
    index = np.array([p for _, e in graphs for p in e], np.int32).reshape(-1, 2)
    N, E = int(node_ptr[-1]), int(edge_ptr[-1])
    xn = rng.standard_normal((N, Fn)).astype(np.float32)
    xe = rng.standard_normal((E, Fe)).astype(np.float32)
    xg = rng.standard_normal((G, Fg)).astype(np.float32)
    y = rng.standard_normal((G, M)).astype(np.float32)
    y[3, 1] = np.nan
    y[7, 0] = np.nan
    model32 = SeerNet(H, args.blocks, Fn, Fe, Fg, M, args.agg)
    model = SeerNet(H, args.blocks, Fn, Fe, Fg, M, args.agg).double()
    model.load_state_dict({k: v.double() for k, v in model32.state_dict().items()})
    ng = torch.from_numpy(np.repeat(np.arange(G), np.diff(node_ptr)))
    eg = torch.from_numpy(np.repeat(np.arange(G), np.diff(edge_ptr)))
    off = torch.from_numpy(np.repeat(node_ptr[:-1], np.diff(edge_ptr)))
    src = torch.from_numpy(index[:, 0].astype(np.int64)) + off
    dst = torch.from_numpy(index[:, 1].astype(np.int64)) + off
    pred = model(torch.from_numpy(xn).double(), torch.from_numpy(xe).double(),
                 torch.from_numpy(xg).double(), src, dst, ng, eg, G)
    loss = masked_mse(pred, torch.from_numpy(y).double())
    loss.backward()
    kvs = [("agg", KV_STR, args.agg),
           ("sizes", KV_I64ARR, [H, args.blocks, Fn, Fe, Fg, M, G, N, E])]
    tensors = [("node_ptr", node_ptr), ("edge_ptr", edge_ptr),
               ("edge_index", index.astype(np.int64)), ("xn", xn), ("xe", xe), ("xg", xg),
               ("y", y), ("pred", pred.detach().numpy()),
               ("loss", np.array([loss.item()], np.float64))]
    for name, p in model32.state_dict().items():
        tensors.append((name, p.numpy().astype(np.float32)))
    for name, p in model.named_parameters():
        tensors.append(("grad." + name, p.grad.numpy().astype(np.float64)))
    write_container(args.out, b"SEERDUMP", kvs, tensors)
    print("wrote %s: %d graphs, %d nodes, %d edges, loss %.6f" % (args.out, G, N, E, loss.item()))


def bench(args):
    import h5py
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    with h5py.File(args.data, "r") as f:
        labels = [s.decode() if isinstance(s, bytes) else s for s in f["schema/labels"][:]]
        col = labels.index(args.label)
        node_ptr, edge_ptr = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
        G = min(len(node_ptr) - 1, args.graphs)
        N, E = int(node_ptr[G]), int(edge_ptr[G])
        xn, xe = f["node/x"][:N], f["edge/x"][:E]
        xg, index, y = f["global/x"][:G], f["edge/index"][:E], f["label/y"][:G, col]
    std = lambda a: (a - a.mean(0)) / np.maximum(a.std(0), 1e-6)
    xn, xe, xg = (torch.from_numpy(std(a).astype(np.float32)) for a in (xn, xe, xg))
    ly = np.log(y)
    t = torch.from_numpy(((ly - ly.mean()) / ly.std()).astype(np.float32))[:, None]
    model = SeerNet(args.hidden, args.blocks, xn.shape[1], xe.shape[1], xg.shape[1], 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    order = np.random.default_rng(0).permutation(G)

    def batch(ids):
        ids = np.sort(ids)
        nn_ = np.diff(node_ptr)[ids]
        ne_ = np.diff(edge_ptr)[ids]
        nsel = np.concatenate([np.arange(node_ptr[i], node_ptr[i + 1]) for i in ids])
        esel = np.concatenate([np.arange(edge_ptr[i], edge_ptr[i + 1]) for i in ids])
        base = np.repeat(np.cumsum(np.concatenate([[0], nn_[:-1]])), ne_)
        ng = torch.from_numpy(np.repeat(np.arange(len(ids)), nn_))
        eg = torch.from_numpy(np.repeat(np.arange(len(ids)), ne_))
        src = torch.from_numpy(index[esel, 0].astype(np.int64) + base)
        dst = torch.from_numpy(index[esel, 1].astype(np.int64) + base)
        return (xn[nsel], xe[esel], xg[ids], src, dst, ng, eg, len(ids), t[ids])

    steps, bs = args.steps, args.batch
    batches = [batch(order[(i * bs) % (G - bs):(i * bs) % (G - bs) + bs]) for i in range(steps + 3)]
    for i, b in enumerate(batches):
        if i == 3:
            t0 = time.perf_counter()
        opt.zero_grad()
        loss = ((model(*b[:8]) - b[8]) ** 2).mean()
        loss.backward()
        opt.step()
    el = time.perf_counter() - t0
    print("pytorch %s threads=%d H=%d L=%d batch=%d: %.1f graphs/s (%d steps, %.2fs, loss %.4f)"
          % (torch.__version__, args.threads, args.hidden, args.blocks, bs, steps * bs / el,
             steps, el, loss.item()))


def load_exported(path):
    """SeerNet (float32, eval mode) and the sidecar of a seerexport --safetensors file."""
    import json
    import os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import seer_safetensors
    tensors, _ = seer_safetensors.read(path)
    side = path[:-len(".safetensors")] + ".json" if path.endswith(".safetensors") else path + ".json"
    with open(side) as f:
        meta = json.load(f)
    a = meta["architecture"]
    model = SeerNet(a["hidden"], a["blocks"], a["node_features"], a["edge_features"], a["global_features"],
                    a["outputs"], a["agg"], a["head_hidden"])
    model.load_state_dict({k: torch.from_numpy(np.array(v)) for k, v in tensors.items()}, strict=True)
    return model.eval(), meta


def infer(args):
    import h5py
    torch.set_num_threads(args.threads)
    model, meta = load_exported(args.model)
    nrm = meta["normalisation"]
    std = lambda a, k: torch.from_numpy(((a - np.array(nrm[k + "_mean"])) / np.array(nrm[k + "_std"])).astype(np.float32))
    mu, sigma = np.array(nrm["label_mu"]), np.array(nrm["label_sigma"])

    def graph(xn, ei, xe, xg):
        ei = torch.from_numpy(ei.astype(np.int64))
        return (std(xn, "node"), std(xe, "edge"), std(xg.reshape(1, -1), "global"), ei[:, 0], ei[:, 1],
                torch.zeros(len(xn), dtype=torch.long), torch.zeros(len(xe), dtype=torch.long), 1)

    def batch(gs):
        xn = np.concatenate([g[0] for g in gs]); xe = np.concatenate([g[2] for g in gs])
        nn_ = np.array([len(g[0]) for g in gs]); ne_ = np.array([len(g[2]) for g in gs])
        base = np.repeat(np.cumsum(np.concatenate([[0], nn_[:-1]])), ne_)
        ei = np.concatenate([g[1] for g in gs]).astype(np.int64)
        return (std(xn, "node"), std(xe, "edge"), std(np.stack([g[3] for g in gs]), "global"),
                torch.from_numpy(ei[:, 0] + base), torch.from_numpy(ei[:, 1] + base),
                torch.from_numpy(np.repeat(np.arange(len(gs)), nn_)),
                torch.from_numpy(np.repeat(np.arange(len(gs)), ne_)), len(gs))

    with h5py.File(args.data, "r") as f:
        npt, ept = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
        G = min(args.graphs, len(npt) - 1)
        xn, xe, ei, xg = f["node/x"][:npt[G]], f["edge/x"][:ept[G]], f["edge/index"][:ept[G]], f["global/x"][:G]
    gs = [(xn[npt[g]:npt[g + 1]], ei[ept[g]:ept[g + 1]], xe[ept[g]:ept[g + 1]], xg[g]) for g in range(G)]
    lat, preds = [], []
    with torch.no_grad():
        for g in gs[:20]:
            model(*graph(*g))
        for g in gs:
            inp = graph(*g)
            t0 = time.perf_counter()
            out = model(*inp)
            lat.append(time.perf_counter() - t0)
            preds.append(np.exp(out.numpy()[0].astype(np.float64) * sigma + mu))
        t0, reps = time.perf_counter(), 0
        bs = [batch(gs[i:i + args.batch]) for i in range(0, G, args.batch)]
        while time.perf_counter() - t0 < 1.0:
            for b in bs:
                model(*b)
            reps += 1
        thr = G * reps / (time.perf_counter() - t0)
    print("pytorch %s threads=%d: %d graphs of %s: single-graph latency median %.1f us, p90 %.1f us; "
          "batched throughput (batch %d) %.0f graphs/s"
          % (torch.__version__, args.threads, G, args.data, np.median(lat) * 1e6,
             np.percentile(lat, 90) * 1e6, args.batch, thr))
    if args.predictions:
        with open(args.predictions, "w") as f:
            for g, p in enumerate(preds):
                f.write("%d,%s\n" % (g, ",".join("%.9g" % v for v in p)))
    for path in args.onnx or []:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
        import seer
        g = seer.onnx_graph(path, batch=1)
        inp = graph(*g[:4])
        with torch.no_grad():
            for _ in range(5):
                model(*inp)
            ts = []
            for _ in range(20):
                t0 = time.perf_counter()
                model(*inp)
                ts.append(time.perf_counter() - t0)
        print("pytorch %s: graph of %d operators: single-graph latency median %.1f us (the model only; "
              "converting the ONNX file is not counted)" % (path, len(g[0]), np.median(ts) * 1e6))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("out")
    d.add_argument("--agg", default="mean", choices=["mean", "synmm"])
    d.add_argument("--blocks", type=int, default=2)
    d.add_argument("--hidden", type=int, default=8)
    d.add_argument("--seed", type=int, default=0)
    b = sub.add_parser("bench")
    b.add_argument("--data", default="datasets/nb201_brpnas.h5")
    b.add_argument("--label", default="titan_rtx_256_ms")
    b.add_argument("--hidden", type=int, default=256)
    b.add_argument("--blocks", type=int, default=1)
    b.add_argument("--batch", type=int, default=128)
    b.add_argument("--steps", type=int, default=30)
    b.add_argument("--threads", type=int, default=2)
    b.add_argument("--graphs", type=int, default=20000)
    i = sub.add_parser("infer")
    i.add_argument("model")
    i.add_argument("--data", default="datasets/nb201_brpnas.h5")
    i.add_argument("--graphs", type=int, default=300)
    i.add_argument("--batch", type=int, default=64)
    i.add_argument("--threads", type=int, default=1)
    i.add_argument("--onnx", nargs="*")
    i.add_argument("--predictions")
    args = ap.parse_args()
    {"dump": dump, "bench": bench, "infer": infer}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
