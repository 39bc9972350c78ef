/* backend: Adam / AdamW over the flat parameter buffer and gradient-norm clipping, on the CPU
 * (the CUDA twins are in cuda/elementwise.cu). Size letter P: parameter count. */
#ifndef SEER_ADAM_H
#define SEER_ADAM_H

#include <stdint.h>

enum { OPT_ADAM = 0, OPT_ADAMW = 1 };

/* One step (t counts from 1). Adam adds wd * p to the gradient (L2); AdamW decays the weights
 * directly by lr * wd (Loshchilov & Hutter). Bias-corrected as torch.optim.Adam. */
void adam_update(float *p, const float *g, float *m, float *v, int64_t P, int kind, double lr,
                 double beta1, double beta2, double eps, double wd, int64_t t);

/* Global L2 norm of g, accumulated in float64 in a fixed order. */
double grad_norm(const float *g, int64_t P);
void grad_scale(float *g, int64_t P, float s);

#endif
