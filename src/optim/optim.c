/* optim: Adam / AdamW, clipping and schedules (see optim.h). */
#include "optim.h"

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

void sched_init(lr_schedule *s, int kind, double lr0, double min_lr, double factor,
                int64_t patience, int64_t total_epochs) {
    s->kind = kind, s->lr0 = s->lr = lr0, s->min_lr = min_lr, s->factor = factor;
    s->patience = patience, s->bad_epochs = 0, s->total_epochs = total_epochs;
    s->best = INFINITY;
}

void sched_epoch_end(lr_schedule *s, int64_t epoch, double val_loss) {
    if (s->kind == SCHED_PLATEAU) {
        // torch's ReduceLROnPlateau, mode min, threshold 1e-4 relative.
        if (val_loss < s->best * (1.0 - 1e-4)) {
            s->best = val_loss;
            s->bad_epochs = 0;
        } else if (++s->bad_epochs > s->patience) {
            s->lr = fmax(s->lr * s->factor, s->min_lr);
            s->bad_epochs = 0;
        }
    } else if (s->kind == SCHED_COSINE) {
        double frac = s->total_epochs > 0 ? (double)epoch / (double)s->total_epochs : 1.0;
        if (frac > 1) frac = 1;
        s->lr = s->min_lr + 0.5 * (s->lr0 - s->min_lr) * (1.0 + cos(3.141592653589793 * frac));
    }
}
