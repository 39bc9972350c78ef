#!/bin/sh
# Everything that needs the GPU machine, in one run (see the device tool's README), then a short
# table. Prepare here with `sh scripts/device-bundle.sh` (binaries, the libraries a bare CUDA image
# lacks, NB201), then run there with build-device carried:
#   sh scripts/device-check.sh [gpu|measure|all]          (default all; writes under $OUT)
# gpu (issues "CUDA backend" and "data-parallel"), about 6 minutes:
#   test_cuda_ops (+ compute-sanitizer memcheck and racecheck), test_cuda_train (GPU against CPU:
#   one step, 100 steps), test_nccl (R = 1: init, all-reduce, abort), bench_cuda_ops (ceilings,
#   TFLOP/s, GB/s, cuSPARSE), bench_gpu.sh (epoch time against PyTorch Geometric on NB201 and a
#   53k-graph design-space dataset)
# measure (issue "Real labels"): the design-space measurement on the GPU for the time left
#   (SEER_MEASURE_BUDGET seconds; the dataset is built and trained on back here:
#    python3 scripts/space/make_dataset.py --specs $OUT/specs.jsonl \
#        --measurements $OUT/measurements.jsonl -o datasets/h200.h5)
# Without a GPU every stage says so and the script still ends with its table.
set -u
cd "$(dirname "$0")/.."
# On the GPU machine a GPU test that skips has failed (tests/testutil.h, test_cuda_train.sh)
export SEER_REQUIRE_GPU=1
what=${1:-all}
out=${OUT:-/tmp/seer-device-out}
mkdir -p "$out"
t_start=$(date +%s)
py=$(command -v python3)
table="$out/table.md"
printf "| stage | result | figures |\n| --- | --- | --- |\n" > "$table"
row() { printf "| %s | %s | %s |\n" "$1" "$2" "$3" >> "$table"; }
stage() { echo; echo "== $* ($(($(date +%s) - t_start)) s)"; }

stage "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1 ||
    echo "no nvidia-smi" > "$out/gpu.txt"
cat "$out/gpu.txt"
gpu=$(head -1 "$out/gpu.txt")

if [ "$what" != measure ]; then
    stage "bundle: binaries built on the development machine"
    dev=/tmp/seer-dev
    rm -rf "$dev" && mkdir -p "$dev/bin"
    if [ -f build-device/libs.tar.xz ]; then
        # tar's -J needs the xz program; python's lzma does without
        tar -C "$dev" -xJf build-device/libs.tar.xz 2>/dev/null ||
            "$py" -c "import sys, tarfile; tarfile.open(sys.argv[1], 'r:xz').extractall(sys.argv[2])" \
                build-device/libs.tar.xz "$dev"
        src=build-device/bin
    else
        echo "no build-device/ (run sh scripts/device-bundle.sh there first); using build/"
        src=build
    fi
    # CUDA's libraries from the image: the toolkit's, or the pip wheels' next to PyTorch
    cudalibs=$(find /usr/local/cuda*/lib64 /usr/local/cuda*/lib /opt /usr/lib/python3* /usr/local/lib/python3* \
        \( -name 'libcublas.so.13' -o -name 'libnccl.so.2' -o -name 'libcusparse.so.12' \) 2>/dev/null |
        xargs -r -n1 dirname | sort -u | paste -sd: -)
    echo "CUDA libraries from: ${cudalibs:-none found}"
    # wrappers: the bundled libraries for Seer's binaries only (python keeps its own)
    for b in seertrain seerconvert ckpt_equal test_cuda_ops test_nccl bench_cuda_ops; do
        f=$src/$b
        [ -f "$f" ] || f=$src/tests/$b
        printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib:%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s "$@"\n' \
            "$dev" "$cudalibs" "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" > "$dev/bin/$b"
        chmod +x "$dev/bin/$b"
    done
    B=$dev/bin
    if "$B/seertrain" --help > /dev/null 2> "$out/bundle.err"; then
        row "bundle" "runs" "seertrain built on Debian 12 runs here"
    else
        row "bundle" "FAILED" "$(head -1 "$out/bundle.err")"
    fi
    data=/tmp/seer-nb201.h5
    if [ -f build-device/nb201.h5.xz ]; then
        xz -dc build-device/nb201.h5.xz > "$data" 2>/dev/null ||
            "$py" -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
                build-device/nb201.h5.xz "$data"
    fi
    [ -f "$data" ] || data=datasets/nb201.h5

    stage "test_cuda_ops"
    timeout 300 "$B/test_cuda_ops" > "$out/test_cuda_ops.txt" 2>&1
    rc=$?
    tail -3 "$out/test_cuda_ops.txt"
    row "test_cuda_ops" "$([ $rc = 0 ] && (grep -q SKIP "$out/test_cuda_ops.txt" && echo SKIP || echo pass) || echo "FAIL ($rc)")" \
        "$(grep -c 'max rel error' "$out/test_cuda_ops.txt") comparisons"
    if command -v compute-sanitizer > /dev/null && ! grep -q SKIP "$out/test_cuda_ops.txt"; then
        for tool in memcheck racecheck; do
            stage "compute-sanitizer --tool $tool test_cuda_ops"
            timeout 300 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_cuda_ops" > "$out/sanitizer_$tool.txt" 2>&1
            rc=$?
            tail -2 "$out/sanitizer_$tool.txt"
            row "compute-sanitizer $tool" "$([ $rc = 0 ] && echo pass || echo "FAIL ($rc)")" "$(grep -m1 'ERROR SUMMARY' "$out/sanitizer_$tool.txt")"
        done
    fi

    stage "test_cuda_train"
    timeout 300 sh tests/test_cuda_train.sh "$B/seertrain" "$B/ckpt_equal" "$(cd "$(dirname "$data")" && pwd)/$(basename "$data")" "$(pwd)/tests/data/tiny.ini" /tmp/seer-cuda-train > "$out/test_cuda_train.txt" 2>&1
    rc=$?
    grep -E "^  |SKIP|passed|FAIL" "$out/test_cuda_train.txt" | tail -8
    row "test_cuda_train" "$([ $rc = 0 ] && (grep -q SKIP "$out/test_cuda_train.txt" && echo SKIP || echo pass) || echo "FAIL ($rc)")" \
        "$(grep -E 'fp32: 100|tf32: 100' "$out/test_cuda_train.txt" | sed 's/^ *//' | paste -sd';' -)"

    stage "test_nccl"
    timeout 120 "$B/test_nccl" > "$out/test_nccl.txt" 2>&1
    rc=$?
    cat "$out/test_nccl.txt"
    row "test_nccl (R = 1)" "$([ $rc = 0 ] && (grep -q SKIP "$out/test_nccl.txt" && echo SKIP || echo pass) || echo "FAIL ($rc)")" \
        "$(grep -E 'all-reduce of|Abort' "$out/test_nccl.txt" | sed 's/test_nccl: //' | paste -sd';' -)"

    stage "bench_cuda_ops"
    timeout 300 "$B/bench_cuda_ops" > "$out/bench_cuda_ops.txt" 2>&1
    cat "$out/bench_cuda_ops.txt"
    row "bench_cuda_ops" "$(grep -q SKIP "$out/bench_cuda_ops.txt" && echo SKIP || echo done)" \
        "$(grep -E 'tf32 .*TFLOP|seg_mean: ' "$out/bench_cuda_ops.txt" | head -2 | sed 's/  */ /g' | paste -sd';' -)"

    stage "bench_gpu.sh: Seer against PyTorch Geometric"
    if [ -n "$gpu" ] && [ "$gpu" != "no nvidia-smi" ] && "$py" -c "import torch_geometric, h5py" 2>/dev/null; then
        sets="nb201=$data:titan_rtx_256_ms"
        if timeout 120 "$py" scripts/space/make_dataset.py --scale 53000 -o /tmp/seer-space53k.h5 \
                --seerconvert "$B/seerconvert" > "$out/space53k.txt" 2>&1; then
            sets="$sets space53k=/tmp/seer-space53k.h5:synthetic_ms"
        fi
        SEER_PYTHON=$py timeout 420 sh benchmarks/bench_gpu.sh "$B" $sets 3 > "$out/bench_gpu.txt" 2>&1
        cat "$out/bench_gpu.txt"
        row "bench_gpu (3 epochs)" "done" "$(grep '^| [a-z]' "$out/bench_gpu.txt" | grep -v dataset | cut -d'|' -f2,4,5,6 | paste -sd';' -)"
    else
        row "bench_gpu" "SKIP" "no GPU or no torch_geometric"
    fi
fi

if [ "$what" != gpu ]; then
    stage "measure: the design space on the GPU"
    left=$((540 - ($(date +%s) - t_start)))
    budget=${SEER_MEASURE_BUDGET:-$left}
    if [ "$budget" -lt 60 ]; then
        row "measure" "SKIP" "under 60 s left"
    elif "$py" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
        "$py" -c "import pynvml" 2>/dev/null || echo "no pynvml: utilisation and energy not measured"
        "$py" scripts/space/space.py sample -n 2000 --seed 1 -o "$out/specs.jsonl"
        "$py" scripts/measure/measure.py "$out/specs.jsonl" -o "$out/measurements.jsonl" --device cuda \
            --batches 1,2,4,8,16,32,64,128,256 --repeats 10 --warmup 5 --time-budget "$budget" 2>&1 | tail -n 5
        "$py" - "$out/measurements.jsonl" <<'PY' | tee "$out/measure_summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ok = [r for r in rows if "train_time_ms" in r]
sp = lambda k: "%.2f%%" % (100 * statistics.median(r[k] for r in ok)) if ok else "-"
print("%d configurations, %d out of memory, %d architectures, median spread train %s infer %s, "
      "utilisation %d, energy %d" % (len(ok), sum(1 for r in rows if r.get("oom")),
      len({r["id"] for r in rows}), sp("train_spread"), sp("infer_spread"),
      sum(1 for r in ok if "train_util_pct" in r), sum(1 for r in ok if "train_energy_mj" in r)))
PY
        row "measure (${budget} s)" "done" "$(cat "$out/measure_summary.txt")"
    else
        row "measure" "SKIP" "no CUDA device for PyTorch"
    fi
fi

echo
echo "== summary ($(($(date +%s) - t_start)) s, ${gpu:-no GPU})"
cat "$table"
