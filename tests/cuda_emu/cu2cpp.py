#!/usr/bin/env python3
"""cu2cpp.py IN.cu OUT.cpp: rewrites a CUDA source for the CPU emulator of tests/cuda_emu.

Each launch `kern<<<grid, block, shmem, stream>>>(args);` becomes
`emu_launch(grid, block, SYNC, [&] { kern(args); });`, where SYNC is 1 when the kernel's body, or
a __device__ function it calls (directly or through others), uses __syncthreads, warp shuffles or
__shared__ memory (its threads then run as fibers that meet at each barrier) and 0 otherwise
(threads run one after another). Each `__shared__ T name[...];` declaration is followed by
`emu_shared(name, sizeof name);`, which registers the array so that the emulator fills it with NaN
bytes before every block (a kernel that reads shared memory it did not write this block then
fails its test, as it would on a GPU). The kernels' own code is compiled unchanged as C++ against
include/ (a CPU stand-in for the CUDA runtime, cuBLAS and the built-ins).
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


SYNC_WORDS = ("__syncthreads", "__shfl", "__shared__")


def function_bodies(src):
    """{name: body} of every __global__ and __device__ function defined in src."""
    out = {}
    for m in re.finditer(r"__(?:global|device)__\s+(?:static\s+|inline\s+)*[\w:<>*&\s]*?\b(\w+)\s*\(", src):
        close = matching(src, m.end() - 1, "(", ")")
        rest = src[close + 1:].lstrip()
        if not rest.startswith("{"):
            continue  # a declaration
        start = src.index("{", close)
        out[m.group(1)] = src[start:matching(src, start, "{", "}") + 1]
    return out


def syncing_functions(src):
    """The functions whose body synchronises, or calls one that does (to a fixed point)."""
    bodies = function_bodies(src)
    sync = {n for n, b in bodies.items() if any(k in b for k in SYNC_WORDS)}
    changed = True
    while changed:
        changed = False
        for n, b in bodies.items():
            if n not in sync and any(re.search(r"\b%s\s*\(" % re.escape(f), b) for f in sync):
                sync.add(n)
                changed = True
    return bodies, sync


def kernel_needs_sync(src, name, analysis=None):
    bodies, sync = analysis or syncing_functions(src)
    if name not in bodies:
        return 1  # a template or a kernel from elsewhere: play safe
    return 1 if name in sync else 0


def register_shared(src):
    """`__shared__ T name[...];` -> the same, then emu_shared(name, sizeof name) per array."""
    def repl(m):
        names = re.findall(r"(\w+)\s*\[", m.group(2))
        return m.group(0) + "".join(" emu_shared(%s, sizeof %s);" % (n, n) for n in names)
    return re.sub(r"__shared__\s+([\w:]+)\s+([^;]*);", repl, src)


def convert(src):
    analysis = syncing_functions(src)
    src = register_shared(src)
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
                   % (cfg[0], cfg[1], kernel_needs_sync(src, name, analysis), name, args))
        i = args_close + 1
    out.append(src[i:])
    return "".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        src = f.read()
    with open(sys.argv[2], "w") as f:
        f.write('#include "cuda_emu.h"\n#line 1 "%s"\n' % sys.argv[1])
        f.write(convert(src))
