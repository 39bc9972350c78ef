/* PCGrad on the GPU, in Gram form as src/backend/pcgrad.c: K = G G^T in float64 (cuBLAS DSYRK over
 * the trunk), the T x T projection on the host (pcgrad_coefficients, the same code as the CPU),
 * then out = c^T G (one DGEMV), rounded once to float32. */
#include "common.cuh"

extern "C" {
#include "backend/pcgrad.h"
}

/* G (T rows of stride ldg, device), Gd (T * P doubles, device), K (T * T, host), out (P floats,
 * device), out64 (P doubles, device). */
extern "C" void pcgrad_combine_cuda(const float *G, int64_t ldg, int T, int64_t P, seer_rng *rng,
                                    double *Gd, double *K, float *out, double *out64,
                                    cudaStream_t st) {
    for (int t = 0; t < T; t++) f32_to_f64_cuda(Gd + (int64_t)t * P, G + (int64_t)t * ldg, P, st);
    // Gd row-major (T x P) is column-major (P x T): K = Gd^T Gd in cuBLAS's terms (upper).
    const double one = 1.0, zero = 0.0;
    double *dK = out64; // P >= T*T for any real model; checked
    SEER_ASSERT(P >= (int64_t)T * T);
    CUBLAS_CHECK(cublasSetStream(cuda_st.blas, st));
    CUBLAS_CHECK(cublasDsyrk(cuda_st.blas, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, T, (int)P, &one, Gd,
                             (int)P, &zero, dK, T));
    CUDA_CHECK(cudaMemcpyAsync(K, dK, sizeof(double) * (size_t)(T * T), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    // column-major upper of a symmetric matrix: element (i, j), i <= j, at K[j * T + i]
    for (int j = 0; j < T; j++)
        for (int i = j + 1; i < T; i++) K[j * T + i] = K[i * T + j];
    double c[PCGRAD_MAX_TASKS];
    pcgrad_coefficients(K, T, rng, c);
    CUDA_CHECK(cudaMemcpyAsync(cuda_st.pc_coef, c, sizeof(double) * (size_t)T, cudaMemcpyHostToDevice, st));
    CUBLAS_CHECK(cublasDgemv(cuda_st.blas, CUBLAS_OP_N, (int)P, T, &one, Gd, (int)P, cuda_st.pc_coef,
                             1, &zero, out64, 1));
    f64_to_f32_cuda(out, out64, P, st);
}
