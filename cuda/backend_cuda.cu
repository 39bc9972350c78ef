/* The CUDA backend's state and op table (see cuda_backend.h). */
#include <stdio.h>
#include <string.h>

#include "common.cuh"

extern "C" {
#include "backend/pcgrad.h"
}

struct cuda_state cuda_st = {-1, 0, 0, 0, 0, 0, 0, 0, 0, ""};

// the stream of the backend state the op table passes as ctx
#define ST (((const struct cuda_state *)ctx)->stream)

/* The blocks c_alloc handed out (a run holds a few dozen), for the memory figure. */
#define MAX_BLOCKS 1024
static struct { void *p; size_t n; } blocks[MAX_BLOCKS];
static size_t allocated;

static void *c_alloc(void *, size_t bytes) {
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
    if (e != cudaSuccess)
        seer_die("CUDA: out of device memory allocating %zu bytes on %s (%s); lower [train] "
                 "batch_size or eval_batch_size", bytes, cuda_st.name, cudaGetErrorString(e));
    for (int i = 0; i < MAX_BLOCKS; i++)
        if (!blocks[i].p) {
            blocks[i].p = p, blocks[i].n = bytes;
            allocated += bytes;
            break;
        }
    return p;
}
static void c_release(void *, void *p) {
    if (!p) return;
    for (int i = 0; i < MAX_BLOCKS; i++)
        if (blocks[i].p == p) {
            allocated -= blocks[i].n;
            blocks[i].p = NULL;
            break;
        }
    CUDA_CHECK(cudaFree(p));
}
static void c_sync(void *ctx) { CUDA_CHECK(cudaStreamSynchronize(ST)); }
static void c_zero(void *ctx, void *p, size_t bytes) { if (bytes) CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, ST)); }
static void c_upload(void *ctx, void *dst, const void *src, size_t bytes) {
    if (bytes) CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ST));
}
static void c_download(void *ctx, void *dst, const void *src, size_t bytes) {
    if (!bytes) return;
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ST));
    CUDA_CHECK(cudaStreamSynchronize(ST));
}

static void t_linear_forward(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, const float *w,
                             int64_t ldw, const float *b, int64_t n, int fin, int fout, int flags) {
    linear_forward_cuda(out, ldo, in, ldi, w, ldw, b, n, fin, fout, flags, ST);
}
static void t_linear_backward(void *ctx, float *din, int64_t lddi, float *dw, int64_t ldw, float *db,
                              const float *dout, int64_t lddo, const float *in, int64_t ldi,
                              const float *w, int64_t n, int fin, int fout) {
    linear_backward_cuda(din, lddi, dw, ldw, db, dout, lddo, in, ldi, w, n, fin, fout, ST);
}
static void t_relu_forward(void *ctx, float *y, int64_t count) { relu_forward_cuda(y, count, ST); }
static void t_relu_backward(void *ctx, float *dx, const float *y, int64_t count) { relu_backward_cuda(dx, y, count, ST); }
static void t_gather_forward(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
                             const int64_t *idx, int64_t n, int w, int acc) {
    gather_forward_cuda(out, ldo, in, ldi, idx, n, w, acc, ST);
}
static void t_seg_sum_forward(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
                              const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    seg_sum_forward_cuda(out, ldo, in, ldi, ptr, perm, S, w, ST);
}
static void t_seg_mean_forward(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi,
                               const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    seg_mean_forward_cuda(out, ldo, in, ldi, ptr, perm, S, w, ST);
}
static void t_seg_mean_backward(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
                                const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    seg_mean_backward_cuda(din, lddi, dout, lddo, ptr, perm, S, w, ST);
}
static void t_seg_max_forward(void *ctx, float *out, int64_t ldo, int64_t *arg, const float *in, int64_t ldi,
                              const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    seg_max_forward_cuda(out, ldo, arg, in, ldi, ptr, perm, S, w, ST);
}
static void t_seg_max_backward(void *ctx, float *din, int64_t lddi, const float *dout, int64_t lddo,
                               const int64_t *arg, int64_t S, int w) {
    seg_max_backward_cuda(din, lddi, dout, lddo, arg, S, w, ST);
}
static void t_attn_pool_forward(void *ctx, float *out, float *alpha, const float *in, const float *score,
                                const int64_t *ptr, int64_t S, int w) {
    attn_pool_forward_cuda(out, alpha, in, score, ptr, S, w, ST);
}
static void t_attn_pool_backward(void *ctx, float *din, float *dscore, const float *dout, const float *in,
                                 const float *out, const float *alpha, const int64_t *ptr,
                                 int64_t S, int w) {
    attn_pool_backward_cuda(din, dscore, dout, in, out, alpha, ptr, S, w, ST);
}
static void t_seg_lse_forward(void *ctx, float *out, int64_t ldo, float *alpha, const float *in,
                              const int64_t *ptr, int64_t S) {
    seg_lse_forward_cuda(out, ldo, alpha, in, ptr, S, ST);
}
static void t_seg_lse_backward(void *ctx, float *din, const float *dout, int64_t lddo,
                               const float *alpha, const int64_t *ptr, int64_t S) {
    seg_lse_backward_cuda(din, dout, lddo, alpha, ptr, S, ST);
}
static void t_add_rows(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w) {
    add_rows_cuda(out, ldo, in, ldi, n, w, ST);
}
static void t_copy_rows(void *ctx, float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w) {
    copy_rows_cuda(out, ldo, in, ldi, n, w, ST);
}
static void t_adam_update(void *ctx, float *p, const float *g, float *m, float *v, int64_t P, int kind,
                          double lr, double b1, double b2, double eps, double wd, int64_t t) {
    adam_update_cuda(p, g, m, v, P, kind, lr, b1, b2, eps, wd, t, ST);
}
static double t_grad_norm(void *ctx, const float *g, int64_t P) { return grad_norm_cuda(g, P, ST); }
static void t_grad_scale(void *ctx, float *g, int64_t P, float s) { grad_scale_cuda(g, P, s, ST); }
static void t_pcgrad_combine(void *ctx, const float *G, int64_t ldg, int T, int64_t P, seer_rng *rng,
                             double *Gd, double *K, float *out, double *out64) {
    pcgrad_combine_cuda(G, ldg, T, P, rng, Gd, K, out, out64, ST);
}

static void t_loss_sums(void *ctx, const float *pred, const float *target, int64_t G, int M, double *sums) {
    loss_sums_cuda(pred, target, G, M, sums, ST);
}
static void t_loss_grad(void *ctx, float *dpred, const float *pred, const float *target, int64_t G, int M,
                        const double *sums, int task) {
    loss_grad_cuda(dpred, pred, target, G, M, sums, task, ST);
}

/* The op table, filled by field name (two ops of the same type cannot be swapped unnoticed). */
static seer_backend make_table(void) {
    seer_backend t;
    memset(&t, 0, sizeof t);
    t.name = "cuda";
    t.ctx = &cuda_st;
    t.alloc = c_alloc, t.release = c_release, t.zero = c_zero;
    t.upload = c_upload, t.download = c_download, t.sync = c_sync;
    t.linear_forward = t_linear_forward, t.linear_backward = t_linear_backward;
    t.relu_forward = t_relu_forward, t.relu_backward = t_relu_backward;
    t.gather_forward = t_gather_forward;
    t.seg_sum_forward = t_seg_sum_forward;
    t.seg_mean_forward = t_seg_mean_forward, t.seg_mean_backward = t_seg_mean_backward;
    t.seg_max_forward = t_seg_max_forward, t.seg_max_backward = t_seg_max_backward;
    t.attn_pool_forward = t_attn_pool_forward, t.attn_pool_backward = t_attn_pool_backward;
    t.seg_lse_forward = t_seg_lse_forward, t.seg_lse_backward = t_seg_lse_backward;
    t.add_rows = t_add_rows, t.copy_rows = t_copy_rows;
    t.adam_update = t_adam_update, t.grad_norm = t_grad_norm, t.grad_scale = t_grad_scale;
    t.pcgrad_combine = t_pcgrad_combine;
    t.loss_sums = t_loss_sums, t.loss_grad = t_loss_grad;
    t.device = 1;
    return t;
}
static const seer_backend table = make_table();


extern "C" int cuda_device_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); // no driver or no device: clear the sticky error
        return 0;
    }
    return n;
}

extern "C" int cuda_backend_init(int device, int precision, seer_err *err) {
    if (cuda_st.device == device) { // again (one model per label): keep the stream and workspaces
        cuda_st.precision = precision;
        return 0;
    }
    if (cuda_st.device >= 0)
        return seer_fail(err, "CUDA backend already on device %d (asked for %d)", cuda_st.device, device);
    int n = cuda_device_count();
    if (n == 0) return seer_fail(err, "no CUDA device (or no NVIDIA driver) on this machine");
    if (device < 0 || device >= n)
        return seer_fail(err, "CUDA device %d does not exist (this machine has %d)", device, n);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return seer_fail(err, "CUDA device %d: %s", device, cudaGetErrorString(e));
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    snprintf(cuda_st.name, sizeof cuda_st.name, "%.100s (sm_%d%d, %.1f GiB)", p.name, p.major, p.minor,
             (double)p.totalGlobalMem / (1 << 30));
    if (p.major < 9)
        fprintf(stderr, "seer: warning: %s: this build targets sm_90 (PTX is JIT-compiled for "
                        "older devices)\n", cuda_st.name);
    cuda_st.device = device, cuda_st.precision = precision;
    CUDA_CHECK(cudaStreamCreateWithFlags(&cuda_st.stream, cudaStreamNonBlocking));
    CUBLAS_CHECK(cublasCreate(&cuda_st.blas));
    CUBLAS_CHECK(cublasSetStream(cuda_st.blas, cuda_st.stream));
    CUDA_CHECK(cudaMalloc((void **)&cuda_st.colsum_ws, sizeof(float) * COLSUM_CHUNKS * COLSUM_MAX_W));
    CUDA_CHECK(cudaMalloc((void **)&cuda_st.norm_ws, sizeof(double) * NORM_BLOCKS));
    CUDA_CHECK(cudaMallocHost((void **)&cuda_st.host_norm, sizeof(double) * NORM_BLOCKS));
    CUDA_CHECK(cudaMalloc((void **)&cuda_st.pc_coef, sizeof(double) * PCGRAD_MAX_TASKS));
    CUDA_CHECK(cudaMalloc((void **)&cuda_st.loss_ws, sizeof(double) * 2 * LOSS_MAX_LABELS));
    return 0;
}

extern "C" void cuda_backend_shutdown(void) {
    if (cuda_st.device < 0) return;
    cudaStreamSynchronize(cuda_st.stream);
    cudaFree(cuda_st.colsum_ws), cudaFree(cuda_st.norm_ws), cudaFree(cuda_st.pc_coef);
    cudaFree(cuda_st.loss_ws);
    cudaFreeHost(cuda_st.host_norm);
    cublasDestroy(cuda_st.blas);
    cudaStreamDestroy(cuda_st.stream);
    cuda_st.device = -1;
}

extern "C" void cuda_backend_set_precision(int precision) { cuda_st.precision = precision; }
extern "C" const seer_backend *backend_cuda(void) { return cuda_st.device >= 0 ? &table : NULL; }
extern "C" const char *cuda_device_name(void) { return cuda_st.name; }
extern "C" void *cuda_backend_stream(void) { return cuda_st.stream; }
extern "C" size_t cuda_backend_allocated(void) { return allocated; }
extern "C" void cuda_backend_sync(void) { CUDA_CHECK(cudaStreamSynchronize(cuda_st.stream)); }
