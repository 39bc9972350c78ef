/* Gathers and segment reductions (CSR: segment s covers positions ptr[s]..ptr[s+1]-1, position k
 * names row perm[k], or row k without perm). One thread per (segment, column) walks its segment
 * in order, as the CPU twin does, so sums round the same way and max keeps the lowest position on
 * ties; threads of a warp take consecutive columns of one row, so loads coalesce. Backward passes
 * run on the transposed index (each row lies in one segment), never with atomics. */
#include "common.cuh"

#define POS(perm, k) ((perm) ? (perm)[k] : (k))

/* block (32, 8): x walks 32 columns, y 8 segments; the grid strides over segments. */
static dim3 seg_grid(int64_t S, int w) {
    int64_t gy = (S + 7) / 8;
    return dim3((unsigned)((w + 31) / 32), (unsigned)(gy < 65535 ? (gy ? gy : 1) : 65535));
}
#define SEG_LOOP(s, S)                                                                           \
    for (int64_t s = blockIdx.y * 8 + threadIdx.y; s < (S); s += (int64_t)gridDim.y * 8)
#define COL(j, w)                                                                                \
    int j = blockIdx.x * 32 + threadIdx.x;                                                       \
    if (j >= (w)) return;

__global__ void gather_kernel(float *out, int64_t ldo, const float *in, int64_t ldi,
                              const int64_t *idx, int64_t n, int w, int acc) {
    COL(j, w)
    SEG_LOOP(i, n) {
        float x = in[idx[i] * ldi + j];
        float *o = out + i * ldo + j;
        *o = acc ? *o + x : x;
    }
}

extern "C" void gather_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi,
                                    const int64_t *idx, int64_t n, int w, int accumulate,
                                    cudaStream_t st) {
    if (!n || !w) return;
    gather_kernel<<<seg_grid(n, w), dim3(32, 8), 0, st>>>(out, ldo, in, ldi, idx, n, w, accumulate);
    LAUNCH_CHECK();
}

/* mode 0: out += sum; mode 1: out = mean (0 for an empty segment) */
__global__ void seg_reduce_kernel(float *out, int64_t ldo, const float *in, int64_t ldi,
                                  const int64_t *ptr, const int64_t *perm, int64_t S, int w,
                                  int mean) {
    COL(j, w)
    SEG_LOOP(s, S) {
        float *o = out + s * ldo + j;
        float acc = mean ? 0.0f : *o;
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) acc += in[POS(perm, k) * ldi + j];
        if (mean) {
            int64_t deg = ptr[s + 1] - ptr[s];
            acc *= 1.0f / (float)(deg > 0 ? deg : 1);
        }
        *o = acc;
    }
}

extern "C" void seg_sum_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi,
                                     const int64_t *ptr, const int64_t *perm, int64_t S, int w,
                                     cudaStream_t st) {
    if (!S || !w) return;
    seg_reduce_kernel<<<seg_grid(S, w), dim3(32, 8), 0, st>>>(out, ldo, in, ldi, ptr, perm, S, w, 0);
    LAUNCH_CHECK();
}

extern "C" void seg_mean_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi,
                                      const int64_t *ptr, const int64_t *perm, int64_t S, int w,
                                      cudaStream_t st) {
    if (!S || !w) return;
    seg_reduce_kernel<<<seg_grid(S, w), dim3(32, 8), 0, st>>>(out, ldo, in, ldi, ptr, perm, S, w, 1);
    LAUNCH_CHECK();
}

/* Each position's row gets one add, so a segment's positions can be split over blockIdx.z (few
 * long segments, the readouts over graphs, would otherwise leave the GPU nearly idle). */
__global__ void seg_mean_backward_kernel(float *din, int64_t lddi, const float *dout, int64_t lddo,
                                         const int64_t *ptr, const int64_t *perm, int64_t S, int w) {
    COL(j, w)
    SEG_LOOP(s, S) {
        int64_t deg = ptr[s + 1] - ptr[s], first = ptr[s] + blockIdx.z;
        if (first >= ptr[s + 1]) continue;
        float g = dout[s * lddo + j] * (1.0f / (float)deg);
        for (int64_t k = first; k < ptr[s + 1]; k += gridDim.z) din[POS(perm, k) * lddi + j] += g;
    }
}

extern "C" void seg_mean_backward_cuda(float *din, int64_t lddi, const float *dout, int64_t lddo,
                                       const int64_t *ptr, const int64_t *perm, int64_t S, int w,
                                       cudaStream_t st) {
    if (!S || !w) return;
    // few segments (a readout over the batch's graphs): split each over 8 blocks
    dim3 grid = seg_grid(S, w);
    grid.z = S < 4096 ? 8 : 1;
    seg_mean_backward_kernel<<<grid, dim3(32, 8), 0, st>>>(din, lddi, dout, lddo, ptr, perm, S, w);
    LAUNCH_CHECK();
}

__global__ void seg_max_forward_kernel(float *out, int64_t ldo, int64_t *arg, const float *in,
                                       int64_t ldi, const int64_t *ptr, const int64_t *perm,
                                       int64_t S, int w) {
    COL(j, w)
    SEG_LOOP(s, S) {
        float o = 0.0f;
        int64_t a = -1;
        if (ptr[s] < ptr[s + 1]) {
            a = POS(perm, ptr[s]);
            o = in[a * ldi + j];
            for (int64_t k = ptr[s] + 1; k < ptr[s + 1]; k++) {
                int64_t r = POS(perm, k);
                float x = in[r * ldi + j];
                // strictly greater: ties keep the lowest position; NaN stays once in, and wins
                if (o == o && (x > o || x != x)) o = x, a = r;
            }
        }
        out[s * ldo + j] = o;
        arg[s * (int64_t)w + j] = a;
    }
}

extern "C" void seg_max_forward_cuda(float *out, int64_t ldo, int64_t *arg, const float *in,
                                     int64_t ldi, const int64_t *ptr, const int64_t *perm,
                                     int64_t S, int w, cudaStream_t st) {
    if (!S || !w) return;
    seg_max_forward_kernel<<<seg_grid(S, w), dim3(32, 8), 0, st>>>(out, ldo, arg, in, ldi, ptr,
                                                                   perm, S, w);
    LAUNCH_CHECK();
}

__global__ void seg_max_backward_kernel(float *din, int64_t lddi, const float *dout, int64_t lddo,
                                        const int64_t *arg, int64_t S, int w) {
    COL(j, w)
    SEG_LOOP(s, S) {
        int64_t a = arg[s * (int64_t)w + j];
        if (a >= 0) din[a * lddi + j] += dout[s * lddo + j];
    }
}

extern "C" void seg_max_backward_cuda(float *din, int64_t lddi, const float *dout, int64_t lddo,
                                      const int64_t *arg, int64_t S, int w, cudaStream_t st) {
    if (!S || !w) return;
    seg_max_backward_kernel<<<seg_grid(S, w), dim3(32, 8), 0, st>>>(din, lddi, dout, lddo, arg, S, w);
    LAUNCH_CHECK();
}
