#!/bin/sh
# Resume equals uninterrupted, bitwise: 2,000 steps in one go against 1,000 steps, then
# `seertrain --resume` for the other 1,000 (the cut falls mid-epoch, across plateau cuts).
# usage: test_resume.sh SEERTRAIN CKPT_EQUAL DATA.h5 CONFIG WORKDIR
set -eu
seertrain=$1 ckpt_equal=$2 data=$3 config=$4 work=$5
rm -rf "$work"
mkdir -p "$work"
common="--quiet --set data.path=$data --set output.dir=$work"
$seertrain "$config" $common --set output.run=straight --set train.max_steps=2000
$seertrain "$config" $common --set output.run=split --set train.max_steps=1000
$seertrain --resume "$work/split" --quiet --set train.max_steps=2000
$ckpt_equal "$work/straight/last.ckpt" "$work/split/last.ckpt"
# the metrics logs must agree line for line as well (same epochs, same validation figures);
# graphs/s differs, so compare without it
strip() { sed 's/"graphs_per_s":[0-9.e+-]*,//' "$1"; }
strip "$work/straight/metrics.jsonl" > "$work/a.jsonl"
strip "$work/split/metrics.jsonl" > "$work/b.jsonl"
cmp "$work/a.jsonl" "$work/b.jsonl"
echo "test_resume: 2000 steps straight == 1000 + resume + 1000 (checkpoints and metrics log)"
