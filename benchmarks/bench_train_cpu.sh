#!/bin/sh
# CPU training throughput, Seer against the PyTorch reference of the same SeerNet, same data,
# same thread count, in one run. Prints both lines and their ratio.
#   usage: benchmarks/bench_train_cpu.sh [THREADS] [HIDDEN] [BLOCKS] [BATCH] [STEPS]
set -eu
cd "$(dirname "$0")/.."
threads=${1:-2} hidden=${2:-256} blocks=${3:-1} batch=${4:-128} steps=${5:-20}
/usr/bin/python3 -c "import torch" 2>/dev/null || {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-torch >/dev/null; }
[ -f datasets/nb201_brpnas.h5 ] || /usr/bin/python3 scripts/datasets/nb201_build.py --brpnas
[ -x build/bench_train ] || cmake --build build --target bench_train
seer=$(./build/bench_train configs/single.ini --set model.hidden="$hidden" \
    --set model.blocks="$blocks" --set train.batch_size="$batch" --set train.threads="$threads" \
    --steps "$steps" | tail -1)
torch=$(/usr/bin/python3 -W ignore benchmarks/reference/seernet_ref.py bench --data datasets/nb201_brpnas.h5 \
    --hidden "$hidden" --blocks "$blocks" --batch "$batch" --steps "$steps" --threads "$threads" | tail -1)
echo "$seer"
echo "$torch"
a=$(echo "$seer" | sed 's/.*: \([0-9.]*\) graphs.*/\1/')
b=$(echo "$torch" | sed 's/.*: \([0-9.]*\) graphs.*/\1/')
echo "ratio seer/pytorch: $(echo "$a $b" | awk '{printf "%.2f", $1 / $2}')x"
