/* Shared by the .cu files of the CUDA backend: error checks, launch shapes, the backend state. */
#ifndef SEER_CUDA_COMMON_CUH
#define SEER_CUDA_COMMON_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_backend.h"
#include "ops_cuda.h"

extern "C" {
#include "common/common.h"
}

#define CUDA_CHECK(call)                                                                        \
    do {                                                                                        \
        cudaError_t e_ = (call);                                                                \
        if (e_ != cudaSuccess)                                                                  \
            seer_die("CUDA: %s (%s:%d: %s)", cudaGetErrorString(e_), __FILE__, __LINE__, #call); \
    } while (0)

#define CUBLAS_CHECK(call)                                                                      \
    do {                                                                                        \
        cublasStatus_t s_ = (call);                                                             \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                        \
            seer_die("cuBLAS: %s (%s:%d: %s)", cublasGetStatusString(s_), __FILE__, __LINE__,    \
                     #call);                                                                    \
    } while (0)

/* Launch errors (bad configuration) surface at once; faults inside kernels at the next sync. */
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

static inline unsigned blocks_for(int64_t n, int per_block) {
    int64_t b = (n + per_block - 1) / per_block;
    return (unsigned)(b < 65535 * 32 ? b : 65535 * 32);
}

/* Backend state (backend_cuda.cu). */
struct cuda_state {
    int device, precision;
    cudaStream_t stream;
    cublasHandle_t blas;
    float *colsum_ws;   // (COLSUM_CHUNKS, 4096): partial column sums of linear_backward's bias
    double *norm_ws;    // (NORM_BLOCKS): partial sums of squares
    double *host_norm;  // pinned (NORM_BLOCKS)
    double *pc_coef;    // (PCGRAD_MAX_TASKS) PCGrad coefficients on the device
    double *loss_ws;    // (2 * LOSS_MAX_LABELS) the loss's per-label sums
    char name[160];
};
extern struct cuda_state cuda_st;

#define COLSUM_CHUNKS 64
#define COLSUM_MAX_W 4096
#define NORM_BLOCKS 256
#define LOSS_MAX_LABELS 64 // MODEL_MAX_HEADS; host_norm (NORM_BLOCKS) also stages the loss sums

#endif
