#!/bin/sh
# How much work on the other core moves CPU timings: the first N specs of a spec file measured on
# core MEASURE_CORE twice, once with the other core idle and once with it busy (a spinning loop),
# then the per-configuration ratio of the medians and the spreads of each run.
# usage: sh scripts/measure/noise_check.sh SPECS.jsonl [N=10] [BATCHES=1,4] [MEASURE_CORE=1] [BUSY_CORE=0]
# Run it while nothing else uses either core (stop a background measurement first).
set -eu
specs=$1 n=${2:-10} batches=${3:-1,4} mc=${4:-1} bc=${5:-0}
dir=$(mktemp -d)
trap 'rm -rf "$dir"; [ -n "${spin:-}" ] && kill "$spin" 2>/dev/null || true' EXIT
run() {
    taskset -c "$mc" /usr/bin/python3 scripts/measure/measure.py "$specs" -o "$dir/$1.jsonl" \
        --device cpu --batches "$batches" --repeats 7 --warmup 2 --threads 1 --limit "$n" 2> /dev/null
}
run idle
taskset -c "$bc" /usr/bin/python3 -c 'while True: pass' &
spin=$!
run busy
kill "$spin"
spin=
/usr/bin/python3 - "$dir" <<'PY'
import json, statistics as st, sys
d = sys.argv[1]
rows = {}
for cond in ("idle", "busy"):
    for line in open("%s/%s.jsonl" % (d, cond)):
        r = json.loads(line)
        rows.setdefault((r["id"], r["batch"]), {})[cond] = r
keys = [k for k in rows if len(rows[k]) == 2]
for ph in ("train", "infer"):
    ratio = [rows[k]["busy"][ph + "_time_ms"] / rows[k]["idle"][ph + "_time_ms"] for k in keys]
    si = [rows[k]["idle"][ph + "_spread"] for k in keys]
    sb = [rows[k]["busy"][ph + "_spread"] for k in keys]
    print("%s: %d configurations; busy/idle median time ratio %.3f (range %.3f..%.3f); "
          "median spread idle %.2f%%, busy %.2f%%; other_load idle %.2f, busy %.2f"
          % (ph, len(keys), st.median(ratio), min(ratio), max(ratio), 100 * st.median(si),
             100 * st.median(sb), st.median(rows[k]["idle"]["other_load"] for k in keys),
             st.median(rows[k]["busy"]["other_load"] for k in keys)))
PY
