#!/bin/sh
# seerconvert --manifest: a good manifest converts (labels kept, NaN for empty), and bad rows are
# refused with the manifest's line number and no output file.
# usage: test_manifest.sh SEERCONVERT FIXTURE_DIR WORKDIR PYTHON
set -eu
conv=$1 fx=$2 work=$3 python=$4
rm -rf "$work" && mkdir -p "$work"
cp "$fx/resnet18.onnx" "$fx/mobilenet_v2.onnx" "$work/"
printf 'onnx,batch,name,group,infer_ms,train_ms\nresnet18.onnx,1,r18@1,0,1.5,4.0\nresnet18.onnx,8,r18@8,0,6.0,\nmobilenet_v2.onnx,2,mb2@2,1,nan,3.5\n' > "$work/good.csv"
"$conv" --manifest "$work/good.csv" -o "$work/good.h5" --threads 2
$python - "$work/good.h5" <<'PY'
import math, sys, h5py
f = h5py.File(sys.argv[1])
assert f.attrs["format"] == "seer-perfgraph" and f.attrs["version"] == 1
y = f["label/y"][:]
assert y.shape == (3, 2) and y[0, 0] == 1.5 and math.isnan(y[1, 1]) and math.isnan(y[2, 0]), y
assert [s.decode() if isinstance(s, bytes) else s for s in f["schema/labels"][:]] == ["infer_ms", "train_ms"]
assert list(f["graph/group"][:]) == [0, 0, 1]
assert "graph/family" not in f  # no family column, no /graph/family
print("good manifest: 3 graphs, labels and NaNs as written")
assert "32004" in f["node/x"]._filters and f["node/x"].chunks, "not LZ4-compressed by default"
print("written LZ4-compressed by default; h5py reads it through HDF5's plugin")
PY
# without HDF5's LZ4 plugin: seerconvert says so and writes the file uncompressed
mkdir -p "$work/noplugins"
HDF5_PLUGIN_PATH="$work/noplugins" "$conv" --manifest "$work/good.csv" -o "$work/plain.h5" 2> "$work/plain.err"
grep -q "LZ4 filter is not installed.*uncompressed" "$work/plain.err" || { echo "FAIL: no note: $(cat "$work/plain.err")"; exit 1; }
$python -c "import sys, h5py; assert h5py.File(sys.argv[1])['node/x'].chunks is None" "$work/plain.h5"
if HDF5_PLUGIN_PATH="$work/noplugins" "$conv" --manifest "$work/good.csv" -o "$work/lz.h5" --compress lz4 2> "$work/lz.err"; then
    echo "FAIL: --compress lz4 without the plugin was accepted"; exit 1
fi
grep -q "hdf5-filter-plugin" "$work/lz.err" && [ ! -e "$work/lz.h5" ] || { echo "FAIL: $(cat "$work/lz.err")"; exit 1; }
echo "no LZ4 plugin: the default writes uncompressed with a note; --compress lz4 is refused: $(cat "$work/lz.err")"
# --repack: the same data under another codec
"$conv" --repack "$work/good.h5" -o "$work/re0.h5" --compress 0 > /dev/null
"$conv" --repack "$work/re0.h5" -o "$work/re4.h5" > /dev/null
$python - "$work/good.h5" "$work/re0.h5" "$work/re4.h5" <<'PY'
import sys, h5py, numpy as np
a, b, c = (h5py.File(p) for p in sys.argv[1:])
assert b["node/x"].chunks is None and "32004" in c["node/x"]._filters
for k in ("node/x", "node/op", "edge/index", "edge/x", "global/x", "label/y", "graph/node_ptr"):
    assert np.array_equal(a[k][:], b[k][:], equal_nan=True) and np.array_equal(a[k][:], c[k][:], equal_nan=True), k
print("--repack: uncompressed and back to LZ4, every array unchanged")
PY
if "$conv" --repack "$work/good.h5" -o "$work/good.h5" 2> "$work/same.err"; then echo "FAIL: repack onto itself"; exit 1; fi
# --check: a sound file with checksums, one without (uncompressed), one damaged under its checksum
"$conv" --check "$work/re4.h5" "$work/re0.h5" > "$work/check.out" || { echo "FAIL: --check refused sound files"; exit 1; }
grep -q "re4.h5: ok: .*checksums verified" "$work/check.out" && grep -q "re0.h5: ok: .*no checksums" "$work/check.out" ||
    { echo "FAIL: --check: $(cat "$work/check.out")"; exit 1; }
cp "$work/re4.h5" "$work/dmg.h5"
$python - "$work/dmg.h5" <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    info = f["node/x"].id.get_chunk_info(0)
with open(sys.argv[1], "r+b") as fb:  # one byte inside the first chunk's compressed data
    fb.seek(info.byte_offset + info.size // 2)
    b = fb.read(1)
    fb.seek(info.byte_offset + info.size // 2)
    fb.write(bytes([b[0] ^ 0x21]))
PY
if "$conv" --check "$work/re4.h5" "$work/dmg.h5" > "$work/check.out" 2> "$work/check.err"; then
    echo "FAIL: --check passed a damaged file"; exit 1
fi
grep -q "dmg.h5: /node/x: .*checksum" "$work/check.err" && [ "$(grep -c . "$work/check.err")" = 1 ] &&
    grep -q "re4.h5: ok" "$work/check.out" || { echo "FAIL: --check on a damaged file: $(cat "$work/check.err")"; exit 1; }
echo "--check: $(cat "$work/check.err")"
# the optional family column goes to /graph/family; seertrain's [data] test_family holds it out
printf 'onnx,batch,name,group,family,infer_ms\n' > "$work/fam.csv"
for i in 0 1 2 3 4 5 6 7 8 9 10 11; do
    fam=$([ $((i % 3)) = 0 ] && echo mobile || echo resnet)
    net=$([ $fam = mobile ] && echo mobilenet_v2 || echo resnet18)
    printf '%s.onnx,%d,%s@%d,%d,%s,%d.5\n' $net $((i + 1)) $net $i $i $fam $((i + 2)) >> "$work/fam.csv"
done
"$conv" --manifest "$work/fam.csv" -o "$work/fam.h5" --threads 2
$python - "$work/fam.h5" <<'PY'
import sys, h5py
f = h5py.File(sys.argv[1])
fam = [s.decode() if isinstance(s, bytes) else s for s in f["graph/family"][:]]
assert fam == ["mobile" if i % 3 == 0 else "resnet" for i in range(12)], fam
assert [s.decode() if isinstance(s, bytes) else s for s in f["schema/labels"][:]] == ["infer_ms"]
print("family column: /graph/family written, labels after it")
PY
if [ -n "${SEERTRAIN:-}" ]; then
    # (Seer decodes LZ4 chunks itself: it reads fam.h5 with no plugin installed)
    HDF5_PLUGIN_PATH="$work/noplugins" "$SEERTRAIN" "$(dirname "$0")/data/tiny.ini" --quiet --set data.path="$work/fam.h5" --set data.labels=infer_ms \
        --set data.limit=0 --set data.test_family=mobile --set train.epochs=1 --set output.dir="$work" \
        --set output.run=fam > "$work/fam.txt"
    [ "$(grep -c 'mobilenet_v2@' "$work/fam/test_predictions.csv")" = 4 ] &&
        [ "$(grep -c 'resnet18@' "$work/fam/test_predictions.csv")" = 0 ] || fail "test_family: $(cat "$work/fam/test_predictions.csv")"
    if "$SEERTRAIN" "$(dirname "$0")/data/tiny.ini" --set data.path="$work/good.h5" --set data.labels=infer_ms \
        --set data.test_family=mobile --set output.dir="$work" 2> "$work/nofam.err"; then fail "test_family without /graph/family accepted"; fi
    grep -q "no /graph/family" "$work/nofam.err" || fail "test_family: $(cat "$work/nofam.err")"
    # the export records the families the model trained on; seerpredict reports them
    if [ -n "${SEEREXPORT:-}" ]; then
        "$SEEREXPORT" "$work/fam" -o "$work/fam.seer" > /dev/null
        "$SEERPREDICT" "$work/fam.seer" "$work/mobilenet_v2.onnx" --json | grep -q '"families":"resnet"' ||
            fail "families: $("$SEERPREDICT" "$work/fam.seer" "$work/mobilenet_v2.onnx" --json)"
        echo "the export records the training families (resnet; mobile was held out)"
    fi
    echo "test_family: the 4 mobile graphs are the whole test split; a file without families is refused"
fi
fail() { echo "FAIL: $*"; exit 1; }
expect() { # name, expected text, csv body
    printf "$3" > "$work/$1.csv"
    if "$conv" --manifest "$work/$1.csv" -o "$work/$1.h5" 2> "$work/$1.err"; then fail "$1 accepted"; fi
    grep -q -- "$2" "$work/$1.err" || fail "$1: '$(cat "$work/$1.err")' lacks '$2'"
    [ ! -e "$work/$1.h5" ] || fail "$1: an output file was written"
    echo "refused $1: $(cat "$work/$1.err")"
}
expect header "the header must start with onnx,batch,name,group" 'path,batch,name,group,x_ms\n'
expect batch "$work/batch.csv:3: batch 'zero' is not a positive integer" 'onnx,batch,name,group,x_ms\nresnet18.onnx,1,a,0,1\nresnet18.onnx,zero,b,0,1\n'
expect fields "$work/fields.csv:2: 4 fields, the header has 5" 'onnx,batch,name,group,x_ms\nresnet18.onnx,1,a,0\n'
expect label "$work/label.csv:2: label x_ms = 'fast'" 'onnx,batch,name,group,x_ms\nresnet18.onnx,1,a,0,fast\n'
expect missing "$work/missing.csv:3: $work/nope.onnx: cannot open" 'onnx,batch,name,group,x_ms\nresnet18.onnx,1,a,0,1\nnope.onnx,1,b,0,1\n'
echo "test_manifest: passed"
