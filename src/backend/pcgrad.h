/* optim: PCGrad (Yu et al. 2020, "Gradient Surgery for Multi-Task Learning") in Gram form.
 *
 * The paper's loop: for each task i, take its gradient g_i and, for every task j in a random
 * order, if g_i . g_j < 0 project g_i off g_j (g_i -= (g_i . g_j) / |g_j|^2 g_j, with the
 * original g_j); the update is the sum of the projected gradients. Every projected g_i stays in
 * the span of the original gradients, g_i = sum_k C[i][k] g_k, so the whole loop runs on the
 * T x T Gram matrix K = G G^T: g_i . g_j = sum_k C[i][k] K[k][j]. With G the (T, P) stack of
 * task gradients: one BLAS call for K (float64), the loop on K in float64, and the combined
 * gradient c^T G (one GEMV) with c = sum_i C[i]. A task whose gradient is zero projects nothing.
 * Size letters: T tasks, P shared parameters. */
#ifndef SEER_PCGRAD_H
#define SEER_PCGRAD_H

#include <stdint.h>

#include "common/common.h"

#define PCGRAD_MAX_TASKS 64

/* The projection loop on the Gram matrix K (T x T, row-major): writes c (T). The order of the
 * other tasks is drawn per task from rng (a Fisher-Yates shuffle of 0..T-1 for task 0, then
 * task 1, ...), so the same generator state gives the same result. */
void pcgrad_coefficients(const double *K, int T, seer_rng *rng, double *c);

/* G (T, P) float32 task gradients, row stride ldg -> out (P) combined gradient (out64 holds it
 * in float64).
 * Gd (T, P) and K (T, T) are float64 caller workspace: nothing is allocated here. */
void pcgrad_combine(const float *G, int64_t ldg, int T, int64_t P, seer_rng *rng, double *Gd,
                    double *K, float *out, double *out64);

#endif
