/* train: accuracy metrics in native units and the masked MSE loss.
 * Metrics skip pairs whose truth is NaN (not measured). Spearman uses average ranks for ties;
 * Kendall is tau-b. Predictions that are NaN count as a miss (error 100%+, see metrics.c). */
#ifndef SEER_METRICS_H
#define SEER_METRICS_H

#include <stdint.h>

typedef struct {
    int64_t n;
    double mape, rmspe, within5, within10, spearman, kendall; // percentages for the first four
} label_metrics;

void metrics_compute(const double *pred, const double *truth, int64_t n, label_metrics *out);

/* Masked MSE over (G, M) standardised targets: the mean over labels (that have any valid entry)
 * of the mean squared error over their valid graphs. Writes dLoss/dpred into dpred (may be NULL)
 * and each label's loss into per_label (may be NULL). */
double loss_mse_masked(const float *pred, const float *target, int64_t G, int M, float *dpred,
                       double *per_label);

#endif
