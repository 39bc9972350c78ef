#!/bin/sh
# seerconvert against the operator count: chains of N Relu operators (N = 10k, 50k, 100k) and a
# wide graph of N/2 two-input Adds, converted end to end (read, parse, shapes, costs, features).
# usage: sh benchmarks/bench_convert_scale.sh [SEERCONVERT] [BASELINE_SEERCONVERT]
# A baseline binary (an older build) is timed on the same files in the same run, for ratios.
set -eu
new=${1:-build/seerconvert} old=${2:-}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
/usr/bin/python3 - "$dir" <<'PY'
import sys
from onnx import helper, TensorProto, save
d = sys.argv[1]
def model(nodes, name):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 16])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), '%s/%s.onnx' % (d, name))
for n in (10000, 50000, 100000):
    model([helper.make_node('Relu', ['x' if i == 0 else 't%d' % (i - 1)], ['t%d' % i if i < n - 1 else 'y'])
           for i in range(n)], 'chain%d' % n)
    # a fan: every Add reads x and the previous sum (each tensor has two consumers)
    model([helper.make_node('Add', ['x', 'x' if i == 0 else 's%d' % (i - 1)], ['s%d' % i if i < n // 2 - 1 else 'y'])
           for i in range(n // 2)], 'fan%d' % n)
PY
printf '| model | operators | %s ms |%s\n' "$new" "${old:+ $old ms | ratio |}"
printf '| --- | --- | --- |%s\n' "${old:+ --- | --- |}"
for f in "$dir"/chain10000 "$dir"/fan10000 "$dir"/chain50000 "$dir"/fan50000 "$dir"/chain100000 "$dir"/fan100000; do
    t0=$(date +%s%N); ops=$("$new" "$f.onnx" | sed -n 's/.*: \([0-9]*\) operators.*/\1/p'); t1=$(date +%s%N)
    a=$(( (t1 - t0) / 1000000 ))
    if [ -n "$old" ]; then
        t0=$(date +%s%N); "$old" "$f.onnx" > /dev/null; t1=$(date +%s%N)
        b=$(( (t1 - t0) / 1000000 ))
        printf '| %s | %s | %d | %d | %dx |\n' "$(basename "$f")" "$ops" "$a" "$b" $(( b / (a > 0 ? a : 1) ))
    else
        printf '| %s | %s | %d |\n' "$(basename "$f")" "$ops" "$a"
    fi
done
