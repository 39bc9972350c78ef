/* backend: the op table that models are written against, and the CPU implementation.
 *
 * A model never touches memory or loops itself: it calls these ops, so a backend that provides
 * the same table (the CUDA one in cuda/, same names plus a stream) trains the same model. Every
 * op takes the table's ctx first: a backend keeps its state there, not in globals the ops read. All
 * pointers are backend memory. Rows are addressed with a row stride (ld) so that gathers and
 * segment reductions can write straight into a column block of a wider (concatenated) buffer.
 *
 * Conventions: every backward op ACCUMULATES (+=) into its gradient outputs, so one memset per
 * step zeroes all gradients and fan-out needs no bookkeeping. Segments are given in CSR form:
 * segment s covers positions ptr[s] .. ptr[s+1]-1, and position k names row perm[k] (or row k
 * when perm is NULL). Forward reductions loop over a segment sequentially: no atomics, a fixed
 * order, so results are bitwise reproducible for any thread count.
 *
 * NaN policy: seg_max propagates a NaN (the first NaN of the segment wins, its row is the argmax);
 * an empty segment gives 0 with argmax -1 and receives no gradient; seg_mean of an empty segment
 * gives 0; attention pooling over an empty segment gives 0.
 *
 * Size letters: n rows, w width (columns), S segments, fin/fout linear widths. */
#ifndef SEER_BACKEND_H
#define SEER_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

enum { LIN_RELU = 1, LIN_ACC = 2 };

typedef struct seer_backend {
    const char *name;
    // The backend's state, passed to every op as its first argument (ctx): the CUDA backend's
    // stream, handles and workspaces; unused on the CPU. Callers write be->op(be->ctx, ...).
    void *ctx;
    void *(*alloc)(void *ctx, size_t bytes);
    void (*release)(void *ctx, void *p);
    void (*zero)(void *ctx, void *p, size_t bytes);
    void (*upload)(void *ctx, void *dst, const void *src, size_t bytes);   // host -> backend
    void (*download)(void *ctx, void *dst, const void *src, size_t bytes); // backend -> host
    // Sizes the workspace of the products for inputs of up to rows rows, so that no op allocates
    // during a step (model_acts_init calls it; NULL when a backend needs none).
    void (*reserve)(void *ctx, int64_t rows);
    // Waits until the backend's queued work is done ([output] profile times phases with it);
    // NULL where ops run synchronously (the CPU).
    void (*sync)(void *ctx);

    // out(n, fout) = in(n, fin) W^T + b (b may be NULL); with LIN_ACC out += instead of =;
    // with LIN_RELU a ReLU follows. W is (fout, fin) with row stride ldw (ldw = fin for a
    // whole torch.nn.Linear weight; a column block of a wider weight otherwise).
    void (*linear_forward)(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, const float *w,
                           int64_t ldw, const float *b, int64_t n, int fin, int fout, int flags);
    // din += dout W, dW += dout^T in, db += colsum(dout); din and db may be NULL.
    void (*linear_backward)(void *ctx, float *din, int64_t lddi, float *dw, int64_t ldw, float *db,
                            const float *dout, int64_t lddo, const float *in, int64_t ldi,
                            const float *w, int64_t n, int fin, int fout);
    // y = max(y, 0) in place over count contiguous values.
    void (*relu_forward)(void *ctx, float *y, int64_t count);
    // dx *= (y > 0) for the contiguous (n, w) block, y the ReLU output.
    void (*relu_backward)(void *ctx, float *dx, const float *y, int64_t count);

    // out[i] = in[idx[i]] for i < n, or out[i] += in[idx[i]] when accumulate != 0.
    void (*gather_forward)(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
                           const int64_t *idx, int64_t n, int w, int accumulate);
    // out[s] += sum over the segment of in[row]: the backward of a gather, run on the transposed
    // index (CSC) instead of scattering with atomics.
    void (*seg_sum_forward)(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
                            const int64_t *ptr, const int64_t *perm, int64_t S, int w);
    void (*seg_mean_forward)(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
                             const int64_t *ptr, const int64_t *perm, int64_t S, int w);
    void (*seg_mean_backward)(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
                              const int64_t *ptr, const int64_t *perm, int64_t S, int w);
    // out[s, c] = max over the segment; arg (S, w) holds the winning row (lowest position on ties).
    void (*seg_max_forward)(void *ctx, float *out, int64_t ldo, int64_t *arg, const float *in, int64_t ldi,
                            const int64_t *ptr, const int64_t *perm, int64_t S, int w);
    void (*seg_max_backward)(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
                             const int64_t *arg, int64_t S, int w);
    // Softmax-attention pooling over contiguous segments: alpha = softmax(score) per segment,
    // out[s] = sum alpha_k in[k]. in is (n, w) contiguous.
    void (*attn_pool_forward)(void *ctx, float *out, float *alpha, const float *in, const float *score,
                              const int64_t *ptr, int64_t S, int w);
    void (*attn_pool_backward)(void *ctx, float *din, float *dscore, const float *dout, const float *in,
                               const float *out, const float *alpha, const int64_t *ptr,
                               int64_t S, int w);
    // Log-sum-exp over contiguous segments of a column (the additive readout, model.h):
    // out[s * ldo] += log sum_k exp(in[k]) and alpha = softmax(in) per segment (an empty segment
    // adds nothing); the backward adds din[k] += alpha[k] dout[s * lddo].
    void (*seg_lse_forward)(void *ctx, float *out, int64_t ldo, float *alpha, const float *in,
                            const int64_t *ptr, int64_t S);
    void (*seg_lse_backward)(void *ctx, float *din, const float *dout, int64_t lddo,
                             const float *alpha, const int64_t *ptr, int64_t S);
    // out[i, :w] += in[i, :w] for i < n (strided add, also the backward of a strided copy).
    void (*add_rows)(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w);
    // out[i, :w] = in[i, :w].
    void (*copy_rows)(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w);

    // Training only (NULL in libseer): the optimizer (backend/adam.h), the gradient norm and
    // scaling of clipping, and PCGrad (backend/pcgrad.h; Gd and out64 backend memory, K host).
    void (*adam_update)(void *ctx, float *p, const float *g, float *m, float *v, int64_t P, int kind,
                        double lr, double beta1, double beta2, double eps, double wd, int64_t t);
    double (*grad_norm)(void *ctx, const float *g, int64_t P);
    void (*grad_scale)(void *ctx, float *g, int64_t P, float s);
    void (*pcgrad_combine)(void *ctx, const float *G, int64_t ldg, int T, int64_t P, seer_rng *rng,
                           double *Gd, double *K, float *out, double *out64);
    // The masked MSE (backend/loss.h): per label the count of measured graphs and the sum of
    // squared errors into sums (2M doubles, host memory), and the output gradient.
    void (*loss_sums)(void *ctx, const float *pred, const float *target, int64_t G, int M, double *sums);
    void (*loss_grad)(void *ctx, float *dpred, const float *pred, const float *target, int64_t G, int M,
                      const double *sums, int task);
    int device; // 1: pointers are device memory, which host code must not touch
} seer_backend;

const seer_backend *backend_cpu(void);

/* Thread count for the CPU backend (OpenMP loops and OpenBLAS). */
void backend_cpu_set_threads(int threads);

/* OpenBLAS chooses its kernels when it loads, from the processor it detects, and a release older
 * than the processor falls back to its pre-AVX ones (Debian 12's OpenBLAS 0.3.21 on Intel family 6
 * model 207: Prescott, SSE3): training 2 to 4x slower than the processor allows (benchmarks/
 * RESULTS.md, "A fourth CPU, and the BLAS kernels it ran"). Called by seertrain (once its config
 * validates) and bench_train: when
 * OPENBLAS_CORETYPE is unset and OpenBLAS runs pre-AVX kernels on a processor with AVX2, it sets
 * OPENBLAS_CORETYPE to the best kernels the processor runs (SkylakeX with AVX-512, else Haswell),
 * says so in one line on stdout (stderr keeps one line per error), and executes the program again with the same arguments; it
 * returns when there is nothing to change (or the program cannot be executed again: then it warns).
 * A user's own OPENBLAS_CORETYPE, any value, is left as it is. */
void backend_cpu_blas_kernels(char **argv, const char *tool);

/* The pre-AVX OpenBLAS kernel sets (openblas_get_corename's names): 1 when name is one of them. */
int backend_blas_core_pre_avx(const char *name);

#endif
