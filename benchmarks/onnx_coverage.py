#!/usr/bin/env python3
"""ONNX front-end coverage: every torchvision model a user might hand Seer, through seerconvert.

Exports each classification, semantic-segmentation and video model of the installed torchvision
(random weights, eval mode) the way the test fixtures are (scripts/onnx_fixtures.py: opset 13,
symbolic batch, BatchNormalization kept, weights stripped), then runs `seerconvert` on it (shape
inference, costs) and `seerpredict --device DEVICE` (the shipped predictor of that device) and
records, per model: whether the export worked, whether Seer read it (or its one-line refusal),
its parameter count against PyTorch's, FLOPs, the operators, the time to convert, and how many
quantities the prediction warned about. Writes benchmarks/onnx_coverage.md.

    /usr/bin/python3 benchmarks/onnx_coverage.py [--only NAME,...] [--work DIR] [--device cpu_epyc]

--zoo timm does the same for a second zoo, timm (other authors' designs): one model per timm
module (the first of its names, shortest first, that builds with at most 100 M parameters),
at the model's own input side, into benchmarks/onnx_coverage_timm.md.

Needs python3-torch, python3-torchvision, python3-onnx and a build (build/seerconvert); --zoo timm
needs timm (pip install --no-deps timm==0.9.16).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
warnings.filterwarnings("ignore")

# input side per model where 224 does not fit; keyword arguments where the defaults do not build
SIDE = {"inception_v3": 299}
KWARGS = {"googlenet": {"aux_logits": False, "init_weights": False},
          "inception_v3": {"aux_logits": False, "init_weights": False}}
VIDEO_SHAPE = [3, 16, 112, 112]  # C, T, H, W: the torchvision video models' usual clip
VIDEO_BIG = {"s3d", "mvit_v1_b", "mvit_v2_s"}  # these take 224x224 frames
SKIP_PARAMS = 400e6  # larger models (ViT-H/14, RegNetY-128GF) take minutes and GBs to export here


TIMM_MAX_PARAMS = 100e6


def timm_models():
    """One (\"timm/<module>\", name) per timm module: its first model, shortest name first, that
    builds with at most TIMM_MAX_PARAMS parameters (three tries per module)."""
    import timm
    import torch
    out = []
    for mod in timm.list_modules():
        for name in sorted(timm.list_models(module=mod), key=lambda n: (len(n), n))[:3]:
            try:
                with torch.no_grad():
                    m = timm.create_model(name, pretrained=False)
            except Exception:  # noqa: BLE001 (the next name)
                continue
            if sum(p.numel() for p in m.parameters()) <= TIMM_MAX_PARAMS:
                out.append(("timm/" + mod, name))
                break
    return out


def models():
    from torchvision import models as M
    out = [("classification", n) for n in M.list_models(module=M)]
    out += [("segmentation", n) for n in M.list_models(module=M.segmentation)]
    out += [("video", n) for n in M.list_models(module=M.video)]
    return out


def export(kind, name, path):
    """(PyTorch parameter count, None) or (count or None, the error)."""
    import onnx
    import torch
    import torchvision
    import onnx_fixtures
    torch.manual_seed(0)
    kw = dict(KWARGS.get(name, {}), **({"weights_backbone": None} if kind == "segmentation" else {}))
    side = SIDE.get(name, 224)
    try:  # no pretrained weights anywhere (this machine has no internet; costs need none)
        if kind.startswith("timm/"):
            import timm
            m = timm.create_model(name, pretrained=False).eval()
            side = m.pretrained_cfg.get("input_size", (3, 224, 224))[-1]
            kind = "classification"
        else:
            m = torchvision.models.get_model(name, weights=None, **kw).eval()
    except Exception as e:  # noqa: BLE001
        return None, "build failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:150])
    params = sum(p.numel() for p in m.parameters())
    if params > SKIP_PARAMS:
        return params, "skipped: %.0f M parameters (over %.0f M, slow to export here)" % (params / 1e6, SKIP_PARAMS / 1e6)
    if os.path.exists(path):  # exported by an earlier run
        return params, None
    if kind == "classification":
        try:
            onnx_fixtures.export(m, path, side)
            return params, None
        except Exception as e:  # noqa: BLE001 (reported in the table)
            return params, "export failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:150])

    class Out(torch.nn.Module):  # segmentation models return a dict
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            y = self.m(x)
            return y["out"] if isinstance(y, dict) else y
    shape = [1] + ((VIDEO_SHAPE[:2] + [224, 224] if name in VIDEO_BIG else VIDEO_SHAPE) if kind == "video"
                   else [3, 224, 224])
    try:
        torch.onnx.export(Out(m), torch.zeros(shape), path, opset_version=13, input_names=["input"],
                          output_names=["out"], dynamic_axes={"input": {0: "batch"}, "out": {0: "batch"}},
                          training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
        onnx.save(onnx_fixtures.strip(onnx.load(path)), path)
        return params, None
    except Exception as e:  # noqa: BLE001
        return params, "export failed: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:150])


def convert(a, path):
    t0 = time.time()
    r = subprocess.run([os.path.join(a.build, "seerconvert"), path], capture_output=True, text=True, timeout=300)
    secs = time.time() - t0
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1][:300]}
    out = r.stdout
    g = lambda pat: re.search(pat, out)  # noqa: E731
    return {"params": int(g(r"parameters (\d+)").group(1)), "gflops": float(g(r"FLOPs ([\d.]+) G").group(1)),
            "operators": int(g(r"(\d+) operators").group(1)), "secs": secs}


def predict(a, path):
    r = subprocess.run([os.path.join(a.build, "seerpredict"), path, "--device", a.device, "--batch", "1",
                        "--json"], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1][:300]}
    x = json.loads(r.stdout)["results"][0]
    ms = {k.rsplit("_", 2)[-2]: v["value"] for k, v in x["metrics"].items() if k.endswith("_ms")}
    return {"ms": ms, "warned": x["out_of_range_count"],
            "ops": ["%s (%s)" % (o["name"], o.get("onnx_ops") or "%d" % o["value"]) for o in x["out_of_range"]
                    if o["kind"] == "op"] + [o["name"] for o in x["out_of_range"] if o["kind"] == "structure"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="model names, comma-separated (default: all)")
    ap.add_argument("--work", default="", help="exports (default /tmp/seer-onnx-coverage, -timm for --zoo timm)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--device", default="cpu_epyc", help="the shipped predictor's device to predict with")
    ap.add_argument("--zoo", choices=("torchvision", "timm"), default="torchvision")
    ap.add_argument("--out", default="", help="default benchmarks/onnx_coverage.md "
                    "(--zoo timm: benchmarks/onnx_coverage_timm.md)")
    a = ap.parse_args()
    a.work = a.work or "/tmp/seer-onnx-coverage" + ("-timm" if a.zoo == "timm" else "")
    a.out = a.out or os.path.join(ROOT, "benchmarks/onnx_coverage%s.md" % ("_timm" if a.zoo == "timm" else ""))
    if not os.path.exists(os.path.join(a.build, "seerconvert")):
        sys.exit("onnx_coverage.py: %s/seerconvert missing: build first (see README)" % a.build)
    try:
        import torchvision  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        sys.exit("onnx_coverage.py: %s: apt-get install python3-torchvision python3-onnx" % e)
    if a.zoo == "timm":
        try:
            import timm  # noqa: F401
        except ImportError:
            sys.exit("onnx_coverage.py: --zoo timm needs timm: pip install --no-deps timm==0.9.16")
    os.makedirs(a.work, exist_ok=True)
    only = set(x for x in a.only.split(",") if x)
    todo = [(k, n) for k, n in (timm_models() if a.zoo == "timm" else models()) if not only or n in only]
    rows = []
    t_start = time.time()
    for i, (kind, name) in enumerate(todo):
        path = os.path.join(a.work, name + ".onnx")
        params, err = export(kind, name, path)
        row = {"kind": kind, "name": name, "torch_params": params, "export": err}
        if err is None:
            row.update(convert=convert(a, path))
            if "error" not in row["convert"]:
                row.update(predict=predict(a, path))
        rows.append(row)
        c = row.get("convert", {})
        print("  %d/%d %-32s %s (%.0f s)" % (i + 1, len(todo), name, err or c.get("error") or
              "%d operators, %.2f GFLOPs" % (c["operators"], c["gflops"]), time.time() - t_start), flush=True)
    report(a, rows)


def report(a, rows):
    import torch
    import torchvision
    exported = [r for r in rows if r["export"] is None]
    read = [r for r in exported if "error" not in r["convert"]]
    same = [r for r in read if r["torch_params"] is None or r["convert"]["params"] == r["torch_params"]]
    if a.zoo == "timm":
        import timm
        head = ["# ONNX front end on timm's models, one per module", "",
                "Regenerated by `/usr/bin/python3 benchmarks/onnx_coverage.py --zoo timm` on %s (torch %s, timm %s; "
                "each module's first model, shortest name first, with at most %.0f M parameters; opset 13 exports as "
                "`scripts/onnx_fixtures.py` makes them, batch 1, the model's own input side; `seerpredict --device %s "
                "--batch 1`)." % (time.strftime("%Y-%m-%d"), torch.__version__, timm.__version__,
                                  TIMM_MAX_PARAMS / 1e6, a.device), ""]
    else:
        head = ["# ONNX front end on every torchvision model", "",
                "Regenerated by `/usr/bin/python3 benchmarks/onnx_coverage.py` on %s (torch %s, torchvision %s; "
                "opset 13 exports as `scripts/onnx_fixtures.py` makes them, batch 1, 224x224 inputs (Inception-v3 "
                "299x299; video models a 16-frame 112x112 clip, 224x224 for S3D and MViT); `seerpredict --device %s "
                "--batch 1`)." % (time.strftime("%Y-%m-%d"), torch.__version__, torchvision.__version__, a.device), ""]
    L = head + [
         "%d models: %d exported by PyTorch, %d of those read by `seerconvert`, %d with the parameter count "
         "PyTorch gives." % (len(rows), len(exported), len(read), len(same)), "",
         "| family | model | PyTorch parameters | Seer parameters | GFLOPs | operators | convert ms | "
         "predicted ms (train / infer) | warnings | operators never trained on (nodes), structure / why not read |",
         "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        c, p = r.get("convert", {}), r.get("predict", {})
        tp = "%.2f M" % (r["torch_params"] / 1e6) if r["torch_params"] else "-"
        if r["export"] is not None:
            L.append("| %s | %s | %s | - | - | - | - | - | - | %s |" % (r["kind"], r["name"], tp, r["export"]))
        elif "error" in c:
            L.append("| %s | %s | %s | - | - | - | - | - | - | **not read**: %s |" % (
                r["kind"], r["name"], tp, c["error"].replace("|", "/")))
        else:
            sp = "%.2f M" % (c["params"] / 1e6) + ("" if r["torch_params"] in (None, c["params"]) else " (differs)")
            L.append("| %s | %s | %s | %s | %.2f | %d | %.1f | %s | %s | %s |" % (
                r["kind"], r["name"], tp, sp, c["gflops"], c["operators"], 1000 * c["secs"],
                " / ".join("%.1f" % p["ms"][k] for k in ("train", "infer") if k in p["ms"]) if p.get("ms")
                else p.get("error", "-")[:80], p.get("warned", "-"),
                ", ".join(p.get("ops", [])) or "-"))
    L.append("")
    with open(a.out, "w") as f:
        f.write("\n".join(L))
    print("onnx_coverage.py: wrote %s (%d models, %d read)" % (a.out, len(rows), len(read)))


if __name__ == "__main__":
    main()
