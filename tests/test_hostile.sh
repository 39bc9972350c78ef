#!/bin/sh
# Every hostile input of tests/data/hostile/ (tests/hostile/make_corpus.py writes them; expect.tsv
# lists file, tool and a piece of the expected message) is refused cleanly: a non-zero exit that
# is not a signal, within 60 s, with one line on stderr that names the file and contains the
# expected words, and no sanitizer report. Checkpoints and .seer files with flipped bytes (made
# here from a small trained run) are refused the same way. With SEER_SANITIZED set (a sanitizer
# build), the h5/libhdf5_crash_* cases, crashes inside libhdf5 itself, are skipped.
# usage: test_hostile.sh BIN_DIR DATA.h5 CORPUS_DIR WORKDIR [PYTHON]
set -u
export SEER_H5_STRING_TIMEOUT=5 # libhdf5_hang_heap.h5: the readers' alarm, 60 s by default
bin=$1 data=$2 corpus=$3 work=$4 python=${5:-python3}
rm -rf "$work"
mkdir -p "$work"
fails=0 n=0
check() { # WHAT WANT CMD...: the command must refuse with one line naming WHAT and containing WANT
    what=$1 want=$2
    shift 2
    n=$((n + 1))
    timeout 60 "$@" > "$work/out" 2> "$work/err"
    rc=$?
    lines=$(grep -cv '^$' "$work/err")
    base=$(basename "$what")
    if [ $rc -eq 0 ] || [ $rc -ge 124 ] || [ "$lines" -ne 1 ] || ! grep -qF "$base" "$work/err" ||
        ! grep -qF -- "$want" "$work/err" || grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$work/err"; then
        echo "FAIL: $what (rc $rc, $lines stderr lines; want one line naming $base with '$want'):"
        head -5 "$work/err" | sed 's/^/    /'
        fails=$((fails + 1))
    else
        echo "ok   $what: $(cat "$work/err")"
    fi
}
while IFS="$(printf '\t')" read -r file tool want; do
    case $file in '#'*|'') continue ;; esac
    case $file in *libhdf5_crash_*) if [ -n "${SEER_SANITIZED:-}" ]; then
        echo "skip $file: libhdf5's own fault, which the sanitizer reports first"; continue; fi ;; esac
    f=$corpus/$file
    case $tool in
    seerconvert)
        check "$f" "$want" "$bin/seerconvert" "$f"
        check "$f" "$want" "$bin/seerconvert" "$f" --batch 4 ;;
    seersweep)
        sed "s|BASE|$corpus/../../../configs/single.ini|; s|OUT|$work/sweeps|" "$f" > "$work/$(basename "$f")"
        check "$work/$(basename "$f")" "$want" "$bin/seersweep" "$work/$(basename "$f")" ;;
    seertrain)
        case $f in
        *.ini) check "$f" "$want" "$bin/seertrain" "$f" --set data.path="$data" --set output.dir="$work" ;;
        *) check "$f" "$want" "$bin/seertrain" "$corpus/../../data/tiny.ini" --set data.path="$f" \
               --set data.labels=a_ms --set output.dir="$work" ;;
        esac ;;
    esac
done < "$corpus/expect.tsv"
# not hostile: a file that compresses 1000 to 1 is read, not refused as forged (h5_shape's rule)
n=$((n + 1))
if "$python" "$corpus/../../hostile/compressible.py" "$work/compressible.h5" > /dev/null &&
    "$bin/seerconvert" --check "$work/compressible.h5" > "$work/out" 2> "$work/err"; then
    echo "ok   a PerfGraph file compressed 1000 to 1 is read: $(head -c 80 "$work/out")"
else
    echo "FAIL: a PerfGraph file compressed 1000 to 1 was refused:"; head -3 "$work/err" | sed 's/^/    /'
    fails=$((fails + 1))
fi
# a small model, then its checkpoint and export with one byte changed in a tensor and in the header
"$bin/seertrain" "$corpus/../../data/tiny.ini" --quiet --set data.path="$data" --set output.dir="$work" \
    --set output.run=m --set train.max_steps=3 > /dev/null || { echo "FAIL: training the sample model"; exit 1; }
"$bin/seerexport" "$work/m/last.ckpt" -o "$work/m.seer" > /dev/null || { echo "FAIL: exporting the sample model"; exit 1; }
# seerexport --count-pairs reads a dataset as the trainer does: every hostile PerfGraph file the
# trainer refuses, it refuses with the same line, and writes nothing
while IFS="$(printf '\t')" read -r file tool want; do
    case $tool:$file in seertrain:*.h5) ;; *) continue ;; esac
    case $file in *libhdf5_crash_*) [ -z "${SEER_SANITIZED:-}" ] || continue ;; esac
    check "$corpus/$file" "$want" "$bin/seerexport" --count-pairs "$corpus/$file" "$work/m.seer" -o "$work/pairs.seer"
    if [ -e "$work/pairs.seer" ] || [ -e "$work/pairs.seer.check" ]; then
        echo "FAIL: seerexport --count-pairs $file left a file"; fails=$((fails + 1))
    fi
done < "$corpus/expect.tsv"
flip() { # FILE OFFSET_FROM_END OUT
    cp "$1" "$3"
    size=$(wc -c < "$1")
    off=$((size - $2))
    printf '\377' | dd of="$3" bs=1 seek="$off" conv=notrunc 2> /dev/null
}
for from_end in 4 400; do
    flip "$work/m/last.ckpt" $from_end "$work/flip$from_end.ckpt"
    mkdir -p "$work/r$from_end" && cp "$work/m/"*.ckpt "$work/r$from_end/" && cp "$work/flip$from_end.ckpt" "$work/r$from_end/last.ckpt"
    check "$work/r$from_end/last.ckpt" "checksum" "$bin/seertrain" --resume "$work/r$from_end" --set train.max_steps=5
    flip "$work/m.seer" $from_end "$work/flip$from_end.seer"
    check "$work/flip$from_end.seer" "checksum" "$bin/seerpredict" "$work/flip$from_end.seer" "$corpus/../onnx/resnet50.onnx"
done
# a header byte: the 20th (the tensor count's low bytes are covered by the header checksum)
cp "$work/m.seer" "$work/head.seer"
printf '\001' | dd of="$work/head.seer" bs=1 seek=40 conv=notrunc 2> /dev/null
check "$work/head.seer" "head.seer" "$bin/seerpredict" "$work/head.seer" "$corpus/../onnx/resnet50.onnx"
# a disk that fills while seerconvert writes (a file-size limit; SIGXFSZ ignored so the write
# fails with EFBIG): one line, exit 1, no file left behind (HDF5's exit cleanup crashed here)
n=$((n + 1))
onnx=$(cd "$corpus/../onnx" && pwd)
printf 'onnx,batch,name,group,a_ms\n' > "$work/full.csv"
for k in 1 2 3 4 5 6 7 8; do
    for m in resnet18 resnet50 densenet121 vgg16; do printf '%s/%s.onnx,%d,%s_%d,%d,1.0\n' "$onnx" $m $k $m $k $k >> "$work/full.csv"; done
done
(trap '' XFSZ; ulimit -f 64; exec "$bin/seerconvert" --manifest "$work/full.csv" -o "$work/full.h5") > /dev/null 2> "$work/full.err"
rc=$?
if [ $rc -eq 1 ] && [ "$(grep -cv '^$' "$work/full.err")" = 1 ] && grep -q "full.h5: write failed" "$work/full.err" &&
    ! ls "$work"/full.h5* > /dev/null 2>&1; then
    echo "ok   a full disk under seerconvert: $(cat "$work/full.err")"
else
    echo "FAIL: a full disk under seerconvert: rc $rc"; cat "$work/full.err"; fails=$((fails + 1))
fi
# empty splits (3 graphs: one each): no figure where nothing was scored, never "MAPE 0.000"
n=$((n + 1))
"$bin/seertrain" "$corpus/../../data/tiny.ini" --set data.path="$data" --set data.limit=3 \
    --set output.dir="$work" --set output.run=empty --set train.epochs=1 > "$work/empty.txt" 2>&1
if grep -q '"mean_test_mape":null' "$work/empty/summary.json" 2>/dev/null &&
    grep -qE '^test +[a-z0-9_]+ +0 +- +-' "$work/empty.txt" && ! grep -q ' 0\.000 ' "$work/empty.txt"; then
    echo "ok   an empty test split: '-' in the table, null in summary.json"
else
    echo "FAIL: an empty test split:"; cat "$work/empty.txt"; fails=$((fails + 1))
fi
# killed between an epoch's log line and its checkpoint: the resumed run does not log it twice
n=$((n + 1))
"$bin/seertrain" "$corpus/../../data/tiny.ini" --quiet --set data.path="$data" --set data.limit=100 \
    --set output.dir="$work" --set output.run=kill --set train.epochs=3 --set train.stop_epoch=2 > /dev/null
tail -n 1 "$work/kill/metrics.jsonl" | sed 's/"epoch":2,/"epoch":3,/' >> "$work/kill/metrics.jsonl"
"$bin/seertrain" --resume "$work/kill" --quiet --set train.stop_epoch=0 > /dev/null
if [ "$(grep -c '"epoch":3,' "$work/kill/metrics.jsonl")" = 1 ] && [ "$(wc -l < "$work/kill/metrics.jsonl")" = 3 ]; then
    echo "ok   a log line written before a kill is not repeated after --resume"
else
    echo "FAIL: metrics.jsonl after the resume:"; cut -c1-60 "$work/kill/metrics.jsonl"; fails=$((fails + 1))
fi
# a checkpoint whose checksum is right but whose epoch counter is absurd (forged, or written by a
# bug): --resume refuses it instead of resuming at epoch 4.7e13 and training nothing
cp -r "$work/kill" "$work/forged"
"$python" "$corpus/../../hostile/ckpt_edit.py" "$work/forged/last.ckpt" train.epoch 47278999994369
check "$work/forged/last.ckpt" "implausible" "$bin/seertrain" --resume "$work/forged" --set train.epochs=10
# a .seer whose target description (norm.target) is forged with a valid checksum: refused on
# load, never a prediction from an unknown target or a negative roofline cost
cp "$work/m.seer" "$work/target.seer"
"$python" "$corpus/../../hostile/ckpt_edit.py" "$work/target.seer" norm.target 99 0
check "$work/target.seer" "norm.target" "$bin/seerpredict" "$work/target.seer" "$corpus/../onnx/resnet50.onnx"
# a .seer whose watched operator pairs (coverage.op_pairs) name an operator beyond its op table or
# count negative edges, with a valid checksum: refused on load, never an out-of-bounds read
cp "$work/m.seer" "$work/pairs_op.seer" && cp "$work/m.seer" "$work/pairs_count.seer"
"$python" "$corpus/../../hostile/ckpt_edit.py" "$work/pairs_op.seer" coverage.op_pairs 999 0
"$python" "$corpus/../../hostile/ckpt_edit.py" "$work/pairs_count.seer" coverage.op_pairs -5 2
check "$work/pairs_op.seer" "coverage.op_pairs row 0 names operator 999" "$bin/seerpredict" "$work/pairs_op.seer" "$corpus/../onnx/resnet50.onnx"
check "$work/pairs_count.seer" "coverage.op_pairs row 0 counts -5 edges" "$bin/seerpredict" "$work/pairs_count.seer" "$corpus/../onnx/resnet50.onnx"
# datasets converted before log_flops_dw (the 23rd global feature), log_mem_kept_acts (the 22nd),
# log_mem_kept_silu (the 21st), log_mem_kept (the 20th) and log_mem_light (the 19th) were appended
# (the last one to five dropped), trained on target = roofline_dw, roofline_kept_acts (and
# roofline_peak, which reads it too), roofline_kept_silu, roofline_kept and roofline_light: one line
# naming the file, the feature and what to do; no run folder
"$python" "$corpus/../../calib_check.py" globals "$data" "$work/old22.h5" drop > /dev/null
"$python" "$corpus/../../calib_check.py" globals "$work/old22.h5" "$work/old21.h5" drop > /dev/null
"$python" "$corpus/../../calib_check.py" globals "$work/old21.h5" "$work/old20.h5" drop > /dev/null
"$python" "$corpus/../../calib_check.py" globals "$work/old20.h5" "$work/old19.h5" drop > /dev/null
"$python" "$corpus/../../calib_check.py" globals "$work/old19.h5" "$work/old18.h5" drop > /dev/null
for old in old22:roofline_dw old21:roofline_kept_acts old21:roofline_peak old20:roofline_kept_silu old19:roofline_kept old18:roofline_light; do

    check "$work/${old%%:*}.h5" "convert it again with seerconvert" "$bin/seertrain" "$corpus/../../data/tiny.ini" \
        --set data.path="$work/${old%%:*}.h5" --set model.target="${old#*:}" --set output.dir="$work" \
        --set output.run="${old%%:*}"
    [ ! -e "$work/${old%%:*}" ] || { echo "FAIL: a refused ${old#*:} run left $work/${old%%:*}"; fails=$((fails + 1)); }
done
# a model trained on every global feature, asked to predict the older file: one line, what to do
check "$work/old19.h5" "convert it again" "$bin/seerpredict" "$work/m.seer" "$work/old19.h5"

echo "test_hostile: $((n - fails)) of $n hostile inputs refused cleanly"
[ $fails -eq 0 ]
