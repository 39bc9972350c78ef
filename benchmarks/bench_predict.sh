#!/bin/sh
# seerpredict's throughput on a whole dataset, one core: each predictor file scores every graph of
# DATA.h5 (--predictions to a scratch file), the best of REPEATS runs, as graphs a second; with
# --baseline DIR the same runs again with the libseer in DIR (LD_LIBRARY_PATH: a libseer.so.0 built
# before a change, e.g. `cp build/libseer.so.0.* DIR/libseer.so.0` at the older commit), and the
# ratio, in one run of this script.
#   usage: benchmarks/bench_predict.sh DATA.h5 A.seer [B.seer ...] [--baseline DIR] [--repeats 2]
# Pin it (taskset -c 0 sh benchmarks/bench_predict.sh ...): it times one process at a time.
set -eu
cd "$(dirname "$0")/.."
die() { echo "bench_predict: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: benchmarks/bench_predict.sh DATA.h5 A.seer [B.seer ...] [--baseline DIR] [--repeats 2]"
data=$1
shift
[ -s "$data" ] || die "$data: no such dataset"
files='' base='' reps=2
while [ $# -gt 0 ]; do
    case "$1" in
    --baseline) [ $# -ge 2 ] || die "--baseline needs a folder"; base=$2; shift 2 ;;
    --repeats) [ $# -ge 2 ] || die "--repeats needs a number"; reps=$2; shift 2 ;;
    -*) die "unknown option $1" ;;
    *) [ -s "$1" ] || die "$1: no such predictor file"; files="$files $1"; shift ;;
    esac
done
case "$reps" in ""|*[!0-9]*|0) die "--repeats $reps: a positive whole number" ;; esac
[ -z "$base" ] || [ -e "$base/libseer.so.0" ] || die "--baseline $base: no libseer.so.0 there"
[ -x build/seerpredict ] || die "build/seerpredict missing: build first"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
graphs=$(/usr/bin/python3 -c "import h5py, sys; print(len(h5py.File(sys.argv[1])['graph/node_ptr']) - 1)" "$data")
# best LIBDIR FILE: the shortest of $reps runs, in seconds
best() {
    b=
    for _ in $(seq "$reps"); do
        t0=$(date +%s.%N)
        LD_LIBRARY_PATH=${1:-${LD_LIBRARY_PATH:-}} ./build/seerpredict "$2" "$data" --predictions "$out" > /dev/null \
            || die "seerpredict $2 $data failed"
        t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
        if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
    done
    echo "$b"
}
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $data: $graphs graphs; best of $reps"
printf "%-32s %10s %12s" predictor seconds graphs/s
[ -z "$base" ] || printf " %14s %14s %8s" "baseline_s" "baseline_g/s" speedup
printf "\n"
for f in $files; do
    s=$(best "" "$f")
    printf "%-32s %10.2f %12.0f" "$(basename "$f")" "$s" "$(awk -v g="$graphs" -v s="$s" 'BEGIN { print g / s }')"
    if [ -n "$base" ]; then
        sb=$(best "$base" "$f")
        printf " %14.2f %14.0f %8.2f" "$sb" "$(awk -v g="$graphs" -v s="$sb" 'BEGIN { print g / s }')" \
            "$(awk -v a="$sb" -v b="$s" 'BEGIN { print a / b }')"
    fi
    printf "\n"
done
