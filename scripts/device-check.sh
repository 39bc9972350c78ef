#!/bin/sh
# Everything that needs the GPU machine, in one run (see the device tool's README), then a short
# table. Prepare here with `sh scripts/device-bundle.sh` (binaries, the libraries a bare CUDA image
# lacks, NB201), then run there with build-device carried:
#   sh scripts/device-check.sh [STAGES]        (writes table.md, log.txt and logs.tar.gz under $OUT)
# STAGES: all (default), gpu (every stage but measure), or a comma list of
#   ops        test_cuda_ops, then under compute-sanitizer memcheck and racecheck
#   train      test_cuda_train (GPU against CPU: one step of each model, 100 steps fp32 and tf32)
#   resume     tests/test_resume.sh on the GPU (bitwise)
#   multi      configs/multi.ini on the GPU against the CPU's test MAPE
#   nccl       test_nccl (R = 1: init, all-reduce, abort)
#   bench_ops  bench_cuda_ops (ceilings, TFLOP/s, GB/s, cuSPARSE)
#   profile    where a training step's time goes: [output] profile = 1 per phase, and the GPU
#              time per kernel over 5 steps under ncu (NB201, H = 256, L = 1, batch 128)
#   bench_gpu  benchmarks/bench_gpu.sh: epoch time against PyTorch Geometric on NB201 and a
#              53k-graph design-space dataset
#   real       torchvision's networks on the GPU at batch 1, 32 and 128 for SEER_REAL_BUDGET seconds
#              (default 120), resuming datasets/space_h200/real_networks_h200.jsonl: real networks
#              the H200 predictor never saw, scored back here with
#                python3 benchmarks/real_networks.py --report-only --measurements \
#                    datasets/space_h200/real_networks_h200.jsonl --predictor predictors/h200.seer \
#                    --device h200 --space datasets/space_h200/measurements.jsonl --batches 1,32,128
#   measure    the design-space measurement on the GPU for the time left (SEER_MEASURE_BUDGET
#              seconds, or what is left of SEER_CHECK_SECONDS, default 540, for the whole
#              script), resuming datasets/space_h200/measurements.jsonl: the CNN sample
#              (`space.py sample -n 2000 --seed 1`) interleaved with the CPU's samples of the other
#              families (datasets/space_cpu/specs_w.jsonl: ConvNeXt, ViT, DeiT, Mixer; specs_y:
#              hybrids), so the families no lent session has measured come first.
# Back here, after each call (before the next, so that it resumes them):
#   python3 scripts/measure/device_writeback.py FILES_AT --lease "DATE run N"
# writes the new lines (measurements, specs, real networks) into datasets/space_h200/; then
#   python3 scripts/space/make_dataset.py --specs datasets/space_h200/specs.jsonl \
#       --measurements datasets/space_h200/measurements.jsonl -o datasets/h200.h5 --infer-builder 2
# Without a GPU every stage says so and the script still ends with its table.
set -u
cd "$(dirname "$0")/.."
# On the GPU machine a GPU test that skips has failed (tests/testutil.h, test_cuda_train.sh)
export SEER_REQUIRE_GPU=1
what=${1:-all}
want() { # STAGE: is it asked for?
    case ",$what," in *,all,*) return 0 ;; *,"$1",*) return 0 ;; esac
    [ "$1" != measure ] && [ "$1" != real ] && case ",$what," in *,gpu,*) return 0 ;; esac
    return 1
}
out=${OUT:-/tmp/seer-device-out}
logs=/tmp/seer-device-logs # each stage's full log, packed into $out/logs.tar.gz at the end
rm -rf "$logs"
mkdir -p "$out" "$logs"
t_start=$(date +%s)
py=$(command -v python3)
table="$out/table.md"
printf "| stage | result | figures |\n| --- | --- | --- |\n" > "$table"
row() { printf "| %s | %s | %s |\n" "$1" "$2" "$3" >> "$table"; }
stage() { echo; echo "== $* ($(($(date +%s) - t_start)) s)"; }

stage "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$logs/gpu.txt" 2>&1 ||
    echo "no nvidia-smi" > "$logs/gpu.txt"
cat "$logs/gpu.txt"
gpu=$(head -1 "$logs/gpu.txt")

# the stages that only run Python (real, measure) need neither the binaries nor NB201
bins_needed=no
for s in ops train resume multi nccl bench_ops profile bench_gpu; do want "$s" && bins_needed=yes; done
if [ $bins_needed = yes ]; then
    stage "bundle: binaries built on the development machine"
    dev=/tmp/seer-dev
    rm -rf "$dev" && mkdir -p "$dev/bin"
    if [ -f build-device/bundle.tar.xz ]; then
        # tar's -J needs the xz program; python's lzma does without
        tar -C "$dev" -xJf build-device/bundle.tar.xz 2>/dev/null ||
            "$py" -c "import sys, tarfile; tarfile.open(sys.argv[1], 'r:xz').extractall(sys.argv[2])" \
                build-device/bundle.tar.xz "$dev"
        src=$dev/exe
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
    if "$B/seertrain" --help > /dev/null 2> "$logs/bundle.err"; then
        row "bundle" "runs" "seertrain built on Debian 12 runs here"
    else
        row "bundle" "FAILED" "$(head -1 "$logs/bundle.err")"
    fi
    data=/tmp/seer-nb201_brpnas.h5
    if [ -f build-device/nb201_brpnas.h5.xz ]; then
        xz -dc build-device/nb201_brpnas.h5.xz > "$data" 2>/dev/null ||
            "$py" -c "import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], 'wb'))" \
                build-device/nb201_brpnas.h5.xz "$data"
    fi
    [ -f "$data" ] || data=datasets/nb201_brpnas.h5

    abs_data="$(cd "$(dirname "$data")" && pwd)/$(basename "$data")"
fi
result() { # RC LOG: pass, SKIP (a skipped test prints SKIP) or FAIL (rc)
    if [ "$1" = 0 ]; then grep -q SKIP "$2" && echo SKIP || echo pass; else echo "FAIL ($1)"; fi
}

if want ops; then
    stage "test_cuda_ops"
    timeout 300 "$B/test_cuda_ops" > "$logs/test_cuda_ops.txt" 2>&1
    rc=$?
    tail -3 "$logs/test_cuda_ops.txt"
    row "test_cuda_ops" "$(result $rc "$logs/test_cuda_ops.txt")" "$(grep -c 'max rel error' "$logs/test_cuda_ops.txt") comparisons"
    if command -v compute-sanitizer > /dev/null && ! grep -q SKIP "$logs/test_cuda_ops.txt"; then
        for tool in memcheck racecheck; do
            stage "compute-sanitizer --tool $tool test_cuda_ops"
            timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_cuda_ops" > "$logs/sanitizer_$tool.txt" 2>&1
            rc=$?
            tail -2 "$logs/sanitizer_$tool.txt"
            row "compute-sanitizer $tool" "$([ $rc = 0 ] && echo pass || echo "FAIL ($rc)")" \
                "$(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$logs/sanitizer_$tool.txt" | sed 's/=* *//')"
        done
    fi
fi

if want train; then
    stage "test_cuda_train"
    timeout 300 sh tests/test_cuda_train.sh "$B/seertrain" "$B/ckpt_equal" "$abs_data" "$(pwd)/tests/data/tiny.ini" \
        /tmp/seer-cuda-train > "$logs/test_cuda_train.txt" 2>&1
    rc=$?
    grep -E "^  |SKIP|passed|FAIL" "$logs/test_cuda_train.txt" | tail -8
    row "test_cuda_train" "$(result $rc "$logs/test_cuda_train.txt")" \
        "$(grep -E 'fp32: 100|tf32: 100' "$logs/test_cuda_train.txt" | sed 's/^ *//' | paste -sd';' -)"
fi

if want resume; then
    stage "test_resume on the GPU (40 steps straight == 20 + resume + 20, bitwise)"
    timeout 120 sh tests/test_resume.sh "$B/seertrain" "$B/ckpt_equal" "$abs_data" "$(pwd)/tests/data/tiny.ini" \
        /tmp/seer-cuda-resume 40 --set backend.device=cuda > "$logs/test_resume_cuda.txt" 2>&1
    rc=$?
    tail -3 "$logs/test_resume_cuda.txt"
    row "test_resume (cuda)" "$(result $rc "$logs/test_resume_cuda.txt")" "$(tail -1 "$logs/test_resume_cuda.txt" | cut -c1-80)"
fi

if want multi; then
    # the CPU's test MAPE of the same command on the same file: device-bundle.sh measured it on the
    # bundled subset; 1.695% is the whole file's (benchmarks/RESULTS.md)
    ref=$(cat build-device/multi_cpu_mape.txt 2>/dev/null || echo 1.695)
    stage "configs/multi.ini on the GPU against the CPU's test MAPE (${ref}%)"
    mt0=$(date +%s)
    # the nine batch-specific labels of the BRP-NAS file, 12 epochs
    timeout 240 "$B/seertrain" configs/multi.ini --quiet --set data.path="$data" --set backend.device=cuda \
        --set data.labels=1080ti_1_ms,1080ti_32_ms,1080ti_256_ms,2080ti_1_ms,2080ti_32_ms,2080ti_256_ms,titan_rtx_1_ms,titan_rtx_32_ms,titan_rtx_256_ms --set train.epochs=12 \
        --set output.dir=/tmp/seer-multi --set output.run=cuda > "$logs/multi_cuda.txt" 2>&1
    rc=$?
    tail -14 "$logs/multi_cuda.txt"
    mape=$("$py" -c "import json,sys; print('%.3f' % json.load(open(sys.argv[1]))['mean_test_mape'])" \
        /tmp/seer-multi/cuda/summary.json 2>/dev/null)
    ok=$("$py" -c "import sys; print(abs(float(sys.argv[1]) / float(sys.argv[2]) - 1) <= 0.05)" "${mape:-nan}" "$ref" 2>/dev/null)
    row "multi.ini (cuda)" "$([ $rc = 0 ] && [ "$ok" = True ] && echo pass || echo "FAIL ($rc)")" \
        "test MAPE ${mape:-?}% vs CPU ${ref}% (within 5% relative), $(($(date +%s) - mt0)) s"
fi

if want nccl; then
    stage "test_nccl"
    timeout 120 "$B/test_nccl" > "$logs/test_nccl.txt" 2>&1
    rc=$?
    cat "$logs/test_nccl.txt"
    row "test_nccl (R = 1)" "$(result $rc "$logs/test_nccl.txt")" \
        "$(grep -E 'all-reduce of|Abort' "$logs/test_nccl.txt" | sed 's/test_nccl: //' | paste -sd';' -)"
fi

if want bench_ops; then
    stage "bench_cuda_ops"
    timeout 300 "$B/bench_cuda_ops" > "$logs/bench_cuda_ops.txt" 2>&1
    cat "$logs/bench_cuda_ops.txt"
    row "bench_cuda_ops" "$(grep -q SKIP "$logs/bench_cuda_ops.txt" && echo SKIP || echo done)" \
        "$(grep -E 'tf32 .*TFLOP|seg_mean: ' "$logs/bench_cuda_ops.txt" | head -2 | sed 's/  */ /g' | paste -sd';' -)"
fi

# the model and batch of bench_gpu.sh (SeerNet H = 256, L = 1, SynMM, batch 128) on NB201
bench_args="configs/single.ini --quiet --set data.path=${data:-} --set data.labels=titan_rtx_256_ms
    --set model.hidden=256 --set model.blocks=1 --set model.agg=synmm --set model.head_hidden=256
    --set train.batch_size=128 --set train.early_stop=0 --set train.schedule=none
    --set backend.device=cuda --set output.dir=/tmp/seer-profile"
if want profile; then
    stage "profile: where a training step's time goes (NB201, H 256, L 1, batch 128)"
    timeout 120 "$B/seertrain" $bench_args --set train.epochs=3 --set output.profile=1 --set output.run=phases \
        > "$logs/profile.txt" 2>&1
    rc=$?
    sed -n '/^profile/,$p' "$logs/profile.txt"
    row "profile (3 epochs)" "$([ $rc = 0 ] && echo done || echo "FAIL ($rc)")" \
        "$(sed -n '/^profile/,$p' "$logs/profile.txt" | sed 's/  */ /g' | paste -sd';' - | cut -c1-300)"
    ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
    if [ -n "$ncu" ]; then
        stage "ncu: GPU time per kernel over 5 training steps"
        timeout 150 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv --page raw \
            --target-processes all "$B/seertrain" $bench_args --set train.epochs=1 --set train.max_steps=5 \
            --set output.run=ncu > "$logs/ncu.csv" 2> "$logs/ncu.err"
        rc=$?
        "$py" - "$logs/ncu.csv" <<'PY' | tee "$logs/ncu_summary.txt"
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if len(rows) < 3:
    print("ncu: no kernel rows"); sys.exit(0)
h = rows[0]
name, val = h.index("Kernel Name"), h.index("gpu__time_duration.sum")
unit = rows[1][val]
tot, cnt = {}, {}
for r in rows[2:]:
    try: v = float(r[val].replace(",", ""))
    except ValueError: continue
    k = r[name].split("(")[0][:60]
    tot[k] = tot.get(k, 0) + v; cnt[k] = cnt.get(k, 0) + 1
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}[unit]
all_us = sum(tot.values()) * scale
print("GPU time of 5 steps: %.1f us per step in %.0f launches per step" % (all_us / 5, sum(cnt.values()) / 5))
for k in sorted(tot, key=tot.get, reverse=True)[:15]:
    print("  %-60s %6d launches %9.1f us per step %5.1f%%" % (k, cnt[k], tot[k] * scale / 5, 100 * tot[k] * scale / all_us))
PY
        row "ncu (5 steps)" "$([ $rc = 0 ] && echo done || echo "FAIL ($rc)")" "$(head -1 "$logs/ncu_summary.txt")"
    fi
fi

if want bench_gpu; then
    stage "bench_gpu.sh: Seer against PyTorch Geometric"
    if [ -n "$gpu" ] && [ "$gpu" != "no nvidia-smi" ] && "$py" -c "import torch_geometric, h5py" 2>/dev/null; then
        sets="nb201=$data:titan_rtx_256_ms"
        if timeout 120 "$py" scripts/space/make_dataset.py --scale 53000 -o /tmp/seer-space53k.h5 \
                --seerconvert "$B/seerconvert" > "$logs/space53k.txt" 2>&1; then
            sets="$sets space53k=/tmp/seer-space53k.h5:synthetic_ms"
        fi
        SEER_PYTHON=$py timeout 420 sh benchmarks/bench_gpu.sh "$B" $sets 3 > "$logs/bench_gpu.txt" 2>&1
        cat "$logs/bench_gpu.txt"
        row "bench_gpu (3 epochs)" "done" "$(grep '^| [a-z]' "$logs/bench_gpu.txt" | grep -v dataset | cut -d'|' -f2,4,5,6 | paste -sd';' -)"
    else
        row "bench_gpu" "SKIP" "no GPU or no torch_geometric"
    fi
fi

if want real; then
    stage "real networks on the GPU (torchvision, batch 1, 32, 128)"
    real="$out/real_networks_h200.jsonl"
    if [ -f datasets/space_h200/real_networks_h200.jsonl ]; then
        cp datasets/space_h200/real_networks_h200.jsonl "$real"
    fi
    before=$(cat "$real" 2>/dev/null | wc -l)
    PYTHONUNBUFFERED=1 timeout $((${SEER_REAL_BUDGET:-120} + 120)) "$py" benchmarks/real_networks.py --measure-only \
        --torch-device cuda --nets torchvision --batches 1,32,128 --repeats 10 --warmup 5 \
        --measurements "$real" --time-budget "${SEER_REAL_BUDGET:-120}" > "$logs/real.txt" 2>&1
    rc=$?
    tail -4 "$logs/real.txt"
    row "real networks (${SEER_REAL_BUDGET:-120} s)" "$([ $rc = 0 ] && echo done || echo "FAIL ($rc)")" \
        "$(($(cat "$real" 2>/dev/null | wc -l) - before)) configurations measured, $(cat "$real" 2>/dev/null | wc -l) in all"
fi

if want measure; then
    stage "measure: the design space on the GPU"
    left=$((${SEER_CHECK_SECONDS:-540} - 20 - ($(date +%s) - t_start)))
    budget=${SEER_MEASURE_BUDGET:-$left}
    if [ "$budget" -lt 30 ]; then
        row "measure" "SKIP" "under 30 s left"
    elif "$py" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
        "$py" -c "import pynvml" 2>/dev/null || echo "no pynvml: utilisation and energy not measured"
        "$py" scripts/space/space.py sample -n 2000 --seed 1 -o "$out/specs.jsonl"
        # resume the committed H200 file: measure.py skips every (architecture, batch) in it, so each
        # lent session adds new architectures of the same sample (lines without "lease" are new)
        if [ -f datasets/space_h200/measurements.jsonl ]; then
            cp datasets/space_h200/measurements.jsonl "$out/measurements.jsonl"
        fi
        # the CPU's samples of the families beyond CNNs (ConvNeXt, ViT, DeiT, Mixer; hybrids) beside
        # the CNN sample: measure.py interleaves the files, and the CNN sample's measured part is
        # skipped, so the next lent session measures these first (the same architectures as the
        # CPUs', paired labels). Back here specs.jsonl keeps every architecture measured, of all three.
        specs="$out/specs.jsonl,datasets/space_cpu/specs_w.jsonl,datasets/space_cpu/specs_y.jsonl"
        "$py" scripts/measure/measure.py "$specs" -o "$out/measurements.jsonl" --device cuda \
            --batches 1,2,4,8,16,32,64,128,256 --repeats 10 --warmup 5 --time-budget "$budget" 2>&1 | tail -n 5
        "$py" - "$out/measurements.jsonl" <<'PY' | tee "$logs/measure_summary.txt"
import json, statistics, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if "lease" not in r]  # this call's lines
ok = [r for r in rows if "train_time_ms" in r]
sp = lambda k: "%.2f%%" % (100 * statistics.median(r[k] for r in ok)) if ok else "-"
print("%d configurations, %d out of memory, %d architectures, median spread train %s infer %s, "
      "utilisation %d, energy %d" % (len(ok), sum(1 for r in rows if r.get("oom")),
      len({r["id"] for r in rows}), sp("train_spread"), sp("infer_spread"),
      sum(1 for r in ok if "train_util_pct" in r), sum(1 for r in ok if "train_energy_mj" in r)))
PY
        row "measure (${budget} s)" "done" "$(cat "$logs/measure_summary.txt")"
    else
        row "measure" "SKIP" "no CUDA device for PyTorch"
    fi
fi

echo
echo "== summary ($(($(date +%s) - t_start)) s, ${gpu:-no GPU})"
tar -C "$logs" -czf "$out/logs.tar.gz" . 2>/dev/null ||
    "$py" -c "import sys, tarfile; t = tarfile.open(sys.argv[1], 'w:gz'); t.add(sys.argv[2], '.'); t.close()" "$out/logs.tar.gz" "$logs"
cat "$table"
