/* The CPU backend: the reference implementation of every op in backend.h.
 *
 * Dense products go through OpenBLAS; the sparse ops are plain loops, parallel over output rows
 * (OpenMP) with a sequential inner loop, so every output element is computed by one thread in a
 * fixed order and results do not depend on the thread count. Size letters as in backend.h. */
#define _POSIX_C_SOURCE 200809L // setenv (backend_cpu_blas_kernels)
#include <math.h>
#ifdef SEER_LIBSEER
// libseer: the same ops without BLAS or OpenMP (src/backend/mini_blas.h), and no exit on
// out-of-memory (alloc returns NULL to the caller).
#include "mini_blas.h"
#else
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <unistd.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "ops_cpu.h"
#include "common/common.h"
#ifndef SEER_LIBSEER
#include "adam.h"
#include "loss.h"
#include "pcgrad.h"
#endif

#define ROW(p, ld, i) ((p) + (int64_t)(i) * (ld))
#define POS(perm, k) ((perm) ? (perm)[k] : (k))

static void *cpu_alloc(void *ctx, size_t bytes) {
    (void)ctx;
    // 64-byte alignment for vector loads; round the size up as aligned_alloc requires.
    size_t n = (bytes + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, n ? n : 64);
#ifndef SEER_LIBSEER
    if (!p) seer_die("out of memory allocating %zu bytes", bytes);
#endif
    return p;
}
static void cpu_release(void *ctx, void *p) { (void)ctx, free(p); }
static void cpu_zero(void *ctx, void *p, size_t bytes) { (void)ctx, memset(p, 0, bytes); }
static void cpu_copy(void *ctx, void *dst, const void *src, size_t bytes) {
    (void)ctx, memcpy(dst, src, bytes);
}

void linear_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, const float *w,
                        int64_t ldw, const float *b, int64_t n, int fin, int fout, int flags) {
    (void)ctx;
    if (n == 0) return;
#ifdef SEER_LIBSEER
    // libseer: one fused pass (bias and ReLU in the product's epilogue)
    seer_mb_linear(out, (int)ldo, in, (int)ldi, w, (int)ldw, b, (int)n, fin, fout,
                   flags & LIN_ACC, flags & LIN_RELU);
    return;
#endif
    float beta = flags & LIN_ACC ? 1.0f : 0.0f;
    if (b) {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            float *r = ROW(out, ldo, i);
            if (flags & LIN_ACC)
                for (int j = 0; j < fout; j++) r[j] += b[j];
            else
                memcpy(r, b, sizeof(float) * (size_t)fout);
        }
        beta = 1.0f;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, fout, fin, 1.0f, in, (int)ldi, w,
                (int)ldw, beta, out, (int)ldo);
    if (flags & LIN_RELU) {
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; i++) {
            float *r = ROW(out, ldo, i);
            for (int j = 0; j < fout; j++) r[j] = r[j] > 0.0f ? r[j] : 0.0f;
        }
    }
}

/* The vector of ones linear_backward_cpu's bias gradient multiplies by (colsum(dout) as one GEMV:
 * OpenBLAS streams dout once, 9% faster end to end than a hand loop, benchmarks/RESULTS.md). It
 * is sized by cpu_reserve before training (model_acts_init); the CPU backend is driven by one
 * thread (the trainer), and libseer runs no backward pass. */
static float *ones = NULL;
static int64_t n_ones = 0;

static void cpu_reserve(void *ctx, int64_t rows) {
    (void)ctx;
    if (rows <= n_ones) return;
    float *p = aligned_alloc(64, ((size_t)rows * sizeof(float) + 63) & ~(size_t)63);
    if (!p) seer_die("out of memory allocating %lld floats", (long long)rows);
    for (int64_t i = 0; i < rows; i++) p[i] = 1.0f;
    free(ones);
    ones = p, n_ones = rows;
}

void linear_backward_cpu(void *ctx, float *din, int64_t lddi, float *dw, int64_t ldw, float *db,
                         const float *dout, int64_t lddo, const float *in, int64_t ldi,
                         const float *w, int64_t n, int fin, int fout) {
    (void)ctx;
    if (n == 0) return;
    if (din)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, fin, fout, 1.0f, dout,
                    (int)lddo, w, (int)ldw, 1.0f, din, (int)lddi);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, fout, fin, (int)n, 1.0f, dout, (int)lddo,
                in, (int)ldi, 1.0f, dw, (int)ldw);
    if (db) {
        // a caller that did not reserve (a unit test of one op) sizes the vector here
        if (n > n_ones) cpu_reserve(ctx, n);
        cblas_sgemv(CblasRowMajor, CblasTrans, (int)n, fout, 1.0f, dout, (int)lddo, ones, 1, 1.0f,
                    db, 1);
    }
}

void relu_forward_cpu(void *ctx, float *y, int64_t count) {
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; i++) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

void relu_backward_cpu(void *ctx, float *dx, const float *y, int64_t count) {
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; i++)
        if (!(y[i] > 0.0f)) dx[i] = 0.0f;
}

void gather_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, const int64_t *idx,
                        int64_t n, int w, int accumulate) {
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float *o = ROW(out, ldo, i);
        const float *x = ROW(in, ldi, idx[i]);
        if (accumulate)
            for (int j = 0; j < w; j++) o[j] += x[j];
        else
            memcpy(o, x, sizeof(float) * (size_t)w);
    }
}

void seg_sum_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, const int64_t *ptr,
                         const int64_t *perm, int64_t S, int w) {
    (void)ctx;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t s = 0; s < S; s++) {
        float *o = ROW(out, ldo, s);
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) {
            const float *x = ROW(in, ldi, POS(perm, k));
            for (int j = 0; j < w; j++) o[j] += x[j];
        }
    }
}

void seg_mean_forward_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
                          const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    (void)ctx;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t s = 0; s < S; s++) {
        float *o = ROW(out, ldo, s);
        memset(o, 0, sizeof(float) * (size_t)w);
        int64_t deg = ptr[s + 1] - ptr[s];
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) {
            const float *x = ROW(in, ldi, POS(perm, k));
            for (int j = 0; j < w; j++) o[j] += x[j];
        }
        float inv = 1.0f / (float)(deg > 0 ? deg : 1);
        for (int j = 0; j < w; j++) o[j] *= inv;
    }
}

void seg_mean_backward_cpu(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
                           const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    (void)ctx;
    // Each row belongs to one segment, so segments write disjoint rows: no races.
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t s = 0; s < S; s++) {
        int64_t deg = ptr[s + 1] - ptr[s];
        if (deg == 0) continue;
        float inv = 1.0f / (float)deg;
        const float *g = ROW(dout, lddo, s);
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) {
            float *d = ROW(din, lddi, POS(perm, k));
            for (int j = 0; j < w; j++) d[j] += g[j] * inv;
        }
    }
}

void seg_max_forward_cpu(void *ctx, float *out, int64_t ldo, int64_t *arg, const float *in, int64_t ldi,
                         const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    (void)ctx;
#pragma omp parallel for schedule(dynamic, 64)
    for (int64_t s = 0; s < S; s++) {
        float *o = ROW(out, ldo, s);
        int64_t *a = arg + s * (int64_t)w;
        if (ptr[s] == ptr[s + 1]) {
            for (int j = 0; j < w; j++) o[j] = 0.0f, a[j] = -1;
            continue;
        }
        int64_t r0 = POS(perm, ptr[s]);
        const float *x0 = ROW(in, ldi, r0);
        for (int j = 0; j < w; j++) o[j] = x0[j], a[j] = r0;
        for (int64_t k = ptr[s] + 1; k < ptr[s + 1]; k++) {
            int64_t r = POS(perm, k);
            const float *x = ROW(in, ldi, r);
            for (int j = 0; j < w; j++) {
                // Strictly greater keeps the lowest position on ties; once the running value is
                // NaN it stays (NaN propagates), and a NaN replaces a number.
                if (o[j] == o[j] && (x[j] > o[j] || x[j] != x[j])) o[j] = x[j], a[j] = r;
            }
        }
    }
}

void seg_max_backward_cpu(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
                          const int64_t *arg, int64_t S, int w) {
    (void)ctx;
    // arg rows of distinct segments are distinct (each row is in one segment): no races.
#pragma omp parallel for schedule(static)
    for (int64_t s = 0; s < S; s++) {
        const float *g = ROW(dout, lddo, s);
        const int64_t *a = arg + s * (int64_t)w;
        for (int j = 0; j < w; j++)
            if (a[j] >= 0) ROW(din, lddi, a[j])[j] += g[j];
    }
}

/* alpha = softmax of score over the segment [k0, k1) (max first, the normaliser in float64);
 * returns the segment's log-sum-exp. k0 < k1. */
static double seg_softmax(float *alpha, const float *score, int64_t k0, int64_t k1) {
    float mx = score[k0];
    for (int64_t k = k0 + 1; k < k1; k++) mx = score[k] > mx ? score[k] : mx;
    double z = 0.0;
    for (int64_t k = k0; k < k1; k++) z += exp((double)(score[k] - mx));
    for (int64_t k = k0; k < k1; k++) alpha[k] = (float)(exp((double)(score[k] - mx)) / z);
    return (double)mx + log(z);
}

void attn_pool_forward_cpu(void *ctx, float *out, float *alpha, const float *in, const float *score,
                           const int64_t *ptr, int64_t S, int w) {
    (void)ctx;
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t s = 0; s < S; s++) {
        float *o = out + s * (int64_t)w;
        memset(o, 0, sizeof(float) * (size_t)w);
        if (ptr[s] == ptr[s + 1]) continue;
        seg_softmax(alpha, score, ptr[s], ptr[s + 1]);
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) {
            const float *x = in + k * (int64_t)w;
            for (int j = 0; j < w; j++) o[j] += alpha[k] * x[j];
        }
    }
}

void seg_lse_forward_cpu(void *ctx, float *out, int64_t ldo, float *alpha, const float *in,
                         const int64_t *ptr, int64_t S) {
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (int64_t s = 0; s < S; s++)
        if (ptr[s] < ptr[s + 1]) out[s * ldo] += (float)seg_softmax(alpha, in, ptr[s], ptr[s + 1]);
}

void seg_lse_backward_cpu(void *ctx, float *din, const float *dout, int64_t lddo, const float *alpha,
                          const int64_t *ptr, int64_t S) {
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (int64_t s = 0; s < S; s++)
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) din[k] += alpha[k] * dout[s * lddo];
}

void attn_pool_backward_cpu(void *ctx, float *din, float *dscore, const float *dout, const float *in,
                            const float *out, const float *alpha, const int64_t *ptr, int64_t S,
                            int w) {
    (void)ctx;
    // d in_k = alpha_k dout;  d score_k = alpha_k (in_k . dout - out . dout).
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t s = 0; s < S; s++) {
        const float *g = dout + s * (int64_t)w, *o = out + s * (int64_t)w;
        float od = 0.0f;
        for (int j = 0; j < w; j++) od += o[j] * g[j];
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) {
            const float *x = in + k * (int64_t)w;
            float *d = din + k * (int64_t)w, xd = 0.0f, a = alpha[k];
            for (int j = 0; j < w; j++) {
                xd += x[j] * g[j];
                d[j] += a * g[j];
            }
            dscore[k] += a * (xd - od);
        }
    }
}

void add_rows_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w) {
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
        float *o = ROW(out, ldo, i);
        const float *x = ROW(in, ldi, i);
        for (int j = 0; j < w; j++) o[j] += x[j];
    }
}

void copy_rows_cpu(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w) {
    (void)ctx;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++)
        memcpy(ROW(out, ldo, i), ROW(in, ldi, i), sizeof(float) * (size_t)w);
}

#ifndef SEER_LIBSEER
/* The training ops (backend/adam.h, pcgrad.h, loss.h) behind the table's signature. */
static void adam_update_cpu(void *ctx, float *p, const float *g, float *m, float *v, int64_t P,
                            int kind, double lr, double beta1, double beta2, double eps, double wd,
                            int64_t t) {
    (void)ctx, adam_update(p, g, m, v, P, kind, lr, beta1, beta2, eps, wd, t);
}
static double grad_norm_cpu(void *ctx, const float *g, int64_t P) { return (void)ctx, grad_norm(g, P); }
static void grad_scale_cpu(void *ctx, float *g, int64_t P, float s) { (void)ctx, grad_scale(g, P, s); }
static void pcgrad_combine_cpu(void *ctx, const float *G, int64_t ldg, int T, int64_t P,
                               seer_rng *rng, double *Gd, double *K, float *out, double *out64) {
    (void)ctx, pcgrad_combine(G, ldg, T, P, rng, Gd, K, out, out64);
}
static void loss_sums_cpu(void *ctx, const float *pred, const float *target, int64_t G, int M,
                          double *sums) {
    (void)ctx, loss_mse_sums(pred, target, G, M, sums);
}
static void loss_grad_cpu(void *ctx, float *dpred, const float *pred, const float *target,
                          int64_t G, int M, const double *sums, int task) {
    (void)ctx, loss_mse_grad(dpred, pred, target, G, M, sums, task);
}
#endif

static const seer_backend cpu_backend = {
    .name = "cpu",
    .alloc = cpu_alloc,
    .release = cpu_release,
    .zero = cpu_zero,
    .upload = cpu_copy,
    .download = cpu_copy,
    .reserve = cpu_reserve,
    .linear_forward = linear_forward_cpu,
    .linear_backward = linear_backward_cpu,
    .relu_forward = relu_forward_cpu,
    .relu_backward = relu_backward_cpu,
    .gather_forward = gather_forward_cpu,
    .seg_sum_forward = seg_sum_forward_cpu,
    .seg_mean_forward = seg_mean_forward_cpu,
    .seg_mean_backward = seg_mean_backward_cpu,
    .seg_max_forward = seg_max_forward_cpu,
    .seg_max_backward = seg_max_backward_cpu,
    .attn_pool_forward = attn_pool_forward_cpu,
    .attn_pool_backward = attn_pool_backward_cpu,
    .seg_lse_forward = seg_lse_forward_cpu,
    .seg_lse_backward = seg_lse_backward_cpu,
    .add_rows = add_rows_cpu,
    .copy_rows = copy_rows_cpu,
#ifndef SEER_LIBSEER
    .adam_update = adam_update_cpu,
    .grad_norm = grad_norm_cpu,
    .grad_scale = grad_scale_cpu,
    .pcgrad_combine = pcgrad_combine_cpu,
    .loss_sums = loss_sums_cpu,
    .loss_grad = loss_grad_cpu,
#endif
};

const seer_backend *backend_cpu(void) { return &cpu_backend; }

void backend_cpu_set_threads(int threads) {
    if (threads < 1) threads = 1;
#ifndef SEER_LIBSEER
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
#endif
}

#ifndef SEER_LIBSEER
int backend_blas_core_pre_avx(const char *name) {
    static const char *const OLD[] = {"Prescott", "Core2",  "Penryn",  "Dunnington", "Nehalem",
                                      "Atom",     "Katmai", "Coppermine", "Northwood", "Banias",
                                      "Athlon",   "Opteron", "Opteron_SSE3", "Barcelona", "Nano"};
    for (size_t i = 0; name && i < sizeof OLD / sizeof *OLD; i++)
        if (!strcmp(name, OLD[i])) return 1;
    return 0;
}

void backend_cpu_blas_kernels(char **argv, const char *tool) {
    const char *core = openblas_get_corename();
    if (getenv("OPENBLAS_CORETYPE") || !backend_blas_core_pre_avx(core)) return;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2")) return; // the old kernels are this processor's best
    const char *best = __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
    // on stdout, the run's log: stderr holds errors alone (one line for a bad input)
    printf("%s: OpenBLAS chose its %s (pre-AVX) kernels on this processor, which it does not know; "
           "running with OPENBLAS_CORETYPE=%s (set OPENBLAS_CORETYPE to choose)\n", tool, core, best);
    fflush(stdout);
    if (setenv("OPENBLAS_CORETYPE", best, 1) == 0) execv("/proc/self/exe", argv);
    fprintf(stderr, "%s: warning: could not run again with OPENBLAS_CORETYPE=%s; matrix products use "
                    "the %s kernels (2 to 4x slower): set it yourself\n", tool, best, core);
}
#endif
