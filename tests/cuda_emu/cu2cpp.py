#!/usr/bin/env python3
"""cu2cpp.py IN.cu OUT.cpp: rewrites a CUDA source for the CPU emulator of tests/cuda_emu.

Each launch `kern<<<grid, block, shmem, stream>>>(args);` becomes
`emu_launch(grid, block, SYNC, [&] { kern(args); });`, where SYNC is 1 when the kernel's body uses
__syncthreads, warp shuffles or __shared__ memory (its threads then run as fibers that meet at
each barrier) and 0 otherwise (threads run one after another). The kernels' own code is compiled
unchanged as C++ against include/ (a CPU stand-in for the CUDA runtime, cuBLAS and the built-ins).
"""
import re
import sys


def matching(s, i, open_c, close_c):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == open_c:
            depth += 1
        elif s[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    raise SystemExit("cu2cpp: unbalanced %s at offset %d" % (open_c, i))


def split_top(s):
    parts, depth, cur = [], 0, ""
    for c in s:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += c
    parts.append(cur.strip())
    return parts


def kernel_needs_sync(src, name):
    m = re.search(r"__global__\s+void\s+%s\s*\(" % re.escape(name), src)
    if not m:
        return 1  # a template or a kernel from elsewhere: play safe
    body_start = src.index("{", matching(src, m.end() - 1, "(", ")"))
    body = src[body_start:matching(src, body_start, "{", "}") + 1]
    uses = any(k in body for k in ("__syncthreads", "__shfl", "__shared__", "warp_sum"))
    return 1 if uses else 0


def convert(src):
    out, i = [], 0
    for m in re.finditer(r"(\w+)\s*<<<", src):
        if m.start() < i:
            continue
        name = m.group(1)
        cfg_end = src.index(">>>", m.end())
        cfg = split_top(src[m.end():cfg_end])
        args_open = src.index("(", cfg_end)
        args_close = matching(src, args_open, "(", ")")
        args = src[args_open + 1:args_close]
        out.append(src[i:m.start()])
        out.append("emu_launch(dim3(%s), dim3(%s), %d, [&] { %s(%s); })"
                   % (cfg[0], cfg[1], kernel_needs_sync(src, name), name, args))
        i = args_close + 1
    out.append(src[i:])
    return "".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        src = f.read()
    with open(sys.argv[2], "w") as f:
        f.write('#include "cuda_emu.h"\n#line 1 "%s"\n' % sys.argv[1])
        f.write(convert(src))
