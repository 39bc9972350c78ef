#!/usr/bin/env python3
"""Writes what a lent GPU session measured (the files scripts/device-check.sh leaves under $OUT)
back into the tracked dataset, the same way every time:

    python3 scripts/measure/device_writeback.py OUT --lease "2026-12-05 run 1" [--data datasets/space_h200]

- OUT/measurements.jsonl (the measure stage resumed DATA/measurements.jsonl, so it begins with
  every line of it): its new lines (those without "lease") get "lease": LABEL, and the whole
  replaces DATA/measurements.jsonl;
- DATA/specs.jsonl becomes every architecture measured, taken from the spec files the measure
  stage read (OUT/specs.jsonl, the CNN sample, and the CPU's samples of the other families,
  --spec-files), those already there first, in their order;
- OUT/real_networks_h200.jsonl (the real stage, which resumed DATA/real_networks_h200.jsonl)
  replaces that file.

It refuses, changing nothing, when OUT's files do not begin with the tracked ones (a run that did
not resume them: merging by hand is then the safe way), or when an architecture measured is in
no spec file, or in two that disagree.
"""
import argparse
import json
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPEC_FILES = "datasets/space_cpu/specs_w.jsonl,datasets/space_cpu/specs_y.jsonl"


def lines(path):
    """The JSON lines of path ([] when it does not exist); a line that is not JSON stops the tool."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for no, l in enumerate(f, 1):
            if not l.strip():
                continue
            try:
                out.append(json.loads(l))
            except ValueError as e:
                fail("%s:%d: not a JSON line (%s): a run cut off mid-line? remove that line, or fetch the "
                     "files again; nothing written" % (path, no, e))
    return out


def fail(msg):
    sys.exit("device_writeback.py: " + msg)


def extends(new, old, name):
    """new must begin with old, line for line (the run resumed the tracked file)."""
    if len(new) < len(old) or any(a != b for a, b in zip(new, old)):
        fail("%s does not begin with the %d lines of the tracked file: the run did not resume it; "
             "nothing written" % (name, len(old)))


def write(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="the folder of the device run's files (the run tool's files_at)")
    ap.add_argument("--lease", required=True, help='the label of the new lines, e.g. "2026-12-05 run 1"')
    ap.add_argument("--data", default=os.path.join(ROOT, "datasets/space_h200"))
    ap.add_argument("--spec-files", default=SPEC_FILES,
                    help="the other spec files the measure stage read, comma-separated (default %s)" % SPEC_FILES)
    a = ap.parse_args()
    plan = []  # (path, rows, what): written only once every check has passed

    meas_out = os.path.join(a.out, "measurements.jsonl")
    if os.path.exists(meas_out):
        tracked = lines(os.path.join(a.data, "measurements.jsonl"))
        new = lines(meas_out)
        extends(new, tracked, meas_out)
        fresh = new[len(tracked):]
        if any("lease" in r for r in fresh):
            fail("%s: lines after the tracked ones already carry a lease: written back before?" % meas_out)
        for r in fresh:
            r["lease"] = a.lease
        plan.append((os.path.join(a.data, "measurements.jsonl"), new, "%d new measurement lines" % len(fresh)))

        specs_path = os.path.join(a.data, "specs.jsonl")
        kept = lines(specs_path)
        known = {}
        for p in [os.path.join(a.out, "specs.jsonl")] + [os.path.join(ROOT, f) for f in a.spec_files.split(",") if f]:
            for s in lines(p):
                if s["id"] in known and known[s["id"]] != s:
                    fail("architecture %s differs between two spec files (%s): nothing written" % (s["id"], p))
                known[s["id"]] = s
        for s in kept:
            if s["id"] in known and known[s["id"]] != s:
                fail("architecture %s of %s differs from the spec files' one: nothing written" % (s["id"], specs_path))
        have = {s["id"] for s in kept}
        add = []
        for r in new:
            if r["id"] not in have:
                if r["id"] not in known:
                    fail("architecture %s was measured but is in no spec file (%s): nothing written"
                         % (r["id"], a.spec_files))
                add.append(known[r["id"]])
                have.add(r["id"])
        plan.append((specs_path, kept + add, "%d architectures added (%d in all)" % (len(add), len(kept) + len(add))))

    real_out = os.path.join(a.out, "real_networks_h200.jsonl")
    if os.path.exists(real_out):
        tracked = lines(os.path.join(a.data, "real_networks_h200.jsonl"))
        new = lines(real_out)
        extends(new, tracked, real_out)
        plan.append((os.path.join(a.data, "real_networks_h200.jsonl"), new,
                     "%d new real-network configurations" % (len(new) - len(tracked))))
    if not plan:
        fail("%s holds neither measurements.jsonl nor real_networks_h200.jsonl" % a.out)
    for path, rows, what in plan:
        write(path, rows)
        print("device_writeback.py: %s: %s" % (os.path.relpath(path, ROOT), what))


if __name__ == "__main__":
    main()
