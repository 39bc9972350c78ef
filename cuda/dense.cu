/* Dense layers through cuBLAS (row-major buffers as cuBLAS's column-major transposes), with the
 * bias, accumulate and ReLU semantics of linear_forward_cpu / linear_backward_cpu. */
#include "common.cuh"

static cublasComputeType_t compute_type(void) {
    switch (cuda_st.precision) {
    case PREC_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case PREC_BF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    default: return CUBLAS_COMPUTE_32F;
    }
}

/* C (m x n, ldc) = alpha op(A) op(B) + beta C, all fp32 in memory, column-major. */
static void gemm(cudaStream_t st, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                 const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                 int64_t ldc) {
    const float alpha = 1.0f;
    CUBLAS_CHECK(cublasSetStream(cuda_st.blas, st));
    CUBLAS_CHECK(cublasGemmEx(cuda_st.blas, ta, tb, m, n, k, &alpha, A, CUDA_R_32F, (int)lda, B,
                              CUDA_R_32F, (int)ldb, &beta, C, CUDA_R_32F, (int)ldc, compute_type(),
                              CUBLAS_GEMM_DEFAULT));
}

/* out[i, :] = b (or += b when acc), the bias before the product accumulates onto it. */
__global__ void bias_rows_kernel(float *out, int64_t ldo, const float *b, int64_t n, int fout,
                                 int acc) {
    int64_t total = n * fout;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = t / fout;
        int j = (int)(t - i * fout);
        float *o = out + i * ldo + j;
        *o = acc ? *o + b[j] : b[j];
    }
}

__global__ void relu_rows_kernel(float *out, int64_t ldo, int64_t n, int fout) {
    int64_t total = n * fout;
    for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
         t += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = t / fout;
        float *o = out + i * ldo + (t - i * fout);
        *o = *o > 0.0f ? *o : 0.0f;
    }
}

extern "C" void linear_forward_cuda(float *out, int64_t ldo, const float *in, int64_t ldi,
                                    const float *w, int64_t ldw, const float *b, int64_t n,
                                    int fin, int fout, int flags, cudaStream_t st) {
    if (n == 0) return;
    float beta = flags & LIN_ACC ? 1.0f : 0.0f;
    if (b) {
        bias_rows_kernel<<<blocks_for(n * fout, 256), 256, 0, st>>>(out, ldo, b, n, fout,
                                                                     flags & LIN_ACC);
        LAUNCH_CHECK();
        beta = 1.0f;
    }
    // out^T (fout x n) = W (fout x fin) in^T: W row-major is W^T column-major (ldw).
    gemm(st, CUBLAS_OP_T, CUBLAS_OP_N, fout, (int)n, fin, w, ldw, in, ldi, beta, out, ldo);
    if (flags & LIN_RELU) {
        relu_rows_kernel<<<blocks_for(n * fout, 256), 256, 0, st>>>(out, ldo, n, fout);
        LAUNCH_CHECK();
    }
}

/* Column sums in a fixed order: chunk c of the rows sums into partial[c], then the chunks add up
 * in order. blockDim (32, 8): 32 columns, 8 row lanes per block. */
__global__ void colsum_partial_kernel(float *partial, const float *x, int64_t ldx, int64_t n,
                                      int w) {
    __shared__ float acc[8][33];
    int col = blockIdx.x * 32 + threadIdx.x;
    int64_t per = (n + gridDim.y - 1) / gridDim.y, r0 = blockIdx.y * per;
    int64_t r1 = r0 + per < n ? r0 + per : n;
    float s = 0.0f;
    if (col < w)
        for (int64_t r = r0 + threadIdx.y; r < r1; r += 8) s += x[r * ldx + col];
    acc[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && col < w) {
        float t = 0.0f;
        for (int k = 0; k < 8; k++) t += acc[k][threadIdx.x];
        partial[(int64_t)blockIdx.y * COLSUM_MAX_W + col] = t;
    }
}

__global__ void colsum_finish_kernel(float *db, const float *partial, int chunks, int w) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= w) return;
    float t = 0.0f;
    for (int c = 0; c < chunks; c++) t += partial[(int64_t)c * COLSUM_MAX_W + col];
    db[col] += t;
}

extern "C" void linear_backward_cuda(float *din, int64_t lddi, float *dw, int64_t ldw, float *db,
                                     const float *dout, int64_t lddo, const float *in, int64_t ldi,
                                     const float *w, int64_t n, int fin, int fout, cudaStream_t st) {
    if (n == 0) return;
    // din^T (fin x n) += W^T (fin x fout) dout^T
    if (din) gemm(st, CUBLAS_OP_N, CUBLAS_OP_N, fin, (int)n, fout, w, ldw, dout, lddo, 1.0f, din, lddi);
    // dW^T (fin x fout) += in^T (fin x n) dout (n x fout)
    gemm(st, CUBLAS_OP_N, CUBLAS_OP_T, fin, fout, (int)n, in, ldi, dout, lddo, 1.0f, dw, ldw);
    if (db) {
        if (fout > COLSUM_MAX_W) seer_die("linear_backward_cuda: %d outputs (at most %d)", fout, COLSUM_MAX_W);
        dim3 grid((unsigned)((fout + 31) / 32), COLSUM_CHUNKS), block(32, 8);
        colsum_partial_kernel<<<grid, block, 0, st>>>(cuda_st.colsum_ws, dout, lddo, n, fout);
        LAUNCH_CHECK();
        colsum_finish_kernel<<<(unsigned)((fout + 127) / 128), 128, 0, st>>>(db, cuda_st.colsum_ws,
                                                                             COLSUM_CHUNKS, fout);
        LAUNCH_CHECK();
    }
}
