#!/bin/sh
# Export end to end on the NB201 subset: train a small model, export it as fp32, fp16, int8 and
# safetensors, check libseer against the trainer (test_export), the Python binding and the
# safetensors file (test_python.py), seerpredict on a dataset and on ONNX, seercalibrate, and the
# tools' errors.
#   test_export.sh SEERTRAIN SEEREXPORT SEERPREDICT TEST_EXPORT DATA.h5 TINY.ini WORK PYTHON ONNX
#                  SEERCALIBRATE
set -eu
seertrain=$1 seerexport=$2 seerpredict=$3 test_export=$4 data=$5 ini=$6 work=$7 python=$8 onnx=$9
seercalibrate=${10}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_err() { # expect_err PATTERN CMD...: one line, non-zero, matching PATTERN
    pat=$1; shift
    if "$@" >"$work/err.out" 2>"$work/err.txt"; then fail "accepted: $*"; fi
    grep -Eq -e "$pat" "$work/err.txt" || { cat "$work/err.txt"; fail "message should mention '$pat': $*"; }
    [ "$(wc -l <"$work/err.txt")" -eq 1 ] || { cat "$work/err.txt"; fail "more than one line: $*"; }
}

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
# every file carries the same metadata (schema, op table, coverage, statistics, tensor table:
# what the fp32 file holds beyond 4 bytes per parameter; it grows with the op table); beyond it the
# weights must shrink to about a half (fp16) and, with int8's per-channel fp32 scales, under 40%
# (benchmarks/RESULTS.md has the ratios of full-size models)
P=$(grep -o '[0-9]* parameters' "$work/export_fp32.log" | head -1 | cut -d' ' -f1)
[ -n "$P" ] && [ "$P" -gt 0 ] || fail "seerexport did not print the parameter count"
meta=$((s32 - 4 * P))
echo "metadata $meta bytes; weights beyond it: fp32 $((4 * P)), fp16 $((s16 - meta)), int8 $((s8 - meta))"
[ "$meta" -gt 0 ] && [ "$meta" -lt 32768 ] || fail "fp32 file of $s32 bytes for $P parameters: metadata $meta"
[ $(((s16 - meta) * 100)) -le $((4 * P * 55)) ] || fail "fp16 weights are not about half of fp32's"
[ $(((s8 - meta) * 100)) -le $((4 * P * 40)) ] || fail "int8 weights with their scales are over 40% of fp32's"

"$test_export" "$work/run/best.ckpt" "$work/m_fp32.seer" "$work/m_fp16.seer" "$work/m_int8.seer" \
    --graphs-csv "$work/preds.csv" || fail "test_export"
SEER_LIB_DIR=$(dirname "$seerpredict") "$python" "$here/test_python.py" "$work/m_fp32.seer" "$data" \
    "$work/preds.csv" "$work/m.safetensors" "$onnx" "$seerpredict" || fail "test_python"

# seerpredict on the dataset: the metric table, JSON, the CSV of predictions
"$seerpredict" "$work/m_fp32.seer" "$data" --predictions "$work/all.csv" >"$work/pred.txt" || fail "seerpredict h5"
cat "$work/pred.txt"
grep -q "titan_rtx_256_ms" "$work/pred.txt" || fail "no metric table"
[ "$(wc -l <"$work/all.csv")" -eq 1501 ] || fail "predictions CSV should have 1500 rows and a header"
"$seerpredict" "$work/m_fp32.seer" "$data" --limit 300 --plot "$work/scored.png" | tee "$work/plot.txt"
[ "$(head -c 4 "$work/scored.png" | tail -c 3)" = PNG ] && grep -q "plot: .*scored.png" "$work/plot.txt" ||
    fail "seerpredict --plot"
[ ! -e "$work/scored.png.predictions.csv" ] || fail "seerpredict --plot left its temporary CSV"
"$seerpredict" "$work/m_int8.seer" "$data" --json --limit 100 | "$python" -c '
import json, sys
d = json.load(sys.stdin)
assert d["graphs"] == 100 and "titan_rtx_1_ms" in d["metrics"], d
assert 0 < d["metrics"]["titan_rtx_1_ms"]["mape"] < 50, d' || fail "seerpredict --json"
"$seerpredict" "$work/m_fp16.seer" "$onnx" --batch 1,4 | tee "$work/onnx.txt"
[ "$(grep -c ' ms$' "$work/onnx.txt")" -eq 4 ] || fail "seerpredict on ONNX: 2 batches x 2 metrics"

# recount_case TAG KEY NET WHAT FORGED VALUE FLAGS: NET (batch 1) as the export reports it
# (TAG_new.json); a checkpoint written before coverage.KEY existed (renamed away) is recounted from
# its data and split (the note "predates WHAT: recounted"; TAG_old.json); one whose recorded range
# coverage.FORGED no longer reproduces (its item 0 set to VALUE) exports without it and says it
# "will not flag FLAGS" (TAG_changed.json)
recount_case() {
    tag=$1 key=$2 net=$3 what=$4 forged=$5 value=$6 flags=$7
    "$seerpredict" "$work/m_fp32.seer" "$net" --batch 1 --json > "$work/${tag}_new.json" || fail "seerpredict --json $net"
    cp "$work/run/best.ckpt" "$work/${tag}_old.ckpt"
    "$python" "$here/hostile/ckpt_edit.py" "$work/${tag}_old.ckpt" --rename "coverage.$key" "legacy___$key"
    "$seerexport" "$work/${tag}_old.ckpt" -o "$work/${tag}_old.seer" | tee "$work/${tag}_old.txt" ||
        fail "export of a checkpoint without coverage.$key"
    grep -q "^note: the checkpoint predates $what: recounted from its data" "$work/${tag}_old.txt" ||
        fail "seerexport: no recount note for coverage.$key"
    "$seerpredict" "$work/${tag}_old.seer" "$net" --batch 1 --json > "$work/${tag}_old.json" || fail "seerpredict ${tag}_old.seer"
    "$python" "$here/hostile/ckpt_edit.py" "$work/${tag}_old.ckpt" "coverage.$forged" "$value" 0
    "$seerexport" "$work/${tag}_old.ckpt" -o "$work/${tag}_changed.seer" | tee "$work/${tag}_changed.txt" ||
        fail "export of a changed checkpoint"
    grep -q "^note: the checkpoint predates $what and .*coverage.$forged.*will not flag $flags" \
        "$work/${tag}_changed.txt" || fail "seerexport: no note for ranges that do not reproduce (coverage.$key)"
    "$seerpredict" "$work/${tag}_changed.seer" "$net" --batch 1 --json > "$work/${tag}_changed.json" ||
        fail "seerpredict ${tag}_changed.seer"
}
# operators the training data never had: the ONNX network's are reported, the same after a recount
recount_case ops op_counts "$onnx" "operator coverage" node_lo -1e30 operators
"$python" - "$work/ops_new.json" "$work/ops_old.json" "$work/ops_changed.json" <<'PY' || fail "operator coverage"
import json, sys
new, old, changed = (json.load(open(p))["results"][0] for p in sys.argv[1:])
ops = [i["name"] for i in new["out_of_range"] if i["kind"] == "op"]
assert ops and all(i["value"] >= 1 for i in new["out_of_range"] if i["kind"] == "op"), new
assert old == new, (old, new)
assert not [i for i in changed["out_of_range"] if i["kind"] == "op"], changed
print("operators never in the training data: %s (the same from a recounted older checkpoint)" % ", ".join(ops))
PY
# a watched operator pair the training data never had (NAS-Bench-201 cells have no BatchNormalization
# reading a ReLU): MobileOne's identity branches are reported with their edges, the same after a recount
mobileone="$(dirname "$onnx")/mobileone_s1.onnx"
"$seerpredict" "$work/m_fp32.seer" "$mobileone" --batch 1 > "$work/pairs.txt" || fail "seerpredict mobileone_s1"
grep -Eq "operator pair Relu>BatchNormalization \([0-9]+ edges: a reparameterisable block's identity branch\) never in the training data" \
    "$work/pairs.txt" || { cat "$work/pairs.txt"; fail "the identity branch of MobileOne is not reported"; }
recount_case pairs op_pairs "$mobileone" "operator-pair coverage" edge_hi 1e30 "operator pairs"
"$python" - "$work/pairs_new.json" "$work/pairs_old.json" "$work/pairs_changed.json" <<'PY' || fail "operator-pair coverage"
import json, sys
new, old, changed = (json.load(open(p))["results"][0] for p in sys.argv[1:])
pairs = [(i["name"], i["value"]) for i in new["out_of_range"] if i["kind"] == "op_pair"]
assert ("Relu>BatchNormalization", 0) not in pairs and any(n == "Relu>BatchNormalization" and v >= 10 for n, v in pairs), new
assert old == new, (old, new)
assert not [i for i in changed["out_of_range"] if i["kind"] == "op_pair"], changed
print("operator pairs never in the training data, in MobileOne-S1: %s (the same from a recounted older checkpoint)"
      % ", ".join("%s %d edges" % p for p in pairs))
PY

# a shipped predictor picked by device (SEER_PREDICTORS): the list, the pick, an unknown device
mkdir -p "$work/ship" && cp "$work/m_fp32.seer" "$work/ship/gpu.seer"
SEER_PREDICTORS="$work/ship" "$seerpredict" --list-devices | tee "$work/devices.txt"
grep -Eq "^titan_rtx +.*gpu.seer +titan_rtx_256_ms titan_rtx_1_ms" "$work/devices.txt" || fail "--list-devices"
SEER_PREDICTORS="$work/ship" "$seerpredict" "$onnx" --device titan_rtx --batch 2 > "$work/dev.txt" || fail "--device"
[ "$(grep -c 'titan_rtx_.*ms$' "$work/dev.txt")" -eq 2 ] || { cat "$work/dev.txt"; fail "--device titan_rtx: two metrics"; }
SEER_PREDICTORS="$work/ship" "$seerpredict" "$work/m_fp32.seer" "$onnx" --batch 2 > "$work/nodev.txt"
SEER_PREDICTORS="$work/ship" "$seerpredict" "$onnx" --device titan_rtx --json 2>/dev/null | "$python" -c '
import json, sys
d = json.load(sys.stdin)
assert d["model_info"]["predictor"].endswith("gpu.seer"), d["model_info"]
assert sorted(d["results"][0]["metrics"]) == ["titan_rtx_1_ms", "titan_rtx_256_ms"], d["results"][0]' ||
    fail "--device --json: the predictor used and the device's metrics"
[ "$(sed -n 2,3p "$work/dev.txt")" = "$(sed -n 2,3p "$work/nodev.txt")" ] || fail "--device predicts otherwise than the model itself"
# a specialist of the device (seerexport --specialist) answers for a network in which the main
# predictor reports a structure never trained on that the specialist does not (here a copy whose
# training graphs had Relu>BatchNormalization edges: coverage.op_pairs row 0 forged to 5), the main
# one for the rest, and says which; unmarked, it is a second predictor of the device like any other
cp "$work/m_fp32.seer" "$work/learned.seer"
"$python" "$here/hostile/ckpt_edit.py" "$work/learned.seer" coverage.op_pairs 5 2
"$seerexport" --specialist "MobileOne blocks" "$work/learned.seer" -o "$work/ship/gpu_rep.seer" || fail "--specialist"
SEER_PREDICTORS="$work/ship" "$seerpredict" --list-devices | grep -Eq "^titan_rtx +.*gpu_rep.seer \(specialist\) +titan_rtx_256_ms" ||
    fail "--list-devices does not mark the specialist"
SEER_PREDICTORS="$work/ship" "$seerpredict" "$mobileone" "$onnx" --device titan_rtx --batch 1 > "$work/routed.txt" || fail "routing"
grep -q "^  answered by .*gpu_rep.seer (MobileOne blocks), which learned what .*gpu.seer never did: operator pair Relu>BatchNormalization$" \
    "$work/routed.txt" || { cat "$work/routed.txt"; fail "no line saying the specialist answered"; }
[ "$(grep -c "answered by" "$work/routed.txt")" -eq 1 ] || fail "the specialist answered for resnet18 too"
SEER_PREDICTORS="$work/ship" "$seerpredict" "$mobileone" "$onnx" --device titan_rtx --batch 1 --json | "$python" -c '
import json, sys
d = json.load(sys.stdin)
assert d["model_info"]["predictor"].endswith("/gpu.seer") and d["model_info"]["specialist"].endswith("gpu_rep.seer"), d["model_info"]
mo, rn = d["results"]
assert mo["answered_by"].endswith("gpu_rep.seer") and mo["routed_because"] == "operator pair Relu>BatchNormalization", mo
assert not [i for i in mo["out_of_range"] if i["kind"] == "op_pair"], mo["out_of_range"]
assert rn["answered_by"].endswith("/gpu.seer") and rn["routed_because"] is None, rn' || fail "--device --json: routing"
# the Python binding routes the same way (seer.Routed), and refuses a second model that is no specialist
SEER_LIB_DIR=$(dirname "$seerpredict") "$python" - "$here/../python" "$work/ship/gpu.seer" "$work/ship/gpu_rep.seer" \
    "$mobileone" "$onnx" <<'PY' || fail "seer.Routed"
import sys
sys.path.insert(0, sys.argv[1])
import seer
r = seer.Routed(sys.argv[2], sys.argv[3])
v, rng, who, why = r.predict_onnx(sys.argv[4], batch=1)
assert who == "specialist" and why == [("op_pair", "Relu>BatchNormalization")], (who, why)
assert v == r.specialist.predict_onnx(sys.argv[4], batch=1) and not seer.structural_gap(rng) & set(why), rng
v, rng, who, why = r.predict_onnx(sys.argv[5], batch=1)
assert who == "main" and why == [] and v == r.main.predict_onnx(sys.argv[5], batch=1), (who, why)
try:
    seer.Routed(sys.argv[2], sys.argv[2])
    raise AssertionError("a model that is no specialist was accepted")
except seer.SeerError as e:
    assert "seerexport --specialist" in str(e), e
print("seer.Routed: mobileone_s1 answered by the specialist, resnet18 by the main model")
PY
"$seerexport" --specialist "" "$work/ship/gpu_rep.seer" -o "$work/ship/gpu_rep.seer" >/dev/null || fail "--specialist ''"
SEER_PREDICTORS="$work/ship" "$seerpredict" "$mobileone" --device titan_rtx --batch 1 | grep -q "answered by" &&
    fail "an unmarked file still answers as a specialist"
rm "$work/ship/gpu_rep.seer"
expect_err "takes one .seer file and -o" "$seerexport" --specialist "x" "$work/m_fp32.seer"
# the shipped CPU predictor trained on dozens of design-space families (batch 1 to 16): at batch
# 4096 the warning counts them
"$seerpredict" "$onnx" --device cpu_xeon --batch 4096 > "$work/cpu.txt" || fail "--device cpu_xeon"
grep -Eq "warning: outside the training data \(families space/\.\.\. \([0-9]+\)\)" "$work/cpu.txt" ||
    { cat "$work/cpu.txt"; fail "the families of the warning line are not counted"; }
# an operator newer than a shipped model's table is its Other: the warning names the ONNX operator
"$seerpredict" "$(dirname "$onnx")/maxvit_t.onnx" --device cpu_xeon --batch 1 > "$work/other.txt" || fail "maxvit_t"
grep -q "operator Other (44 nodes: Einsum 44) never in the training data" "$work/other.txt" ||
    { cat "$work/other.txt"; fail "the operators behind the model's Other are not named"; }

# seercalibrate on the first 300 graphs: every prediction of a metric moves by one factor, the
# median of measured / predicted over those graphs, so the calibrated medians are 1
"$python" - "$data" "$work/some.h5" "$work/unnamed.h5" "$work/a100.h5" "$work/a100_part.h5" "$work/ten.h5" <<'PY' || fail "writing the calibration files"
import sys, h5py, numpy as np
src = h5py.File(sys.argv[1], "r")
# the same 300 graphs with the labels as they are, renamed to unknown metrics, renamed to another
# device (titan_rtx_* -> a100_*), and only the batch-1 label renamed so; the first 10 graphs
renames = (lambda x: x, lambda x: b"unmeasured_" + x, lambda x: x.replace(b"titan_rtx_", b"a100_"),
           lambda x: x.replace(b"titan_rtx_1_", b"a100_1_"), lambda x: x)
for out, rename, G in zip(sys.argv[2:], renames, (300, 300, 300, 300, 10)):
    with h5py.File(out, "w") as f:
        for k, v in src.attrs.items():
            f.attrs[k] = v
        N, E = int(src["graph/node_ptr"][G]), int(src["graph/edge_ptr"][G])
        def walk(name, obj):
            if isinstance(obj, h5py.Dataset):
                n = {"graph/node_ptr": G + 1, "graph/edge_ptr": G + 1, "node/x": N, "node/op": N,
                     "edge/index": E, "edge/x": E}.get(name, G if name.startswith(("graph/", "global/", "label/")) else None)
                data = obj[:] if n is None else obj[:n]
                if name == "schema/labels":
                    data = np.array([rename(x) for x in data], dtype=object)
                f.create_dataset(name, data=data, dtype=obj.dtype)
        src.visititems(walk)
PY
# seerexport --count-pairs: a .seer written before the pairs were recorded (the key renamed away)
# gets them counted on its training data, to the same report as the export that recorded them;
# an ensemble's members each; refused on a dataset that cannot hold its training split, on a file
# that has them, and without -o
cp "$work/m_fp32.seer" "$work/nopairs.seer"
"$python" "$here/hostile/ckpt_edit.py" "$work/nopairs.seer" --rename coverage.op_pairs legacy___op_pairs
"$seerpredict" "$work/nopairs.seer" "$mobileone" --batch 1 | grep -q "operator pair" && fail "a file without its pairs warns on them"
"$seerexport" --count-pairs "$data" "$work/nopairs.seer" -o "$work/counted.seer" | tee "$work/counted.txt" ||
    fail "seerexport --count-pairs"
grep -Eq "nopairs.seer: Relu>BatchNormalization 0 edges, BatchNormalization>BatchNormalization [0-9]+ edges in 1500 graphs \(training split [0-9]+\)" \
    "$work/counted.txt" || fail "--count-pairs: no report"
"$seerpredict" "$work/counted.seer" "$mobileone" --batch 1 --json > "$work/pairs_counted.json" || fail "seerpredict counted.seer"
cmp -s "$work/pairs_counted.json" "$work/pairs_new.json" || fail "--count-pairs reports otherwise than the export that recorded them"
"$seerexport" --ensemble "$work/nopairs.seer" "$work/m_fp16.seer" -o "$work/ens_nopairs.seer" >/dev/null || fail "ensemble"
expect_err "records its operator pairs already" "$seerexport" --count-pairs "$data" "$work/ens_nopairs.seer" -o "$work/x.seer"
"$python" "$here/hostile/ckpt_edit.py" "$work/m_fp16.seer" --rename coverage.op_pairs legacy___op_pairs
"$seerexport" --ensemble "$work/nopairs.seer" "$work/m_fp16.seer" -o "$work/ens_nopairs.seer" >/dev/null || fail "ensemble"
"$seerexport" --count-pairs "$data" "$work/ens_nopairs.seer" -o "$work/ens_counted.seer" | tee "$work/ens_counted.txt" ||
    fail "--count-pairs on an ensemble"
[ "$(grep -c "ensemble.member.[01]): Relu>BatchNormalization 0 edges" "$work/ens_counted.txt")" -eq 2 ] || fail "--count-pairs: two members"
"$seerpredict" "$work/ens_counted.seer" "$mobileone" --batch 1 | grep -q "operator pair Relu>BatchNormalization" ||
    fail "the counted ensemble does not warn on the identity branch"
expect_err "ten.h5: 10 graphs.*cannot hold the training split" "$seerexport" --count-pairs "$work/ten.h5" "$work/nopairs.seer" -o "$work/x.seer"
[ ! -e "$work/x.seer" ] && [ ! -e "$work/x.seer.check" ] || fail "a refused --count-pairs left a file"
expect_err "records its operator pairs already" "$seerexport" --count-pairs "$data" "$work/m_fp32.seer" -o "$work/x.seer"
expect_err "takes one .seer file and -o" "$seerexport" --count-pairs "$data" "$work/nopairs.seer"
"$seercalibrate" "$work/m_fp32.seer" "$work/some.h5" -o "$work/cal.seer" | tee "$work/cal.txt" || fail "seercalibrate"
"$seerpredict" "$work/m_fp32.seer" "$work/some.h5" --predictions "$work/before.csv" >/dev/null
"$seerpredict" "$work/cal.seer" "$work/some.h5" --predictions "$work/after.csv" >/dev/null || fail "predicting with the calibrated model"
"$python" - "$work/before.csv" "$work/after.csv" "$work/some.h5" "$work/cal.txt" <<'PY' || fail "calibrated predictions"
import csv, sys, h5py, numpy as np
b, a = list(csv.DictReader(open(sys.argv[1]))), list(csv.DictReader(open(sys.argv[2])))
f = h5py.File(sys.argv[3], "r")
labels = [x.decode() for x in f["schema/labels"][:]]
printed = {l.split()[0]: float(l.split()[2]) for l in open(sys.argv[4]) if " x " in l}
for m in [k for k in b[0] if k not in ("name", "in_range")]:
    pb, pa = np.array([float(r[m]) for r in b]), np.array([float(r[m]) for r in a])
    ratio = pa / pb
    assert ratio.max() / ratio.min() - 1 < 1e-5, (m, ratio.min(), ratio.max())
    assert abs(ratio[0] / printed[m] - 1) < 1e-3, (m, ratio[0], printed[m])
    y = f["label/y"][:, labels.index(m)]
    med = np.median(y / pa)
    assert abs(med - 1) < 1e-5, (m, med)
    print("seercalibrate: %s x %.4f, median measured / predicted now %.6f" % (m, ratio[0], med))
PY

# seercalibrate --device: the titan_rtx metrics calibrated on labels of a device the model never
# saw, renamed for it: the same factors as above, the new device listed and predicted
mkdir -p "$work/ship2"
"$seercalibrate" "$work/m_fp32.seer" "$work/a100.h5" -o "$work/ship2/a100.seer" --device titan_rtx=a100 \
    | tee "$work/cal_a100.txt" || fail "seercalibrate --device"
[ "$(awk '/ x /{print $1, $3}' "$work/cal.txt" | sed 's/^titan_rtx_/a100_/')" = "$(awk '/ x /{print $1, $3}' "$work/cal_a100.txt")" ] ||
    fail "seercalibrate --device: other factors than without it"
grep -q "a100_1_ms .* x .*, was titan_rtx_1_ms" "$work/cal_a100.txt" || fail "seercalibrate --device: the renamed metric"
SEER_PREDICTORS="$work/ship2" "$seerpredict" --list-devices | grep -Eq "^a100 +.*a100.seer +a100_" ||
    fail "the calibrated predictor does not list device a100"
"$seerpredict" "$work/ship2/a100.seer" "$work/a100.h5" --predictions "$work/a100.csv" >/dev/null
"$python" - "$work/after.csv" "$work/a100.csv" <<'PY' || fail "seercalibrate --device: predictions"
import csv, sys
a, b = list(csv.DictReader(open(sys.argv[1]))), list(csv.DictReader(open(sys.argv[2])))
ms = [m for m in a[0] if m.startswith("titan_rtx_")]
assert ms and all(m.replace("titan_rtx_", "a100_") in b[0] for m in ms), (list(a[0]), list(b[0]))
for m in ms:
    for ra, rb in zip(a, b):
        assert abs(float(ra[m]) / float(rb[m.replace("titan_rtx_", "a100_")]) - 1) < 1e-6, (m, ra, rb)
print("seercalibrate --device: %d metrics renamed, predictions equal to the same-device calibration" % len(ms))
PY

# seercalibrate with several batches: one factor per metric and batch (x2 at batch 1, x0.5 at 32,
# a fifth of the graphs 10 times off to show it is the median), log-linear in log_batch between
# them, constant beyond (batch 8 between, 256 beyond); the output is format version 3
cc="$python $here/calib_check.py"
version() { "$python" -c 'import struct, sys; print(struct.unpack("<I", open(sys.argv[1], "rb").read()[8:12])[0])' "$1"; }
$cc copies "$data" 100 "$work/probe.h5" 1,8,32,256 && $cc copies "$data" 100 "$work/two.h5" 1,32 ||
    fail "writing the batch files"
# new global features are appended by later converters, and a model reads its own leading ones:
# the same predictions from a dataset with one more global column; one fewer is refused; a
# predictor trained before log_mem_light was appended (predictors/cpu_xeon.seer, 18 global
# features) predicts the converter's graphs (19)
$cc globals "$work/two.h5" "$work/two_more.h5" add:log_future && $cc globals "$work/two.h5" "$work/two_less.h5" drop ||
    fail "writing two_more.h5 / two_less.h5"
"$seerpredict" "$work/m_fp32.seer" "$work/two.h5" --predictions "$work/two_p.csv" >/dev/null &&
    "$seerpredict" "$work/m_fp32.seer" "$work/two_more.h5" --predictions "$work/two_more_p.csv" >/dev/null ||
    fail "seerpredict on a dataset with an appended global feature"
cmp -s "$work/two_p.csv" "$work/two_more_p.csv" || fail "an appended global feature changed the predictions"
ng=$("$python" -c 'import h5py, sys; print(len(h5py.File(sys.argv[1], "r")["schema/global_features"]))' "$work/two.h5")
expect_err "two_less.h5: $((ng - 1)) global features, the model reads $ng" \
    "$seerpredict" "$work/m_fp32.seer" "$work/two_less.h5"
"$seerpredict" "$here/../predictors/cpu_xeon.seer" "$onnx" --batch 4 --json | "$python" -c '
import json, sys
r = json.load(sys.stdin)["results"][0]
assert len(r["metrics"]) == 4 and all(v["value"] > 0 for v in r["metrics"].values()), r' || fail "a predictor of the 18-feature schema on the converter's graphs"
"$seerpredict" "$work/m_fp32.seer" "$work/probe.h5" --predictions "$work/probe0.csv" >/dev/null
$cc label "$work/two.h5" "$work/probe0.csv" "$work/two_y.h5" 1:2,32:0.5 || fail "labelling two.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/two_y.h5" -o "$work/calb.seer" | tee "$work/calb.txt" ||
    fail "seercalibrate by batch"
grep -q "titan_rtx_1_ms .* x 2.0000 at batch 1 (median of measured / predicted over 100 graphs)" "$work/calb.txt" &&
    grep -q "titan_rtx_1_ms .* x 0.5000 at batch 32 " "$work/calb.txt" || fail "seercalibrate: the factors by batch"
[ "$(version "$work/calb.seer")" = 3 ] && [ "$(version "$work/m_fp32.seer")" = 2 ] || fail "format versions"
"$seerpredict" "$work/calb.seer" "$work/probe.h5" --predictions "$work/probe1.csv" >/dev/null
$cc ratio "$work/probe0.csv" "$work/probe1.csv" 1:2,32:0.5 || fail "the calibrated predictions by batch"
"$seerpredict" "$work/calb.seer" "$onnx" --json | "$python" -c '
import json, sys
c = json.load(sys.stdin)["model_info"]["calibration"]
assert "two_y.h5: titan_rtx_256_ms x2 at batch 1 (100 graphs)" in c and "x0.5 at batch 32" in c, c' ||
    fail "seerpredict --json: the calibration"
"$seerpredict" "$work/m_fp32.seer" "$onnx" --json | "$python" -c '
import json, sys
assert json.load(sys.stdin)["model_info"]["calibration"] is None' || fail "seerpredict --json: an uncalibrated model"
# a batch beyond the calibrated ones (1 .. 32) is reported first; one between them is not
"$seerpredict" "$work/calb.seer" "$onnx" --batch 8,64 --json | "$python" -c '
import json, sys
r = json.load(sys.stdin)["results"]
kinds = [[o["kind"] for o in x["out_of_range"]] for x in r]
assert "calibration" not in kinds[0] and kinds[1][0] == "calibration", kinds
o = r[1]["out_of_range"][0]
assert o["name"] == "log_batch" and abs(o["value"] - 4.174387) < 1e-5 and abs(o["hi"] - 3.496508) < 1e-5, o
assert r[1]["out_of_range_count"] == r[0]["out_of_range_count"] + 1 or r[1]["out_of_range_count"] > 8, r' ||
    fail "seerpredict --json: a batch beyond the calibration"
"$seerpredict" "$work/calb.seer" "$onnx" --batch 64 | grep -q "warning: .*: batch 64 beyond the batches it was calibrated at (1 .. 32: the nearest one.s factor holds)" ||
    fail "seerpredict: the warning for a batch beyond the calibration"
# calibrated again at batches 8 and 256 (x3, x1): the two compose, on the union of the batches
$cc copies "$data" 100 "$work/two2.h5" 8,256 && $cc label "$work/two2.h5" "$work/probe1.csv" "$work/two2_y.h5" 8:3,256:1 ||
    fail "labelling two2.h5"
"$seercalibrate" "$work/calb.seer" "$work/two2_y.h5" -o "$work/calb2.seer" >/dev/null || fail "seercalibrate twice"
"$seerpredict" "$work/calb2.seer" "$work/probe.h5" --predictions "$work/probe2.csv" >/dev/null
$cc ratio "$work/probe1.csv" "$work/probe2.csv" 8:3,256:1 || fail "a second calibration by batch"
# a batch with under 3 graphs of a metric gets no factor of its own (2 graphs x100 at batch 8:
# ignored, the factor there comes from batches 1 and 32); under 3 at every batch: one factor
$cc copies "$data" 100 "$work/three.h5" 1,8,32 && $cc label "$work/three.h5" "$work/probe0.csv" "$work/three_y.h5" 1:2,8:100:2,32:0.5 ||
    fail "labelling three.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/three_y.h5" -o "$work/calb3.seer" >"$work/calb3.txt" || fail "seercalibrate, 2 graphs at a batch"
grep -q "titan_rtx_1_ms .* at batch 8 (only 2 graphs there: from the batches beside it)" "$work/calb3.txt" ||
    { cat "$work/calb3.txt"; fail "seercalibrate: a batch with 2 graphs"; }
"$seerpredict" "$work/calb3.seer" "$work/probe.h5" --predictions "$work/probe3.csv" >/dev/null
$cc ratio "$work/probe0.csv" "$work/probe3.csv" 1:2,32:0.5 || fail "the batch with 2 graphs is not ignored"
$cc copies "$data" 2 "$work/few.h5" 1,32 && $cc label "$work/few.h5" "$work/probe0.csv" "$work/few_y.h5" 1:2,32:0.5 ||
    fail "labelling few.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/few_y.h5" -o "$work/calf.seer" >"$work/calf.txt" || fail "seercalibrate, 2 graphs a batch"
grep -q "^note: .*few_y.h5 measures 2 batch sizes but no metric at 3 graphs at any of them: one factor per metric" "$work/calf.txt" &&
    grep -q "titan_rtx_1_ms .* x 1.2500 (median of measured / predicted over 4 graphs)" "$work/calf.txt" &&
    [ "$(version "$work/calf.seer")" = 2 ] || { cat "$work/calf.txt"; fail "seercalibrate: too few graphs at every batch"; }
# the fit on the measured graphs: labels = predictions x the factors, a fifth of them x10 (MAPE
# 0.9 on 40 of 200 graphs: 18.0%), no warning; labels that follow the graphs' FLOPs (a device unlike
# the GPU this model learned, where FLOPs rank perfectly) get the warning for the metric whose
# ranking is far from the FLOPs' (titan_rtx_1_ms: Spearman about 0.76 against 1.00)
grep -q "titan_rtx_1_ms .* calibrated, on the file's 200 graphs: MAPE 18.0%, Spearman" "$work/calb.txt" &&
    ! grep -q "^warning:" "$work/calb.txt" || { cat "$work/calb.txt"; fail "seercalibrate: the fit on the measured graphs"; }
$cc copies "$data" 100 "$work/one.h5" 1 && $cc flops "$work/one.h5" "$work/one_fl.h5" || fail "writing one_fl.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/one_fl.h5" -o "$work/calfl.seer" >"$work/calfl.txt" || fail "seercalibrate on FLOPs labels"
grep -q "^warning: titan_rtx_1_ms: the model ranks the measured networks worse than their FLOPs do" "$work/calfl.txt" ||
    { cat "$work/calfl.txt"; fail "seercalibrate: no warning for a device unlike the model's"; }
# --with-flops: labels = exp(0.5 + 0.8 log(prediction) + 0.1 log_flops_total) exactly: the three
# numbers recovered, every prediction (batches 1 to 256) moved by them; calibrated again
# (-0.2, 1.1, 0.05) the two compose; what it refuses
$cc affine "$work/two.h5" "$work/probe0.csv" "$work/aff_y.h5" 0.5,0.8,0.1 || fail "labelling aff_y.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/aff_y.h5" -o "$work/calaf.seer" --with-flops >"$work/calaf.txt" ||
    fail "seercalibrate --with-flops"
grep -q "warning: .*--with-flops fitted on" "$work/calaf.txt" && fail "--with-flops on 200 graphs warned of too few"
# on 8 graphs (4 networks at 2 batches) it fits, and warns that so few can move other sizes far off
$cc copies "$data" 4 "$work/few_af.h5" 1,32 && $cc affine "$work/few_af.h5" "$work/probe0.csv" "$work/few_af_y.h5" 0.5,0.8,0.1 ||
    fail "labelling few_af_y.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/few_af_y.h5" -o "$work/calfew.seer" --with-flops >"$work/calfew.txt" ||
    { cat "$work/calfew.txt"; fail "seercalibrate --with-flops on 8 graphs"; }
grep -q "^warning: titan_rtx_1_ms: --with-flops fitted on 8 graphs: with fewer than 15" "$work/calfew.txt" ||
    { cat "$work/calfew.txt"; fail "--with-flops on 8 graphs: no warning"; }
grep -q "titan_rtx_1_ms .* log y = 0.5000 + 0.8000 log(prediction) + 0.1000 log_flops_total (least squares over 200 graphs)" "$work/calaf.txt" &&
    [ "$(version "$work/calaf.seer")" = 3 ] || { cat "$work/calaf.txt"; fail "--with-flops: the fit"; }
"$seerpredict" "$work/calaf.seer" "$work/probe.h5" --predictions "$work/probe_af.csv" >/dev/null
$cc affine_check "$work/probe0.csv" "$work/probe_af.csv" "$work/probe.h5" 0.5,0.8,0.1 || fail "--with-flops: the predictions"
# ResNet-18 has far more FLOPs than any NB201 cell it was calibrated on: reported first
"$seerpredict" "$work/calaf.seer" "$onnx" --json | "$python" -c '
import json, sys
o = json.load(sys.stdin)["results"][0]["out_of_range"][0]
assert o["kind"] == "calibration" and o["name"] == "log_flops_total" and o["value"] > o["hi"], o' ||
    fail "--with-flops: no range item for FLOPs beyond the calibration"
"$seerpredict" "$work/calaf.seer" "$onnx" | grep -q "warning: .*: 3.64e+09 FLOPs beyond those it was calibrated on" ||
    fail "--with-flops: the warning line"
"$seerpredict" "$work/calaf.seer" "$work/probe.h5" | grep -q "calibration beyond" && fail "--with-flops: the calibration graphs flagged"
$cc affine "$work/two.h5" "$work/probe_af.csv" "$work/aff2_y.h5" -0.2,1.1,0.05 || fail "labelling aff2_y.h5"
"$seercalibrate" "$work/calaf.seer" "$work/aff2_y.h5" -o "$work/calaf2.seer" --with-flops >/dev/null || fail "--with-flops twice"
"$seerpredict" "$work/calaf2.seer" "$work/probe.h5" --predictions "$work/probe_af2.csv" >/dev/null
$cc affine_check "$work/probe0.csv" "$work/probe_af2.csv" "$work/probe.h5" "0.5,0.8,0.1;-0.2,1.1,0.05" ||
    fail "--with-flops twice: the composition"
# --with-feature log_nodes (the operator count, for a GPU whose small batches are its launches):
# labels = exp(0.3 + 0.9 log(prediction) + 0.2 log_nodes) exactly: the three numbers recovered,
# every prediction moved by them, DenseNet-121's 434 operators beyond the calibrated ones reported;
# a feature the model lacks, both options at once, and a model calibrated on FLOPs before refused
$cc affine "$work/two.h5" "$work/probe0.csv" "$work/affn_y.h5" 0.3,0.9,0.2 log_nodes || fail "labelling affn_y.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/affn_y.h5" -o "$work/calan.seer" --with-feature log_nodes >"$work/calan.txt" &&
    grep -q "titan_rtx_1_ms .* log y = 0.3000 + 0.9000 log(prediction) + 0.2000 log_nodes (least squares over 200 graphs)" "$work/calan.txt" ||
    { cat "$work/calan.txt"; fail "--with-feature log_nodes: the fit"; }
"$seerpredict" "$work/calan.seer" "$work/probe.h5" --predictions "$work/probe_an.csv" >/dev/null
$cc affine_check "$work/probe0.csv" "$work/probe_an.csv" "$work/probe.h5" 0.3,0.9,0.2 log_nodes ||
    fail "--with-feature log_nodes: the predictions"
dense="$(dirname "$onnx")/densenet121.onnx"
"$seerpredict" "$work/calan.seer" "$dense" | grep -Eq "warning: .*: 434 operators beyond those it was calibrated on \([0-9]+ \.\. [0-9]+" ||
    { "$seerpredict" "$work/calan.seer" "$dense"; fail "--with-feature log_nodes: the warning line"; }
expect_err "--with-feature log_nope: the model has no global feature of that name \(it has: log_nodes, log_edges" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/affn_y.h5" -o "$work/x.seer" --with-feature log_nope
expect_err "--with-flops and --with-feature given together" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/affn_y.h5" -o "$work/x.seer" --with-flops --with-feature log_nodes
expect_err "calibrated before against global feature [0-9]+, now [0-9]+: calibrate it with the same --with-feature" \
    "$seercalibrate" "$work/calaf.seer" "$work/affn_y.h5" -o "$work/x.seer" --with-feature log_nodes
[ ! -e "$work/x.seer" ] || fail "a refused --with-feature calibration left a file"
# calibrated by batch (1 .. 32), then --with-flops (labels from the batch-calibrated predictions,
# so the fit is defined whatever the trained model): ResNet-18 at batch 64 is beyond both, two items
$cc affine "$work/two.h5" "$work/probe1.csv" "$work/affb_y.h5" 0.5,0.8,0.1 || fail "labelling affb_y.h5"
"$seercalibrate" "$work/calb.seer" "$work/affb_y.h5" -o "$work/calbaf.seer" --with-flops >/dev/null ||
    fail "--with-flops on a model calibrated by batch"
"$seerpredict" "$work/calbaf.seer" "$onnx" --batch 16,64 --json | "$python" -c '
import json, sys
r = json.load(sys.stdin)["results"]
names = [[o["name"] for o in x["out_of_range"] if o["kind"] == "calibration"] for x in r]
assert names == [["log_flops_total"], ["log_batch", "log_flops_total"]], names' ||
    fail "a model calibrated by batch and FLOPs: the two calibration range items"
$cc affine "$work/two.h5" "$work/probe0.csv" "$work/neg_y.h5" 0.5,-1,0.1 || fail "labelling neg_y.h5"
expect_err "neg_y.h5: --with-flops: for titan_rtx_256_ms the fit gives .* do not rise with the measured times" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/neg_y.h5" -o "$work/x.seer" --with-flops
expect_err "calibrated with --with-flops, --with-feature or --power before: calibrate it with --with-flops" \
    "$seercalibrate" "$work/calaf.seer" "$work/two_y.h5" -o "$work/x.seer"
expect_err "--one-factor and --with-flops are two calibrations" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/two_y.h5" -o "$work/x.seer" --with-flops --one-factor
[ ! -e "$work/x.seer" ] || fail "a refused calibration left a file"
# --one-factor: one median over both batches, a version-2 file
"$seercalibrate" "$work/m_fp32.seer" "$work/two_y.h5" -o "$work/cal1.seer" --one-factor >"$work/cal1.txt" ||
    fail "seercalibrate --one-factor"
[ "$(grep -c "titan_rtx_1_ms .* x .* (median of measured / predicted over 200 graphs)" "$work/cal1.txt")" = 1 ] &&
    [ "$(version "$work/cal1.seer")" = 2 ] || { cat "$work/cal1.txt"; fail "--one-factor"; }
# --power: labels = (prediction x 2 at batch 1, x 0.5 at batch 32)^0.8 exactly: the exponent and
# both factors recovered, every prediction (batches 1 to 256) moved by them, version 3; with
# --one-factor one factor over both batches; fewer than 10 graphs warn; an exponent of 8, or
# predictions that fall as the times rise, are refused; a --power model is not calibrated again
$cc power "$work/two.h5" "$work/probe0.csv" "$work/pow_y.h5" "0.8;1:2,32:0.5" || fail "labelling pow_y.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/pow_y.h5" -o "$work/calpw.seer" --power >"$work/calpw.txt" ||
    { cat "$work/calpw.txt"; fail "seercalibrate --power"; }
grep -q "titan_rtx_1_ms .* (prediction x 2.0000)^0.8000 at batch 1 (least squares in log over 100 graphs)" "$work/calpw.txt" &&
    grep -q "titan_rtx_1_ms .* (prediction x 0.5000)^0.8000 at batch 32 " "$work/calpw.txt" &&
    grep -q "titan_rtx_1_ms .* calibrated, on the file's 200 graphs: MAPE 0.0%" "$work/calpw.txt" &&
    ! grep -q "^warning:" "$work/calpw.txt" && [ "$(version "$work/calpw.seer")" = 3 ] ||
    { cat "$work/calpw.txt"; fail "--power: the fit"; }
"$seerpredict" "$work/calpw.seer" "$work/probe.h5" --predictions "$work/probe_pw.csv" >/dev/null
$cc power_check "$work/probe0.csv" "$work/probe_pw.csv" "0.8;1:2,32:0.5" || fail "--power: the predictions"
"$seerpredict" "$work/calpw.seer" "$onnx" --json | "$python" -c '
import json, sys
d = json.load(sys.stdin)
assert "titan_rtx_1_ms (prediction x2)^0.8 at batch 1 (100 graphs)" in d["model_info"]["calibration"], d["model_info"]
o = d["results"][0]["out_of_range"][0]
assert o["kind"] == "calibration" and o["name"] == "log_flops_total" and o["value"] > o["hi"], o' ||
    fail "--power: the calibration recorded, ResNet-18 beyond the FLOPs it was fitted on"
$cc power "$work/two.h5" "$work/probe0.csv" "$work/pow1_y.h5" "0.8;1:2,32:2" || fail "labelling pow1_y.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/pow1_y.h5" -o "$work/calpw1.seer" --power --one-factor >"$work/calpw1.txt" ||
    { cat "$work/calpw1.txt"; fail "seercalibrate --power --one-factor"; }
grep -q "titan_rtx_1_ms .* (prediction x 2.0000)^0.8000 (least squares in log over 200 graphs)" "$work/calpw1.txt" ||
    { cat "$work/calpw1.txt"; fail "--power --one-factor: the fit"; }
"$seerpredict" "$work/calpw1.seer" "$work/probe.h5" --predictions "$work/probe_pw1.csv" >/dev/null
$cc power_check "$work/probe0.csv" "$work/probe_pw1.csv" "0.8;1:2,32:2" || fail "--power --one-factor: the predictions"
$cc power "$work/few_af.h5" "$work/probe0.csv" "$work/few_pw_y.h5" "0.8;1:2,32:0.5" || fail "labelling few_pw_y.h5"
"$seercalibrate" "$work/m_fp32.seer" "$work/few_pw_y.h5" -o "$work/calpwf.seer" --power >"$work/calpwf.txt" ||
    { cat "$work/calpwf.txt"; fail "seercalibrate --power on 8 graphs"; }
grep -q "^warning: titan_rtx_1_ms: --power fitted on 8 graphs: with fewer than 10" "$work/calpwf.txt" ||
    { cat "$work/calpwf.txt"; fail "--power on 8 graphs: no warning"; }
$cc power "$work/two.h5" "$work/probe0.csv" "$work/pow8_y.h5" "8;1:1,32:1" || fail "labelling pow8_y.h5"
expect_err "pow8_y.h5: --power: for titan_rtx_256_ms the fit gives measured = .prediction x factor.\^8: far from proportional" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/pow8_y.h5" -o "$work/x.seer" --power
$cc power "$work/two.h5" "$work/probe0.csv" "$work/powneg_y.h5" "-1;1:1,32:1" || fail "labelling powneg_y.h5"
expect_err "powneg_y.h5: --power: for titan_rtx_256_ms .* the model's predictions do not rise with the measured times" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/powneg_y.h5" -o "$work/x.seer" --power
expect_err "calibrated with --with-flops, --with-feature or --power before" \
    "$seercalibrate" "$work/calpw.seer" "$work/pow_y.h5" -o "$work/x.seer" --power
expect_err "--power and --with-flops are two calibrations" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/pow_y.h5" -o "$work/x.seer" --with-flops --power
[ ! -e "$work/x.seer" ] || fail "a refused --power calibration left a file"

# seerexport --ensemble: one file of two exports; it predicts the geometric mean of theirs
"$seerexport" --ensemble "$work/m_fp32.seer" "$work/m_int8.seer" -o "$work/ens.seer" | tee "$work/ens.txt" ||
    fail "seerexport --ensemble"
grep -q "an ensemble of 2 models" "$work/ens.txt" || fail "seerexport --ensemble: its line"
"$seerpredict" "$work/m_int8.seer" "$work/some.h5" --predictions "$work/int8.csv" >/dev/null
"$seerpredict" "$work/ens.seer" "$work/some.h5" --predictions "$work/ens.csv" >/dev/null || fail "predicting with the ensemble"
"$python" - "$work/before.csv" "$work/int8.csv" "$work/ens.csv" <<'PY' || fail "the ensemble's predictions"
import csv, math, sys
a, b, e = (list(csv.DictReader(open(p))) for p in sys.argv[1:4])
ms = [m for m in a[0] if m not in ("name", "in_range")]
apart = max(abs(float(x[m]) / float(y[m]) - 1) for x, y in zip(a, b) for m in ms)
worst = max(abs(float(z[m]) / math.sqrt(float(x[m]) * float(y[m])) - 1) for x, y, z in zip(a, b, e) for m in ms)
assert apart > 1e-4 and worst < 1e-6, (apart, worst)
print("seerexport --ensemble: the geometric mean of the members to %.1e (members %.1e apart)" % (worst, apart))
PY
"$seerpredict" "$work/ens.seer" "$onnx" --batch 2 --json | "$python" -c '
import json, sys
d = json.load(sys.stdin)
assert d["model_info"]["model"] == "ensemble" and d["results"][0]["in_range"] is not None, d' ||
    fail "seerpredict on ONNX with the ensemble"

# seercalibrate on an ensemble (--device too): every member takes the same factors, so the
# ensemble moves by exactly them, its calibrated medians are 1, and it stays an ensemble
"$seercalibrate" "$work/ens.seer" "$work/a100.h5" -o "$work/ens_a100.seer" --device titan_rtx=a100 \
    | tee "$work/cal_ens.txt" || fail "seercalibrate on an ensemble"
"$seerpredict" "$work/ens_a100.seer" "$work/a100.h5" --predictions "$work/ens_a100.csv" >/dev/null ||
    fail "predicting with the calibrated ensemble"
"$seerpredict" "$work/ens_a100.seer" "$onnx" --batch 2 --json | "$python" -c '
import json, sys
d = json.load(sys.stdin)
assert d["model_info"]["model"] == "ensemble" and "a100_1_ms" in d["results"][0]["metrics"], d' ||
    fail "the calibrated ensemble on ONNX"
"$python" - "$work/ens.csv" "$work/ens_a100.csv" "$work/a100.h5" "$work/cal_ens.txt" <<'PY' || fail "the calibrated ensemble's predictions"
import csv, sys, h5py, numpy as np
b, a = list(csv.DictReader(open(sys.argv[1]))), list(csv.DictReader(open(sys.argv[2])))
f = h5py.File(sys.argv[3], "r")
labels = [x.decode() for x in f["schema/labels"][:]]
printed = {l.split()[0]: float(l.split()[2]) for l in open(sys.argv[4]) if " x " in l}
ms = [m for m in b[0] if m.startswith("titan_rtx_")]
assert ms, list(b[0])
for m in ms:
    t = m.replace("titan_rtx_", "a100_")
    pb, pa = np.array([float(r[m]) for r in b]), np.array([float(r[t]) for r in a])
    ratio = pa / pb
    assert ratio.max() / ratio.min() - 1 < 1e-5 and abs(ratio[0] / printed[t] - 1) < 1e-3, (t, ratio.min(), ratio.max(), printed)
    med = np.median(f["label/y"][:, labels.index(t)] / pa)
    assert abs(med - 1) < 1e-5, (t, med)
print("seercalibrate on an ensemble: %d metrics x one factor each, medians now 1" % len(ms))
PY
# by batch too: every member takes the knots, the ensemble (version 3 like them) moves by them,
# and an ensemble with a calibrated member is as new as it
"$seerpredict" "$work/ens.seer" "$work/probe.h5" --predictions "$work/probe_e0.csv" >/dev/null
$cc label "$work/two.h5" "$work/probe_e0.csv" "$work/two_e.h5" 1:2,32:0.5 || fail "labelling two_e.h5"
"$seercalibrate" "$work/ens.seer" "$work/two_e.h5" -o "$work/ensb.seer" >/dev/null || fail "seercalibrate by batch on an ensemble"
"$seerpredict" "$work/ensb.seer" "$work/probe.h5" --predictions "$work/probe_e1.csv" >/dev/null
$cc ratio "$work/probe_e0.csv" "$work/probe_e1.csv" 1:2,32:0.5 || fail "the ensemble calibrated by batch"
"$seerexport" --ensemble "$work/calb.seer" "$work/m_fp32.seer" -o "$work/ens_mixed.seer" >/dev/null ||
    fail "seerexport --ensemble with a calibrated member"
[ "$(version "$work/ensb.seer")" = 3 ] && [ "$(version "$work/ens_mixed.seer")" = 3 ] &&
    [ "$(version "$work/ens.seer")" = 2 ] || fail "the ensembles' format versions"

# an ensemble given to --ensemble contributes its members: (fp32, int8) + fp32 = three members,
# the geometric mean of fp32, int8 and fp32
"$seerexport" --ensemble "$work/ens.seer" "$work/m_fp32.seer" -o "$work/ens3.seer" | tee "$work/ens3.txt" ||
    fail "seerexport --ensemble with an ensemble"
grep -q "an ensemble of 3 models" "$work/ens3.txt" || fail "seerexport --ensemble: the members of an ensemble"
"$seerpredict" "$work/ens3.seer" "$work/some.h5" --predictions "$work/ens3.csv" >/dev/null || fail "predicting with ens3"
"$python" - "$work/before.csv" "$work/int8.csv" "$work/ens3.csv" <<'PY' || fail "the flattened ensemble's predictions"
import csv, sys
a, b, e = (list(csv.DictReader(open(p))) for p in sys.argv[1:4])
ms = [m for m in a[0] if m not in ("name", "in_range")]
worst = max(abs(float(z[m]) / (float(x[m]) ** 2 * float(y[m])) ** (1 / 3) - 1) for x, y, z in zip(a, b, e) for m in ms)
assert worst < 1e-6, worst
print("seerexport --ensemble of an ensemble and a model: the geometric mean of 3 members to %.1e" % worst)
PY

# --weights: a weighted geometric mean, version 4 (older libseer refuses it rather than weigh the
# members alike); an ensemble given with a weight shares it as its own weights do; seercalibrate
# keeps the weights
"$seerexport" --ensemble "$work/m_fp32.seer" "$work/m_int8.seer" --weights 1,3 -o "$work/ensw.seer" >/dev/null ||
    fail "seerexport --ensemble --weights"
"$seerexport" --ensemble "$work/ensw.seer" "$work/m_fp32.seer" --weights 2,1 -o "$work/ensw3.seer" >/dev/null ||
    fail "seerexport --ensemble --weights with a weighted ensemble"
"$seerpredict" "$work/ensw.seer" "$work/some.h5" --predictions "$work/ensw.csv" >/dev/null || fail "predicting with ensw"
"$seerpredict" "$work/ensw3.seer" "$work/some.h5" --predictions "$work/ensw3.csv" >/dev/null || fail "predicting with ensw3"
"$seercalibrate" "$work/ensw.seer" "$work/a100.h5" -o "$work/ensw_a100.seer" --device titan_rtx=a100 >/dev/null ||
    fail "seercalibrate on a weighted ensemble"
"$seerpredict" "$work/ensw_a100.seer" "$work/some.h5" --predictions "$work/ensw_a100.csv" >/dev/null
"$python" - "$work/before.csv" "$work/int8.csv" "$work/ensw.csv" "$work/ensw3.csv" "$work/ensw_a100.csv" <<'PY' || fail "the weighted ensembles' predictions"
import csv, math, sys
a, b, w, w3, cal = (list(csv.DictReader(open(p))) for p in sys.argv[1:6])
ms = [m for m in a[0] if m not in ("name", "in_range")]
geo = lambda xs, ws: math.exp(sum(wi * math.log(xi) for xi, wi in zip(xs, ws)) / sum(ws))  # noqa: E731
e1 = max(abs(float(z[m]) / geo([float(x[m]), float(y[m])], [1, 3]) - 1) for x, y, z in zip(a, b, w) for m in ms)
e0 = max(abs(float(z[m]) / geo([float(x[m]), float(y[m])], [1, 1]) - 1) for x, y, z in zip(a, b, w) for m in ms)
# (fp32 1, int8 3) at weight 2 and fp32 at 1: fp32 2/4 + 1 = 1.5, int8 6/4 = 1.5
e3 = max(abs(float(z[m]) / geo([float(x[m]), float(y[m])], [1.5, 1.5]) - 1) for x, y, z in zip(a, b, w3) for m in ms)
assert e1 < 1e-6 and e0 > 1e3 * e1 and e3 < 1e-6, (e1, e0, e3)
per = {}
for z, c in zip(w, cal):
    for m in ms:
        if m.startswith("titan_rtx_"):
            per.setdefault(m, []).append(float(c[m.replace("titan_rtx_", "a100_")]) / float(z[m]))
assert per and all(max(r) / min(r) - 1 < 1e-5 for r in per.values()), per
print("--weights 1,3: the weighted geometric mean to %.1e (unweighted: %.1e off); nested 2,1 to %.1e; "
      "seercalibrate keeps the weights (one factor per metric)" % (e1, e0, e3))
PY
[ "$(version "$work/ensw.seer")" = 4 ] && [ "$(version "$work/ensw_a100.seer")" = 4 ] ||
    fail "a weighted ensemble's format version"
expect_err "gives 3 weights for 2 files" "$seerexport" --ensemble "$work/m_fp32.seer" "$work/m_int8.seer" --weights 1,2,3 -o "$work/x.seer"
expect_err "give up to 16 positive numbers" "$seerexport" --ensemble "$work/m_fp32.seer" "$work/m_int8.seer" --weights 1,-2 -o "$work/x.seer"
expect_err "--weights and --spread-warn are options of --ensemble" "$seerexport" "$work/m_fp32.seer" --weights 1 -o "$work/x.seer"
cp "$work/ensw.seer" "$work/ensw_bad.seer"
"$python" "$here/hostile/ckpt_edit.py" "$work/ensw_bad.seer" ensemble.weights -1 0
expect_err "ensemble.weights\[0\] = -1: a member's weight must be positive" \
    "$seerpredict" "$work/ensw_bad.seer" "$work/some.h5"

# members trained before operators were appended to the op table join newer ones: a model
# trained on a copy of the data whose table stops at Equal (as files written before Mod was added
# do) and the full-table model, the short one first; on allops.onnx (ScatterND: beyond the short
# table, so that member's Other) the ensemble predicts the geometric mean of the two alone. A
# table that is not the start of the other (two names swapped) is refused.
"$python" - "$data" "$work" <<'PY' || fail "writing short.h5 and swapped.h5"
import shutil, sys, h5py
for name, edit in (("short", lambda t: t[:50]), ("swapped", lambda t: [t[1], t[0]] + list(t[2:50]))):
    out = "%s/%s.h5" % (sys.argv[2], name)
    shutil.copy(sys.argv[1], out)
    with h5py.File(out, "r+") as f:
        t = [x.decode() if isinstance(x, bytes) else x for x in f["schema/op_types"][:]]
        assert t[49] == "Equal" and f["node/op"][:].max() < 49, t
        del f["schema/op_types"]
        f.create_dataset("schema/op_types", data=edit(t), dtype=h5py.string_dtype())
PY
for m in short swapped; do
    "$seertrain" "$ini" --quiet --set data.path="$work/$m.h5" --set output.dir="$work" --set output.run=$m \
        --set train.epochs=2 --set data.limit=200 >"$work/$m.log" 2>&1 || { cat "$work/$m.log"; fail "training on $m.h5"; }
    "$seerexport" "$work/$m" -o "$work/$m.seer" >/dev/null || fail "export $m"
done
"$seerexport" --ensemble "$work/short.seer" "$work/m_fp32.seer" -o "$work/ens_ops.seer" >/dev/null ||
    fail "seerexport --ensemble of members with op tables of two lengths"
allops="$here/data/onnx/allops.onnx"
for m in short m_fp32 ens_ops; do
    "$seerpredict" "$work/$m.seer" "$allops" --batch 1,4 --json >"$work/allops_$m.json" || fail "seerpredict $m.seer on allops.onnx"
done
"$python" - "$work/allops_short.json" "$work/allops_m_fp32.json" "$work/allops_ens_ops.json" <<'PY' ||
import json, math, sys
a, b, e = (json.load(open(p))["results"] for p in sys.argv[1:])
worst = max(abs(z["metrics"][m]["value"] / math.sqrt(x["metrics"][m]["value"] * y["metrics"][m]["value"]) - 1)
            for x, y, z in zip(a, b, e) for m in x["metrics"])
assert len(e) == 2 and worst < 2e-5, worst
print("an ensemble across op tables: the geometric mean of its members to %.1e" % worst)
# member_spread: the largest over the smallest member prediction (null for a single model)
sp = max(abs(z["member_spread"][m] / (max(x["metrics"][m]["value"], y["metrics"][m]["value"]) /
                                      min(x["metrics"][m]["value"], y["metrics"][m]["value"])) - 1)
         for x, y, z in zip(a, b, e) for m in x["metrics"])
assert sp < 2e-5 and a[0]["member_spread"] is None and max(e[0]["member_spread"].values()) > 1, (sp, e[0])
print("member_spread: the members' largest / smallest to %.1e" % sp)
PY
    fail "the ensemble across op tables"
"$seerpredict" "$work/ens_ops.seer" "$allops" --batch 1,4 >"$work/allops_ens.txt" || fail "seerpredict ens_ops.seer"
"$python" - "$work/allops_ens_ops.json" "$work/allops_ens.txt" <<'PY' || fail "the warning on the members' spread"
import json, sys
res, text = json.load(open(sys.argv[1]))["results"], open(sys.argv[2]).read()
blocks = text.split("\n\n")
for r, t in zip(res, blocks):
    over = sorted(m for m, v in r["member_spread"].items() if v > 1.5)
    line = [l for l in t.splitlines() if "members disagree" in l]
    assert bool(over) == bool(line) and all(m in line[0] for m in over), (over, line)
print("the members' spread: warned exactly where it exceeds 1.5 (%s)" % [sorted(r["member_spread"].items()) for r in res])
PY
# --spread-warn: a threshold per metric, between the two results' spreads (each metric then warns
# on one of them), written into a rewrite of the ensemble alone; the predictions stay the same
# bits, JSON member_spread_warn gives the thresholds and the text warns exactly above them
"$python" - "$work/allops_ens_ops.json" > "$work/spread_warn.txt" <<'PY' || fail "choosing thresholds"
import json, math, sys
res = json.load(open(sys.argv[1]))["results"]
names = list(res[0]["member_spread"])
print(",".join(repr(max(1.0001, math.sqrt(res[0]["member_spread"][m] * res[1]["member_spread"][m]))) for m in names))
PY
"$seerexport" --ensemble "$work/ens_ops.seer" --spread-warn "$(cat "$work/spread_warn.txt")" -o "$work/ens_sw.seer" >/dev/null ||
    fail "seerexport --spread-warn on an ensemble alone"
"$seerpredict" "$work/ens_sw.seer" "$allops" --batch 1,4 --json >"$work/allops_sw.json" || fail "seerpredict ens_sw.seer --json"
"$seerpredict" "$work/ens_sw.seer" "$allops" --batch 1,4 >"$work/allops_sw.txt" || fail "seerpredict ens_sw.seer"
"$python" - "$work/allops_ens_ops.json" "$work/allops_sw.json" "$work/allops_sw.txt" "$work/spread_warn.txt" <<'PY' ||
import json, sys
a, b = (json.load(open(p))["results"] for p in sys.argv[1:3])
text, want = open(sys.argv[3]).read(), [float(v) for v in open(sys.argv[4]).read().split(",")]
assert [x["metrics"] for x in a] == [y["metrics"] for y in b], "the rewrite changed a prediction"
assert [x["member_spread"] for x in a] == [y["member_spread"] for y in b]
names = list(b[0]["member_spread"])
assert all(abs(y["member_spread_warn"][m] / w - 1) < 1e-5 for y in b for m, w in zip(names, want)), (b[0], want)
assert a[0]["member_spread_warn"] == {m: 1.5 for m in names}, a[0]["member_spread_warn"]
flagged = 0
for r, t in zip(b, text.split("\n\n")):
    over = sorted(m for m, v in r["member_spread"].items() if v > r["member_spread_warn"][m])
    line = [l for l in t.splitlines() if "members disagree" in l]
    assert bool(over) == bool(line) and all(m in line[0] for m in over), (over, line)
    assert not line or all(m in over for m in names if m + " x" in line[0]), (over, line)
    flagged += len(over)
assert 0 < flagged < 2 * len(names), (flagged, b)
print("--spread-warn: the same predictions, thresholds %s, warned exactly above them (%d of %d)" % (want, flagged, 2 * len(names)))
PY
    fail "--spread-warn"
# seerpredict DATA.h5 --spreads: each graph's spread is its members' largest over smallest (the
# members' own predictions), and the report gives the quantiles and the MAPE where it warns
"$seerpredict" "$work/ens_sw.seer" "$work/some.h5" --spreads "$work/spreads.csv" --json > "$work/spreads.json" ||
    fail "seerpredict --spreads"
"$seerpredict" "$work/short.seer" "$work/some.h5" --predictions "$work/short.csv" >/dev/null || fail "short.seer on some.h5"
"$python" - "$work/spreads.csv" "$work/short.csv" "$work/before.csv" "$work/spreads.json" "$work/spread_warn.txt" <<'PY' ||
import csv, json, sys
import numpy as np
sp, s, f = (list(csv.DictReader(open(p))) for p in sys.argv[1:4])
rep, want = json.load(open(sys.argv[4])), [float(v) for v in open(sys.argv[5]).read().split(",")]
names = [k for k in sp[0] if k != "name"]
assert len(sp) == len(s) == len(f) > 10 and "in_range" not in sp[0]
worst = max(abs(float(r[m]) / (max(float(x[m]), float(y[m])) / min(float(x[m]), float(y[m]))) - 1)
            for r, x, y in zip(sp, s, f) for m in names)
assert worst < 1e-6, worst
for m, w in zip(names, want):
    v = np.array([float(r[m]) for r in sp])
    q = rep["member_spread"][m]
    assert abs(q["q99"] / np.quantile(v, 0.99) - 1) < 1e-5 and abs(q["median"] / np.median(v) - 1) < 1e-5, (m, q)
    assert abs(q["warn"] / w - 1) < 1e-5
    if m in rep["metrics"]:
        assert rep["metrics"][m]["spread_flagged"] == int((v > w).sum()), (m, rep["metrics"][m])
print("--spreads: the members' largest over smallest to %.1e; quantiles and flagged counts as numpy's" % worst)
PY
    fail "seerpredict --spreads"
expect_err "--spreads .*not an ensemble" "$seerpredict" "$work/m_fp32.seer" "$work/some.h5" --spreads "$work/x.csv"
expect_err "--spreads .*of a dataset" "$seerpredict" "$work/ens_sw.seer" "$allops" --spreads "$work/x.csv"
expect_err "gives 3 values for 2 metrics" "$seerexport" --ensemble "$work/ens_ops.seer" --spread-warn 1.5,2,3 -o "$work/x.seer"
expect_err "give one number above 1" "$seerexport" --ensemble "$work/ens_ops.seer" --spread-warn 0.9 -o "$work/x.seer"
expect_err "one file is rewritten only when it is an ensemble" "$seerexport" --ensemble "$work/m_fp32.seer" --spread-warn 2 -o "$work/x.seer"
expect_err "takes 2 to 16 .seer files" "$seerexport" --ensemble "$work/ens_ops.seer" -o "$work/x.seer"
expect_err "--weights and --spread-warn are options of --ensemble" "$seerexport" "$work/run" --spread-warn 2 -o "$work/x.seer"
cp "$work/ens_sw.seer" "$work/ens_sw_bad.seer"
"$python" "$here/hostile/ckpt_edit.py" "$work/ens_sw_bad.seer" ensemble.spread_warn 0.5 0
expect_err "ensemble.spread_warn\[0\] = 0.5: a threshold .* must be above 1" \
    "$seerpredict" "$work/ens_sw_bad.seer" "$work/some.h5"

expect_err "swapped.seer: its op table differs from member 0's" \
    "$seerexport" --ensemble "$work/short.seer" "$work/swapped.seer" -o "$work/x.seer"

# errors: one line, non-zero, naming the file
head -c 1000 "$work/m_fp32.seer" >"$work/trunc.seer"
expect_err "trunc.seer: (truncated|corrupt)" "$seerpredict" "$work/trunc.seer" "$onnx"
expect_err "wrong magic" "$seerpredict" "$work/run/best.ckpt" "$onnx"
expect_err "wrong magic" "$seerexport" "$work/m_fp32.seer" -o "$work/x.seer"
expect_err "use fp32, fp16 or int8" "$seerexport" "$work/run" -o "$work/x.seer" --dtype fp8
expect_err "nothing.onnx" "$seerpredict" "$work/m_fp32.seer" "$work/nothing.onnx"
[ ! -e "$work/x.seer" ] || fail "a failed export left a file"
expect_err "no shipped predictor knows device 'pixel9'.*known: titan_rtx.*for a CPU, 40 design-space architectures" \
    env SEER_PREDICTORS="$work/ship" "$seerpredict" "$onnx" --device pixel9
expect_err "resnet18.onnx is a network, not a .seer model" "$seerpredict" "$onnx" --batch 1
expect_err "unnamed.h5: no graph carries a measured label" "$seercalibrate" "$work/m_fp32.seer" "$work/unnamed.h5" -o "$work/x.seer"
expect_err "a100_part.h5: no measured label a100_256_ms: with --device titan_rtx=a100 every metric" \
    "$seercalibrate" "$work/m_fp32.seer" "$work/a100_part.h5" -o "$work/x.seer" --device titan_rtx=a100
expect_err "has no metric of device 'h100'" "$seercalibrate" "$work/m_fp32.seer" "$work/a100.h5" -o "$work/x.seer" --device h100=a100
expect_err "give FROM=TO" "$seercalibrate" "$work/m_fp32.seer" "$work/a100.h5" -o "$work/x.seer" --device a100
[ ! -e "$work/x.seer" ] || fail "a failed calibration left a file"
expect_err "cpu_xeon.seer: predicts other metrics than member 0" \
    "$seerexport" --ensemble "$work/m_fp32.seer" "$here/../predictors/cpu_xeon.seer" -o "$work/x.seer"
expect_err "members keep their dtype" "$seerexport" --ensemble "$work/m_fp32.seer" "$work/m_int8.seer" -o "$work/x.seer" --dtype fp16
expect_err "takes 2 to 16 .seer files \(got 1;" "$seerexport" --ensemble "$work/m_fp32.seer" -o "$work/x.seer"
expect_err "trunc.seer: (truncated|corrupt)" "$seerexport" --ensemble "$work/m_fp32.seer" "$work/trunc.seer" -o "$work/x.seer"
[ ! -e "$work/x.seer" ] && [ ! -e "$work/x.seer.check" ] || fail "a failed --ensemble left a file"
echo "test_export.sh: all checks passed"
