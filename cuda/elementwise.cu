/* Elementwise and row ops, and the optimizer: ReLU, strided row add/copy, Adam/AdamW, the global
 * gradient norm (one fused pass, float64, fixed order) and scaling, float <-> double. */
#include <math.h>
#include <string.h>

#include "common.cuh"

extern "C" {
#include "backend/adam.h"
}

#define GRID_STRIDE(i, n)                                                                        \
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);                    \
         i += (int64_t)gridDim.x * blockDim.x)

__global__ void relu_forward_kernel(float *y, int64_t n) {
    GRID_STRIDE(i, n) y[i] = y[i] > 0.0f ? y[i] : 0.0f;
}

__global__ void relu_backward_kernel(float *dx, const float *y, int64_t n) {
    GRID_STRIDE(i, n) if (!(y[i] > 0.0f)) dx[i] = 0.0f;
}

extern "C" void relu_forward_cuda(float *y, int64_t count, cudaStream_t st) {
    if (!count) return;
    relu_forward_kernel<<<blocks_for(count, 256), 256, 0, st>>>(y, count);
    LAUNCH_CHECK();
}

extern "C" void relu_backward_cuda(float *dx, const float *y, int64_t count, cudaStream_t st) {
    if (!count) return;
    relu_backward_kernel<<<blocks_for(count, 256), 256, 0, st>>>(dx, y, count);
    LAUNCH_CHECK();
}

__global__ void rows_kernel(float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n, int w,
                            int add) {
    GRID_STRIDE(t, n * w) {
        int64_t i = t / w;
        int j = (int)(t - i * w);
        float x = in[i * ldi + j];
        float *o = out + i * ldo + j;
        *o = add ? *o + x : x;
    }
}

extern "C" void add_rows_cuda(float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n,
                              int w, cudaStream_t st) {
    if (!n || !w) return;
    rows_kernel<<<blocks_for(n * w, 256), 256, 0, st>>>(out, ldo, in, ldi, n, w, 1);
    LAUNCH_CHECK();
}

extern "C" void copy_rows_cuda(float *out, int64_t ldo, const float *in, int64_t ldi, int64_t n,
                               int w, cudaStream_t st) {
    if (!n || !w) return;
    rows_kernel<<<blocks_for(n * w, 256), 256, 0, st>>>(out, ldo, in, ldi, n, w, 0);
    LAUNCH_CHECK();
}

/* adam_update's arithmetic, in the same float operations per element. */
__global__ void adam_kernel(float *p, const float *g, float *m, float *v, int64_t n, int adamw,
                            float b1, float b2, float step, float inv_bc2, float e, float decay,
                            float l2) {
    GRID_STRIDE(i, n) {
        float gi = g[i] + l2 * p[i];
        m[i] = b1 * m[i] + (1.0f - b1) * gi;
        v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
        if (adamw) p[i] -= decay * p[i];
        p[i] -= step * m[i] / (sqrtf(v[i]) * inv_bc2 + e);
    }
}

extern "C" void adam_update_cuda(float *p, const float *g, float *m, float *v, int64_t P, int kind,
                                 double lr, double beta1, double beta2, double eps, double wd,
                                 int64_t t, cudaStream_t st) {
    if (!P) return;
    double bc1 = 1.0 - pow(beta1, (double)t), bc2 = 1.0 - pow(beta2, (double)t);
    adam_kernel<<<blocks_for(P, 256), 256, 0, st>>>(
        p, g, m, v, P, kind == OPT_ADAMW, (float)beta1, (float)beta2, (float)(lr / bc1),
        (float)(1.0 / sqrt(bc2)), (float)eps, (float)(lr * wd), kind == OPT_ADAM ? (float)wd : 0.0f);
    LAUNCH_CHECK();
}

/* Sum of squares in float64: NORM_BLOCKS blocks each reduce a contiguous slice (tree in shared
 * memory, a fixed order), the host adds the partial sums in order. */
__global__ void sumsq_kernel(double *partial, const float *g, int64_t n) {
    __shared__ double acc[256];
    int64_t per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per;
    int64_t hi = lo + per < n ? lo + per : n;
    double s = 0.0;
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s += (double)g[i] * (double)g[i];
    acc[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if ((int)threadIdx.x < k) acc[threadIdx.x] += acc[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = acc[0];
}

extern "C" double grad_norm_cuda(const float *g, int64_t P, cudaStream_t st) {
    if (!P) return 0.0;
    sumsq_kernel<<<NORM_BLOCKS, 256, 0, st>>>(cuda_st.norm_ws, g, P);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaMemcpyAsync(cuda_st.host_norm, cuda_st.norm_ws, sizeof(double) * NORM_BLOCKS,
                               cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    double s = 0.0;
    for (int b = 0; b < NORM_BLOCKS; b++) s += cuda_st.host_norm[b];
    return sqrt(s);
}

__global__ void scale_kernel(float *g, int64_t n, float s) { GRID_STRIDE(i, n) g[i] *= s; }

extern "C" void grad_scale_cuda(float *g, int64_t P, float s, cudaStream_t st) {
    if (!P) return;
    scale_kernel<<<blocks_for(P, 256), 256, 0, st>>>(g, P, s);
    LAUNCH_CHECK();
}

__global__ void f2d_kernel(double *out, const float *in, int64_t n) { GRID_STRIDE(i, n) out[i] = in[i]; }
__global__ void d2f_kernel(float *out, const double *in, int64_t n) { GRID_STRIDE(i, n) out[i] = (float)in[i]; }

extern "C" void f32_to_f64_cuda(double *out, const float *in, int64_t n, cudaStream_t st) {
    if (!n) return;
    f2d_kernel<<<blocks_for(n, 256), 256, 0, st>>>(out, in, n);
    LAUNCH_CHECK();
}

extern "C" void f64_to_f32_cuda(float *out, const double *in, int64_t n, cudaStream_t st) {
    if (!n) return;
    d2f_kernel<<<blocks_for(n, 256), 256, 0, st>>>(out, in, n);
    LAUNCH_CHECK();
}

/* The masked MSE's per-label sums: one block per label, float64, a fixed tree order. */
__global__ void loss_sums_kernel(double *sums, const float *pred, const float *target, int64_t G,
                                 int M) {
    __shared__ double cnt[256], sq[256];
    int m = blockIdx.x;
    double c = 0.0, s = 0.0;
    for (int64_t g = threadIdx.x; g < G; g += blockDim.x) {
        float t = target[g * M + m];
        if (t != t) continue;
        double r = (double)pred[g * M + m] - (double)t;
        c += 1.0, s += r * r;
    }
    cnt[threadIdx.x] = c, sq[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if ((int)threadIdx.x < k) cnt[threadIdx.x] += cnt[threadIdx.x + k], sq[threadIdx.x] += sq[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) sums[2 * m] = cnt[0], sums[2 * m + 1] = sq[0];
}

extern "C" void loss_sums_cuda(const float *pred, const float *target, int64_t G, int M,
                               double *sums, cudaStream_t st) {
    if (M > LOSS_MAX_LABELS) seer_die("loss_sums_cuda: %d labels (at most %d)", M, LOSS_MAX_LABELS);
    if (G == 0) {
        for (int k = 0; k < 2 * M; k++) sums[k] = 0.0;
        return;
    }
    loss_sums_kernel<<<M, 256, 0, st>>>(cuda_st.loss_ws, pred, target, G, M);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaMemcpyAsync(cuda_st.host_norm, cuda_st.loss_ws, sizeof(double) * 2 * (size_t)M,
                               cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    memcpy(sums, cuda_st.host_norm, sizeof(double) * 2 * (size_t)M);
}

struct label_counts {
    double n[LOSS_MAX_LABELS];
};

__global__ void loss_grad_kernel(float *dpred, const float *pred, const float *target, int64_t G,
                                 int M, label_counts cnt, int task) {
    GRID_STRIDE(i, G * M) {
        int m = (int)(i % M);
        float t = target[i];
        double r = t != t ? 0.0 : (double)pred[i] - (double)t;
        dpred[i] = t != t || (task >= 0 && m != task) ? 0.0f : (float)(2.0 * r / cnt.n[m]);
    }
}

extern "C" void loss_grad_cuda(float *dpred, const float *pred, const float *target, int64_t G,
                               int M, const double *sums, int task, cudaStream_t st) {
    if (G * M == 0) return;
    if (M > LOSS_MAX_LABELS) seer_die("loss_grad_cuda: %d labels (at most %d)", M, LOSS_MAX_LABELS);
    label_counts cnt;
    for (int m = 0; m < M; m++) cnt.n[m] = sums[2 * m];
    loss_grad_kernel<<<blocks_for(G * M, 256), 256, 0, st>>>(dpred, pred, target, G, M, cnt, task);
    LAUNCH_CHECK();
}
