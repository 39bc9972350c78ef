#!/bin/sh
# A CPU predictor from one machine's design-space measurements, the shipped CPU recipe, one command.
#
#   sh scripts/space/train_cpu_predictor.sh --label DEVICE --measurements F[,F...] [--specs S] [--work DIR] [-o OUT.seer]
#        [--epochs 120] [--infer-builder 2] [--target roofline_light] [--cost-target T] [--seeds 1,2,3]
#        [--jobs 2] [--keep] [--blend 1,1]
#        [--ref-normalize 1 --ref-window 201]
#   sh scripts/space/train_cpu_predictor.sh --label DEVICE --h5 TRAIN.h5 --members PAIR.seer [--work DIR] [-o OUT.seer]
#
# The recipe is predictors/cpu_epyc.seer's (predictors/README.md):
#   1. (--measurements) scripts/space/make_dataset.py: every specs*.jsonl of datasets/space_cpu with
#      these measurement lines (one CPU: make_dataset.py refuses lines of two), labels DEVICE_train_ms,
#      DEVICE_infer_ms, DEVICE_train_mb, DEVICE_infer_mb: WORK/DEVICE.h5; inference times only from
#      PyTorch builder 2 or later (--infer-builder 1 keeps the first builder's, which held every
#      activation: datasets/space_cpu/README.md);
#   2. (--measurements) configs/cpu_xeon.ini's two recipes (PerfSAGE with the additive readout, and a
#      GCN) trained on it, 80/10/10 by architecture (every batch of one network in one split), as one
#      seerexport --ensemble: WORK/pair.seer; with --h5 and --members, the given pair and dataset;
#   3. `[model] name = cost`, the roofline cost alone with the weights' bytes as a fifth term, fitted
#      on the same training split: WORK/cost5.seer;
#   4. seerexport --ensemble: the pair at half the weight, the cost at the other half (--blend P,C:
#      the pair at P / (P + C), the cost at the rest): OUT (default WORK/DEVICE.seer).
# --specs S: the architectures the measurements are of (default datasets/space_cpu, every specs*.jsonl
# in it; datasets/space_h200/specs.jsonl for the H200's, a sample of its own whose ids the CPU's reuse).
# --ref-normalize P [--ref-window K] pass to make_dataset.py: each time label scaled by (median ref_ms /
# the line's reference)^P, the reference the median ref_ms of the K lines measured nearest it, which
# takes the machine's drift out (scripts/measure/ref_check.py --windows chooses K and P on lines
# measured twice; benchmarks/RESULTS.md, "The machine drifts ...").
# --target T trains the pair and the cost with [model] target = T (roofline, roofline_weights,
# roofline_light: the light operators' bytes priced apart, or roofline_kept: the bytes a training
# step keeps for the backward pass as a sixth term, or roofline_kept_silu: the same with SiLU counted as
# one operator, or roofline_kept_acts: and the weights transposed at run time left out, or
# roofline_peak: that and the mean activation tensor's bytes as a seventh term, or roofline_dw: and the depthwise
# convolutions' FLOPs as an eighth; configs/README.md) instead of the
# recipe's (the pair roofline, the cost roofline_weights); the cost is then WORK/cost.seer.
# --cost-target T trains the cost alone with target T (WORK/cost_T.seer), the pair as --target says:
# e.g. the pair on roofline_light and the cost on roofline_weights (benchmarks/RESULTS.md, "The cost
# member on one price per byte").
# --seeds S[,S...] trains the pair once per seed (train.seed; the split stays the same), the runs
# WORK/perfsage, WORK/gcn for seed 1 and WORK/perfsage_sS, WORK/gcn_sS for the others, all at equal
# weight in WORK/pair.seer: one training of the recipe is a draw (benchmarks/deep_retrain.md), their
# mean is steadier. --jobs N trains up to N runs at once (one thread each: pin nothing else there).
# --keep keeps every run already in WORK whose dataset (WORK/DEVICE.h5's SHA-256, the same data
# written again is the same bytes) and settings are this call's (WORK/NAME.data records them), so an
# interrupted call resumes (a run stopped part way goes on from its last epoch's checkpoint) and
# more seeds add to the runs made before; anything else is retrained.
# With --measurements it then scores OUT on the held-out test architectures of step 2 (the runs'
# test_predictions.csv), prints MAPE and Spearman per label, and writes OUT's card beside it (OUT
# with .md for .seer: device, metrics, machine, data, those figures), and sets the members-disagree
# thresholds (seerexport --spread-warn) to each metric's 99th percentile of the spread on those graphs.
# Pin it beside a running measurement (taskset -c 0 ...): it uses one thread. Two minutes with 700
# measurement lines on a 2.6 GHz Xeon core, five with 2,300, nearly all of it the two trainings.
set -eu
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PY=${PYTHON:-$(command -v /usr/bin/python3 || echo python3)}
LABEL= MEAS= H5= MEMBERS= WORK= OUT= EPOCHS=120 BUILDER=2 TARGET= SEEDS=1 JOBS=1 KEEP=0 REFN= REFW=1 CTARGET= BLEND=1,1
SPECS=$ROOT/datasets/space_cpu
ARGS="$*"
while [ $# -gt 0 ]; do
    case "$1" in -h|--help|--keep) ;; -*) [ $# -ge 2 ] || { echo "train_cpu_predictor: $1 needs a value (--help)" >&2; exit 2; } ;; esac
    case "$1" in
    -h|--help) usage; exit 0 ;;
    --label) LABEL=$2; shift 2 ;;
    --measurements) MEAS=$2; shift 2 ;;
    --specs) SPECS=$2; shift 2 ;;
    --h5) H5=$2; shift 2 ;;
    --members) MEMBERS=$2; shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --epochs) EPOCHS=$2; shift 2 ;;
    --infer-builder) BUILDER=$2; shift 2 ;;
    --target) TARGET=$2; shift 2 ;;
    --cost-target) CTARGET=$2; shift 2 ;;
    --seeds) SEEDS=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --blend) BLEND=$2; shift 2 ;;
    --ref-normalize) REFN=$2; shift 2 ;;
    --ref-window) REFW=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    *) echo "train_cpu_predictor: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
die() { echo "train_cpu_predictor: $*" >&2; exit 1; }
case "$EPOCHS" in ""|*[!0-9]*|0) die "--epochs $EPOCHS: a positive whole number" ;; esac
case "$BUILDER" in ""|*[!0-9]*|0) die "--infer-builder $BUILDER: a positive whole number" ;; esac
case "$JOBS" in ""|*[!0-9]*|0) die "--jobs $JOBS: a positive whole number" ;; esac
case "$REFW" in ""|*[!0-9]*|0) die "--ref-window $REFW: a positive whole number" ;; esac
case "$REFN" in *[!0-9.]*|.|*.*.*) die "--ref-normalize $REFN: a non-negative number (e.g. 1 or 0.75)" ;; esac
[ "$REFW" = 1 ] || [ -n "$REFN" ] || die "--ref-window needs --ref-normalize"
case "$BLEND" in
*[!0-9.,]*|*,*,*|,*|*,|*..*|[!0-9]*|*,[!0-9]*) die "--blend $BLEND: two positive numbers P,C (the pair's and the cost's weights, e.g. 3,1)" ;;
*,*) ;;
*) die "--blend $BLEND: two positive numbers P,C (the pair's and the cost's weights, e.g. 3,1)" ;;
esac
[ -z "$REFN" ] || [ -n "$MEAS" ] || die "--ref-normalize builds the dataset: use it with --measurements"
case ",$SEEDS," in *,,*|*[!0-9,]*) die "--seeds $SEEDS: whole numbers separated by commas (e.g. 1,2,3)" ;; esac
[ "$(echo "$SEEDS" | tr ',' '\n' | sort | uniq -d)" = "" ] || die "--seeds $SEEDS: a seed named twice"
[ "$(echo "$SEEDS" | tr ',' ' ' | wc -w)" -le 7 ] || die "--seeds $SEEDS: at most 7 (an ensemble holds 16 members: two runs per seed and the cost)"
for t in "$TARGET" "$CTARGET"; do
    case "$t" in ""|roofline|roofline_weights|roofline_light|roofline_kept|roofline_kept_silu|roofline_kept_acts|roofline_peak|roofline_dw) ;;
    *) die "--target/--cost-target $t: roofline, roofline_weights, roofline_light, roofline_kept, roofline_kept_silu, roofline_kept_acts, roofline_peak or roofline_dw" ;;
    esac
done
PAIR_SET= COST=cost5 COST_TARGET=roofline_weights
[ -z "$TARGET" ] || PAIR_SET="--set model.target=$TARGET" COST=cost COST_TARGET=$TARGET
[ -z "$CTARGET" ] || COST=cost_$CTARGET COST_TARGET=$CTARGET
case "$LABEL" in
"") die "--label DEVICE is required (the device name of the labels, e.g. cpu_xeon26)" ;;
*[!a-z0-9_]*) die "--label $LABEL: use lower-case letters, digits and _ (DESIGN.md's device names)" ;;
esac
if [ -n "$MEAS" ]; then
    [ -z "$H5$MEMBERS" ] || die "give --measurements, or --h5 with --members, not both"
    for f in $(echo "$MEAS" | tr ',' ' '); do [ -s "$f" ] || die "--measurements: $f: no such file (measure.py writes it)"; done
else
    [ -n "$H5" ] && [ -n "$MEMBERS" ] || die "give --measurements F[,F...], or --h5 TRAIN.h5 with --members PAIR.seer"
    [ "$SEEDS" = 1 ] || die "--seeds trains the pair, which --members gives: use it with --measurements"
    [ -s "$H5" ] || die "--h5 $H5: no such file"
    [ -s "$MEMBERS" ] || die "--members $MEMBERS: no such file"
fi
WORK=${WORK:-/tmp/seer-cpu-$LABEL}
OUT=${OUT:-$WORK/$LABEL.seer}
for t in seertrain seerexport seerpredict seerconvert; do
    [ -x "$BUILD/$t" ] || die "$BUILD/$t missing: build first (README, quick start)"
done
mkdir -p "$WORK"
t0=$(date +%s)
LABELS="${LABEL}_train_ms,${LABEL}_infer_ms,${LABEL}_train_mb,${LABEL}_infer_mb"
# train runs of configs/cpu_xeon.ini on DATA with these labels and split: train NAME FRAC VAL [--set ...]
# (with --keep, a run made before on the same dataset with the same settings is kept; with CHECK=1
# it only says whether it would be: 0 kept, 1 to train)
CHECK=0
train() {
    name=$1 tf=$2 vf=$3
    shift 3
    key="$(sha256sum < "$H5" | cut -c1-64) $LABELS $tf $vf $EPOCHS $*"
    if [ "$KEEP" = 1 ] && [ -s "$WORK/$name.seer" ] && [ "$(cat "$WORK/$name.data" 2>/dev/null)" = "$key" ]; then
        echo "train_cpu_predictor:   $name: kept (--keep: $WORK/$name.seer, the same dataset and settings)"
        return 0
    fi
    [ "$CHECK" = 0 ] || return 1
    rm -f "$WORK/$name.data"
    # a run stopped part way (WORK/NAME.started holds its key, WORK/NAME/last.ckpt its last epoch)
    # continues from that epoch with --keep; any other run starts over
    if [ "$KEEP" = 1 ] && [ -s "$WORK/$name/last.ckpt" ] && [ "$(cat "$WORK/$name.started" 2>/dev/null)" = "$key" ]; then
        echo "train_cpu_predictor:   $name: resumed from $WORK/$name/last.ckpt (--keep)"
        "$BUILD/seertrain" --resume "$WORK/$name" --quiet --set train.threads=1 >> "$WORK/$name.log" 2>&1 \
            || die "resuming $name failed; see $WORK/$name.log"
    else
        echo "$key" > "$WORK/$name.started"
        "$BUILD/seertrain" "$ROOT/configs/cpu_xeon.ini" --quiet --set "data.path=$H5" --set "data.labels=$LABELS" \
            --set "data.train_frac=$tf" --set "data.val_frac=$vf" --set "train.epochs=$EPOCHS" --set train.threads=1 \
            --set "output.dir=$WORK" --set "output.run=$name" --set output.plot=0 "$@" > "$WORK/$name.log" 2>&1 \
            || die "training $name failed; see $WORK/$name.log"
    fi
    "$BUILD/seerexport" "$WORK/$name" -o "$WORK/$name.seer" > "$WORK/$name.export.log" 2>&1 \
        || die "seerexport $name failed; see $WORK/$name.export.log"
    echo "$key" > "$WORK/$name.data"
    echo "train_cpu_predictor:   $name: $(grep 'mean MAPE' "$WORK/$name.log" || echo 'no summary line')"
}
# pair RECIPE SEED: one run of the pair (the name: RECIPE for seed 1, RECIPE_sSEED for the others)
pair() {
    name=$1
    [ "$2" = 1 ] || name=$1_s$2
    # shellcheck disable=SC2086 # PAIR_SET: empty, or one --set pair
    case "$1" in
    perfsage) train "$name" $TF $VF $PAIR_SET --set "train.seed=$2" ;;
    gcn) train "$name" $TF $VF $PAIR_SET --set "train.seed=$2" --set model.name=gcn --set model.hidden=128 \
        --set model.blocks=3 --set model.head_hidden=64 --set model.readout=pooled ;;
    esac
}
if [ -n "$MEAS" ]; then
    H5=$WORK/$LABEL.h5
    echo "train_cpu_predictor: 1/4 the dataset $H5 (ONNX exports in $WORK/onnx)"
    OMP_NUM_THREADS=1 "$PY" "$ROOT/scripts/space/make_dataset.py" --specs "$SPECS" \
        --measurements "$MEAS" -o "$H5" --label-prefix "$LABEL" --infer-builder "$BUILDER" --onnx-dir "$WORK/onnx" \
        --card "$WORK/${LABEL}_card.md" --seerconvert "$BUILD/seerconvert" \
        ${REFN:+--ref-normalize $REFN --ref-window $REFW} > "$WORK/dataset.log" 2>&1 \
        || die "make_dataset.py failed; see $WORK/dataset.log"
    NRUNS=$(( $(echo "$SEEDS" | tr ',' ' ' | wc -w) * 2 ))
    echo "train_cpu_predictor: 2/4 PerfSAGE and GCN, $EPOCHS epochs each, seed $SEEDS: $NRUNS runs, $JOBS at a time"
    TF=0.8 VF=0.1
    # the runs to train (the kept ones said so), the GCNs first (the longer runs), dealt in turn to
    # JOBS lanes that each train theirs one after another; a run that fails says so in its own line
    # and leaves no WORK/NAME.data, which the check after the last one reads
    TODO=
    CHECK=1
    for r in gcn perfsage; do
        for sd in $(echo "$SEEDS" | tr ',' ' '); do
            pair "$r" "$sd" || TODO="$TODO $r:$sd"
        done
    done
    CHECK=0
    lane=0
    while [ "$lane" -lt "$JOBS" ]; do
        (
            i=0
            for rs in $TODO; do
                [ $((i % JOBS)) != "$lane" ] || pair "${rs%:*}" "${rs#*:}"
                i=$((i + 1))
            done
        ) &
        lane=$((lane + 1))
    done
    wait
    # the members in seed order, PerfSAGE first (the first member's range and provenance are the
    # ensemble's): WORK/pair.list
    : > "$WORK/pair.list"
    for sd in $(echo "$SEEDS" | tr ',' ' '); do
        for r in perfsage gcn; do
            name=$r
            [ "$sd" = 1 ] || name=${r}_s$sd
            [ -s "$WORK/$name.data" ] || die "training $name failed; see $WORK/$name.log"
            echo "$WORK/$name.seer" >> "$WORK/pair.list"
        done
    done
    MEMBERS=$WORK/pair.seer
    # shellcheck disable=SC2046 # one file per run, no spaces in WORK's names
    "$BUILD/seerexport" --ensemble $(cat "$WORK/pair.list") -o "$MEMBERS" > "$WORK/pair.log" 2>&1 \
        || die "seerexport --ensemble failed; see $WORK/pair.log"
else
    TF=0.9 VF=0.05 # a training set whose test architectures were held out before (cross_device.py)
    echo "train_cpu_predictor: 1-2/4 given: $H5 and $MEMBERS"
fi
echo "train_cpu_predictor: 3/4 the roofline cost"
train $COST $TF $VF --set model.name=cost --set model.target=$COST_TARGET
echo "train_cpu_predictor: 4/4 the blend"
"$BUILD/seerexport" --ensemble "$MEMBERS" "$WORK/$COST.seer" --weights "$BLEND" -o "$OUT" > "$WORK/blend.log" 2>&1 \
    || die "seerexport --ensemble (the blend) failed; see $WORK/blend.log"
if [ -n "$MEAS" ]; then
    "$BUILD/seerpredict" "$OUT" "$H5" --predictions "$WORK/all.csv" --spreads "$WORK/spreads.csv" \
        > "$WORK/all.log" 2>&1 || die "seerpredict on $H5 failed; see $WORK/all.log"
    CARD=${OUT%.seer}.md
    FIRST=perfsage
    [ "${SEEDS%%,*}" = 1 ] || FIRST=perfsage_s${SEEDS%%,*}
    "$PY" - "$WORK/all.csv" "$WORK/$FIRST/test_predictions.csv" "$LABELS" "$CARD" "$WORK/${LABEL}_card.md" \
        "$MEAS" "$ARGS" "$EPOCHS" "${TARGET:-}" "$SEEDS" "$WORK/spreads.csv" "$WORK/spread_warn.txt" "$COST_TARGET" \
        "$BLEND" <<'EOF' || die "scoring the held-out graphs or writing $CARD failed"
import csv, json, os, sys, time
import numpy as np
allcsv, testcsv, labels, card, dcard, meas, args, epochs, target, seeds, spcsv, spwarn, cost_target, blend = sys.argv[1:15]
bp, bc = (float(x) for x in blend.split(","))
share = "half the weight" if bp == bc else "%.0f%% of the weight" % (100 * bp / (bp + bc))
pred = {r["name"]: r for r in csv.DictReader(open(allcsv))}  # the blend's predictions
test = list(csv.DictReader(open(testcsv)))  # the held-out graphs, measured labels
# the members' spread on the held-out graphs: its 99th percentile per metric is where seerpredict
# warns that they disagree (seerexport --spread-warn; at least 1.01)
sp = {r["name"]: r for r in csv.DictReader(open(spcsv))}
metrics = list(next(iter(sp.values())).keys())[1:]
q99 = [max(1.01, float(np.quantile([float(sp[r["name"]][k]) for r in test], 0.99))) for k in metrics]
with open(spwarn, "w") as f:
    f.write(",".join("%.4f" % v for v in q99))
rows = []
print("train_cpu_predictor: the blend on the %d held-out test graphs (MAPE %% / Spearman):" % len(test))
for lab in labels.split(","):
    y = np.array([float(r[lab] or "nan") for r in test])
    p = np.array([float(pred[r["name"]][lab]) for r in test])
    ok = np.isfinite(y)
    if ok.sum() < 3:
        print("  %-24s too few measured" % lab)
        rows.append("| `%s` | %d | - | - |" % (lab, ok.sum()))
        continue
    y, p = y[ok], p[ok]
    rho = np.corrcoef(np.argsort(np.argsort(p)), np.argsort(np.argsort(y)))[0, 1]
    mape = 100 * np.mean(np.abs(p - y) / y)
    print("  %-24s n %4d  MAPE %5.1f  Spearman %.3f" % (lab, ok.sum(), mape, rho))
    rows.append("| `%s` | %d | %.1f | %.3f |" % (lab, ok.sum(), mape, rho))
machines, kind = set(), "a CPU"
for f in meas.split(","):
    for line in open(f):
        try:
            r = json.loads(line)
        except ValueError:
            continue  # a line a running measure.py is still writing
        gpu = "infer_reserved_mb" in r  # a GPU's line: its host processor is not what was timed
        machines.add(r.get("device_name", "?") if gpu else
                     "%s (cpu_id %s)" % (r.get("device_name", "?"), r.get("cpu_id", "not recorded")))
        kind = "a GPU" if gpu else "a CPU"
dev = labels.split(",")[0][: -len("_train_ms")]
name = os.path.basename(card)[:-3] + ".seer"
data = [l for l in open(dcard).read().splitlines()
        if l.startswith(("- graphs", "- families", "- FLOPs per graph", "- timing spread", "- out of memory"))]
L = ["# %s: %s predictor for `%s`" % (name, kind, dev), "",
     "Made on %s by `sh scripts/space/train_cpu_predictor.sh %s`: configs/cpu_xeon.ini's PerfSAGE (additive "
     "readout) and GCN, %s epochs each%s, 80/10/10 by architecture, joined by `seerexport --ensemble` at %s, "
     "and the roofline cost alone (`[model] name = cost`, `target = %s`) at the rest: %s." % (
         time.strftime("%Y-%m-%d"), args, epochs,
         "" if "," not in seeds else ", each trained with seeds %s (%d runs at equal weight)" % (
             seeds.replace(",", ", "), 2 * len(seeds.split(","))), share, cost_target,
         "the recipe of `predictors/cpu_epyc.seer`" if not target else
         "the recipe of `predictors/cpu_epyc.seer` with every part on `target = %s`" % target if cost_target == target
         else "the recipe of `predictors/cpu_epyc.seer` with the pair on `target = %s`" % target), "",
     "- Device `%s`: %s; the batch is an input (`seerpredict NET.onnx --device %s --batch 1,16`)." % (
         dev, ", ".join("`%s`" % l for l in labels.split(",")), dev),
     "- Measured on: %s, by `scripts/measure/measure.py` (`%s`)." % ("; ".join(sorted(machines)), meas),
     "- Data (the dataset card, `%s`):" % dcard] + ["  " + l for l in data] + [
     "", "On the held-out test architectures (the runs' test split; every batch of an architecture in one split):",
     "", "| label | graphs | MAPE % | Spearman |", "|---|---|---|---|"] + rows + [
     "", "`seerpredict` warns that the members disagree where the largest over the smallest member prediction "
     "of a metric exceeds its 99th percentile on these held-out graphs: %s." % ", ".join(
         "`%s` %.2f" % (k, v) for k, v in zip(metrics, q99)),
     "", "Not judged here on networks outside the design space: measure a few of your own "
     "(`benchmarks/real_networks.py --measurements FILE`) and score it with `benchmarks/new_cpu.py --measurements "
     "FILE --predictors %s:%s`; `seerpredict` warns on any network unlike these." % (name, dev), ""]
with open(card + ".tmp", "w") as f:
    f.write("\n".join(L))
os.replace(card + ".tmp", card)
print("train_cpu_predictor: its card: %s" % card)
EOF
    "$BUILD/seerexport" --ensemble "$OUT" --spread-warn "$(cat "$WORK/spread_warn.txt")" -o "$OUT" \
        > "$WORK/spread.log" 2>&1 || die "seerexport --spread-warn failed; see $WORK/spread.log"
    echo "train_cpu_predictor: members-disagree thresholds (q99 of the held-out spread): $(cat "$WORK/spread_warn.txt")"
fi

echo "train_cpu_predictor: wrote $OUT in $(( $(date +%s) - t0 )) s"
