#!/usr/bin/env python3
"""NAS-Bench-201 builder: node and edge counts of a few cells, counted by hand (README of
datasets/nb201 has the network). Fixed part: stem Conv+BN (2 nodes, 1 edge), two reduction
blocks (9 nodes, 10 edges each when fed), tail BN, ReLU, GAP, Flatten, Gemm (5 nodes, 5 edges):
25 nodes. Per cell:
- all nor_conv_3x3: 6 ReLU-Conv-BN chains (18 nodes) + 3 Adds = 21 nodes; edges: 12 inside the
  chains, 6 into the chains, 2 into node 2's Add, 4 into node 3's two Adds = 24 per cell
  -> 25 + 15 * 21 = 340 nodes, 1 + 15 * 24 + 20 + 5 = 386 edges.
- all skip_connect: node 2 = Add(x, x), node 3 = Add(Add(x, x), node 2): 3 Adds, 6 edges
  -> 25 + 45 = 70 nodes, 1 + 90 + 20 + 5 = 116 edges.
- all none: every cell output is zero: the stem feeds nothing; each reduction block loses its two
  input edges (ReLU and AvgPool read zeros): 8 edges; the tail BN reads zeros: 4 edges
  -> 25 nodes, 1 + 8 + 8 + 4 = 21 edges.
usage: nb201_counts_check.py SEERCONVERT"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "datasets"))
import nb201_build  # noqa: E402

CASES = [
    ("|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|", 340, 386),
    ("|skip_connect~0|+|skip_connect~0|skip_connect~1|+|skip_connect~0|skip_connect~1|skip_connect~2|", 70, 116),
    ("|none~0|+|none~0|none~1|+|none~0|none~1|none~2|", 25, 21),
]

bad = 0
with tempfile.TemporaryDirectory() as d:
    for arch, nodes, edges in CASES:
        path = os.path.join(d, "cell.onnx")
        nb201_build.build_onnx(arch, path)
        out = subprocess.run([sys.argv[1], path], capture_output=True, text=True, check=True).stdout
        got_n = int(re.search(r"(\d+) operators", out).group(1))
        got_e = int(re.search(r"edges (\d+)", out).group(1))
        ok = (got_n, got_e) == (nodes, edges)
        bad += not ok
        print("%s %s: %d nodes, %d edges (by hand %d, %d)" % ("ok  " if ok else "FAIL", arch, got_n, got_e, nodes, edges))
sys.exit(1 if bad else 0)
