#!/usr/bin/env python3
"""Name a held-out set of real networks by rule, before any of them is measured.

The rule every timm set of benchmarks/real_networks.py since ADDED17 was named by: timm's models
(timm.list_models(PATTERN), sorted) in the order random.Random(SEED).shuffle gives, less those
real_networks.py already holds (measured before), the first COUNT that torch.onnx exports at opset
13 (scripts/onnx_fixtures.py, as real_networks.py exports), that seerconvert reads and that have at
most MAX_GFLOPS at batch 1 (seerconvert's count, as seerpredict --json reports it), each at the
model's own input side (timm's pretrained_cfg). Prints every model tried with why it was or was not
taken, and the dict to paste into real_networks.py under a new name (HELD_OUT until it judges).

Each export runs in a child process that may use at most --max-export-gb GiB more address space
than this one (resource.RLIMIT_AS): a model too large to export on this machine (timm has some of
hundreds of GFLOPs) is a row of the table ("no: ...") instead of waking the kernel's OOM killer,
which may take any process, a measurement on the other core included.

  /usr/bin/python3 benchmarks/pick_timm.py --seed 21 --count 8 --max-gflops 10

Needs python3-torch, timm and python3-onnx; the ONNX files go to --work (real_networks.py's, so the
measurement that follows reuses them).
"""
import argparse
import importlib
import json
import os
import random
import resource
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import real_networks as rn  # noqa: E402


def gflops(a, onnx):
    """seerconvert's FLOPs at batch 1 in G, or the error line of seerpredict."""
    r = subprocess.run([os.path.join(a.build, "seerpredict"), a.predictor, onnx, "--batch", "1", "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return (r.stderr.strip().splitlines() or ["seerpredict: exit %d" % r.returncode])[-1][:200]
    return json.loads(r.stdout)["results"][0]["flops"] / 1e9


def vm_bytes():
    """This process's address space (VmSize of /proc/self/status) in bytes; 0 where unknown."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def export_limited(key, path, gb):
    """rn.export_onnx(key, path) in a forked child whose address space may grow by at most GB GiB:
    None, or the error as one line (a failed allocation is torch's own error, or the child's
    death)."""
    importlib.import_module("onnx_fixtures")  # torch and the exporter loaded here, outside the child's limit
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: export, write the error (or nothing) to the pipe, exit
        os.close(rd)
        try:
            lim = vm_bytes() + int(gb * 2 ** 30)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
            err = rn.export_onnx(key, path) or ""
        except BaseException as e:  # noqa: BLE001 (reported in the table)
            err = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:160])
        os.write(wr, err.encode()[:4000])
        os._exit(0)
    os.close(wr)
    chunks = []
    while True:
        c = os.read(rd, 4096)
        if not c:
            break
        chunks.append(c)
    os.close(rd)
    _, status = os.waitpid(pid, 0)
    err = b"".join(chunks).decode(errors="replace")
    if not err and status != 0:
        err = "the export died (wait status %d) within --max-export-gb %g" % (status, gb)
    if err:
        for p in (path, path + ".part"):
            if os.path.exists(p):
                os.remove(p)
    if "alloc" in err.lower() or "memory" in err.lower():
        err = "needs more than --max-export-gb %g GiB to export (%s)" % (gb, err[:120])
    return err or None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True, help="random.Random(SEED).shuffle of the sorted names")
    ap.add_argument("--count", type=int, default=8, help="how many to take")
    ap.add_argument("--max-gflops", type=float, default=10.0, help="at batch 1, seerconvert's count")
    ap.add_argument("--pattern", default="",
                    help="timm.list_models's filter, several comma-separated (a model matching any; default: every model)")
    ap.add_argument("--predictor", default=os.path.join(ROOT, "predictors/cpu_xeon26.seer"),
                    help="any .seer file: seerpredict reports the FLOPs of the graph it converts")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default="/tmp/seer-real-networks", help="ONNX exports (real_networks.py's)")
    ap.add_argument("--max-export-gb", type=float, default=6.0,
                    help="address space one export may add, GiB (a larger model is a row 'no: needs more ...')")
    a = ap.parse_args()
    if a.count < 1 or a.max_gflops <= 0 or a.max_export_gb <= 0:
        ap.error("--count, --max-gflops and --max-export-gb must be positive")
    for p in (a.predictor, os.path.join(a.build, "seerpredict")):
        if not os.path.exists(p):
            sys.exit("pick_timm.py: %s missing (build with scripts/setup.sh, or pass --build / --predictor)" % p)
    import timm
    names = sorted(timm.list_models([p for p in a.pattern.split(",") if p]) if a.pattern else timm.list_models())
    random.Random(a.seed).shuffle(names)
    os.makedirs(a.work, exist_ok=True)
    taken, tried = {}, 0
    print("| # | model | side | GFLOPs | taken |")
    print("|---|---|---|---|---|")
    for name in names:
        key = "timm-" + name
        if key in rn.NETS:
            continue  # measured before: not unseen
        tried += 1
        try:
            side = int(timm.get_pretrained_cfg(name).input_size[-1])
        except Exception:  # noqa: BLE001 (a model without a pretrained config: timm's default side)
            side = 224
        rn.NETS[key] = (side, {})
        path = os.path.join(a.work, "%s.onnx" % key)
        err = None if os.path.exists(path) else export_limited(key, path, a.max_export_gb)
        g = err if err else gflops(a, path)
        if isinstance(g, str):
            verdict = "no: " + g.replace("|", "/")
        elif g > a.max_gflops:
            verdict = "no: more than %g GFLOPs" % a.max_gflops
        else:
            verdict = "yes"
            taken[key] = side
        print("| %d | %s | %d | %s | %s |" % (tried, name, side, "-" if isinstance(g, str) else "%.2f" % g, verdict),
              flush=True)
        if len(taken) == a.count:
            break
    if len(taken) < a.count:
        print("pick_timm.py: only %d of %d found among %d models" % (len(taken), a.count, tried), file=sys.stderr)
    print("\n%d tried, %d taken:" % (tried, len(taken)))
    print("{" + ", ".join('"%s": (%d, {})' % (k, s) for k, s in taken.items()) + "}")
    print("N=" + ",".join(taken))
    return 0 if len(taken) == a.count else 1


if __name__ == "__main__":
    sys.exit(main())
