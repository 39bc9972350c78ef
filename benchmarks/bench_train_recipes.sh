#!/bin/sh
# The CPU predictor's two training recipes (scripts/space/train_cpu_predictor.sh: PerfSAGE with the
# additive readout, and the GCN; target roofline_light), STEPS optimizer steps each on one thread,
# timed with this build's seertrain and, with --baseline, with another seertrain binary (one built
# at an older commit) in the same run, the best of REPEATS runs each; prints the seconds, the ratio,
# and whether the two runs' last checkpoints are bit for bit the same (tests/ckpt_equal).
#   usage: benchmarks/bench_train_recipes.sh DATA.h5 LABEL_PREFIX [--baseline OLD_SEERTRAIN] [--steps 150] [--repeats 3]
# DATA.h5: a dataset of train_cpu_predictor.sh (WORK/LABEL.h5), LABEL_PREFIX its label prefix.
# Pin it (taskset -c 0 sh benchmarks/bench_train_recipes.sh ...): it times one process at a time.
set -eu
cd "$(dirname "$0")/.."
die() { echo "bench_train_recipes: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: benchmarks/bench_train_recipes.sh DATA.h5 LABEL_PREFIX [--baseline OLD_SEERTRAIN] [--steps 150]"
data=$1 label=$2
shift 2
base='' steps=150 reps=3
while [ $# -gt 0 ]; do
    case "$1" in
    --baseline) [ $# -ge 2 ] || die "--baseline needs a seertrain binary"; base=$2; shift 2 ;;
    --steps) [ $# -ge 2 ] || die "--steps needs a number"; steps=$2; shift 2 ;;
    --repeats) [ $# -ge 2 ] || die "--repeats needs a number"; reps=$2; shift 2 ;;
    *) die "unknown argument $1" ;;
    esac
done
[ -s "$data" ] || die "$data: no such dataset"
case "$steps$reps" in *[!0-9]*) die "--steps $steps --repeats $reps: positive whole numbers" ;; esac
[ "$steps" -gt 0 ] && [ "$reps" -gt 0 ] || die "--steps $steps --repeats $reps: positive whole numbers"
[ -z "$base" ] || [ -x "$base" ] || die "--baseline $base: not an executable"
[ -x build/seertrain ] && [ -x build/tests/ckpt_equal ] || die "build/seertrain or build/tests/ckpt_equal missing: build first"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
labels=${label}_train_ms,${label}_infer_ms,${label}_train_mb,${label}_infer_mb
gcn="--set model.name=gcn --set model.hidden=128 --set model.blocks=3 --set model.head_hidden=64 --set model.readout=pooled"
# run BINARY NAME [SETS]: the shortest of $reps runs, in seconds
run() {
    bin=$1 name=$2 best=
    shift 2
    for _ in $(seq "$reps"); do
        rm -rf "${work:?}/$name"
        t0=$(date +%s.%N)
        # shellcheck disable=SC2068 # the --set pairs split on purpose
        "$bin" configs/cpu_xeon.ini --quiet --set "data.path=$data" --set "data.labels=$labels" \
            --set data.train_frac=0.8 --set data.val_frac=0.1 --set train.epochs=120 --set "train.max_steps=$steps" \
            --set train.threads=1 --set "output.dir=$work" --set "output.run=$name" --set output.plot=0 \
            --set model.target=roofline_light $@ > "$work/$name.log" 2>&1 || die "$bin ($name) failed: $(tail -1 "$work/$name.log")"
        t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
        if [ -z "$best" ] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then best=$t; fi
    done
    echo "$best"
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $data; $steps steps, one thread; best of $reps"
printf "%-10s %10s" recipe seconds
[ -z "$base" ] || printf " %12s %8s %10s" baseline_s speedup identical
printf "\n"
for r in perfsage gcn; do
    sets=''
    [ "$r" = gcn ] && sets=$gcn
    s=$(run build/seertrain "$r" $sets)
    printf "%-10s %10.2f" "$r" "$s"
    if [ -n "$base" ]; then
        sb=$(run "$base" "$r-base" $sets)
        same=no
        build/tests/ckpt_equal "$work/$r/last.ckpt" "$work/$r-base/last.ckpt" > /dev/null 2>&1 && same=yes
        printf " %12.2f %8.2f %10s" "$sb" "$(awk -v a="$sb" -v b="$s" 'BEGIN { print a / b }')" "$same"
    fi
    printf "\n"
done
