/* backend: the masked MSE loss, the CPU twin of the backend's loss_sums / loss_grad ops (and the
 * whole-batch form the tests and evaluation use). Size letters: G graphs, M labels. */
#ifndef SEER_LOSS_H
#define SEER_LOSS_H

#include <stdint.h>

/* Masked MSE over (G, M) standardised targets. Each label's loss is the mean squared error over
 * its measured (non-NaN) graphs, 0 when it has none; the objective, returned, is their sum (the
 * multi-task sum; PCGrad works on the per-label terms). Writes dObjective/dpred into dpred (may be
 * NULL), each label's loss into per_label and its count of measured graphs into count (either may
 * be NULL). */
double loss_mse_masked(const float *pred, const float *target, int64_t G, int M, float *dpred,
                       double *per_label, int64_t *count);

/* The same in two halves, for a batch spread over ranks: sums (2M) gets each label's count of
 * measured graphs and sum of squared errors (sum them over ranks), then finish takes the global
 * sums and writes dpred, per_label, count for the local graphs and returns the objective. */
void loss_mse_sums(const float *pred, const float *target, int64_t G, int M, double *sums);
double loss_mse_finish(const float *pred, const float *target, int64_t G, int M,
                       const double *sums, float *dpred, double *per_label, int64_t *count);
/* dpred (G, M) = 2 (pred - target) / n_m where target is measured, 0 elsewhere, n_m = sums[2m]
 * (the global count); task >= 0 keeps only that label's column (PCGrad's per-task backward). */
void loss_mse_grad(float *dpred, const float *pred, const float *target, int64_t G, int M,
                   const double *sums, int task);

#endif
