/* The C SeerNet against the float64 PyTorch reference (benchmarks/reference/seernet_ref.py):
 * the same edge-case batch and float32 weights, compared on predictions, loss and every
 * parameter gradient. The dumps in tests/data/ are committed; regenerate them with
 *   python3 benchmarks/reference/seernet_ref.py dump tests/data/ref_mean.seerdump --agg mean
 *   python3 benchmarks/reference/seernet_ref.py dump tests/data/ref_synmm.seerdump --agg synmm --seed 1
 * Tolerances (float32 C against float64 torch): predictions and loss 1e-4 relative; each
 * gradient tensor's relative L2 error below 1e-4 and each value within 1e-4 of the tensor's
 * largest magnitude plus 1e-6 of the largest gradient of the model (the floor for gradients that
 * are exactly zero in float64). */
#include <string.h>

#include "common/container.h"
#include "graph/batch.h"
#include "model/model.h"
#include "testutil.h"
#include "backend/loss.h"
#include "eval/metrics.h"

static const ctr_tensor *need(const seer_container *c, const char *name, int dtype) {
    const ctr_tensor *t = ctr_tensor_find(c, name);
    if (!t || t->dtype != dtype) seer_die("dump: tensor %s missing or of the wrong dtype", name);
    return t;
}

static void check_dump(const char *path) {
    seer_container c;
    seer_err err;
    if (ctr_read(&c, path, "SEERDUMP", 1, &err)) seer_die("%s", err.msg);
    const ctr_kv *agg = ctr_get(&c, "agg", KV_STR, path, &err), *sz = ctr_get(&c, "sizes", KV_I64ARR, path, &err);
    if (!agg || !sz || sz->n != 9) seer_die("%s: bad dump header", path);
    const int64_t *s = sz->data;
    int H = (int)s[0], L = (int)s[1], Fn = (int)s[2], Fe = (int)s[3], Fg = (int)s[4], M = (int)s[5];
    int64_t G = s[6], N = s[7], E = s[8];
    // the batch, through the same dataset -> batch path training uses
    pg_dataset ds = {.G = G, .N = N, .E = E, .Fn = Fn, .Fe = Fe, .Fg = Fg, .M = M};
    ds.node_ptr = (int64_t *)need(&c, "node_ptr", DT_I64)->data;
    ds.edge_ptr = (int64_t *)need(&c, "edge_ptr", DT_I64)->data;
    const int64_t *ei = need(&c, "edge_index", DT_I64)->data;
    ds.edge_index = seer_malloc(sizeof(int32_t) * (size_t)(2 * E + 1));
    for (int64_t i = 0; i < 2 * E; i++) ds.edge_index[i] = (int32_t)ei[i];
    ds.node_x = (float *)need(&c, "xn", DT_F32)->data;
    ds.edge_x = (float *)need(&c, "xe", DT_F32)->data;
    ds.global_x = (float *)need(&c, "xg", DT_F32)->data;
    ds.node_op = seer_calloc((size_t)N + 1, sizeof(int32_t));
    const float *y = need(&c, "y", DT_F32)->data;
    graph_batch b;
    batch_init(&b, G, N, E, Fn, Fe, Fg, M, 0);
    int64_t *ids = seer_malloc(sizeof(int64_t) * (size_t)G);
    for (int64_t g = 0; g < G; g++) ids[g] = g;
    batch_build(&b, &ds, y, ids, G);

    model m;
    model_init(&m, &(model_sizes){model_find("seernet"), H, L, Fn, Fe, Fg, M,
                                    strcmp(agg->data, "synmm") == 0 ? AGG_SYNMM : AGG_MEAN, H, 0, 0,
                                    READOUT_POOLED});
    const seer_backend *be = backend_cpu();
    int64_t P = m.pt.total;
    float *params = seer_calloc((size_t)P, 4), *grads = seer_calloc((size_t)P, 4);
    for (int i = 0; i < m.pt.n; i++) {
        const ctr_tensor *t = need(&c, m.pt.p[i].name, DT_F32);
        CHECK(t->nbytes == 4 * (uint64_t)(m.pt.p[i].rows * m.pt.p[i].cols), "%s: size", m.pt.p[i].name);
        memcpy(params + m.pt.p[i].offset, t->data, t->nbytes);
    }
    model_acts a, d;
    model_acts_init(&a, &m, be, N, E, G);
    model_acts_init(&d, &m, be, N, E, G);
    model_input in = model_input_from_batch(&b);
    model_forward(&m, be, params, &in, &a);
    model_acts_zero(&d, be);
    double loss = loss_mse_masked(a.pred, b.y, G, M, d.pred, NULL, NULL);
    model_backward(&m, be, params, grads, &in, &a, &d, -1);

    const double *ref_pred = need(&c, "pred", DT_F64)->data, *ref_loss = need(&c, "loss", DT_F64)->data;
    for (int64_t i = 0; i < G * M; i++)
        CHECK(close_enough(a.pred[i], ref_pred[i], 1e-4, 1e-6), "%s: pred[%lld] %.7g vs %.7g",
              path, (long long)i, (double)a.pred[i], ref_pred[i]);
    CHECK(close_enough(loss, ref_loss[0], 1e-4, 0), "%s: loss %.8g vs %.8g", path, loss, ref_loss[0]);
    // The largest reference gradient sets the absolute floor: a tensor whose true gradient is
    // exactly zero (the attention biases: softmax ignores a shift) must stay within float32
    // rounding of zero.
    double gmax = 0;
    for (int i = 0; i < m.pt.n; i++) {
        char name[96];
        snprintf(name, sizeof name, "grad.%s", m.pt.p[i].name);
        const double *r = need(&c, name, DT_F64)->data;
        for (int64_t k = 0; k < m.pt.p[i].rows * m.pt.p[i].cols; k++) gmax = fmax(gmax, fabs(r[k]));
    }
    double floor_abs = 1e-6 * gmax;
    double worst = 0;
    for (int i = 0; i < m.pt.n; i++) {
        const param_info *pi = &m.pt.p[i];
        char name[96];
        snprintf(name, sizeof name, "grad.%s", pi->name);
        const double *r = need(&c, name, DT_F64)->data;
        double num = 0, den = 0, mx = 0;
        int64_t n = pi->rows * pi->cols;
        for (int64_t k = 0; k < n; k++) {
            double dlt = grads[pi->offset + k] - r[k];
            num += dlt * dlt, den += r[k] * r[k], mx = fmax(mx, fabs(r[k]));
        }
        int64_t bad = 0;
        for (int64_t k = 0; k < n; k++)
            bad += fabs(grads[pi->offset + k] - r[k]) > 1e-4 * mx + floor_abs;
        double rel = sqrt(den) > floor_abs ? sqrt(num / den) : 0.0;
        worst = fmax(worst, rel);
        CHECK(rel < 1e-4 && bad == 0, "%s: %s gradient: relative error %.3g, %lld values off",
              path, name, rel, (long long)bad);
    }
    printf("%s: %d tensors, loss %.6f (reference %.6f), worst gradient relative error %.2e\n",
           path, m.pt.n, loss, ref_loss[0], worst);
    model_acts_free(&a, be), model_acts_free(&d, be);
    model_free(&m);
    batch_free(&b);
    free(params), free(grads), free(ids), free(ds.edge_index), free(ds.node_op);
    ctr_free(&c);
}

int main(int argc, char **argv) {
    backend_cpu_set_threads(1);
    for (int i = 1; i < argc; i++) check_dump(argv[i]);
    if (argc < 2) CHECK(0, "usage: test_reference DUMP...");
    return test_finish("test_reference");
}
