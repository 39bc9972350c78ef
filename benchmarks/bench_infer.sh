#!/bin/sh
# libseer against the PyTorch reference (same weights, loaded from the safetensors export) on one
# core, in one run, for SeerNet widths 32, 64 and 256: single-graph latency and batched
# throughput on NB201 graphs, single-graph latency on the ResNet-50 graph, ResNet-50 ONNX file to
# prediction, and the export sizes. Weights are a fresh initialisation (speed does not depend on
# training); accuracy of the exports is test_export's job.
#   usage: benchmarks/bench_infer.sh [GRAPHS] [WIDTHS]
set -eu
cd "$(dirname "$0")/.."
graphs=${1:-300} widths=${2:-"32 64 256"}
/usr/bin/python3 -c "import torch" 2>/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch >/dev/null; }
[ -f datasets/nb201_brpnas.h5 ] || /usr/bin/python3 scripts/datasets/nb201_build.py --brpnas
cmake --build build --target seertrain seerexport bench_infer seeronnx >/dev/null
work=$(mktemp -d)
net=tests/data/onnx/resnet50.onnx
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), one core (taskset -c 0)"
printf "%-5s %-12s %12s %12s %8s %14s %14s %8s %12s %12s %8s\n" H params "seer_us" "torch_us" ratio \
    "seer_graph/s" "torch_graph/s" ratio "r50_seer_us" "r50_torch_us" ratio
for H in $widths; do
    ./build/seertrain configs/single.ini --quiet --set model.hidden="$H" --set train.max_steps=1 \
        --set output.dir="$work" --set output.run="h$H" >/dev/null
    ck="$work/h$H/last.ckpt"
    for d in fp32 fp16 int8; do ./build/seerexport "$ck" -o "$work/h$H.$d.seer" --dtype $d >/dev/null; done
    ./build/seerexport "$ck" --safetensors "$work/h$H.safetensors" >/dev/null
    s=$(taskset -c 0 ./build/bench_infer "$work/h$H.fp32.seer" datasets/nb201_brpnas.h5 --graphs "$graphs" --onnx "$net")
    t=$(taskset -c 0 /usr/bin/python3 -W ignore benchmarks/reference/seernet_ref.py infer "$work/h$H.safetensors" \
        --graphs "$graphs" --threads 1 --onnx "$net" 2>/dev/null)
    echo "$s" >"$work/h$H.seer.txt"; echo "$t" >"$work/h$H.torch.txt"
    params=$(echo "$s" | sed -n 's/.*weights, \([0-9]*\) parameters.*/\1/p')
    sl=$(echo "$s" | sed -n 's/.*latency: median \([0-9.]*\) us.*/\1/p')
    st=$(echo "$s" | sed -n 's/.*batch 64): \([0-9.]*\) graphs.*/\1/p')
    tl=$(echo "$t" | sed -n 's/.*single-graph latency median \([0-9.]*\) us, p90.*/\1/p')
    tt=$(echo "$t" | sed -n 's/.*throughput (batch 64) \([0-9.]*\) graphs.*/\1/p')
    rs=$(echo "$s" | sed -n 's/.*convert [0-9.]* ms + predict \([0-9.]*\) ms.*/\1/p' | awk '{printf "%.1f", $1 * 1000}')
    rt=$(echo "$t" | sed -n 's/.*operators: single-graph latency median \([0-9.]*\) us.*/\1/p')
    printf "%-5s %-12s %12s %12s %7.2fx %14s %14s %7.2fx %12s %12s %7.2fx\n" "$H" "$params" "$sl" "$tl" \
        "$(echo "$tl $sl" | awk '{print $1 / $2}')" "$st" "$tt" "$(echo "$st $tt" | awk '{print $1 / $2}')" \
        "$rs" "$rt" "$(echo "$rt $rs" | awk '{print $1 / $2}')"
    echo "$s" | grep "ONNX file to prediction" | sed "s/^/      H=$H: /"
    f32=$(wc -c <"$work/h$H.fp32.seer"); f16=$(wc -c <"$work/h$H.fp16.seer"); i8=$(wc -c <"$work/h$H.int8.seer")
    echo "      H=$H sizes: fp32 $f32 B, fp16 $f16 B ($(echo "$f16 $f32" | awk '{printf "%.3f", $1/$2}') of fp32), int8 $i8 B ($(echo "$i8 $f32" | awk '{printf "%.3f", $1/$2}'))"
done
rm -rf "$work"
