#!/bin/sh
# Resume equals uninterrupted, bitwise: STEPS steps in one go against STEPS/2 steps, then
# `seertrain --resume` for the rest (the cut falls mid-epoch, across plateau cuts).
# usage: test_resume.sh SEERTRAIN CKPT_EQUAL DATA.h5 CONFIG WORKDIR STEPS [--set k=v ...]
set -eu
seertrain=$1 ckpt_equal=$2 data=$3 config=$4 work=$5 steps=$6
shift 6
rm -rf "$work"
mkdir -p "$work"
common="--quiet --set data.path=$data --set output.dir=$work $*"
half=$((steps / 2))
$seertrain "$config" $common --set output.run=straight --set train.max_steps=$steps
$seertrain "$config" $common --set output.run=split --set train.max_steps=$half
$seertrain --resume "$work/split" --quiet --set train.max_steps=$steps
$ckpt_equal "$work/straight/last.ckpt" "$work/split/last.ckpt"
# the metrics logs must agree line for line as well (same epochs, same validation figures);
# graphs/s and seconds differ, so compare without them
strip() { sed -E 's/"graphs_per_s":[0-9.e+-]*,"seconds":[0-9.e+-]*,//' "$1"; }
strip "$work/straight/metrics.jsonl" > "$work/a.jsonl"
strip "$work/split/metrics.jsonl" > "$work/b.jsonl"
cmp "$work/a.jsonl" "$work/b.jsonl"
echo "test_resume: $steps steps straight == $half + resume + $half (checkpoints and metrics log) $*"
