#!/usr/bin/env python3
"""Mutation fuzzing of Seer's readers: where new hostile cases come from.

Takes seed files of one kind, changes a few bytes of each (bit flips, chosen bytes, runs of 0xff
in varints, truncation, duplicated runs; for INI, inserted tokens and deletions), runs the tool
that reads them, and keeps every input that made it crash (a signal, an exit other than 0 or 1, a
sanitizer report), hang (60 s) or refuse with more than one line. Those go to OUT_DIR with the
tool's stderr beside them; what stays in the corpus goes through tests/hostile/make_corpus.py.

    python3 tests/hostile/fuzz.py onnx --bin build-asan --cases 400 --seed 1
    python3 tests/hostile/fuzz.py h5 --bin build --cases 400
    python3 tests/hostile/fuzz.py ini --cases 400
    python3 tests/hostile/fuzz.py manifest --cases 400

Seeds: onnx tests/data/onnx/*.onnx (under 3 MB, not the bad_* ones) read by `seerconvert FILE`;
h5 the PerfGraph files under BIN/tests/ or build/tests/ (under 2 MB; the test suite writes them) read by
`seerconvert --repack FILE -o OUT`; ini configs/*.ini read by `seertrain FILE --print-config`;
manifest the test suite's build/tests/manifest_work/good.csv (its two ONNX files copied beside
the mutated copy) read by `seerconvert --manifest FILE -o OUT`.
For h5, a damaged file read without an error is compared, array by array (h5py), with its seed:
the summary counts those read with the seed's data (the damage hit bytes nothing reads) and those
read with other data (a wrong value taken as right: what the Fletcher-32 checksums of compressed
files catch; those are kept as OUT/changed_SEED_CASE.h5 with the arrays that differ printed, and do
not fail the run). --seeds GLOB: other seed files.
Run it under build-asan (scripts/hostile-asan.sh builds it) to catch memory errors that do not
crash; libhdf5's own are reported there too (see tests/data/hostile/h5/libhdf5_*).
"""
import argparse
import glob
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKENS = [b"=", b"[", b"]", b"\n", b";", b"#", b"-1", b"1e999", b"nan", b"0", b"99999999999999999999",
          b"\x00", b'"', b" ", b"inf", b"=\n", b"[x]\n", b"a" * 5000, b",", b",,", b"\r\n", b"../",
          b"resnet18.onnx", b"-5", b"1e-45"]
TEXT = ("ini", "manifest")


def seeds(kind, bin_dir, pattern=None):
    if pattern:
        paths = glob.glob(pattern)
    elif kind == "onnx":
        paths = [p for p in glob.glob(os.path.join(ROOT, "tests/data/onnx/*.onnx"))
                 if "bad_" not in p and os.path.getsize(p) < 3e6]
    elif kind == "h5":
        paths = [p for d in (bin_dir, os.path.join(ROOT, "build")) for p in glob.glob(os.path.join(d, "tests", "*", "*.h5"))
                 if os.path.getsize(p) < 2e6][:8]
    elif kind == "manifest":
        paths = glob.glob(os.path.join(ROOT, "build", "tests", "manifest_work", "good.csv"))
    else:
        paths = glob.glob(os.path.join(ROOT, "configs", "*.ini"))
    if not paths:
        sys.exit("fuzz.py: no %s seed files (for h5: run the test suite in build/ first)" % kind)
    return {p: open(p, "rb").read() for p in sorted(paths)}


def h5_arrays(path):
    """A PerfGraph file's datasets as {name: bytes} (h5py), or None without h5py."""
    try:
        import h5py
    except ImportError:
        return None
    out = {}
    def add(n, o):
        if isinstance(o, h5py.Dataset):
            v = o[()]
            out[n] = repr(v.tolist()).encode() if v.dtype.kind == "O" else v.tobytes()

    with h5py.File(path, "r") as f:
        f.visititems(add)
    return out


def mutate(rng, kind, b):
    b = bytearray(b)
    how = rng.choice(["tokens", "tokens", "delete", "byte"] if kind in TEXT else
                     ["flip", "flip", "byte", "trunc"] + (["dup", "varint"] if kind == "onnx" else []))
    for _ in range(rng.randint(1, 8)):
        j = rng.randrange(len(b) + 1)
        if how == "tokens":
            b[j:j] = rng.choice(TOKENS)
        elif j == len(b):
            continue
        elif how == "flip":
            b[j] ^= 1 << rng.randrange(8)
        elif how == "byte":
            b[j] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.randrange(256)])
        elif how == "varint":
            b[j:j + 1] = bytes([0xFF] * rng.randint(1, 9) + [0x7F])
        elif how == "delete":
            del b[j:j + rng.randint(1, 20)]
    if how == "trunc":
        b = b[:rng.randrange(len(b))]
    elif how == "dup":
        j = rng.randrange(len(b))
        b[j:j] = b[j:j + rng.randint(1, 200)]
    return bytes(b), how


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["onnx", "h5", "ini", "manifest"])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build"), help="the build folder whose tools run")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/seer-fuzz", help="where the inputs that failed are kept")
    ap.add_argument("--seeds", help="a glob of seed files instead of the default ones")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    src = seeds(a.kind, a.bin, a.seeds)
    os.makedirs(a.out, exist_ok=True)
    cur = os.path.join(a.out, "current." + a.kind)
    if a.kind == "manifest":  # the ONNX files it names, beside it
        for name in ("resnet18.onnx", "mobilenet_v2.onnx"):
            with open(os.path.join(ROOT, "tests", "data", "onnx", name), "rb") as f, \
                    open(os.path.join(a.out, name), "wb") as g:
                g.write(f.read())
    # the readers' alarm on string reads (60 s by default) under the 60 s a case may take
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", SEER_H5_STRING_TIMEOUT="10")
    codes, kept, silent = {}, 0, {"same": 0, "changed": 0}
    ref = {}  # h5: each seed's arrays as read unmutated, to tell a harmless read from wrong values
    for i in range(a.cases):
        name = rng.choice(list(src))
        data, how = mutate(rng, a.kind, src[name])
        with open(cur, "wb") as f:
            f.write(data)
        if a.kind == "onnx":
            cmd = [os.path.join(a.bin, "seerconvert"), cur] + rng.choice([[], ["--batch", "7"], ["--fuse"]])
        elif a.kind == "h5":
            cmd = [os.path.join(a.bin, "seerconvert"), "--repack", cur, "-o", os.path.join(a.out, "repacked.h5")]
        elif a.kind == "manifest":
            cmd = [os.path.join(a.bin, "seerconvert"), "--manifest", cur, "-o", os.path.join(a.out, "manifest.h5")]
        else:
            cmd = [os.path.join(a.bin, "seertrain"), cur, "--print-config"]
        try:
            r = subprocess.run(cmd, capture_output=True, timeout=60, env=env)
            rc, err = r.returncode, r.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            rc, err = "hang", ""
        codes[rc] = codes.get(rc, 0) + 1
        if a.kind == "h5" and rc == 0:
            arrays = h5_arrays(os.path.join(a.out, "repacked.h5"))
            if arrays is not None:
                if name not in ref:
                    ref[name] = h5_arrays(name)
                same = arrays == ref[name]
                silent["same" if same else "changed"] += 1
                if not same:  # kept to look at, not a failure of the tool
                    keep = os.path.join(a.out, "changed_%d_%d.h5" % (a.seed, i))
                    with open(keep, "wb") as f:
                        f.write(data)
                    diff = [k for k in sorted(set(arrays) | set(ref[name])) if arrays.get(k) != ref[name].get(k)]
                    print("CHANGED %s (%s of %s): read without an error, other data in %s"
                          % (keep, how, os.path.basename(name), ", ".join(diff)), flush=True)
        lines = [l for l in err.splitlines() if l.strip()]
        why = ("hang" if rc == "hang" else "signal %d" % -rc if rc < 0 else "exit %d" % rc if rc not in (0, 1)
               else "sanitizer" if "Sanitizer" in err or "runtime error" in err
               else "%d lines" % len(lines) if rc == 1 and len(lines) != 1 else None)
        if why:
            kept += 1
            keep = os.path.join(a.out, "%s_%d_%d.%s" % (a.kind, a.seed, i, a.kind))
            with open(keep, "wb") as f:
                f.write(data)
            with open(keep + ".stderr", "w") as f:
                f.write(err)
            print("KEPT %s: %s (%s of %s); %s" % (keep, why, how, os.path.basename(name),
                                                 (lines[-1] if lines else "")[:200]), flush=True)
    os.remove(cur)
    print("fuzz.py: %d %s cases, exits %s, %d kept in %s" % (a.cases, a.kind, dict(sorted(codes.items(), key=str)),
                                                            kept, a.out))
    if sum(silent.values()):
        print("fuzz.py: of the damaged files read without an error, %d gave the seed's data, %d other "
              "data (a damaged value read as if it were right)" % (silent["same"], silent["changed"]))
    sys.exit(1 if kept else 0)


if __name__ == "__main__":
    main()
