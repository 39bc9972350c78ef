/* backend: the CPU ops (cpu_ops.c), declared once with named parameters: the reference twin of
 * every CUDA launcher (cuda/ops_cuda.h has the same name stems and argument order plus a stream).
 * Semantics are those of the op table in backend.h; ctx (the table's, unused here) comes first. */
#ifndef SEER_OPS_CPU_H
#define SEER_OPS_CPU_H

#include <stdint.h>

void linear_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, const float *w,
    int64_t ldw, const float *b, int64_t n, int fin, int fout, int flags);
void linear_backward_cpu(void *ctx, float *din, int64_t lddi, float *dw, int64_t ldw, float *db,
    const float *dout, int64_t lddo, const float *in, int64_t ldi, const float *w, int64_t n,
    int fin, int fout);
void relu_forward_cpu(void *ctx, float *y, int64_t count);
void relu_backward_cpu(void *ctx, float *dx, const float *y, int64_t count);
void gather_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
    const int64_t *idx, int64_t n, int w, int accumulate);
void seg_sum_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w);
void seg_mean_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w);
void seg_mean_backward_cpu(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w);
void seg_max_forward_cpu(void *ctx, float *out, int64_t ldo, int64_t *arg, const float *in, int64_t ldi,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w);
void seg_max_backward_cpu(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
    const int64_t *arg, int64_t S, int w);
void attn_pool_forward_cpu(void *ctx, float *out, float *alpha, const float *in, const float *score,
    const int64_t *ptr, int64_t S, int w);
void attn_pool_backward_cpu(void *ctx, float *din, float *dscore, const float *dout, const float *in,
    const float *out, const float *alpha, const int64_t *ptr, int64_t S, int w);
void seg_lse_forward_cpu(void *ctx, float *out, int64_t ldo, float *alpha, const float *in,
    const int64_t *ptr, int64_t S);
void seg_lse_backward_cpu(void *ctx, float *din, const float *dout, int64_t lddo, const float *alpha,
    const int64_t *ptr, int64_t S);
void add_rows_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w);
void copy_rows_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w);

#endif
