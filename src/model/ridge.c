/* model: the ridge baseline, registered as "linear" (see ridge.h). */
#include "ridge.h"

#include "model.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int find(char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

int linear_schema_init(linear_schema *s, char *const *node_features, int Fn,
                       char *const *global_features, int Fg, int n_ops, const char *origin,
                       seer_err *err) {
    s->n_ops = n_ops, s->F = 3 * n_ops + 3;
    s->col_flops = find(node_features, Fn, "log_flops");
    s->col_bytes = find(node_features, Fn, "log_mem_bytes");
    s->gcol_flops = find(global_features, Fg, "log_flops_total");
    s->gcol_bytes = find(global_features, Fg, "log_mem_total");
    s->gcol_weights = find(global_features, Fg, "log_weight_total");
    if (s->col_flops < 0 || s->col_bytes < 0)
        return seer_fail(err, "%s: the linear baseline needs node features log_flops and "
                              "log_mem_bytes (seerconvert's schema)", origin);
    if (s->gcol_flops < 0 || s->gcol_bytes < 0 || s->gcol_weights < 0)
        return seer_fail(err, "%s: the linear baseline needs global features log_flops_total, "
                              "log_mem_total and log_weight_total (seerconvert's schema)", origin);
    return 0;
}

void linear_features(const linear_schema *s, const float *xn, int Fn, const int32_t *op, int64_t N,
                     const float *xg, double *out) {
    int K = s->n_ops;
    memset(out, 0, sizeof(double) * (size_t)s->F);
    // sums per operator type in out[K..3K) first, then log1p
    for (int64_t v = 0; v < N; v++) {
        int k = op[v];
        out[k] += 1.0;
        out[K + k] += expm1((double)xn[v * Fn + s->col_flops]);
        out[2 * K + k] += expm1((double)xn[v * Fn + s->col_bytes]);
    }
    for (int k = K; k < 3 * K; k++) out[k] = log1p(out[k] > 0 ? out[k] : 0);
    out[3 * K] = xg[s->gcol_flops], out[3 * K + 1] = xg[s->gcol_bytes];
    out[3 * K + 2] = xg[s->gcol_weights];
}

int ridge_fit(const double *X, const double *y, int64_t n, int F, double lambda, double *w, double *b,
              seer_err *err) {
    // normal equations on the labelled rows, with the intercept as the label mean (the columns
    // are centred on the training rows, so it decouples)
    double *A = calloc((size_t)F * (size_t)F + 1, sizeof(double)), *r = calloc((size_t)F + 1, sizeof(double));
    double *xm = calloc((size_t)F + 1, sizeof(double));
    int64_t cnt = 0;
    double ym = 0;
    for (int64_t i = 0; i < n; i++)
        if (isfinite(y[i])) {
            cnt++, ym += y[i];
            for (int j = 0; j < F; j++) xm[j] += X[i * F + j];
        }
    if (!cnt) {
        free(A), free(r), free(xm);
        return seer_fail(err, "ridge: no labelled training row");
    }
    ym /= (double)cnt;
    for (int j = 0; j < F; j++) xm[j] /= (double)cnt;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(y[i])) continue;
        const double *x = X + i * F;
        double t = y[i] - ym;
        for (int j = 0; j < F; j++) {
            double xj = x[j] - xm[j];
            r[j] += xj * t;
            for (int k = 0; k <= j; k++) A[j * F + k] += xj * (x[k] - xm[k]);
        }
    }
    for (int j = 0; j < F; j++) A[j * F + j] += lambda * (double)cnt + 1e-12;
    // Cholesky A = L L^T in the lower triangle, then two triangular solves
    for (int j = 0; j < F; j++) {
        double d = A[j * F + j];
        for (int k = 0; k < j; k++) d -= A[j * F + k] * A[j * F + k];
        d = d > 1e-300 ? sqrt(d) : 1e-150;
        A[j * F + j] = d;
        for (int i = j + 1; i < F; i++) {
            double v = A[i * F + j];
            for (int k = 0; k < j; k++) v -= A[i * F + k] * A[j * F + k];
            A[i * F + j] = v / d;
        }
    }
    for (int i = 0; i < F; i++) {
        double v = r[i];
        for (int k = 0; k < i; k++) v -= A[i * F + k] * w[k];
        w[i] = v / A[i * F + i];
    }
    for (int i = F - 1; i >= 0; i--) {
        double v = w[i];
        for (int k = i + 1; k < F; k++) v -= A[k * F + i] * w[k];
        w[i] = v / A[i * F + i];
    }
    double bb = ym;
    for (int j = 0; j < F; j++) bb -= xm[j] * w[j];
    *b = bb;
    free(A), free(r), free(xm);
    return 0;
}

void ridge_alloc(ridge_model *r, const linear_schema *s, int M) {
    memset(r, 0, sizeof *r);
    r->s = *s, r->M = M, r->owned = 1;
    int F = s->F;
    r->mean = seer_calloc((size_t)F, sizeof(double));
    r->std = seer_calloc((size_t)F, sizeof(double));
    r->w = seer_calloc((size_t)M * (size_t)F, sizeof(double));
    r->b = seer_calloc((size_t)M, sizeof(double));
    r->lambda = seer_calloc((size_t)M, sizeof(double));
}

void ridge_free(ridge_model *r) {
    if (r->owned) {
        free(r->mean), free(r->std), free(r->w), free(r->b), free(r->lambda);
        free(r->lo), free(r->hi), free(r->tlo), free(r->thi);
    }
    memset(r, 0, sizeof *r);
}

void ridge_standardise_fit(ridge_model *r, double *X, int64_t G, const int64_t *tr, int64_t n,
                           int clamp) {
    int F = r->s.F;
    if (clamp && n > 0) {
        r->lo = seer_malloc(sizeof(double) * (size_t)F), r->hi = seer_malloc(sizeof(double) * (size_t)F);
        for (int j = 0; j < F; j++) {
            r->lo[j] = r->hi[j] = X[tr[0] * F + j];
            for (int64_t i = 1; i < n; i++) {
                double v = X[tr[i] * F + j];
                r->lo[j] = v < r->lo[j] ? v : r->lo[j], r->hi[j] = v > r->hi[j] ? v : r->hi[j];
            }
        }
    }
    for (int j = 0; j < F; j++) {
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < n; i++) s += X[tr[i] * F + j];
        double mean = n ? s / (double)n : 0;
        for (int64_t i = 0; i < n; i++) {
            double d = X[tr[i] * F + j] - mean;
            s2 += d * d;
        }
        double sd = n ? sqrt(s2 / (double)n) : 0;
        r->mean[j] = mean, r->std[j] = sd > 1e-9 ? sd : 1.0; // constant: centred only
    }
    for (int64_t g = 0; g < G; g++) ridge_standardise(r, X + g * F);
}

void ridge_standardise(const ridge_model *r, double *x) {
    for (int j = 0; j < r->s.F; j++) {
        double v = x[j];
        if (r->lo) v = v < r->lo[j] ? r->lo[j] : v > r->hi[j] ? r->hi[j] : v;
        x[j] = (v - r->mean[j]) / r->std[j];
    }
}

double ridge_predict(const ridge_model *r, int m, const double *x) {
    int F = r->s.F;
    double s = r->b[m];
    for (int j = 0; j < F; j++) s += r->w[m * F + j] * x[j];
    if (r->tlo) s = s < r->tlo[m] ? r->tlo[m] : s > r->thi[m] ? r->thi[m] : s;
    return s;
}

int ridge_fit_labels(ridge_model *r, const double *X, const float *targets, const int64_t *tr,
                     int64_t ntr, const int64_t *va, int64_t nva, const double *intercept_only,
                     double *val_loss, seer_err *err) {
    static const double grid[] = {1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0};
    int M = r->M, F = r->s.F, rc = 0;
    if (intercept_only) { // every weight 0, the bias given
        double val_sum = 0;
        for (int m = 0; m < M; m++) {
            double se = 0;
            int64_t nv = 0;
            r->b[m] = intercept_only[m];
            memset(r->w + (int64_t)m * F, 0, sizeof(double) * (size_t)F);
            for (int64_t i = 0; i < nva; i++) {
                float tg = targets[va[i] * M + m];
                if (!isnan(tg)) se += (r->b[m] - tg) * (r->b[m] - tg), nv++;
            }
            val_sum += nv ? se / (double)nv : 0;
        }
        free(r->lambda), r->lambda = NULL; // no ridge was solved
        *val_loss = val_sum / M;
        return 0;
    }
    double *Xt = seer_malloc(sizeof(double) * (size_t)((ntr ? ntr : 1) * F));
    double *y = seer_malloc(sizeof(double) * (size_t)(ntr ? ntr : 1));
    double *w = seer_malloc(sizeof(double) * (size_t)F);
    for (int64_t i = 0; i < ntr; i++) memcpy(Xt + i * F, X + tr[i] * F, sizeof(double) * (size_t)F);
    double val_sum = 0;
    for (int m = 0; m < M; m++) {
        for (int64_t i = 0; i < ntr; i++) y[i] = targets[tr[i] * M + m];
        double best = INFINITY;
        for (size_t k = 0; k < sizeof grid / sizeof *grid; k++) {
            double b;
            if ((rc = ridge_fit(Xt, y, ntr, F, grid[k], w, &b, err))) goto out;
            double se = 0;
            int64_t n = 0;
            for (int64_t i = 0; i < nva; i++) {
                int64_t g = va[i];
                float tg = targets[g * M + m];
                if (isnan(tg)) continue;
                double p = b;
                for (int j = 0; j < F; j++) p += w[j] * X[g * F + j];
                se += (p - tg) * (p - tg), n++;
            }
            double loss = n ? se / (double)n : (grid[k] == 1e-3 ? 0 : INFINITY); // no val: 1e-3
            if (loss < best) {
                best = loss, r->lambda[m] = grid[k], r->b[m] = b;
                memcpy(r->w + m * F, w, sizeof(double) * (size_t)F);
            }
        }
        val_sum += best;
    }
    if (r->lo && !r->tlo) { // the clamp: the targets' training range
        r->tlo = seer_malloc(sizeof(double) * (size_t)M), r->thi = seer_malloc(sizeof(double) * (size_t)M);
        for (int m = 0; m < M; m++) {
            r->tlo[m] = INFINITY, r->thi[m] = -INFINITY;
            for (int64_t i = 0; i < ntr; i++) {
                float tg = targets[tr[i] * M + m];
                if (!isnan(tg)) r->tlo[m] = fmin(r->tlo[m], tg), r->thi[m] = fmax(r->thi[m], tg);
            }
            if (r->tlo[m] > r->thi[m]) r->tlo[m] = r->thi[m] = 0; // no label: the mean
        }
    }
    *val_loss = val_sum / M;
out:
    free(Xt), free(y), free(w);
    return rc;
}

void ridge_store(const ridge_model *r, seer_container *c) {
    int64_t sz[3] = {r->s.n_ops, r->s.F, r->M}, F = r->s.F, MF[2] = {r->M, r->s.F}, M = r->M;
    ctr_add_arr(c, "linear.sizes", KV_I64ARR, sz, 3);
    ctr_add_tensor(c, "linear.mean", DT_F64, 1, &F, r->mean);
    ctr_add_tensor(c, "linear.std", DT_F64, 1, &F, r->std);
    ctr_add_tensor(c, "linear.weight", DT_F64, 2, MF, r->w);
    ctr_add_tensor(c, "linear.bias", DT_F64, 1, &M, r->b);
    if (r->lambda) ctr_add_tensor(c, "linear.lambda", DT_F64, 1, &M, r->lambda);
    if (r->lo) {
        ctr_add_tensor(c, "linear.lo", DT_F64, 1, &F, r->lo);
        ctr_add_tensor(c, "linear.hi", DT_F64, 1, &F, r->hi);
    }
    if (r->tlo) {
        ctr_add_tensor(c, "linear.tlo", DT_F64, 1, &M, r->tlo);
        ctr_add_tensor(c, "linear.thi", DT_F64, 1, &M, r->thi);
    }
}

int ridge_load(ridge_model *r, const linear_schema *s, int M, const seer_container *c, int copy,
               const char *origin, seer_err *err) {
    memset(r, 0, sizeof *r);
    const ctr_kv *kv = ctr_get(c, "linear.sizes", KV_I64ARR, origin, err);
    if (!kv) return -1;
    const int64_t *sz = kv->data;
    if (kv->n != 3 || sz[0] != s->n_ops || sz[1] != s->F || sz[2] != M || M < 1 || M > MODEL_MAX_HEADS)
        return seer_fail(err, "%s: linear.sizes does not match the schema (%d operator types, %d "
                              "features, %d labels): a linear model for other data?", origin,
                         s->n_ops, s->F, M);
    r->s = *s, r->M = M, r->owned = copy;
    struct { const char *name; double **dst; int64_t n; int optional; } want[] = {
        {"linear.mean", &r->mean, s->F, 0}, {"linear.std", &r->std, s->F, 0},
        {"linear.weight", &r->w, (int64_t)M * s->F, 0}, {"linear.bias", &r->b, M, 0},
        {"linear.lambda", &r->lambda, M, 1}, {"linear.lo", &r->lo, s->F, 1},
        {"linear.hi", &r->hi, s->F, 1}, {"linear.tlo", &r->tlo, M, 1}, {"linear.thi", &r->thi, M, 1}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const ctr_tensor *t = ctr_tensor_find(c, want[i].name);
        if (!t && want[i].optional) continue;
        if (!t || t->dtype != DT_F64 || t->nbytes != sizeof(double) * (uint64_t)want[i].n) {
            ridge_free(r);
            return seer_fail(err, "%s: tensor %s is missing or has the wrong size (a linear model "
                                  "for other data?)", origin, want[i].name);
        }
        const double *v = t->data; // the container's data is 64-byte aligned
        for (int64_t k = 0; k < want[i].n; k++)
            if (!isfinite(v[k]) || (want[i].dst == &r->std && v[k] <= 0)) {
                ridge_free(r);
                return seer_fail(err, "%s: tensor %s holds a non-finite or invalid value at %lld",
                                 origin, want[i].name, (long long)k);
            }
        if (copy) {
            *want[i].dst = seer_malloc(t->nbytes);
            memcpy(*want[i].dst, v, t->nbytes);
        } else {
            *want[i].dst = (double *)(uintptr_t)v;
        }
    }
    // each range: both ends or neither, lo <= hi
    const char *pair = NULL;
    int64_t bad = -1;
    const double *lo[2] = {r->lo, r->tlo}, *hi[2] = {r->hi, r->thi};
    const int64_t n[2] = {s->F, M};
    static const char *const names[2] = {"linear.lo / linear.hi", "linear.tlo / linear.thi"};
    for (int k = 0; k < 2 && !pair; k++) {
        if (!lo[k] != !hi[k]) pair = names[k];
        for (int64_t j = 0; lo[k] && hi[k] && j < n[k] && !pair; j++)
            if (!(lo[k][j] <= hi[k][j])) pair = names[k], bad = j;
    }
    if (pair) {
        ridge_free(r);
        if (bad >= 0)
            return seer_fail(err, "%s: %s: low end above high end at %lld: a damaged file? "
                                  "(re-export it)", origin, pair, (long long)bad);
        return seer_fail(err, "%s: %s must come together: a damaged file? (re-export it)", origin,
                         pair);
    }
    return 0;
}

int ridge_load_stored(ridge_model *r, int M, const seer_container *c, int copy, const char *origin,
                      seer_err *err) {
    const ctr_kv *nf = ctr_get(c, "schema.node_features", KV_STRARR, origin, err);
    const ctr_kv *gf = nf ? ctr_get(c, "schema.global_features", KV_STRARR, origin, err) : NULL;
    const ctr_kv *ops = gf ? ctr_get(c, "schema.op_types", KV_STRARR, origin, err) : NULL;
    if (!ops) return -1;
    if (ops->n < 1 || ops->n > 4096)
        return seer_fail(err, "%s: schema.op_types has %lld names (1..4096)", origin, (long long)ops->n);
    linear_schema s;
    if (linear_schema_init(&s, nf->data, (int)nf->n, gf->data, (int)gf->n, (int)ops->n, origin, err))
        return -1;
    return ridge_load(r, &s, M, c, copy, origin, err);
}

/* The registry's entries: no trunk; the callers fit and predict through the functions above. */
const model_ops model_linear = {
    .name = "linear",
    .flags = MODEL_CLOSED_FORM | MODEL_OP_TYPES,
    .equations = "src/model/ridge.h (ridge on a bag of operators)",
};

/* The same machinery with every weight zero and the bias that undoes the target's standardisation:
 * a prediction is the fitted roofline cost itself (data/prep.h: least squared relative error,
 * terms >= 0); the stored features keep files alike. */
const model_ops model_cost = {
    .name = "cost",
    .flags = MODEL_CLOSED_FORM | MODEL_COST_ONLY | MODEL_OP_TYPES,
    .equations = "src/data/prep.h (the roofline cost alone: no learned weights)",
};
