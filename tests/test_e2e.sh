#!/bin/sh
# End to end on real data: train each model (seernet, perfsage, gcn, linear) on a NAS-Bench-201
# subset and require the validation MAPE to fall well below (under half) what predicting the
# training mean gives, for every label.
# With SEEREXPORT and SEERPREDICT, the trained model is also exported and libseer's predictions
# of the test split must equal the trainer's (test_predictions.csv) to 1e-4.
# MODEL roofline is SeerNet with [model] target = roofline and clamp = range, and [eval] paths =
# DATA.h5: summary.json's "eval" must hold the figures `seerpredict RUN/best.seer DATA.h5 --json`
# prints. MODEL additive is PerfSAGE with [model] readout = additive (node heads beside the pooled
# ones; libseer must reproduce them). MODEL roofline_weights is PerfSAGE with [model] target =
# roofline_weights (the cost's fifth term, the weights' bytes: libseer must reproduce it). MODEL
# cost is the roofline cost alone (model.name = cost, target = roofline_weights): libseer's
# predictions must be a linear function of the cost's terms (1, nodes, FLOPs, bytes, weights) with
# non-negative coefficients, to 1e-5. MODEL roofline_light is PerfSAGE with [model] target =
# roofline_light (the bytes split into the light operators' and the rest's); MODEL cost_light the
# cost alone on it: a non-negative linear function of (1, nodes, FLOPs, bytes - light bytes,
# weights, light bytes) to 1e-5. MODEL cost_kept the cost alone on [model] target = roofline_kept:
# of (1, nodes, FLOPs, bytes, weights, the bytes kept for the backward pass) to 1e-5. MODEL
# cost_peak the cost alone on [model] target = roofline_peak: of (1, nodes, FLOPs, bytes, weights,
# the kept activations, the mean activation tensor's bytes) to 1e-5.
# usage: test_e2e.sh SEERTRAIN DATA.h5 CONFIG WORKDIR PYTHON [MODEL [SEEREXPORT SEERPREDICT]]
set -eu
seertrain=$1 data=$2 config=$3 work=$4 python=$5 model=${6:-seernet} seerexport=${7:-} seerpredict=${8:-}
rm -rf "$work"
case $model in
    perfsage) extra="--set model.hidden=16 --set model.blocks=2 --set model.op_embed=4" ;;
    gcn) extra="--set model.hidden=32 --set model.blocks=3 --set model.head_hidden=16" ;;
    roofline) model=seernet
              extra="--set model.target=roofline --set model.clamp=range --set eval.paths=$data" ;;
    linear) extra="--set model.clamp=range" ;; # libseer must apply the stored range as the trainer
    roofline_weights) model=perfsage
              extra="--set model.hidden=16 --set model.blocks=2 --set model.op_embed=4 --set model.target=roofline_weights" ;;
    cost) extra="--set model.target=roofline_weights" ;;
    roofline_light) model=perfsage
              extra="--set model.hidden=16 --set model.blocks=2 --set model.op_embed=4 --set model.target=roofline_light" ;;
    cost_light) model=cost extra="--set model.target=roofline_light" ;;
    cost_kept) model=cost extra="--set model.target=roofline_kept" ;;
    cost_peak) model=cost extra="--set model.target=roofline_peak" ;;
    additive) model=perfsage
              extra="--set model.hidden=16 --set model.blocks=2 --set model.op_embed=4 --set model.readout=additive" ;;
    *) extra="" ;;
esac
variant=${6:-seernet}
# shellcheck disable=SC2086
$seertrain "$config" --set data.path="$data" --set output.dir="$work" --set output.run=e2e \
    --set data.limit=1500 --set train.epochs=12 --set train.batch_size=32 --set model.name="$model" $extra \
    --set output.profile=1 --set output.plot=1
# the run's plots (scripts/run_plot.py): both PNG files, non-trivial (the linear baseline has
# no epochs, so no loss curve)
pngs="predicted_vs_measured.png loss.png"
[ "$model" = linear ] || [ "$model" = cost ] && pngs=predicted_vs_measured.png
for png in $pngs; do
    [ "$(head -c 4 "$work/e2e/$png" | tail -c 3)" = PNG ] && [ "$(wc -c < "$work/e2e/$png")" -gt 10000 ] ||
        { echo "FAIL: no plot $work/e2e/$png"; exit 1; }
done
$python - "$work/e2e/summary.json" "$model" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["model"] == sys.argv[2], s["model"]
print("model", s["model"])
# output.profile = 1: every step timed, the phases within the run's time
p = s.get("profile")
if s["model"] not in ("linear", "cost"):
    steps = 12 * -(-750 // 32)  # 12 epochs of the 750 training graphs of 1,500 (2:1:1) in batches of 32
    assert p and p["steps"] == steps, (p, steps)
    phases = [p[k + "_s"] for k in ("batch", "forward", "loss", "backward", "reduce", "clip", "optimizer")]
    assert min(phases) >= 0 and p["forward_s"] > 0 and p["backward_s"] > 0, p
    assert sum(phases) + p["evaluation_s"] <= s["train_seconds"] + 0.1, (p, s["train_seconds"])
    print("profile: %d steps, %.2f ms per step" % (p["steps"], 1e3 * sum(phases) / p["steps"]))
base = s["train_mean_val_mape"]
print("mean val MAPE %.3f%%, test %.3f%%; training-mean predictor %.3f%%"
      % (s["mean_val_mape"], s["mean_test_mape"], base))
for name, m in s["val"].items():
    print("  %-20s val MAPE %.3f%% Spearman %.4f" % (name, m["mape"], m["spearman"]))
    assert m["mape"] < 0.5 * base, "%s: val MAPE %.3f not below half of %.3f" % (name, m["mape"], base)
    assert m["spearman"] > 0.8, "%s: Spearman %.3f" % (name, m["spearman"])
assert s["mean_test_mape"] < 0.5 * base
print("test_e2e: passed")
PY
if [ "$variant" = roofline ]; then
    "$seerpredict" "$work/e2e/best.seer" "$data" --json > "$work/predict.json"
    $python - "$work/e2e/summary.json" "$work/predict.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["eval"]
pr = json.load(open(sys.argv[2]))
assert len(ev) == 1 and ev[0]["graphs"] == pr["graphs"] > 0, (ev, pr["graphs"])
for name, m in pr["metrics"].items():
    e = ev[0]["metrics"][name]
    for k in ("n", "mape", "spearman", "kendall"):
        assert abs(e[k] - m[k]) <= 1e-9 * max(1, abs(m[k])), (name, k, e[k], m[k])
    print("[eval] %-20s MAPE %.3f%% Spearman %.4f on %d graphs: as seerpredict" % (name, e["mape"], e["spearman"], e["n"]))
PY
fi
if [ -n "$seerexport" ]; then
    "$seerexport" "$work/e2e" -o "$work/m.seer"
    "$seerpredict" "$work/m.seer" "$data" --predictions "$work/all.csv" >/dev/null
    if [ "$model" = cost ]; then
        $python - "$data" "$work/all.csv" "$variant" <<'PY'
import csv, sys
import h5py
import numpy as np
rows = list(csv.DictReader(open(sys.argv[2])))
with h5py.File(sys.argv[1], "r") as f:
    names = [x.decode() for x in f["schema/global_features"][:]]
    g = f["global/x"][:].astype(np.float64)
t = {c: np.expm1(g[:, names.index(c)]) for c in
     ("log_nodes", "log_flops_total", "log_mem_total", "log_weight_total", "log_mem_light", "log_mem_kept",
      "log_mem_kept_acts", "log_tensor_bytes_mean")}
terms = [t["log_nodes"], t["log_flops_total"], t["log_mem_total"], t["log_weight_total"]]
if sys.argv[3] == "cost_light":  # the rest's bytes and the light operators' apart
    terms = terms[:2] + [np.maximum(t["log_mem_total"] - t["log_mem_light"], 0), t["log_weight_total"],
                         t["log_mem_light"]]
    assert (t["log_mem_light"] > 0).any(), "no graph has light bytes: the split is not tested"
if sys.argv[3] == "cost_kept":  # the bytes kept for the backward pass, a sixth term
    terms = terms + [t["log_mem_kept"]]
    assert (t["log_mem_kept"] > 0).any(), "no graph keeps bytes: the sixth term is not tested"
if sys.argv[3] == "cost_peak":  # the kept activations and the mean activation tensor, a seventh term
    terms = terms + [t["log_mem_kept_acts"], t["log_tensor_bytes_mean"]]
    assert (t["log_tensor_bytes_mean"] > 0).any(), "no graph has tensors: the seventh term is not tested"
A = np.column_stack([np.ones(len(g))] + terms)[:len(rows)]
labels = [k for k in rows[0] if k.endswith("_ms")]
assert labels, rows[0].keys()
import itertools
for k in labels:
    y = np.array([float(r[k]) for r in rows])
    # the best non-negative fit over every subset of the terms (they can be nearly collinear on one
    # search space's cells, where an unconstrained fit trades tiny negative coefficients)
    B = A / y[:, None]
    sc = np.linalg.norm(B, axis=0)
    sc[sc == 0] = 1
    worst, c = np.inf, None
    for n in range(1, A.shape[1] + 1):
        for idx in itertools.combinations(range(A.shape[1]), n):
            ci, *_ = np.linalg.lstsq(B[:, idx] / sc[list(idx)], np.ones(len(y)), rcond=None)
            if (ci < 0).any():
                continue
            full = np.zeros(A.shape[1])
            full[list(idx)] = ci / sc[list(idx)]
            w = float(np.max(np.abs(A @ full / y - 1)))
            if w < worst:
                worst, c = w, full
    assert worst < 1e-5, (k, worst, c)
    print("cost %s: libseer's predictions are c . (1, nodes, FLOPs, %s) to %.1g, c >= 0" % (
        k, {"cost_light": "bytes - light, weights, light", "cost_kept": "bytes, weights, kept",
         "cost_peak": "bytes, weights, kept activations, mean tensor"}.get(
            sys.argv[3], "bytes, weights"), worst))
PY
    fi
    $python - "$work/e2e/test_predictions.csv" "$work/all.csv" <<'PY'
import csv, sys
trainer = list(csv.DictReader(open(sys.argv[1])))
lib = {r["name"]: r for r in csv.DictReader(open(sys.argv[2]))}
worst = 0.0
for r in trainer:
    for k, v in r.items():
        if k.endswith("_pred"):
            a, b = float(v), float(lib[r["name"]][k[:-5]])
            worst = max(worst, abs(a - b) / abs(a))
print("libseer vs trainer on %d test graphs: worst relative difference %.3g" % (len(trainer), worst))
assert worst < 1e-4, worst
PY
    # the Python binding (operator ids included for the models that read them) equals seerpredict
    SEER_LIB_DIR=$(dirname "$seerpredict") $python - "$work/m.seer" "$data" "$work/all.csv" "$(dirname "$0")/../python" <<'PY'
import csv, sys
import h5py
sys.path.insert(0, sys.argv[4])
import seer
m = seer.Model(sys.argv[1])
rows = list(csv.reader(open(sys.argv[3])))[1:6]
with h5py.File(sys.argv[2], "r") as f:
    npt, ept = f["graph/node_ptr"][:], f["graph/edge_ptr"][:]
    for g, row in enumerate(rows):
        a, b = npt[g], npt[g + 1]
        y = m.predict(f["node/x"][a:b], f["edge/index"][ept[g]:ept[g + 1]], f["edge/x"][ept[g]:ept[g + 1]],
                      f["global/x"][g], f["node/op"][a:b])
        for k, v in enumerate(row[1:1 + m.n_metrics]):
            assert abs(y[k] - float(v)) <= 1e-6 * abs(float(v)), (g, k, y[k], v)
        assert row[1 + m.n_metrics] in ("0", "1"), row  # the in_range column
print("binding (uses op types: %s) equals seerpredict on 5 graphs" % m.uses_op_types)
PY
fi
