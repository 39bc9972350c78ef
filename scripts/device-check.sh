#!/bin/sh
# Everything that needs the GPU machine, in one run (see the device tool's README): today the
# design-space measurement of the issue "Real labels" on the H200. The machine has CUDA and
# PyTorch but not this project's Debian libraries, so it only measures; the dataset is built
# and trained on back here:
#   run:   scripts/device-check.sh                      (writes under $OUT)
#   then:  python3 scripts/space/make_dataset.py --specs $OUT/specs.jsonl \
#              --measurements $OUT/measurements.jsonl -o datasets/h200.h5
#          build/seertrain configs/multi.ini --set data.path=datasets/h200.h5 --set data.labels=all
# Budget: about 8 minutes of measuring (SEER_MEASURE_BUDGET seconds) inside the 15 minutes of
# device time one issue has; prints a short table last.
set -eu
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/seer-device-out}
mkdir -p "$out"
budget=${SEER_MEASURE_BUDGET:-450}
py=$(command -v python3)
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1 || true
"$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))" | tee "$out/torch.txt"
"$py" -c "import pynvml" 2>/dev/null || "$py" -m pip install -q nvidia-ml-py 2>/dev/null || echo "no pynvml: utilisation and energy not measured"
"$py" scripts/space/space.py sample -n 2000 --seed 1 -o "$out/specs.jsonl"
"$py" scripts/measure/measure.py "$out/specs.jsonl" -o "$out/measurements.jsonl" --device cuda \
    --batches 1,2,4,8,16,32,64,128,256 --repeats 10 --warmup 5 --time-budget "$budget" 2>&1 | tail -n 5
"$py" - "$out/measurements.jsonl" <<'PY' | tee "$out/summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ok = [r for r in rows if "train_time_ms" in r]
print("| measured configurations | out of memory | architectures | median train spread | median infer spread | util measured | energy measured |")
print("| --- | --- | --- | --- | --- | --- | --- |")
sp = lambda k: "%.2f%%" % (100 * statistics.median(r[k] for r in ok)) if ok else "-"
print("| %d | %d | %d | %s | %s | %d | %d |" % (len(ok), sum(1 for r in rows if r.get("oom")),
      len({r["id"] for r in rows}), sp("train_spread"), sp("infer_spread"),
      sum(1 for r in ok if "train_util_pct" in r), sum(1 for r in ok if "train_energy_mj" in r)))
PY
