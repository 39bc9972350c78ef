/* model: the linear baseline (see linear.h). */
#include "linear.h"

#include <math.h>
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
