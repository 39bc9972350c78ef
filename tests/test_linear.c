/* test_linear: the ridge solver against an independent closed-form solve, its optimality
 * condition, masked labels, and the bag-of-operators features of a small graph counted by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ridge.h"
#include "testutil.h"

/* Solves A x = r (F x F) by Gauss-Jordan elimination with partial pivoting (float64). */
static void gauss_solve(double *A, double *r, int F, double *x) {
    for (int c = 0; c < F; c++) {
        int p = c;
        for (int i = c + 1; i < F; i++)
            if (fabs(A[i * F + c]) > fabs(A[p * F + c])) p = i;
        for (int k = 0; k < F; k++) {
            double t = A[c * F + k];
            A[c * F + k] = A[p * F + k], A[p * F + k] = t;
        }
        double t = r[c];
        r[c] = r[p], r[p] = t;
        for (int i = 0; i < F; i++) {
            if (i == c) continue;
            double f = A[i * F + c] / A[c * F + c];
            for (int k = 0; k < F; k++) A[i * F + k] -= f * A[c * F + k];
            r[i] -= f * r[c];
        }
    }
    for (int i = 0; i < F; i++) x[i] = r[i] / A[i * F + i];
}

/* The reference: ridge with an unpenalised intercept as one augmented system
 * [X 1]^T [X 1] + diag(lambda n, ..., 0) over the labelled rows. */
static void reference(const double *X, const double *y, int n, int F, double lambda, double *w, double *b) {
    int F1 = F + 1, cnt = 0;
    double *A = calloc((size_t)(F1 * F1), sizeof(double)), *r = calloc((size_t)F1, sizeof(double));
    double *x = calloc((size_t)F1, sizeof(double));
    for (int i = 0; i < n; i++) cnt += isfinite(y[i]);
    for (int i = 0; i < n; i++) {
        if (!isfinite(y[i])) continue;
        for (int j = 0; j < F1; j++) {
            double xj = j < F ? X[i * F + j] : 1.0;
            r[j] += xj * y[i];
            for (int k = 0; k < F1; k++) A[j * F1 + k] += xj * (k < F ? X[i * F + k] : 1.0);
        }
    }
    for (int j = 0; j < F; j++) A[j * F1 + j] += lambda * cnt;
    gauss_solve(A, r, F1, x);
    memcpy(w, x, sizeof(double) * (size_t)F);
    *b = x[F];
    free(A), free(r), free(x);
}

int main(void) {
    seer_rng rng;
    rng_seed(&rng, 5);
    enum { n = 60, F = 7 };
    double X[n * F], y[n], w[F], b, wr[F], br;
    for (int i = 0; i < n * F; i++) X[i] = rng_normal(&rng) + (i % F == 2 ? 3.0 : 0.0);
    for (int i = 0; i < n; i++) {
        y[i] = 0.5 - 2.0 * X[i * F] + 0.7 * X[i * F + 3] + 0.1 * rng_normal(&rng);
        if (i % 11 == 4) y[i] = NAN; // masked rows
    }
    seer_err err;
    const double lambdas[] = {0.0, 1e-3, 0.1, 2.0};
    for (int k = 0; k < 4; k++) {
        CHECK(ridge_fit(X, y, n, F, lambdas[k], w, &b, &err) == 0, "%s", err.msg);
        reference(X, y, n, F, lambdas[k], wr, &br);
        double worst = fabs(b - br);
        for (int j = 0; j < F; j++) worst = fmax(worst, fabs(w[j] - wr[j]));
        printf("lambda %g: worst difference from the Gauss-Jordan solve %.3g (w0 %.4f, b %.4f)\n",
               lambdas[k], worst, w[0], b);
        CHECK(worst < 1e-9, "lambda %g: ridge differs from the reference by %.3g", lambdas[k], worst);
        // optimality: the gradient of sum (xw + b - y)^2 + lambda cnt |w|^2 vanishes
        double g[F + 1] = {0};
        int cnt = 0;
        for (int i = 0; i < n; i++) {
            if (!isfinite(y[i])) continue;
            cnt++;
            double res = b - y[i];
            for (int j = 0; j < F; j++) res += X[i * F + j] * w[j];
            for (int j = 0; j < F; j++) g[j] += 2 * res * X[i * F + j];
            g[F] += 2 * res;
        }
        double gmax = fabs(g[F]);
        for (int j = 0; j < F; j++) gmax = fmax(gmax, fabs(g[j] + 2 * lambdas[k] * cnt * w[j]));
        CHECK(gmax < 1e-8, "lambda %g: gradient at the solution %.3g", lambdas[k], gmax);
    }
    double ynan[3] = {NAN, NAN, NAN};
    CHECK(ridge_fit(X, ynan, 3, F, 0.1, w, &b, &err) != 0, "no labelled row must fail");

    // features of a 4-node graph: ops 0, 2, 2, 1; node columns (log_flops, log_mem_bytes) first
    char *nf[] = {"log_flops", "log_mem_bytes", "other"};
    char *gf[] = {"x", "log_flops_total", "log_mem_total", "log_weight_total"};
    linear_schema s;
    CHECK(linear_schema_init(&s, nf, 3, gf, 4, 3, "test", &err) == 0, "%s", err.msg);
    CHECK(s.F == 12, "F = %d", s.F);
    float xn[4 * 3] = {(float)log1p(100), (float)log1p(10), 9, (float)log1p(1), (float)log1p(2), 9,
                       (float)log1p(3), (float)log1p(4), 9, (float)log1p(7), (float)log1p(8), 9};
    float xg[4] = {0, 11, 12, 13};
    int32_t op[4] = {0, 2, 2, 1};
    double f[12];
    linear_features(&s, xn, 3, op, 4, xg, f);
    double want[12] = {1, 1, 2, log1p(100), log1p(7), log1p(1 + 3), log1p(10), log1p(8), log1p(2 + 4), 11, 12, 13};
    for (int j = 0; j < 12; j++) CHECK(fabs(f[j] - want[j]) < 1e-5, "feature %d: %g, want %g", j, f[j], want[j]);
    char *bad[] = {"a", "b"};
    CHECK(linear_schema_init(&s, bad, 2, gf, 4, 3, "x.h5", &err) != 0 && strstr(err.msg, "log_flops"),
          "missing columns: %s", err.msg);

    // [model] clamp = range: the training range of each raw feature bounds every later row
    {
        ridge_model r;
        ridge_alloc(&r, &s, 1);
        double Xc[3 * 12];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 12; j++) Xc[i * 12 + j] = (double)(i + 1) * (j + 1);
        int64_t tr[2] = {0, 1}; // rows 0 and 1 train: the range of column j is [j + 1, 2 (j + 1)]
        ridge_standardise_fit(&r, Xc, 3, tr, 2, 1);
        CHECK(r.lo && r.hi, "clamp: no range fitted");
        double row[12], edge[12];
        for (int j = 0; j < 12; j++) row[j] = 100.0 * (j + 1), edge[j] = 2.0 * (j + 1);
        ridge_standardise(&r, row), ridge_standardise(&r, edge);
        for (int j = 0; j < 12; j++)
            CHECK(fabs(row[j] - edge[j]) < 1e-12 && fabs(Xc[2 * 12 + j] - edge[j]) < 1e-12,
                  "clamp: column %d gives %g beyond the range, %g at its edge", j, row[j], edge[j]);
        // stored and read back (lo and hi with it); a forged lo > hi and a lone lo are refused
        seer_container c;
        ctr_init(&c, "SEERTEST", 1);
        ridge_store(&r, &c);
        ridge_model back;
        CHECK(ridge_load(&back, &s, 1, &c, 1, "mem", &err) == 0 && back.lo && back.hi &&
                  back.lo[3] == r.lo[3] && back.hi[11] == r.hi[11], "clamp round trip: %s", err.msg);
        ridge_free(&back);
        double lo3 = r.lo[3];
        r.lo[3] = r.hi[3] + 1;
        CHECK(ridge_load(&back, &s, 1, &c, 1, "mem", &err) != 0 && strstr(err.msg, "low end above high end at 3"),
              "lo > hi must be refused: %s", err.msg);
        r.lo[3] = lo3;
        ctr_free(&c);
        // the targets' range: fitted with the clamp, and every prediction held inside it
        {
            float tg[3] = {-1.0f, 2.0f, 50.0f};
            int64_t va[1] = {2};
            double vl;
            CHECK(ridge_fit_labels(&r, Xc, tg, tr, 2, va, 1, NULL, &vl, &err) == 0, "%s", err.msg);
            CHECK(r.tlo && r.thi && r.tlo[0] == -1.0 && r.thi[0] == 2.0, "target range [%g, %g]",
                  r.tlo ? r.tlo[0] : NAN, r.thi ? r.thi[0] : NAN);
            double far[12];
            for (int j = 0; j < 12; j++) far[j] = 1e3 * (j % 2 ? -1 : 1);
            double p = ridge_predict(&r, 0, far);
            CHECK(p >= -1.0 && p <= 2.0, "prediction %g outside the target range", p);
            seer_container c2;
            ctr_init(&c2, "SEERTEST", 1);
            ridge_store(&r, &c2);
            r.thi[0] = -5;
            CHECK(ridge_load(&back, &s, 1, &c2, 1, "mem", &err) != 0 && strstr(err.msg, "linear.tlo"),
                  "tlo > thi must be refused: %s", err.msg);
            r.thi[0] = 2.0;
            ctr_free(&c2);
        }
        double *lo = r.lo, *hi = r.hi;
        r.lo = r.hi = NULL;
        ctr_init(&c, "SEERTEST", 1);
        ridge_store(&r, &c); // no range; then linear.lo alone
        int64_t F12 = 12;
        ctr_add_tensor(&c, "linear.lo", DT_F64, 1, &F12, lo);
        CHECK(ridge_load(&back, &s, 1, &c, 1, "mem", &err) != 0 && strstr(err.msg, "come together"),
              "a lone linear.lo must be refused: %s", err.msg);
        ctr_free(&c);
        r.lo = lo, r.hi = hi;
        ridge_free(&r);
    }
    return test_finish("test_linear");
}
