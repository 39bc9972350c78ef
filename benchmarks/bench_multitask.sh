#!/bin/sh
# SeerNet-Multi comparison: configs/multi.ini trained with multi_task = pcgrad, sum and single
# (one model per label) on the same split and seeds; prints a markdown table of test figures
# per label, their mean and the training wall time, ready for benchmarks/RESULTS.md.
#   usage: benchmarks/bench_multitask.sh [OUT_DIR] [--set k=v ...]
set -eu
cd "$(dirname "$0")/.."
out=${1:-checkpoints/bench_multitask}
[ $# -gt 0 ] && shift
[ -f datasets/nb201_brpnas.h5 ] || /usr/bin/python3 scripts/datasets/nb201_build.py --brpnas
for mode in pcgrad sum single; do
    echo "== multi_task = $mode" >&2
    # the nine batch-specific GPU labels of the BRP-NAS file, 12 epochs: the table in RESULTS.md
    ./build/seertrain configs/multi.ini --quiet --set output.dir="$out" --set output.run="$mode" \
        --set data.path=datasets/nb201_brpnas.h5 --set data.labels=1080ti_1_ms,1080ti_32_ms,1080ti_256_ms,2080ti_1_ms,2080ti_32_ms,2080ti_256_ms,titan_rtx_1_ms,titan_rtx_32_ms,titan_rtx_256_ms --set train.epochs=12 \
        --set train.multi_task="$mode" "$@" >"$out.$mode.log" 2>&1 || { cat "$out.$mode.log"; exit 1; }
done
/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
runs = {m: json.load(open("%s/%s/summary.json" % (out, m))) for m in ("pcgrad", "sum", "single")}
labels = list(runs["single"]["test"].keys())
print("| label | " + " | ".join("%s MAPE%% | %s Spearman" % (m, m) for m in runs) + " |")
print("| --- |" + " --- | --- |" * len(runs))
for l in labels:
    print("| %s | " % l + " | ".join("%.3f | %.4f" % (r["test"][l]["mape"], r["test"][l]["spearman"])
                                     for r in runs.values()) + " |")
mean = {m: sum(r["test"][l]["mape"] for l in labels) / len(labels) for m, r in runs.items()}
print("| **mean** | " + " | ".join("**%.3f** | %.4f" % (mean[m], sum(r["test"][l]["spearman"] for l in labels) / len(labels))
                                   for m, r in runs.items()) + " |")
print("| training wall time (s) | " + " | ".join("%.0f | " % r["train_seconds"] for r in runs.values()) + " |")
print()
print("pcgrad / single mean MAPE: %.2fx (target <= 1.2x); pcgrad / sum: %.2fx (target <= 1.0x)"
      % (mean["pcgrad"] / mean["single"], mean["pcgrad"] / mean["sum"]))
PY
