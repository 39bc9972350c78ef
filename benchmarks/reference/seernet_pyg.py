#!/usr/bin/env python3
"""SeerNet in PyTorch Geometric: the GPU baseline of benchmarks/bench_gpu.sh.

The model of src/model/seernet.c (and seernet_ref.py: same layers, same names) written the way a
PyG user would: graphs as torch_geometric.data.Data, batches from PyG's DataLoader, message
passing with torch_geometric.utils.scatter (mean, max) and softmax. Trains on a PerfGraph HDF5
file like seertrain: features standardised with training statistics, targets as standardised
log values, MSE, AdamW, gradient clipping at 1.0; a seeded 2:1:1 random split.

  seernet_pyg.py --data datasets/nb201_brpnas.h5 --label titan_rtx_256_ms --hidden 256 --blocks 1 \\
                 --batch 128 --epochs 5 [--agg synmm] [--device cuda] [--graphs N]

Prints one line per epoch and, last, one JSON object: the median epoch time (epochs after the
first), graphs/s and the validation MAPE after the last epoch. Needs torch, torch_geometric, h5py.
"""
import argparse
import json
import time

import h5py
import numpy as np
import torch
import torch.nn as nn
from torch_geometric.data import Data
from torch_geometric.loader import DataLoader
from torch_geometric.utils import scatter, softmax


def mlp(fin, hid, fout):
    return nn.Sequential(nn.Linear(fin, hid), nn.ReLU(), nn.Linear(hid, fout))


class Block(nn.Module):
    def __init__(self, H, agg):
        super().__init__()
        self.phi_e = mlp(4 * H, H, H)
        self.phi_v = mlp((2 * H if agg == "synmm" else H) + 2 * H, H, H)
        self.attn = nn.Linear(H, 1)
        self.phi_z = mlp(H, H, H)
        self.readout = nn.Linear(2 * H, H)
        self.phi_u = mlp(3 * H, H, H)


def attn_pool(h, score, batch, G):
    alpha = softmax(score[:, 0], batch, num_nodes=G)
    return scatter(alpha[:, None] * h, batch, 0, dim_size=G, reduce="sum")


class SeerNetPyG(nn.Module):
    def __init__(self, H, L, Fn, Fe, Fg, M, agg):
        super().__init__()
        self.L, self.agg = L, agg
        self.enc_node, self.enc_edge, self.enc_global = mlp(Fn, H, H), mlp(Fe, H, H), mlp(Fg, H, H)
        self.gnpb_attn = nn.Linear(H, 1)
        self.blocks = nn.ModuleList([Block(H, agg) for _ in range(L)])
        self.heads = nn.ModuleList([mlp(H, H, 1) for _ in range(M)])

    def forward(self, d):
        G, N = d.num_graphs, d.num_nodes
        src, dst = d.edge_index
        eg = d.batch[src]
        h, e, g = self.enc_node(d.x), self.enc_edge(d.edge_attr), self.enc_global(d.u)
        z = attn_pool(h, self.gnpb_attn(h), d.batch, G)
        for b in self.blocks:
            m = b.phi_e(torch.cat([e, h[src], h[dst], g[eg]], 1))
            e = e + m
            a = scatter(m, dst, 0, dim_size=N, reduce="mean")
            if self.agg == "synmm":
                a = torch.cat([scatter(m, dst, 0, dim_size=N, reduce="max"), a], 1)
            h = h + b.phi_v(torch.cat([a, h + z[d.batch], g[d.batch]], 1))
            z = b.phi_z(attn_pool(h, b.attn(h), d.batch, G) + z)
            r = b.readout(torch.cat([scatter(h, d.batch, 0, dim_size=G, reduce="max"),
                                     scatter(h, d.batch, 0, dim_size=G, reduce="mean")], 1))
            g = g + b.phi_u(torch.cat([r, z, g], 1))
        return torch.cat([head(g) for head in self.heads], 1)


def load(path, label, limit, seed):
    with h5py.File(path, "r") as f:
        names = [s.decode() if isinstance(s, bytes) else s for s in f["schema/labels"][:]]
        col = names.index(label)
        npt, ept = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
        G = len(npt) - 1 if not limit else min(limit, len(npt) - 1)
        xn, xe = f["node/x"][:npt[G]], f["edge/x"][:ept[G]]
        ei, xg, y = f["edge/index"][:ept[G]], f["global/x"][:G], f["label/y"][:G, col]
    keep = np.flatnonzero(~np.isnan(y))
    order = np.random.default_rng(seed).permutation(keep)
    ntr, nva = len(order) // 2, len(order) // 4
    split = order[:ntr], order[ntr:ntr + nva], order[ntr + nva:]
    tr = split[0]
    tr_nodes = np.concatenate([np.arange(npt[g], npt[g + 1]) for g in tr])
    tr_edges = np.concatenate([np.arange(ept[g], ept[g + 1]) for g in tr])
    norm = lambda a, rows: (a - a[rows].mean(0)) / np.maximum(a[rows].std(0), 1e-6)
    xn, xe, xg = norm(xn, tr_nodes), norm(xe, tr_edges), norm(xg, tr)
    ly = np.log(y)
    mu, sd = ly[tr].mean(), ly[tr].std()
    data = []
    for g in range(G):
        data.append(Data(x=torch.from_numpy(xn[npt[g]:npt[g + 1]].astype(np.float32)),
                         edge_index=torch.from_numpy(ei[ept[g]:ept[g + 1]].T.astype(np.int64)),
                         edge_attr=torch.from_numpy(xe[ept[g]:ept[g + 1]].astype(np.float32)),
                         u=torch.from_numpy(xg[g:g + 1].astype(np.float32)),
                         y=torch.tensor([[(ly[g] - mu) / sd if not np.isnan(ly[g]) else 0.0]],
                                        dtype=torch.float32)))
    return data, split, (mu, sd), xn.shape[1], xe.shape[1], xg.shape[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", default="datasets/nb201_brpnas.h5")
    ap.add_argument("--label", default="titan_rtx_256_ms")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--blocks", type=int, default=1)
    ap.add_argument("--agg", default="synmm", choices=["mean", "synmm"])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--graphs", type=int, default=0, help="use the first N graphs (0 = all)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    dev = torch.device(a.device)
    t0 = time.perf_counter()
    data, (tr, va, _), (mu, sd), Fn, Fe, Fg = load(a.data, a.label, a.graphs, a.seed)
    print("loaded %d graphs in %.1f s" % (len(data), time.perf_counter() - t0), flush=True)
    model = SeerNetPyG(a.hidden, a.blocks, Fn, Fe, Fg, 1, a.agg).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.0)
    train = DataLoader([data[g] for g in tr], batch_size=a.batch, shuffle=True)
    val = DataLoader([data[g] for g in va], batch_size=512)
    times, mape = [], float("nan")
    for epoch in range(a.epochs):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        model.train()
        for b in train:
            b = b.to(dev, non_blocking=True)
            loss = ((model(b) - b.y) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        model.eval()
        ape = []
        with torch.no_grad():
            for b in val:
                b = b.to(dev)
                p = np.exp(model(b).cpu().numpy()[:, 0] * sd + mu)
                yv = np.exp(b.y.cpu().numpy()[:, 0] * sd + mu)
                ape.append(np.abs(p - yv) / yv)
        mape = 100 * float(np.concatenate(ape).mean())
        print("epoch %d  %.3f s  %.0f graphs/s  loss %.4f  val MAPE %.3f%%"
              % (epoch + 1, times[-1], len(tr) / times[-1], loss.item(), mape), flush=True)
    later = times[1:] or times
    print(json.dumps({"impl": "pyg", "torch": torch.__version__, "epoch_s": float(np.median(later)),
                      "graphs_per_s": len(tr) / float(np.median(later)), "val_mape": mape,
                      "epochs": a.epochs, "train_graphs": len(tr),
                      "peak_mem_mb": torch.cuda.max_memory_allocated() / 2**20 if dev.type == "cuda" else None}))


if __name__ == "__main__":
    main()
