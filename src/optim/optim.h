/* optim: Adam / AdamW over the flat parameter buffer, gradient-norm clipping, and the learning-
 * rate schedules (ReduceLROnPlateau as in PerfSeer, cosine). Size letter P: parameter count. */
#ifndef SEER_OPTIM_H
#define SEER_OPTIM_H

#include <stdint.h>

enum { OPT_ADAM = 0, OPT_ADAMW = 1 };

/* One step (t counts from 1). Adam adds wd * p to the gradient (L2); AdamW decays the weights
 * directly by lr * wd (Loshchilov & Hutter). Bias-corrected as torch.optim.Adam. */
void adam_update(float *p, const float *g, float *m, float *v, int64_t P, int kind, double lr,
                 double beta1, double beta2, double eps, double wd, int64_t t);

/* Global L2 norm of g, accumulated in float64 in a fixed order. */
double grad_norm(const float *g, int64_t P);
void grad_scale(float *g, int64_t P, float s);

enum { SCHED_NONE = 0, SCHED_PLATEAU = 1, SCHED_COSINE = 2 };

typedef struct {
    int kind;
    double lr0, lr, min_lr, factor;
    int64_t patience, bad_epochs, total_epochs;
    double best; // best monitored value (plateau); starts at +inf
} lr_schedule;

void sched_init(lr_schedule *s, int kind, double lr0, double min_lr, double factor,
                int64_t patience, int64_t total_epochs);
/* Call at the end of an epoch (epoch counts from 1) with the validation loss; updates s->lr. */
void sched_epoch_end(lr_schedule *s, int64_t epoch, double val_loss);

#endif
