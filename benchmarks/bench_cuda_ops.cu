/* bench_cuda_ops: the CUDA backend's kernels against the machine's own ceilings (H200 runs, see
 * benchmarks/RESULTS.md and benchmarks/METHOD.md).
 *   ceilings: device-to-device copy (GB/s, bytes read + written) and cuBLAS GEMM 8192^3 in fp32,
 *             TF32 and bf16 (TFLOP/s, random data)
 *   dense:    linear_forward / linear_backward at SeerNet's widest layer (phi_e: 4H -> H, H = 256)
 *             on 1 M edge rows, in each precision: TFLOP/s and the share of that precision's peak
 *   sparse:   gather, seg_mean (and cuSPARSE SpMM doing the same mean), seg_max, attention
 *             pooling, on 1 M nodes with NAS-like degrees: GB/s of the bytes each must move, and
 *             the share of the copy rate
 * Times are CUDA events around 20 launches after 3 warm-ups (median of 5 such runs). Prints
 * "SKIP" without a GPU. */
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <cusparse.h>
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#include "cuda_backend.h"

#include "ops_cuda.h"

#define CK(x)                                                                                   \
    do {                                                                                        \
        cudaError_t e_ = (x);                                                                   \
        if (e_ != cudaSuccess) {                                                                \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));         \
            exit(1);                                                                            \
        }                                                                                       \
    } while (0)

static cudaStream_t st;

template <class F> static double time_ms(F f) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> runs;
    for (int w = 0; w < 3; w++) f();
    for (int r = 0; r < 5; r++) {
        CK(cudaEventRecord(a, st));
        for (int i = 0; i < 20; i++) f();
        CK(cudaEventRecord(b, st));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        runs.push_back(ms / 20);
    }
    std::sort(runs.begin(), runs.end());
    return runs[2];
}

static float *randf(size_t n) {
    std::vector<float> h(n);
    for (size_t i = 0; i < n; i++) h[i] = (float)((rand() % 2001) - 1000) / 1000.0f;
    float *d;
    CK(cudaMalloc(&d, n * 4));
    CK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
    return d;
}

int main(void) {
    if (cuda_device_count() == 0) {
        printf("bench_cuda_ops: SKIP (no CUDA device)\n");
        return 0;
    }
    seer_err err;
    if (cuda_backend_init(0, PREC_TF32, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    CK(cudaStreamCreate(&st));
    printf("bench_cuda_ops on %s\n", cuda_device_name());
    // ceilings
    size_t cb = (size_t)1 << 30;
    char *c0, *c1;
    CK(cudaMalloc(&c0, cb));
    CK(cudaMalloc(&c1, cb));
    double copy_gbs = 2.0 * cb / 1e9 / (time_ms([&] { cudaMemcpyAsync(c1, c0, cb, cudaMemcpyDeviceToDevice, st); }) / 1e3);
    CK(cudaFree(c0));
    CK(cudaFree(c1));
    printf("%-44s %10.0f GB/s (read + written)\n", "ceiling: device copy 1 GiB", copy_gbs);
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetStream(h, st);
    int K = 8192;
    float *A = randf((size_t)K * K), *B = randf((size_t)K * K), *C = randf((size_t)K * K);
    const char *pname[3] = {"fp32", "tf32", "bf16"};
    cublasComputeType_t ct[3] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_16BF};
    double peak[3];
    for (int p = 0; p < 3; p++) {
        float one = 1, zero = 0;
        double ms = time_ms([&] {
            cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, K, K, K, &one, A, CUDA_R_32F, K, B, CUDA_R_32F,
                         K, &zero, C, CUDA_R_32F, K, ct[p], CUBLAS_GEMM_DEFAULT);
        });
        peak[p] = 2.0 * K * K * (double)K / (ms / 1e3) / 1e12;
        printf("ceiling: cuBLAS GEMM 8192^3 %-16s %10.1f TFLOP/s\n", pname[p], peak[p]);
    }
    CK(cudaFree(A));
    CK(cudaFree(B));
    CK(cudaFree(C));

    // dense: phi_e's first layer, 4H -> H on E rows
    int64_t E = 1 << 20;
    int H = 256;
    float *x = randf((size_t)E * 4 * H), *w = randf((size_t)H * 4 * H), *bias = randf(H);
    float *y = randf((size_t)E * H), *dx = randf((size_t)E * 4 * H), *dw = randf((size_t)H * 4 * H), *db = randf(H);
    for (int p = 0; p < 3; p++) {
        cuda_backend_set_precision(p);
        double f = time_ms([&] { linear_forward_cuda(y, H, x, 4 * H, w, 4 * H, bias, E, 4 * H, H, LIN_RELU, st); });
        double b = time_ms([&] { linear_backward_cuda(dx, 4 * H, dw, 4 * H, db, y, H, x, 4 * H, w, E, 4 * H, H, st); });
        double ff = 2.0 * E * 4 * H * H, fb = 2 * ff;
        printf("linear_forward  1M x 1024 -> 256 %-8s %8.3f ms %7.1f TFLOP/s  %5.1f%% of peak\n", pname[p], f, ff / f / 1e9, 100 * ff / f / 1e9 / peak[p]);
        printf("linear_backward 1M x 1024 -> 256 %-8s %8.3f ms %7.1f TFLOP/s  %5.1f%% of peak\n", pname[p], b, fb / b / 1e9, 100 * fb / b / 1e9 / peak[p]);
    }
    cuda_backend_set_precision(PREC_TF32);
    CK(cudaFree(x));
    CK(cudaFree(w));
    CK(cudaFree(dx));
    CK(cudaFree(dw));

    // sparse: N nodes, E2 edges with degrees 0..3 (NAS cells are sparse), by destination
    int64_t N = 1 << 20;
    std::vector<int64_t> ptr(N + 1), perm, idx;
    ptr[0] = 0;
    for (int64_t i = 0; i < N; i++) ptr[i + 1] = ptr[i] + (rand() % 4);
    int64_t E2 = ptr[N];
    perm.resize(E2);
    for (int64_t i = 0; i < E2; i++) perm[i] = i;
    std::random_shuffle(perm.begin(), perm.end());
    idx.resize(E2);
    for (int64_t i = 0; i < E2; i++) idx[i] = rand() % N;
    int64_t *dptr, *dperm, *didx, *darg;
    CK(cudaMalloc(&dptr, 8 * (N + 1)));
    CK(cudaMalloc(&dperm, 8 * E2));
    CK(cudaMalloc(&didx, 8 * E2));
    CK(cudaMalloc(&darg, 8 * N * H));
    CK(cudaMemcpy(dptr, ptr.data(), 8 * (N + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dperm, perm.data(), 8 * E2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(didx, idx.data(), 8 * E2, cudaMemcpyHostToDevice));
    float *msg = randf((size_t)E2 * H), *hn = randf((size_t)N * H), *out = randf((size_t)N * H);
    float *gout = randf((size_t)E2 * H), *score = randf(N), *alpha = randf(N);
    auto report = [&](const char *name, double ms, double bytes) {
        printf("%-44s %8.3f ms %7.0f GB/s  %5.1f%% of copy\n", name, ms, bytes / ms / 1e6, 100 * bytes / ms / 1e6 / copy_gbs);
    };
    double rowb = 4.0 * H;
    report("gather_forward E rows of H (by index)", time_ms([&] { gather_forward_cuda(gout, H, hn, H, didx, E2, H, 0, st); }),
           E2 * (2 * rowb + 8));
    double mean_ms = time_ms([&] { seg_mean_forward_cuda(out, H, msg, H, dptr, dperm, N, H, st); });
    report("seg_mean_forward (custom)", mean_ms, E2 * (rowb + 8) + N * (rowb + 8));
    report("seg_max_forward (value + argmax)", time_ms([&] { seg_max_forward_cuda(out, H, darg, msg, H, dptr, dperm, N, H, st); }),
           E2 * (rowb + 8) + N * (rowb + 2 * rowb + 8));
    // attention pooling: 8192 graphs of 128 nodes
    int64_t Gp = N / 128;
    std::vector<int64_t> gp(Gp + 1);
    for (int64_t g = 0; g <= Gp; g++) gp[g] = g * 128;
    int64_t *dgp;
    CK(cudaMalloc(&dgp, 8 * (Gp + 1)));
    CK(cudaMemcpy(dgp, gp.data(), 8 * (Gp + 1), cudaMemcpyHostToDevice));
    report("attn_pool_forward (8192 graphs x 128 nodes)", time_ms([&] { attn_pool_forward_cuda(out, alpha, hn, score, dgp, Gp, H, st); }),
           N * (rowb + 12) + Gp * rowb);

    // cuSPARSE SpMM doing seg_mean: A (N x E2) CSR with 1/deg at columns perm, times msg (E2 x H)
    cusparseHandle_t sp;
    cusparseCreate(&sp);
    cusparseSetStream(sp, st);
    std::vector<int> rp(N + 1), ci(E2);
    std::vector<float> val(E2);
    for (int64_t i = 0; i <= N; i++) rp[i] = (int)ptr[i];
    for (int64_t s = 0; s < N; s++)
        for (int64_t k = ptr[s]; k < ptr[s + 1]; k++) ci[k] = (int)perm[k], val[k] = 1.0f / (float)(ptr[s + 1] - ptr[s]);
    int *drp, *dci;
    float *dval;
    CK(cudaMalloc(&drp, 4 * (N + 1)));
    CK(cudaMalloc(&dci, 4 * E2));
    CK(cudaMalloc(&dval, 4 * E2));
    CK(cudaMemcpy(drp, rp.data(), 4 * (N + 1), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dci, ci.data(), 4 * E2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dval, val.data(), 4 * E2, cudaMemcpyHostToDevice));
    cusparseSpMatDescr_t mA;
    cusparseDnMatDescr_t mB, mC;
    cusparseCreateCsr(&mA, N, E2, E2, drp, dci, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseCreateDnMat(&mB, E2, H, H, msg, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    cusparseCreateDnMat(&mC, N, H, H, out, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    float one = 1, zero = 0;
    size_t wsb = 0;
    cusparseSpMM_bufferSize(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, mB,
                            &zero, mC, CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG2, &wsb);
    void *ws;
    CK(cudaMalloc(&ws, wsb ? wsb : 16));
    double sp_ms = time_ms([&] {
        cusparseSpMM(sp, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mA, mB, &zero, mC,
                     CUDA_R_32F, CUSPARSE_SPMM_CSR_ALG2, ws);
    });
    report("seg_mean as cuSPARSE SpMM (CSR ALG2)", sp_ms, E2 * (rowb + 8) + N * (rowb + 4));
    printf("seg_mean: the custom kernel takes %.2fx cuSPARSE's time (%s is faster)\n", mean_ms / sp_ms,
           mean_ms <= sp_ms ? "the custom kernel" : "cuSPARSE");
    CK(cudaStreamSynchronize(st));
    return 0;
}
