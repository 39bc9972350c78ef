#!/bin/sh
# Data-parallel scale benchmark on CPU ranks: load time, memory per rank and step time for R = 1
# (one process, no MPI) and R = 2 (mpirun), each rank reading its shard of one PerfGraph file.
#   usage: benchmarks/bench_dist.sh DATA.h5 [BUILD_DIR]
# DATA.h5: e.g. the 134,912-graph file of `scripts/space/make_dataset.py --scale 134912` (synthetic
# labels: throughput only). One epoch (H = 64, batch 128, 2:1:1 split) with its evaluation; every
# rank runs one thread. Prints one table row per R.
set -eu
data=$1 build=${2:-build}
cd "$(dirname "$0")/.."
label=$(/usr/bin/python3 -c "import h5py,sys; print(h5py.File(sys.argv[1])['/schema/labels'][0].decode())" "$data")
common="configs/multi.ini --set data.path=$data --set data.labels=$label --set model.hidden=64
        --set train.batch_size=128 --set train.epochs=1
        --set train.threads=1 --set output.step_log=1
        --set output.dir=/tmp/seer_bench_dist"
mpi="mpirun --allow-run-as-root --oversubscribe"
printf "%-3s %-28s %-16s %-20s %-20s %-14s %s\n" R "graphs per rank" "load s" "MB after load" "peak MB" "median step s" "epoch graphs/s"
for R in 1 2; do
    log=/tmp/seer_bench_dist_R$R.log
    if [ $R = 1 ]; then
        $build/seertrain $common --set output.run=R1 > $log 2>&1
    else
        $mpi -np $R $build/seertrain $common --set output.run=R$R > $log 2>&1
    fi
    graphs=$(grep -E '^  (rank [0-9]+|data): graphs' $log | sed -E 's/.*graphs ([0-9]+)\.\.([0-9]+),.*/\1..\2/' | paste -sd' ')
    load=$(grep -E '^  (rank [0-9]+|data): graphs' $log | sed -E 's/.*loaded in ([0-9.]+) s.*/\1/' | paste -sd' ')
    mem=$(grep -E '^  (rank [0-9]+|data): graphs' $log | sed -E 's/.*s \(([0-9]+) MB\).*/\1/' | paste -sd' ')
    peak=$(/usr/bin/python3 -c "import json,sys; print(' '.join('%.0f' % x for x in json.load(open(sys.argv[1]))['dist']['peak_rss_mb']))" /tmp/seer_bench_dist/R$R/summary.json)
    step=$(awk 'NR > 3 { print $4 }' /tmp/seer_bench_dist/R$R/steps.tsv | sort -g |
           awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    rate=$(sed -E 's/.*"graphs_per_s":([0-9.]+).*/\1/' /tmp/seer_bench_dist/R$R/metrics.jsonl | tail -1)
    printf "%-3s %-28s %-16s %-20s %-20s %-14s %s\n" $R "$graphs" "$load" "$mem" "$peak" "$step" "$rate"
done
