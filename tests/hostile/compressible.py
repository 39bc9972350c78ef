#!/usr/bin/env python3
"""A legitimate PerfGraph file whose arrays compress better than 64 to 1: two graphs of 12 M
identical nodes, deflated (96 MB of node features stored in well under 1 MB). The readers'
check of declared against stored size (src/data/perfgraph.c, h5_shape) must read it: a
dataset whose values repeat (NAS-Bench-201's edge features: 119 to 1) is not a forged one.
usage: compressible.py OUT.h5"""
import sys

import h5py
import numpy as np

N = 12_000_000  # nodes per graph: 2 x 12 M x 4 bytes = 96 MB declared per array
with h5py.File(sys.argv[1], "w") as f:
    st = h5py.string_dtype()
    s = f.create_group("schema")
    for k, v in (("node_features", ["n0"]), ("edge_features", ["e0"]), ("global_features", ["g0"]),
                 ("op_types", ["Relu"]), ("labels", ["a_ms"])):
        s.create_dataset(k, data=np.array(v, dtype=object), dtype=st)
    g = f.create_group("graph")
    g.create_dataset("node_ptr", data=np.array([0, N, 2 * N], np.int64))
    g.create_dataset("edge_ptr", data=np.zeros(3, np.int64))
    g.create_dataset("name", data=np.array(["a", "b"], dtype=object), dtype=st)
    g.create_dataset("group", data=np.arange(2, dtype=np.int64))
    z = dict(compression="gzip", compression_opts=9, chunks=(1 << 20, 1))
    f.create_dataset("node/x", data=np.ones((2 * N, 1), np.float32), **z)
    f.create_dataset("node/op", data=np.zeros(2 * N, np.int32), compression="gzip", compression_opts=9,
                     chunks=(1 << 20,))
    f.create_dataset("edge/x", data=np.zeros((0, 1), np.float32), maxshape=(None, 1))
    f.create_dataset("edge/index", data=np.zeros((0, 2), np.int32), maxshape=(None, 2))
    f.create_dataset("global/x", data=np.ones((2, 1), np.float32))
    f.create_dataset("label/y", data=np.ones((2, 1), np.float32))
    f.attrs["format"] = "seer-perfgraph"
    f.attrs["version"] = np.int64(1)
    stored = f["node/x"].id.get_storage_size()
print("%s: node/x declares %.0f MB, stores %.2f MB (%.0f to 1)" % (sys.argv[1], 8 * N / 1e6, stored / 1e6,
                                                                   8 * N / stored))
