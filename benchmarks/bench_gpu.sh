#!/bin/sh
# GPU training speed: Seer's CUDA backend against the PyTorch Geometric SeerNet
# (benchmarks/reference/seernet_pyg.py) on the same GPU, same data, same model (H = 256, L = 1,
# SynMM, batch 128, AdamW lr 1e-3, clipping at 1.0, 2:1:1 split), equal epochs. Reports the median
# epoch time (epochs after the first), the ratio, and the validation MAPE after the last epoch;
# and Seer's device memory per million nodes of batch capacity.
#   usage: benchmarks/bench_gpu.sh BIN_DIR NAME=DATA.h5:LABEL ... [EPOCHS]
# (SEER_BENCH_DEVICE=cpu runs both on the CPU: a dry run of the script.)
# e.g.     benchmarks/bench_gpu.sh build nb201=datasets/nb201_brpnas.h5:titan_rtx_256_ms \
#              space53k=/tmp/space_53k.h5:synthetic_ms
set -eu
bin=$1
shift
epochs=5
work=${SEER_BENCH_WORK:-/tmp/seer_bench_gpu}
mkdir -p "$work"
here=$(cd "$(dirname "$0")/.." && pwd)
py=${SEER_PYTHON:-python3}
printf "| dataset | train graphs | Seer epoch s | PyG epoch s | PyG / Seer | Seer val MAPE | PyG val MAPE | Seer MB per M nodes |\n"
printf "| --- | --- | --- | --- | --- | --- | --- | --- |\n"
for spec in "$@"; do
    case $spec in *=*) ;; *) epochs=$spec; continue ;; esac
    name=${spec%%=*} rest=${spec#*=}
    data=${rest%%:*} label=${rest#*:}
    "$bin/seertrain" "$here/configs/single.ini" --quiet --set data.path="$data" --set data.labels="$label" \
        --set model.hidden=256 --set model.blocks=1 --set model.agg=synmm --set model.head_hidden=256 \
        --set train.batch_size=128 --set train.epochs="$epochs" --set train.early_stop=0 \
        --set train.schedule=none --set backend.device="${SEER_BENCH_DEVICE:-cuda}" --set output.dir="$work" \
        --set output.run="seer_$name" > "$work/seer_$name.log" 2>&1 || { cat "$work/seer_$name.log"; exit 1; }
    "$py" "$here/benchmarks/reference/seernet_pyg.py" --data "$data" --label "$label" --hidden 256 \
        --blocks 1 --agg synmm --batch 128 --epochs "$epochs" --device "${SEER_BENCH_DEVICE:-cuda}" > "$work/pyg_$name.log" 2>&1 ||
        { cat "$work/pyg_$name.log"; exit 1; }
    "$py" - "$work/seer_$name" "$work/pyg_$name.log" "$name" <<'PY'
import json, statistics, sys
run, pyg_log, name = sys.argv[1:4]
ep = [json.loads(l) for l in open(run + "/metrics.jsonl")]
summ = json.load(open(run + "/summary.json"))
seer_s = statistics.median([e["seconds"] for e in ep[1:]] or [ep[0]["seconds"]])
seer_mape = sum(v["mape"] for v in ep[-1]["val"].values()) / len(ep[-1]["val"])
pyg = json.loads(open(pyg_log).read().strip().splitlines()[-1])
ntrain = round(ep[-1]["graphs_per_s"] * ep[-1]["seconds"])
per_m = summ.get("device_memory_mb", float("nan")) / (summ.get("batch_capacity_nodes", 1) / 1e6)
print("| %s | %d | %.3f | %.3f | %.1fx | %.2f%% | %.2f%% | %.0f |" % (name, ntrain, seer_s, pyg["epoch_s"],
      pyg["epoch_s"] / seer_s, seer_mape, pyg["val_mape"], per_m))
PY
done
