/* optim: PCGrad in Gram form (see pcgrad.h). */
#include "pcgrad.h"

#include <cblas.h>
#include <string.h>

void pcgrad_coefficients(const double *K, int T, seer_rng *rng, double *c) {
    SEER_ASSERT(T >= 1 && T <= PCGRAD_MAX_TASKS);
    double C[PCGRAD_MAX_TASKS];
    int64_t order[PCGRAD_MAX_TASKS];
    for (int k = 0; k < T; k++) c[k] = 0.0;
    for (int i = 0; i < T; i++) {
        for (int k = 0; k < T; k++) C[k] = k == i, order[k] = k;
        rng_shuffle_i64(rng, order, T);
        for (int n = 0; n < T; n++) {
            int j = (int)order[n];
            double dot = 0.0;
            for (int k = 0; k < T; k++) dot += C[k] * K[k * T + j];
            if (dot < 0.0 && K[j * T + j] > 0.0) C[j] -= dot / K[j * T + j];
        }
        for (int k = 0; k < T; k++) c[k] += C[k];
    }
}

void pcgrad_combine(const float *G, int64_t ldg, int T, int64_t P, seer_rng *rng, double *Gd,
                    double *K, float *out, double *out64) {
    for (int t = 0; t < T; t++) {
#pragma omp parallel for schedule(static)
        for (int64_t p = 0; p < P; p++) Gd[(int64_t)t * P + p] = G[(int64_t)t * ldg + p];
    }
    // K = Gd Gd^T in float64: one BLAS call (upper triangle), mirrored.
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasNoTrans, T, (int)P, 1.0, Gd, (int)P, 0.0, K, T);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < i; j++) K[i * T + j] = K[j * T + i];
    double c[PCGRAD_MAX_TASKS];
    pcgrad_coefficients(K, T, rng, c);
    // out = c^T Gd: one GEMV in float64, then rounded once to float32 for the optimizer.
    cblas_dgemv(CblasRowMajor, CblasTrans, T, (int)P, 1.0, Gd, (int)P, c, 1, 0.0, out64, 1);
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < P; p++) out[p] = (float)out64[p];
}
