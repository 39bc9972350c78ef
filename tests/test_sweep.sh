#!/bin/sh
# seersweep on the NB201 subset: a grid x random sweep with successive halving (the expected
# trial count, 5 of 6 stopped early, the best config reproducing its trial's figure, the
# results table and plot), a sweep killed with SIGKILL mid-way and rerun (finished trials are
# not run again; the outcome equals the uninterrupted sweep's), and a sweep with failing trials.
#   test_sweep.sh SEERSWEEP SEERTRAIN DATA.h5 TINY.ini WORK PYTHON
set -eu
seersweep=$1 seertrain=$2 data=$3 tiny=$4 work=$5 python=$6
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"

sweep_ini() { # sweep_ini NAME WORKERS [extra [params] lines]
    cat <<INI
[sweep]
base = $tiny
name = $1
dir = $work
metric = val.titan_rtx_256_ms.mape
trials = 3
seed = 4
workers = $2
threads = 1
min_epochs = 1
eta = 3
max_epochs = 9

[set]
data.path = $data
data.limit = 400
data.labels = titan_rtx_256_ms

[params]
model.hidden = grid 8,16
train.lr = loguniform 1e-3 1e-2
INI
}
count() { awk -F'\t' -v s="$2" 'NR > 2 && $2 == s' "$1" | wc -l; }

# 1. a full sweep: 2 hidden sizes x 3 random learning rates; rungs 1, 3, 9 epochs
sweep_ini full 2 >"$work/full.ini"
"$seersweep" "$work/full.ini" | tee "$work/full.out"
st="$work/full/state.tsv"
[ "$(awk 'NR > 2' "$st" | wc -l)" -eq 6 ] || fail "expected 6 trials"
[ "$(count "$st" stopped)" -eq 5 ] || fail "successive halving should stop 5 of 6 trials (eta 3: 6 -> 2 -> 1)"
[ "$(count "$st" done)" -eq 1 ] || fail "one trial should reach the last rung"
grep -q "5 stopped early" "$work/full.out" || fail "summary line"
[ -s "$work/full/results.csv" ] && [ -s "$work/full/best.ini" ] || fail "results.csv / best.ini missing"
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
    [ -s "$work/full/plot.png" ] || fail "plot.png missing"
fi
# the best config, run as is, reproduces its trial's validation figure
want=$(awk -F, 'NR == 2 {print $5}' "$work/full/results.csv")
(cd "$work" && "$seertrain" "$work/full/best.ini" --quiet >"$work/best.out")
got=$("$python" -c "import json,sys; print('%.6g' % json.load(open(sys.argv[1]))['val']['titan_rtx_256_ms']['mape'])" \
      "$(ls -d "$work"/full/best_trial_*)/summary.json")
echo "best trial: $want; best.ini run again: $got"
[ "$want" = "$got" ] || fail "best.ini gives $got, its trial $want"

# 2. killed with SIGKILL once some trials have finished, then rerun
sweep_ini killed 1 >"$work/killed.ini"
"$seersweep" "$work/killed.ini" --no-plot >"$work/killed1.out" 2>&1 &
pid=$!
st="$work/killed/state.tsv"
i=0
while [ $i -lt 600 ]; do
    n=0
    [ -f "$st" ] && n=$(awk -F'\t' 'NR > 2 && $2 == "done"' "$st" | wc -l)
    [ "$n" -ge 2 ] && break
    sleep 0.05
    i=$((i + 1))
done
kill -9 $pid 2>/dev/null || fail "the sweep ended before it could be killed"
wait $pid 2>/dev/null || true
cp "$st" "$work/at_kill.tsv"
finished=$(awk -F'\t' 'NR > 2 && $2 == "done" {print $1}' "$work/at_kill.tsv")
echo "killed with trials $(echo $finished) finished"
for k in $finished; do
    wc -c <"$work/killed/trial_$(printf %03d "$k")/seertrain.log" >"$work/log_$k.size"
done
"$seersweep" "$work/killed.ini" --no-plot | tee "$work/killed2.out"
grep -q "(2 resumed)\|resumed)" "$work/killed2.out" || fail "the rerun did not resume"
for k in $finished; do
    before=$(awk -F'\t' -v k="$k" 'NR > 2 && $1 == k {print $3 "/" $5}' "$work/at_kill.tsv")
    after=$(awk -F'\t' -v k="$k" 'NR > 2 && $1 == k {print $3 "/" $5}' "$work/killed/state.tsv")
    # rung/runs: a trial finished at the kill runs again only if promoted to a later rung
    if [ "${after%/*}" = "${before%/*}" ]; then
        [ "$after" = "$before" ] || fail "trial $k was run again ($before -> $after)"
        [ "$(wc -c <"$work/killed/trial_$(printf %03d "$k")/seertrain.log")" -eq "$(cat "$work/log_$k.size")" ] ||
            fail "trial $k's log grew: it was run again"
    fi
done
cut -f1-4,6- "$work/full/state.tsv" | tail -n +3 >"$work/a.tsv"
cut -f1-4,6- "$work/killed/state.tsv" | tail -n +3 >"$work/b.tsv"
diff "$work/a.tsv" "$work/b.tsv" || fail "the killed-and-resumed sweep differs from the uninterrupted one"

# 3. failing trials are recorded with their error; the others complete
cat >"$work/failing.ini" <<INI
[sweep]
base = $tiny
name = failing
dir = $work
metric = mean_val_mape
workers = 2
asha = off
max_epochs = 2

[set]
data.path = $data
data.limit = 300
data.labels = titan_rtx_256_ms

[params]
model.agg = grid mean,bogus,synmm
train.lr = grid 2e-3,1e30
INI
"$seersweep" "$work/failing.ini" --no-plot | tee "$work/failing.out"
st="$work/failing/state.tsv"
# agg = bogus is refused before training (2 trials); lr = 1e30 diverges inside seertrain (2 more)
[ "$(count "$st" failed)" -eq 4 ] || fail "4 trials should fail"
[ "$(count "$st" done)" -eq 2 ] || fail "the other two trials should finish"
[ "$(grep failed "$st" | grep -c "agg = 'bogus'")" -eq 2 ] || fail "the error should name [model] agg"
[ "$(grep failed "$st" | grep -c "diverged")" -eq 2 ] || fail "a diverging trial should report seertrain's error"
echo "test_sweep.sh: all checks passed"
