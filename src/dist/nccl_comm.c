/* nccl_comm: see nccl_comm.h. */
#define _DEFAULT_SOURCE
#include "nccl_comm.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist.h"

static ncclComm_t comm;
static int open_;
static double timeout;
static char version[32];

const char *nccl_version(void) {
    int v = 0;
    ncclGetVersion(&v);
    snprintf(version, sizeof version, "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    return version;
}

/* Polls the non-blocking communicator until the last call settled; -1 on error or timeout. */
static int settle(const char *what, seer_err *err) {
    double t0 = seer_now();
    ncclResult_t st;
    for (;;) {
        if (ncclCommGetAsyncError(comm, &st) != ncclSuccess) st = ncclSystemError;
        if (st != ncclInProgress) break;
        if (timeout > 0 && seer_now() - t0 > timeout) {
            nccl_abort();
            return seer_fail(err, "rank %d/%d: NCCL %s did not complete within %.0f s ([dist] "
                                  "timeout); communicator aborted", dist_rank(), dist_ranks(), what,
                             timeout);
        }
        usleep(100);
    }
    if (st != ncclSuccess)
        return seer_fail(err, "rank %d/%d: NCCL %s: %s", dist_rank(), dist_ranks(), what,
                         ncclGetErrorString(st));
    return 0;
}

int nccl_open(int device, double timeout_s, seer_err *err) {
    timeout = timeout_s;
    ncclUniqueId id;
    if (dist_rank() == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        return seer_fail(err, "NCCL: cannot make a unique id (no network interface?)");
    dist_bcast(&id, sizeof id, 0);
    if (cudaSetDevice(device) != cudaSuccess)
        return seer_fail(err, "rank %d/%d: NCCL: cannot select CUDA device %d", dist_rank(),
                         dist_ranks(), device);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&comm, dist_ranks(), id, dist_rank(), &cfg);
    if (r != ncclSuccess && r != ncclInProgress)
        return seer_fail(err, "rank %d/%d: NCCL init: %s", dist_rank(), dist_ranks(),
                         ncclGetErrorString(r));
    open_ = 1;
    return settle("init", err);
}

int nccl_sum_f32(float *x, int64_t n, void *stream, seer_err *err) {
    cudaStream_t st = (cudaStream_t)stream;
    ncclResult_t r = ncclAllReduce(x, x, (size_t)n, ncclFloat, ncclSum, comm, st);
    if (r != ncclSuccess && r != ncclInProgress)
        return seer_fail(err, "rank %d/%d: NCCL all-reduce: %s", dist_rank(), dist_ranks(),
                         ncclGetErrorString(r));
    if (settle("all-reduce (enqueue)", err)) return -1;
    // wait for the stream, so a peer that never joins ends in the timeout, not a hang
    double t0 = seer_now();
    cudaError_t q;
    while ((q = cudaStreamQuery(st)) == cudaErrorNotReady) {
        ncclResult_t a;
        if (ncclCommGetAsyncError(comm, &a) == ncclSuccess && a != ncclSuccess && a != ncclInProgress) {
            nccl_abort();
            return seer_fail(err, "rank %d/%d: NCCL all-reduce: %s", dist_rank(), dist_ranks(),
                             ncclGetErrorString(a));
        }
        if (timeout > 0 && seer_now() - t0 > timeout) {
            nccl_abort();
            return seer_fail(err, "rank %d/%d: NCCL all-reduce did not complete within %.0f s "
                                  "([dist] timeout): another rank stopped responding; "
                                  "communicator aborted", dist_rank(), dist_ranks(), timeout);
        }
        usleep(20);
    }
    if (q != cudaSuccess)
        return seer_fail(err, "rank %d/%d: CUDA after the NCCL all-reduce: %s", dist_rank(),
                         dist_ranks(), cudaGetErrorString(q));
    return 0;
}

void nccl_abort(void) {
    if (!open_) return;
    open_ = 0;
    ncclCommAbort(comm);
}

void nccl_close(void) {
    if (!open_) return;
    open_ = 0;
    ncclCommFinalize(comm);
    ncclResult_t st = ncclInProgress;
    while (ncclCommGetAsyncError(comm, &st) == ncclSuccess && st == ncclInProgress) usleep(100);
    ncclCommDestroy(comm);
}
