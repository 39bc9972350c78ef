/* NCCL path of data-parallel training on one GPU (R = 1, or every rank of an mpirun job with one
 * GPU each): communicator init through dist (MPI bootstrap when launched), an all-reduce of 16 M
 * floats checked element by element (x R), its bandwidth, then ncclCommAbort timed.
 * Without a GPU: SKIP, exit 77 (a failure under SEER_REQUIRE_GPU=1). */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "dist/dist.h"
#include "dist/nccl_comm.h"
#include "testutil.h"

int main(void) {
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
        return test_skip("test_nccl", "no CUDA device on this machine");
    seer_err err;
    if (dist_init("auto", 60, &err)) seer_die("%s", err.msg);
    int R = dist_ranks();
    double t0 = seer_now();
    if (nccl_open(dist_local_rank() % ndev, 30, &err)) seer_die("%s", err.msg);
    printf("test_nccl: rank %d/%d, %s, init in %.3f s\n", dist_rank(), R, nccl_version(), seer_now() - t0);
    int64_t n = 16 << 20;
    float *h = malloc(sizeof(float) * (size_t)n), *d;
    for (int64_t i = 0; i < n; i++) h[i] = (float)(i % 7) + dist_rank();
    CHECK(cudaMalloc((void **)&d, sizeof(float) * (size_t)n) == cudaSuccess, "cudaMalloc");
    cudaMemcpy(d, h, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice);
    cudaStream_t st;
    cudaStreamCreate(&st);
    CHECK(nccl_sum_f32(d, n, st, &err) == 0, "%s", err.msg); // warm-up
    cudaMemcpy(d, h, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice);
    t0 = seer_now();
    CHECK(nccl_sum_f32(d, n, st, &err) == 0, "%s", err.msg);
    double secs = seer_now() - t0;
    cudaMemcpy(h, d, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost);
    int64_t wrong = 0;
    double rank_sum = R * (R - 1) / 2.0;
    for (int64_t i = 0; i < n; i++) wrong += h[i] != (float)(R * (i % 7) + rank_sum);
    CHECK(wrong == 0, "%lld of %lld all-reduced values wrong", (long long)wrong, (long long)n);
    printf("test_nccl: all-reduce of %lld floats in %.3f ms (%.1f GB/s algorithm bandwidth)\n",
           (long long)n, secs * 1e3, 4.0 * n / secs / 1e9);
    t0 = seer_now();
    nccl_abort();
    double ab = seer_now() - t0;
    CHECK(ab < 10, "ncclCommAbort took %.1f s", ab);
    printf("test_nccl: ncclCommAbort in %.3f s\n", ab);
    cudaFree(d);
    free(h);
    dist_finalize();
    return test_finish("test_nccl");
}
