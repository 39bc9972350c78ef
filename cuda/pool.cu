/* Softmax-attention pooling over contiguous segments (one segment per graph): alpha = softmax of
 * the scores within a segment, out[s] = sum alpha_k in[k]. Forward: one warp per segment makes
 * alpha (max, then the normaliser in float64, as the CPU twin), one thread per (segment, column)
 * sums in order. Backward: a segment's nodes spread over ATTN_SPLIT blocks of 8 warps, one warp
 * per node, lanes over columns, shuffle reductions for the dot products (each node's row and
 * score are written by one warp: no atomics, the same sums in the same order as one warp per
 * segment, which was 31% of a training step's GPU time on the H200 with 128 graphs a batch). */
#include <math.h>

#include "common.cuh"

#define ATTN_SPLIT 8 // blocks per segment in the backward pass

__device__ static float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/* One warp per segment: the maximum (a NaN first score stays, as in the CPU twin's sequential
 * max; a later NaN is skipped by both and poisons the normaliser), then the normaliser in float64.
 * With lse not NULL the segment's log-sum-exp is added to lse[s * ldl] (seg_lse_forward). */
__global__ void attn_alpha_kernel(float *alpha, const float *score, const int64_t *ptr, int64_t S,
                                  float *lse, int64_t ldl) {
    int lane = threadIdx.x & 31;
    int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    for (int64_t s = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; s < S; s += warps) {
        int64_t k0 = ptr[s], k1 = ptr[s + 1];
        if (k0 == k1) continue;
        float mx = -INFINITY;
        for (int64_t k = k0 + lane; k < k1; k += 32) mx = score[k] > mx ? score[k] : mx;
        for (int o = 16; o > 0; o /= 2) {
            float other = __shfl_xor_sync(0xffffffffu, mx, o);
            mx = other > mx ? other : mx;
        }
        if (score[k0] != score[k0]) mx = score[k0];
        double z = 0.0;
        for (int64_t k = k0 + lane; k < k1; k += 32) z += exp((double)(score[k] - mx));
        for (int o = 16; o > 0; o /= 2) z += __shfl_xor_sync(0xffffffffu, z, o);
        for (int64_t k = k0 + lane; k < k1; k += 32) alpha[k] = (float)(exp((double)(score[k] - mx)) / z);
        if (lse && lane == 0) lse[s * ldl] += (float)((double)mx + log(z));
    }
}

__global__ void attn_sum_kernel(float *out, const float *alpha, const float *in, const int64_t *ptr,
                                int64_t S, int w) {
    int j = blockIdx.x * 32 + threadIdx.x;
    if (j >= w) return;
    for (int64_t s = blockIdx.y * 8 + threadIdx.y; s < S; s += (int64_t)gridDim.y * 8) {
        float o = 0.0f;
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) o += alpha[k] * in[k * w + j];
        out[s * w + j] = o;
    }
}

extern "C" void attn_pool_forward_cuda(float *out, float *alpha, const float *in, const float *score,
                                       const int64_t *ptr, int64_t S, int w, cudaStream_t st) {
    if (!S) return;
    attn_alpha_kernel<<<blocks_for(S * 32, 256), 256, 0, st>>>(alpha, score, ptr, S, NULL, 0);
    LAUNCH_CHECK();
    int64_t gy = (S + 7) / 8;
    dim3 grid((unsigned)((w + 31) / 32), (unsigned)(gy < 65535 ? gy : 65535));
    attn_sum_kernel<<<grid, dim3(32, 8), 0, st>>>(out, alpha, in, ptr, S, w);
    LAUNCH_CHECK();
}

/* d in_k += alpha_k dout_s;  d score_k += alpha_k (in_k . dout_s - out_s . dout_s). */
__global__ void attn_backward_kernel(float *din, float *dscore, const float *dout, const float *in,
                                     const float *out, const float *alpha, const int64_t *ptr,
                                     int64_t S, int w) {
    int lane = threadIdx.x & 31, nw = blockDim.x / 32;
    for (int64_t s = blockIdx.x; s < S; s += gridDim.x) {
        int64_t first = ptr[s] + (int64_t)blockIdx.y * nw + threadIdx.x / 32;
        int64_t stride = (int64_t)gridDim.y * nw;
        if (first >= ptr[s + 1]) continue; // the whole warp: warp_sum below needs all lanes
        const float *g = dout + s * w, *o = out + s * w;
        float od = 0.0f;
        for (int j = lane; j < w; j += 32) od += o[j] * g[j];
        od = warp_sum(od);
        for (int64_t k = first; k < ptr[s + 1]; k += stride) {
            const float *x = in + k * w;
            float *d = din + k * w, a = alpha[k], xd = 0.0f;
            for (int j = lane; j < w; j += 32) {
                xd += x[j] * g[j];
                d[j] += a * g[j];
            }
            xd = warp_sum(xd);
            if (lane == 0) dscore[k] += a * (xd - od);
        }
    }
}

extern "C" void attn_pool_backward_cuda(float *din, float *dscore, const float *dout,
                                        const float *in, const float *out, const float *alpha,
                                        const int64_t *ptr, int64_t S, int w, cudaStream_t st) {
    if (!S) return;
    dim3 grid((unsigned)(S < (1 << 30) ? S : (1 << 30)), ATTN_SPLIT);
    attn_backward_kernel<<<grid, 256, 0, st>>>(din, dscore, dout, in, out, alpha, ptr, S, w);
    LAUNCH_CHECK();
}

/* The additive readout's log-sum-exp (backend.h): the softmax above, plus the log normaliser. */
extern "C" void seg_lse_forward_cuda(float *out, int64_t ldo, float *alpha, const float *in,
                                     const int64_t *ptr, int64_t S, cudaStream_t st) {
    if (!S) return;
    attn_alpha_kernel<<<blocks_for(S * 32, 256), 256, 0, st>>>(alpha, in, ptr, S, out, ldo);
    LAUNCH_CHECK();
}

/* din[k] += alpha[k] dout[s]: one warp per segment, lanes over its rows. */
__global__ void lse_backward_kernel(float *din, const float *dout, int64_t lddo, const float *alpha,
                                    const int64_t *ptr, int64_t S) {
    int lane = threadIdx.x & 31;
    int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
    for (int64_t s = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32; s < S; s += warps) {
        float g = dout[s * lddo];
        for (int64_t k = ptr[s] + lane; k < ptr[s + 1]; k += 32) din[k] += alpha[k] * g;
    }
}

extern "C" void seg_lse_backward_cuda(float *din, const float *dout, int64_t lddo, const float *alpha,
                                      const int64_t *ptr, int64_t S, cudaStream_t st) {
    if (!S) return;
    lse_backward_kernel<<<blocks_for(S * 32, 256), 256, 0, st>>>(din, dout, lddo, alpha, ptr, S);
    LAUNCH_CHECK();
}
