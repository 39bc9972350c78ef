#!/usr/bin/env python3
"""NAS-Bench-201 builder: node and edge counts of a few cells, counted by hand (README of
datasets/nb201 has the network), in both of its modes. Fixed part: stem Conv+BN (2 nodes, 1
edge), two reduction blocks (9 nodes, 10 edges each when fed), tail BN, ReLU, GAP, Flatten, Gemm
(5 nodes, 5 edges): 25 nodes.

--none-edges drop ('none' edges left out, n - 1 Adds for n inputs). Per cell:
- all nor_conv_3x3: 6 ReLU-Conv-BN chains (18 nodes) + 3 Adds = 21 nodes; edges: 12 inside the
  chains, 6 into the chains, 2 into node 2's Add, 4 into node 3's two Adds = 24 per cell
  -> 25 + 15 * 21 = 340 nodes, 1 + 15 * 24 + 20 + 5 = 386 edges.
- all skip_connect: node 2 = Add(x, x), node 3 = Add(Add(x, x), node 2): 3 Adds, 6 edges
  -> 25 + 45 = 70 nodes, 1 + 90 + 20 + 5 = 116 edges.
- all none: every cell output is zero: the stem feeds nothing; each reduction block loses its two
  input edges (ReLU and AvgPool read zeros): 8 edges; the tail BN reads zeros: 4 edges
  -> 25 nodes, 1 + 8 + 8 + 4 = 21 edges.

--none-edges zero (the default: the benchmark's code, sum() from 0 and Zero = x * 0). A node of
n inputs is Add(first, 0) then n - 1 Adds (the scalar 0 is a constant, not an edge): 1 + 2 + 3 = 6
Adds a cell, 1 + 3 + 5 = 9 edges into them. Per cell:
- all nor_conv_3x3: 18 + 6 = 24 nodes, 12 + 6 + 9 = 27 edges -> 385 nodes, 1 + 405 + 25 = 431.
- all skip_connect: 6 nodes, 9 edges -> 115 nodes, 1 + 135 + 25 = 161 edges.
- all none: 6 Muls (one edge in each) + 6 Adds (6 + 9 edges): 12 nodes, 15 edges; every block is
  fed -> 25 + 180 = 205 nodes, 1 + 225 + 25 = 251 edges.
usage: nb201_counts_check.py SEERCONVERT"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "datasets"))
import nb201_build  # noqa: E402

A3 = "|nor_conv_3x3~0|+|nor_conv_3x3~0|nor_conv_3x3~1|+|nor_conv_3x3~0|nor_conv_3x3~1|nor_conv_3x3~2|"
SK = "|skip_connect~0|+|skip_connect~0|skip_connect~1|+|skip_connect~0|skip_connect~1|skip_connect~2|"
NO = "|none~0|+|none~0|none~1|+|none~0|none~1|none~2|"
CASES = [  # (mode, cell, nodes, edges)
    ("drop", A3, 340, 386), ("drop", SK, 70, 116), ("drop", NO, 25, 21),
    ("zero", A3, 385, 431), ("zero", SK, 115, 161), ("zero", NO, 205, 251),
]

bad = 0
with tempfile.TemporaryDirectory() as d:
    for mode, arch, nodes, edges in CASES:
        path = os.path.join(d, "cell.onnx")
        nb201_build.build_onnx(arch, path, mode)
        out = subprocess.run([sys.argv[1], path], capture_output=True, text=True, check=True).stdout
        got_n = int(re.search(r"(\d+) operators", out).group(1))
        got_e = int(re.search(r"edges (\d+)", out).group(1))
        ok = (got_n, got_e) == (nodes, edges)
        bad += not ok
        print("%s %s %s: %d nodes, %d edges (by hand %d, %d)" % ("ok  " if ok else "FAIL", mode, arch, got_n, got_e, nodes, edges))
    try:  # a mode the builder does not know is refused, not built as one it does
        nb201_build.build_onnx(A3, os.path.join(d, "x.onnx"), "keep")
        print("FAIL none_edges 'keep' accepted")
        bad += 1
    except ValueError as e:
        print("ok   none_edges 'keep' refused: %s" % e)
sys.exit(1 if bad else 0)
