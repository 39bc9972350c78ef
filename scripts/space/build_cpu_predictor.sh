#!/bin/sh
# Rebuild predictors/cpu_epyc.seer's recipe on every EPYC measurement there is now, as one command.
#
#   sh scripts/space/build_cpu_predictor.sh [WORK] [OUT.seer]      (defaults /tmp/seer-cpu-epyc, WORK/candidate.seer)
#
# The recipe is the shipped file's (predictors/README.md, "cpu_epyc.seer"):
#   1. benchmarks/cross_device.py --infer-builder 2: a seeded 40% of the architectures held out as a
#      test set; cpu_xeon.seer calibrated on a handful of others (members 0, 1) and configs/cpu_xeon.ini's
#      two recipes (PerfSAGE, GCN) trained on the rest (members 2, 3): WORK/cpu_epyc.seer;
#   2. `[model] name = cost` (the roofline cost alone, weights' bytes as a fifth term) fitted by
#      seertrain on the same training architectures;
#   3. seerexport --ensemble: the four members at half the weight, the cost at the other half.
# Nothing is copied over predictors/: judge OUT first (benchmarks/real_networks.py --report-only
# --predictor OUT) and copy it by hand if it passes the rule written in real_networks.py.
# Needs the build (build/seertrain, seerexport, seercalibrate, seerpredict) and datasets/cpu_xeon.h5.
# About 30-40 minutes on one core with 10,000 measurement lines; pin it (taskset -c N) beside a
# measurement.
set -eu
case "${1:-}" in -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; -*) echo "build_cpu_predictor: unknown option $1 (--help)" >&2; exit 2 ;; esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:-/tmp/seer-cpu-epyc}
OUT=${2:-$WORK/candidate.seer}
BUILD=${BUILD:-$ROOT/build}
PY=${PYTHON:-$(command -v /usr/bin/python3 || echo python3)}
mkdir -p "$WORK"
t0=$(date +%s)
echo "build_cpu_predictor: 1/3 cross_device.py (datasets, calibration, two trainings) in $WORK"
"$PY" "$ROOT/benchmarks/cross_device.py" --infer-builder 2 --work "$WORK" --out "$WORK/cross_device.md" \
    --build "$BUILD"
[ -s "$WORK/cpu_epyc.seer" ] || { echo "build_cpu_predictor: $WORK/cpu_epyc.seer was not written" >&2; exit 1; }
echo "build_cpu_predictor: 2-3/3 the roofline cost on $WORK/train.h5 and the blend (train_cpu_predictor.sh)"
PYTHON=$PY BUILD=$BUILD sh "$ROOT/scripts/space/train_cpu_predictor.sh" --label cpu_epyc --h5 "$WORK/train.h5" \
    --members "$WORK/cpu_epyc.seer" --work "$WORK" -o "$OUT"
echo "build_cpu_predictor: wrote $OUT in $(( $(date +%s) - t0 )) s; design-space test figures in $WORK/cross_device.md"
