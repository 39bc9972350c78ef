/* The CUDA launchers, one block per op family (one .cu file each), declared once: every
 * definition and every caller (backend_cuda.cu's op table, benchmarks/bench_cuda_ops.cu) includes
 * this header, so a changed signature fails to compile instead of linking through C linkage.
 * Each launcher has its CPU twin's name stem and argument order (backend/ops_cpu.h) plus the
 * stream it runs on. Pointers are device memory. */
#ifndef SEER_OPS_CUDA_H
#define SEER_OPS_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "common/common.h"

#ifdef __cplusplus
extern "C" {
#endif

// dense.cu
void linear_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi, const float *w,
    int64_t ldw, const float *b, int64_t n, int fin, int fout, int flags, cudaStream_t st);
void linear_backward_cuda(float *din, int64_t lddi, float *dw, int64_t ldw, float *db,
    const float *dout, int64_t lddo, const float *in, int64_t ldi, const float *w, int64_t n,
    int fin, int fout, cudaStream_t st);

// segment.cu
void gather_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi,
    const int64_t *idx, int64_t n, int w, int accumulate, cudaStream_t st);
void seg_sum_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w, cudaStream_t st);
void seg_mean_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w, cudaStream_t st);
void seg_mean_backward_cuda(float *din, int64_t lddi, const float *dout, int64_t lddo,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w, cudaStream_t st);
void seg_max_forward_cuda(float *out, int64_t ldo, int64_t *arg, const float *in, int64_t ldi,
    const int64_t *ptr, const int64_t *perm, int64_t S, int w, cudaStream_t st);
void seg_max_backward_cuda(float *din, int64_t lddi, const float *dout, int64_t lddo,
    const int64_t *arg, int64_t S, int w, cudaStream_t st);

// pool.cu
void attn_pool_forward_cuda(float *out, float *alpha, const float *in, const float *score,
    const int64_t *ptr, int64_t S, int w, cudaStream_t st);
void attn_pool_backward_cuda(float *din, float *dscore, const float *dout, const float *in,
    const float *out, const float *alpha, const int64_t *ptr, int64_t S, int w,
    cudaStream_t st);
void seg_lse_forward_cuda(float *out, int64_t ldo, float *alpha, const float *in,
    const int64_t *ptr, int64_t S, cudaStream_t st);
void seg_lse_backward_cuda(float *din, const float *dout, int64_t lddo, const float *alpha,
    const int64_t *ptr, int64_t S, cudaStream_t st);

// elementwise.cu
void relu_forward_cuda(float *y, int64_t count, cudaStream_t st);
void relu_backward_cuda(float *dx, const float *y, int64_t count, cudaStream_t st);
void add_rows_cuda(float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w,
    cudaStream_t st);
void copy_rows_cuda(float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w,
    cudaStream_t st);
void adam_update_cuda(float *p, const float *g, float *m, float *v, int64_t P, int kind,
    double lr, double beta1, double beta2, double eps, double wd, int64_t t, cudaStream_t st);
double grad_norm_cuda(const float *g, int64_t P, cudaStream_t st);
void grad_scale_cuda(float *g, int64_t P, float s, cudaStream_t st);
void f32_to_f64_cuda(double *out, const float *in, int64_t n, cudaStream_t st);
void f64_to_f32_cuda(float *out, const double *in, int64_t n, cudaStream_t st);
void loss_sums_cuda(const float *pred, const float *target, int64_t G, int M, double *sums,
    cudaStream_t st);
void loss_grad_cuda(float *dpred, const float *pred, const float *target, int64_t G, int M,
    const double *sums, int task, cudaStream_t st);

// pcgrad.cu
void pcgrad_combine_cuda(const float *G, int64_t ldg, int T, int64_t P, seer_rng *rng,
    double *Gd, double *K, float *out, double *out64, cudaStream_t st);

#ifdef __cplusplus
}
#endif

#endif
