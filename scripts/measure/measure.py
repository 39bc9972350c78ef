#!/usr/bin/env python3
"""Measurement harness: time and memory of design-space models (scripts/space) on a GPU or CPU.

    measure.py specs.jsonl -o measurements.jsonl [--device cuda|cpu] [--batches 1,2,4,...,256]
               [--repeats 10] [--warmup 5] [--threads 1] [--time-budget SECONDS] [--limit N]

For each (architecture, batch size), in spec order and then batch order, one JSON line:
  train_time_ms   one training step (zero_grad, forward, cross-entropy, backward, SGD step),
  infer_time_ms   one no-grad forward pass, both the median of --repeats timed runs after
                  --warmup untimed ones (CUDA: device events around each run; CPU: wall clock),
  *_spread        (q75 - q25) / median of the timed runs,
  train_mem_mb / infer_mem_mb  peak memory: CUDA allocated (and *_reserved_mb reserved) during
                  the phase; CPU: the peak resident set of a process that runs only this
                  configuration (each CPU configuration runs in a forked child; its peak
                  counts the parent's anonymous pages, parent_mem_mb at the fork),
  train_util_pct / infer_util_pct  average SM utilisation over the timed window (NVML, sampled
                  every 20 ms; CUDA only, when pynvml is importable),
  train_energy_mj / infer_energy_mj  energy per iteration from NVML's total-energy counter (GPUs
                  that report it),
plus when it was measured (`time`, Unix seconds), the device name, driver, library versions,
precision (fp32), thread count and `builder`
(space.TORCH_BUILDER: the version of the PyTorch builder's forward pass; lines without it were
measured with version 1, whose no-grad pass ran slower than the network's own). Out of memory
is recorded as {"oom": true} (not measured). Lines are appended as they are measured, and a rerun
skips the (id, batch) pairs already in the file, so a run can stop and resume; --time-budget
stops cleanly before a configuration that would start after the budget. --pass 2 measures every
configuration of the first pass again, as a separate pass (another time, other machine state:
what repeats inside one pass cannot see), lines tagged "pass": 2; make_dataset.py averages the
passes and reports their disagreement. Before every configuration a fixed reference network is
timed (ref_ms; --no-reference skips it): on this project's CPU machines the same configuration
measured in two sessions differed by a third (benchmarks/RESULTS.md), and ref_ms is what lets
make_dataset.py --ref-normalize take that drift out.
"""
import argparse
import json
import os
import platform
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "space"))
import space  # noqa: E402


def stats(ts):
    ts = sorted(ts)
    n = len(ts)
    q = lambda f: ts[min(n - 1, int(round(f * (n - 1))))]
    med = q(0.5)
    return med, ((q(0.75) - q(0.25)) / med) if med > 0 else 0.0


class NvmlSampler:
    """Average SM utilisation over a window, and the energy counter (both optional)."""

    def __init__(self, index):
        self.ok = False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(index)
            self.ok = True
        except Exception:
            pass

    def driver(self):
        try:
            return self.nv.nvmlSystemGetDriverVersion() if self.ok else None
        except Exception:
            return None

    def energy_mj(self):
        try:
            return float(self.nv.nvmlDeviceGetTotalEnergyConsumption(self.h)) if self.ok else None
        except Exception:
            return None

    def start(self):
        self.samples, self.stop_flag = [], False
        if not self.ok:
            return

        def run():
            while not self.stop_flag:
                try:
                    self.samples.append(self.nv.nvmlDeviceGetUtilizationRates(self.h).gpu)
                except Exception:
                    return
                time.sleep(0.02)
        self.t = threading.Thread(target=run, daemon=True)
        self.t.start()

    def stop(self):
        if not self.ok:
            return None
        self.stop_flag = True
        self.t.join()
        return sum(self.samples) / len(self.samples) if self.samples else None


# The reference workload timed beside every configuration: a fixed small network (all five CNN
# stage styles, input 64, batch 4, inference). Its time follows the machine's speed at that
# moment (another VM host, frequency, a neighbour's load), so make_dataset.py --ref-normalize can
# put measurements taken weeks apart, or on two hosts of one instance type, on one scale.
REF_SPEC = {"id": "reference", "input": [3, 64, 64], "act": "relu", "head": {"classes": 1000},
            "stem": {"channels": 32, "kernel": 3, "stride": 2},
            "stages": [{"style": "vgg", "width": 48, "depth": 1},
                       {"style": "mobilenet", "width": 64, "depth": 2, "expand": 3},
                       {"style": "resnext", "width": 128, "depth": 1, "bottleneck": 0.5, "groups": 4},
                       {"style": "inception", "width": 192, "depth": 1}]}
REF_BATCH, REF_REPEATS = 4, 7


def reference_ms(dev):
    """Median time (ms) of REF_SPEC's inference after two warm-up runs."""
    import torch
    cuda = dev.type == "cuda"
    torch.manual_seed(0)
    model = space.torch_model(REF_SPEC).to(dev).eval()
    x = torch.randn([REF_BATCH] + REF_SPEC["input"], device=dev)
    ts = []
    with torch.no_grad():
        for i in range(2 + REF_REPEATS):
            if cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            model(x)
            if cuda:
                torch.cuda.synchronize()
            if i >= 2:
                ts.append((time.perf_counter() - t0) * 1e3)
    return stats(ts)[0]


def measure_one(spec, batch, a, nvml):
    import torch
    torch.manual_seed(0)
    res = measure_model(space.torch_model(spec), spec["input"], spec["head"]["classes"], batch, a, nvml)
    res["builder"] = space.TORCH_BUILDER
    return res


def measure_model(model, input_shape, classes, batch, a, nvml):
    """Times one training step and one forward pass of any classifier (input [batch] + input_shape,
    `classes` logits) as the module docstring says; benchmarks/real_networks.py times torchvision's
    networks with it."""
    import torch
    import torch.nn.functional as F
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    ref = reference_ms(dev) if a.reference else None
    torch.manual_seed(0)
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    x = torch.randn([batch] + list(input_shape), device=dev)
    y = torch.randint(0, classes, (batch,), device=dev)
    out = {}

    def train_step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    def infer_step():
        with torch.no_grad():
            model(x)

    for phase, step in (("train", train_step), ("infer", infer_step)):
        model.train(phase == "train")
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats(dev)
        for _ in range(a.warmup):
            step()
        ts = []
        if cuda:
            torch.cuda.synchronize()
        nvml.start()
        e0 = nvml.energy_mj()
        for _ in range(a.repeats):
            if cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                step()
                e.record()
                e.synchronize()
                ts.append(s.elapsed_time(e))
            else:
                t0 = time.perf_counter()
                step()
                ts.append((time.perf_counter() - t0) * 1e3)
        e1 = nvml.energy_mj()
        util = nvml.stop()
        med, spread = stats(ts)
        out[phase + "_time_ms"], out[phase + "_spread"] = med, spread
        if cuda:
            out[phase + "_mem_mb"] = torch.cuda.max_memory_allocated(dev) / 2 ** 20
            out[phase + "_reserved_mb"] = torch.cuda.max_memory_reserved(dev) / 2 ** 20
        if util is not None:
            out[phase + "_util_pct"] = util
        if e0 is not None and e1 is not None:
            out[phase + "_energy_mj"] = (e1 - e0) / a.repeats
    if ref is not None:
        out["ref_ms"] = ref
    return out


def run_cpu_child(spec, batch, a, nvml, measure=None):
    """CPU: measure in a forked child so its peak RSS is this configuration's alone; measure() (by
    default measure_one(spec, batch, a, nvml)) returns the result. The child starts with this
    process's anonymous pages resident (file-backed ones, the libraries, fault in as it touches
    them), so the result records their size at the fork (parent_mem_mb, resident minus shared): a
    floor under the memory figures, which must stay small (build nothing large here before
    measuring)."""
    parent_mb = None
    try:
        with open("/proc/self/statm") as f:
            v = f.read().split()
        parent_mb = (int(v[1]) - int(v[2])) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        pass
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = measure() if measure else measure_one(spec, batch, a, nvml)
            res["infer_mem_mb"] = None  # filled by the parent from the child's rusage
        except MemoryError:
            res = {"oom": True}
        except Exception as e:  # noqa: BLE001
            res = {"error": "%s: %s" % (type(e).__name__, e)}
        os.write(w, json.dumps(res).encode())
        os.close(w)
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    res = json.loads(data.decode()) if data else {"error": "child died with status %d" % status}
    if "train_time_ms" in res:
        # ru_maxrss (KiB) covers the whole child: training dominates; the forward pass alone is not
        # separated on the CPU, so both carry the configuration's peak
        res["train_mem_mb"] = res["infer_mem_mb"] = ru.ru_maxrss / 1024.0
    res["parent_mem_mb"] = parent_mb
    return res


def cpu_times():
    """{cpu index: (busy, total)} jiffies from /proc/stat (empty where it cannot be read)."""
    out = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu") and line[3].isdigit():
                    p = line.split()
                    v = [int(x) for x in p[1:]]
                    idle = v[3] + (v[4] if len(v) > 4 else 0)
                    out[int(p[0][3:])] = (sum(v) - idle, sum(v))
    except (OSError, ValueError, IndexError):
        pass
    return out


def other_load(t0, t1, mine):
    """Busy share (0..1) of the cores this process is not pinned to, between two cpu_times():
    the work that ran beside the measurement (recorded per line; see --max-other-load)."""
    busy = tot = 0
    for c in t1:
        if c in mine or c not in t0:
            continue
        busy += t1[c][0] - t0[c][0]
        tot += t1[c][1] - t0[c][1]
    return busy / tot if tot > 0 else None


def env_info(a, nvml):
    import torch
    import numpy
    info = {"torch": torch.__version__, "python": platform.python_version(), "precision": "fp32",
            "threads": a.threads, "warmup": a.warmup, "repeats": a.repeats,
            "numpy": numpy.__version__, "kernel": platform.release(), "allocator": space.allocator(),
            "cores": ",".join(str(c) for c in sorted(os.sched_getaffinity(0)))}
    if a.device.startswith("cuda"):
        info.update({"device_name": torch.cuda.get_device_name(0), "cuda": torch.version.cuda,
                     "cudnn": torch.backends.cudnn.version(), "driver": nvml.driver()})
    else:
        name = platform.processor() or "cpu"
        cpu = {}  # the first processor's /proc/cpuinfo fields
        try:
            with open("/proc/cpuinfo") as f:
                for l in f:
                    if not l.strip():
                        break
                    k, _, v = l.partition(":")
                    cpu[k.strip()] = v.strip()
        except OSError:
            pass
        name = cpu.get("model name", name)
        info.update({"device_name": name})
        # two CPUs can share a model name ("Intel(R) Xeon(R) Processor" under KVM): the
        # family/model/stepping and the clock the hypervisor reports tell them apart in the lines
        if "model" in cpu:
            info["cpu_id"] = "%s %s/%s/%s" % (cpu.get("vendor_id", "?"), cpu.get("cpu family", "?"),
                                              cpu["model"], cpu.get("stepping", "?"))
        if "cpu MHz" in cpu:
            info["cpu_mhz"] = float(cpu["cpu MHz"])
        core = space.blas_core()  # the matrix products' kernels (torch is imported: its BLAS loaded)
        if core:
            info["blas_core"] = core
    return info


def blas_warning(info):
    """space.blas_warning for this machine's processor, or None."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.partition(":")[2] for l in f if l.startswith("flags")), "")
    except OSError:
        return None
    return space.blas_warning(info.get("blas_core"), flags)


def interleave(lists):
    """[[a1, a2, a3], [b1]] -> [a1, b1, a2, a3]: one from each list in turn."""
    out = []
    for i in range(max(map(len, lists), default=0)):
        out += [l[i] for l in lists if i < len(l)]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", help="a specs file (space.py sample), or several separated by commas: "
                    "their architectures are taken in turn, one from each file, so that a run stopped "
                    "early has measured all of them alike")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--batches", default="1,2,4,8,16,32,64,128,256")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--time-budget", type=float, default=0, help="seconds (0 = no limit)")
    ap.add_argument("--limit", type=int, default=0, help="only the first N specs")
    ap.add_argument("--pass", dest="pass_no", type=int, default=1,
                    help="measurement pass: 2 measures again, in a separate pass, every configuration "
                         "the first pass measured (lines tagged \"pass\": 2), so that make_dataset.py "
                         "can average the passes and report how far apart they were")
    ap.add_argument("--no-reference", dest="reference", action="store_false",
                    help="skip the reference workload timed before every configuration (ref_ms: a "
                         "fixed small network, about 0.1 s on a CPU core) that make_dataset.py "
                         "--ref-normalize uses to correct for the machine's speed drifting")
    ap.add_argument("--max-other-load", type=float, default=0,
                    help="CPU: measure a configuration again (up to 3 times) while the other "
                         "cores were busier than this share (0..1) during it (0 = never)")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(a.threads)
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("measure.py: error: --device %s: no CUDA device here (use --device cpu)" % a.device)
    nvml = NvmlSampler(0) if a.device.startswith("cuda") else NvmlSampler.__new__(NvmlSampler)
    if not a.device.startswith("cuda"):
        nvml.ok = False
    info = env_info(a, nvml)
    if blas_warning(info):
        print("measure.py: warning: " + blas_warning(info), file=sys.stderr)
    specs = interleave([space.read_specs(p) for p in a.specs.split(",")])[: a.limit or None]
    batches = [int(b) for b in a.batches.split(",")]
    if a.pass_no < 1:
        sys.exit("measure.py: error: --pass %d: passes count from 1" % a.pass_no)
    done = {}  # pass -> {(id, batch)}
    others = {}  # device_name -> lines measured on it, when not this machine's
    mixed = {}  # allocator -> lines measured under it, when not this process's
    kernels = {}  # blas_core -> lines measured with it, when not this process's
    unrecorded = 0  # lines written before measure.py recorded cpu_id
    mine_lines = []  # this machine's lines, for the clock they were measured at
    if os.path.exists(a.out):
        with open(a.out) as f:
            for line in f:
                try:
                    r = json.loads(line)
                    done.setdefault(r.get("pass", 1), set()).add((r["id"], r["batch"]))
                except (ValueError, KeyError):
                    continue  # a line cut by a crash: measured again
                if "cpu_id" not in r:
                    unrecorded += 1
                theirs = r.get("device_name", info["device_name"])
                if not space.same_machine(dict(r, device_name=theirs), info):
                    key = "%s (%s)" % (theirs, r["cpu_id"]) if "cpu_id" in r else theirs
                    others[key] = others.get(key, 0) + 1
                else:
                    mine_lines.append(r)
                if not space.same_allocator(r, info):
                    mixed[r.get("allocator", "glibc")] = mixed.get(r.get("allocator", "glibc"), 0) + 1
                if not space.same_blas(r, info):
                    kernels[r["blas_core"]] = kernels.get(r["blas_core"], 0) + 1
    if mixed and not others:
        # the allocator moves times and memory: one file, one allocator
        name, n = max(mixed.items(), key=lambda kv: kv[1])
        sys.exit("measure.py: error: %s: %d lines were measured under the allocator %r, this process runs "
                 "under %r; run it as they were (the same MALLOC_* variables and LD_PRELOAD) or write to "
                 "another file (-o ...)" % (a.out, n, name, info["allocator"]))
    if kernels and not others:
        # the BLAS kernels move every matrix product's time: one file, one kernel set
        name, n = max(kernels.items(), key=lambda kv: kv[1])
        sys.exit("measure.py: error: %s: %d lines were measured with OpenBLAS's %s kernels, this process "
                 "runs its %s ones; run it as they were (OPENBLAS_CORETYPE=%s) or write to another file "
                 "(-o ...)" % (a.out, n, name, info["blas_core"], name))
    if others:
        # one file, one device: a resumed run on another machine must not mix its times in
        name, n = max(others.items(), key=lambda kv: kv[1])
        sys.exit("measure.py: error: %s: %d lines were measured on %r, this machine is %r; write this "
                 "machine's measurements to their own file (-o ...)" % (a.out, n, name, "%s (%s)" % (
                     info["device_name"], info.get("cpu_id", "?"))))
    clock = space.clock_warning(a.out, mine_lines, info, "measure.py")
    if clock:
        print(clock, file=sys.stderr)
    if unrecorded and "cpu_id" in info:
        print("measure.py: warning: %d lines of %s record no cpu_id (written before measure.py recorded "
              "it): whether they were measured on this processor (%s) cannot be checked, and two "
              "processors can share a model name (the AMD EPYC file holds two: "
              "datasets/space_cpu/README.md); make_dataset.py --cpu-id keeps one processor's lines"
              % (unrecorded, a.out, info["cpu_id"]), file=sys.stderr)
    t0, n_new = time.time(), 0
    mine_done, first = done.get(a.pass_no, set()), done.get(1, set())
    todo = [(s, b) for s in specs for b in batches if (s["id"], b) not in mine_done
            and (a.pass_no == 1 or (s["id"], b) in first)]
    print("measure.py: pass %d: %d configurations to measure (%d already in %s) on %s"
          % (a.pass_no, len(todo), len(mine_done), a.out, info["device_name"]), file=sys.stderr)
    last = 0.0
    for spec, b in todo:
        if a.time_budget and time.time() - t0 + last > a.time_budget:
            print("measure.py: time budget reached", file=sys.stderr)
            break
        t1 = time.time()
        if a.device.startswith("cuda"):
            try:
                res = measure_one(spec, b, a, nvml)
            except torch.cuda.OutOfMemoryError:
                res = {"oom": True}
            finally:
                torch.cuda.empty_cache()
        else:
            mine = os.sched_getaffinity(0)
            for attempt in range(3):
                c0 = cpu_times()
                res = run_cpu_child(spec, b, a, nvml)
                res["other_load"] = other_load(c0, cpu_times(), mine)
                res["attempts"] = attempt + 1
                if not a.max_other_load or res["other_load"] is None \
                        or res["other_load"] <= a.max_other_load:
                    break
                time.sleep(5)
        last = time.time() - t1
        rec = {"id": spec["id"], "batch": b, "flops": space.flops(spec, b), "time": int(time.time())}
        if a.pass_no > 1:
            rec["pass"] = a.pass_no
        rec.update(res)
        rec.update(info)
        with open(a.out, "a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")
        n_new += 1
        if n_new % 10 == 0:
            print("  %d/%d measured, %.0f s" % (n_new, len(todo), time.time() - t0), file=sys.stderr)
    print("measure.py: %d configurations measured in %.0f s -> %s" % (n_new, time.time() - t0, a.out),
          file=sys.stderr)


if __name__ == "__main__":
    main()
