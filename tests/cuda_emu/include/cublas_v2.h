/* A CPU stand-in for the cuBLAS calls cuda/ makes (GemmEx, Dsyrk, Dgemv), column-major as
 * cuBLAS. GemmEx rounds its inputs as the compute type would (TF32: 10 mantissa bits, bf16: 7)
 * and accumulates in float64, so the precision tolerances of test_cuda_ops mean something here. */
#ifndef SEER_EMU_CUBLAS_V2_H
#define SEER_EMU_CUBLAS_V2_H

#include "cuda_runtime.h"

typedef void *cublasHandle_t;
typedef int cublasStatus_t;
enum { CUBLAS_STATUS_SUCCESS = 0 };
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
               CUBLAS_COMPUTE_32F_FAST_16BF = 75 } cublasComputeType_t;
typedef enum { CUDA_R_32F = 0 } cudaDataType;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;
typedef enum { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1 } cublasFillMode_t;

inline const char *cublasGetStatusString(cublasStatus_t) { return "emulated cuBLAS error"; }
inline cublasStatus_t cublasCreate(cublasHandle_t *h) { *h = (void *)1; return 0; }
inline cublasStatus_t cublasDestroy(cublasHandle_t) { return 0; }
inline cublasStatus_t cublasSetStream(cublasHandle_t, cudaStream_t) { return 0; }

/* x rounded to `bits` mantissa bits, to nearest even (as the tensor cores' input conversion) */
inline float emu_round_mantissa(float x, int bits) {
    if (bits >= 23 || x != x) return x;
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t drop = 23 - bits, half = 1u << (drop - 1), mask = (1u << drop) - 1;
    uint32_t rest = u & mask, keep = u & ~mask;
    if (rest > half || (rest == half && (keep >> drop) & 1)) keep += 1u << drop;
    memcpy(&x, &keep, 4);
    return x;
}

inline cublasStatus_t cublasGemmEx(cublasHandle_t, cublasOperation_t ta, cublasOperation_t tb, int m,
                                   int n, int k, const void *alpha, const void *A, cudaDataType,
                                   int lda, const void *B, cudaDataType, int ldb, const void *beta,
                                   void *C, cudaDataType, int ldc, cublasComputeType_t ct,
                                   cublasGemmAlgo_t) {
    const float *a = (const float *)A, *b = (const float *)B;
    float *c = (float *)C, al = *(const float *)alpha, be = *(const float *)beta;
    int bits = ct == CUBLAS_COMPUTE_32F_FAST_TF32 ? 10 : ct == CUBLAS_COMPUTE_32F_FAST_16BF ? 7 : 23;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            double s = 0;
            for (int p = 0; p < k; p++) {
                float x = ta == CUBLAS_OP_N ? a[i + (int64_t)p * lda] : a[p + (int64_t)i * lda];
                float y = tb == CUBLAS_OP_N ? b[p + (int64_t)j * ldb] : b[j + (int64_t)p * ldb];
                s += (double)emu_round_mantissa(x, bits) * emu_round_mantissa(y, bits);
            }
            float *o = c + i + (int64_t)j * ldc;
            *o = (float)(al * s + (be != 0.0f ? (double)be * *o : 0.0));
        }
    return 0;
}

/* C (n x n) = alpha op(A) op(A)^T + beta C, one triangle; with trans = T, op(A) = A^T (A is k x n) */
inline cublasStatus_t cublasDsyrk(cublasHandle_t, cublasFillMode_t uplo, cublasOperation_t trans,
                                  int n, int k, const double *alpha, const double *A, int lda,
                                  const double *beta, double *C, int ldc) {
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            if (uplo == CUBLAS_FILL_MODE_UPPER ? i > j : i < j) continue;
            double s = 0;
            for (int p = 0; p < k; p++) {
                double x = trans == CUBLAS_OP_T ? A[p + (int64_t)i * lda] : A[i + (int64_t)p * lda];
                double y = trans == CUBLAS_OP_T ? A[p + (int64_t)j * lda] : A[j + (int64_t)p * lda];
                s += x * y;
            }
            double *o = C + i + (int64_t)j * ldc;
            *o = *alpha * s + (*beta != 0 ? *beta * *o : 0.0);
        }
    return 0;
}

/* y = alpha op(A) x + beta y, A m x n column-major */
inline cublasStatus_t cublasDgemv(cublasHandle_t, cublasOperation_t trans, int m, int n,
                                  const double *alpha, const double *A, int lda, const double *x,
                                  int incx, const double *beta, double *y, int incy) {
    int rows = trans == CUBLAS_OP_N ? m : n, cols = trans == CUBLAS_OP_N ? n : m;
    for (int i = 0; i < rows; i++) {
        double s = 0;
        for (int j = 0; j < cols; j++)
            s += (trans == CUBLAS_OP_N ? A[i + (int64_t)j * lda] : A[j + (int64_t)i * lda]) * x[j * incx];
        y[i * incy] = *alpha * s + (*beta != 0 ? *beta * y[i * incy] : 0.0);
    }
    return 0;
}

#endif
