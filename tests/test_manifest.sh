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
print("good manifest: 3 graphs, labels and NaNs as written")
PY
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
