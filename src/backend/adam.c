/* backend: Adam / AdamW and clipping on the CPU (see adam.h). */
#include "adam.h"

#include <math.h>

void adam_update(float *p, const float *g, float *m, float *v, int64_t P, int kind, double lr,
                 double beta1, double beta2, double eps, double wd, int64_t t) {
    double bc1 = 1.0 - pow(beta1, (double)t), bc2 = 1.0 - pow(beta2, (double)t);
    float b1 = (float)beta1, b2 = (float)beta2, step = (float)(lr / bc1);
    float inv_bc2 = (float)(1.0 / sqrt(bc2)), e = (float)eps, decay = (float)(lr * wd);
    float l2 = kind == OPT_ADAM ? (float)wd : 0.0f;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < P; i++) {
        float gi = g[i] + l2 * p[i];
        m[i] = b1 * m[i] + (1.0f - b1) * gi;
        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
        if (kind == OPT_ADAMW) p[i] -= decay * p[i];
        p[i] -= step * m[i] / (sqrtf(v[i]) * inv_bc2 + e);
    }
}

double grad_norm(const float *g, int64_t P) {
    double s = 0.0;
    for (int64_t i = 0; i < P; i++) s += (double)g[i] * (double)g[i];
    return sqrt(s);
}

void grad_scale(float *g, int64_t P, float s) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < P; i++) g[i] *= s;
}
