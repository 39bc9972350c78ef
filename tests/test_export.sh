#!/bin/sh
# Export end to end on the NB201 subset: train a small model, export it as fp32, fp16, int8 and
# safetensors, check libseer against the trainer (test_export), the Python binding and the
# safetensors file (test_python.py), seerpredict on a dataset and on ONNX, and the tools' errors.
#   test_export.sh SEERTRAIN SEEREXPORT SEERPREDICT TEST_EXPORT DATA.h5 TINY.ini WORK PYTHON ONNX
set -eu
seertrain=$1 seerexport=$2 seerpredict=$3 test_export=$4 data=$5 ini=$6 work=$7 python=$8 onnx=$9
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

"$seertrain" "$ini" --quiet --set data.path="$data" --set output.dir="$work" --set output.run=run \
    --set train.epochs=40 --set data.limit=600 >"$work/train.log" 2>&1 || { cat "$work/train.log"; fail "training"; }
for d in fp32 fp16 int8; do
    "$seerexport" "$work/run" -o "$work/m_$d.seer" --dtype $d >"$work/export_$d.log" || fail "export $d"
    cat "$work/export_$d.log"
done
"$seerexport" "$work/run" --safetensors "$work/m.safetensors" || fail "safetensors export"
[ -s "$work/m.json" ] || fail "no sidecar"

# sizes: fp16 about half of fp32, int8 at most a third
s32=$(wc -c <"$work/m_fp32.seer"); s16=$(wc -c <"$work/m_fp16.seer"); s8=$(wc -c <"$work/m_int8.seer")
echo "sizes: fp32 $s32, fp16 $s16 ($(awk "BEGIN{printf \"%.3f\", $s16/$s32}")), int8 $s8 ($(awk "BEGIN{printf \"%.3f\", $s8/$s32}"))"
# every file carries the same metadata (schema, statistics, tensor table: under 12 KiB); the
# weights must shrink by 2x and 4x (benchmarks/RESULTS.md has the ratios of full-size models)
[ $((s16 * 2)) -le $((s32 + 12288)) ] || fail "fp16 weights are not half of fp32"
[ $((s8 * 3)) -le $((s32 + 2 * 12288)) ] || fail "int8 file is more than a third of fp32 beyond the metadata"

"$test_export" "$work/run/best.ckpt" "$work/m_fp32.seer" "$work/m_fp16.seer" "$work/m_int8.seer" \
    --graphs-csv "$work/preds.csv" || fail "test_export"
SEER_LIB_DIR=$(dirname "$seerpredict") "$python" "$here/test_python.py" "$work/m_fp32.seer" "$data" \
    "$work/preds.csv" "$work/m.safetensors" "$onnx" "$seerpredict" || fail "test_python"

# seerpredict on the dataset: the metric table, JSON, the CSV of predictions
"$seerpredict" "$work/m_fp32.seer" "$data" --predictions "$work/all.csv" >"$work/pred.txt" || fail "seerpredict h5"
cat "$work/pred.txt"
grep -q "titan_rtx_256_ms" "$work/pred.txt" || fail "no metric table"
[ "$(wc -l <"$work/all.csv")" -eq 1501 ] || fail "predictions CSV should have 1500 rows and a header"
"$seerpredict" "$work/m_int8.seer" "$data" --json --limit 100 | "$python" -c '
import json, sys
d = json.load(sys.stdin)
assert d["graphs"] == 100 and "titan_rtx_1_ms" in d["metrics"], d
assert 0 < d["metrics"]["titan_rtx_1_ms"]["mape"] < 50, d' || fail "seerpredict --json"
"$seerpredict" "$work/m_fp16.seer" "$onnx" --batch 1,4 | tee "$work/onnx.txt"
[ "$(grep -c ' ms$' "$work/onnx.txt")" -eq 4 ] || fail "seerpredict on ONNX: 2 batches x 2 metrics"

# errors: one line, non-zero, naming the file
expect_err() { # expect_err PATTERN CMD...
    pat=$1; shift
    if "$@" >"$work/err.out" 2>"$work/err.txt"; then fail "accepted: $*"; fi
    grep -Eq "$pat" "$work/err.txt" || { cat "$work/err.txt"; fail "message should mention '$pat': $*"; }
    [ "$(wc -l <"$work/err.txt")" -eq 1 ] || { cat "$work/err.txt"; fail "more than one line: $*"; }
}
head -c 1000 "$work/m_fp32.seer" >"$work/trunc.seer"
expect_err "trunc.seer: (truncated|corrupt)" "$seerpredict" "$work/trunc.seer" "$onnx"
expect_err "wrong magic" "$seerpredict" "$work/run/best.ckpt" "$onnx"
expect_err "wrong magic" "$seerexport" "$work/m_fp32.seer" -o "$work/x.seer"
expect_err "use fp32, fp16 or int8" "$seerexport" "$work/run" -o "$work/x.seer" --dtype fp8
expect_err "nothing.onnx" "$seerpredict" "$work/m_fp32.seer" "$work/nothing.onnx"
[ ! -e "$work/x.seer" ] || fail "a failed export left a file"
echo "test_export.sh: all checks passed"
