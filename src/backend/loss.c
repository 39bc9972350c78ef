/* backend: the masked MSE on the CPU (see loss.h). */
#include "loss.h"

#include <math.h>
#include <string.h>

#include "common/common.h"

void loss_mse_sums(const float *pred, const float *target, int64_t G, int M, double *sums) {
    for (int m = 0; m < M; m++) {
        int64_t n = 0;
        double s = 0.0;
        for (int64_t g = 0; g < G; g++) {
            float t = target[g * M + m];
            if (isnan(t)) continue;
            double r = (double)pred[g * M + m] - (double)t;
            s += r * r, n++;
        }
        sums[2 * m] = (double)n, sums[2 * m + 1] = s;
    }
}

void loss_mse_grad(float *dpred, const float *pred, const float *target, int64_t G, int M,
                   const double *sums, int task) {
    for (int64_t g = 0; g < G; g++)
        for (int m = 0; m < M; m++) {
            float t = target[g * M + m];
            double r = isnan(t) ? 0.0 : (double)pred[g * M + m] - (double)t;
            dpred[g * M + m] = isnan(t) || (task >= 0 && m != task) ? 0.0f
                                                                    : (float)(2.0 * r / sums[2 * m]);
        }
}

double loss_mse_finish(const float *pred, const float *target, int64_t G, int M,
                       const double *sums, float *dpred, double *per_label, int64_t *count) {
    double total = 0.0;
    if (dpred) loss_mse_grad(dpred, pred, target, G, M, sums, -1);
    for (int m = 0; m < M; m++) {
        double n = sums[2 * m], lm = n ? sums[2 * m + 1] / n : 0.0;
        if (per_label) per_label[m] = lm;
        if (count) count[m] = (int64_t)n;
        total += lm;
    }
    return total;
}

double loss_mse_masked(const float *pred, const float *target, int64_t G, int M, float *dpred,
                       double *per_label, int64_t *count) {
    double sums[2 * 64];
    SEER_ASSERT(M <= 64);
    loss_mse_sums(pred, target, G, M, sums);
    return loss_mse_finish(pred, target, G, M, sums, dpred, per_label, count);
}
