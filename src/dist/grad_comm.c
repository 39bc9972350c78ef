/* dist: the gradient all-reduce (see grad_comm.h). */
#include "grad_comm.h"

#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#ifdef SEER_HAVE_NCCL
#include "cuda_backend.h"
#include "dist/nccl_comm.h"
#endif

int grad_comm_init(grad_comm *c, const seer_backend *be, int ranks, int collectives, int gpu,
                   double timeout, int64_t max_n, const char *file, seer_err *err) {
    memset(c, 0, sizeof *c);
    c->be = be, c->ranks = ranks;
    if (ranks < 2) return 0;
    if (collectives == COLLECTIVES_NCCL && !be->device)
        return seer_fail(err, "%s: [dist] collectives = nccl needs GPU ranks ([backend] device = "
                              "cuda or auto on a machine with GPUs); use collectives = auto or mpi",
                         file);
    if (be->device && collectives != COLLECTIVES_MPI) {
#ifdef SEER_HAVE_NCCL
        if (nccl_open(gpu, timeout, err)) return -1;
        c->nccl = 1;
        return 0;
#else
        (void)gpu, (void)timeout;
        if (collectives == COLLECTIVES_NCCL)
            return seer_fail(err, "%s: [dist] collectives = nccl, but this build has no NCCL; use "
                                  "collectives = auto or mpi", file);
#endif
    }
    if (be->device) c->stage = seer_malloc(sizeof(float) * (size_t)max_n);
    return 0;
}

void grad_comm_sum(grad_comm *c, float *x, int64_t n) {
    if (c->ranks < 2) return;
    if (!c->be->device) {
        dist_sum_f32(x, n);
        return;
    }
#ifdef SEER_HAVE_NCCL
    if (c->nccl) {
        seer_err err;
        if (nccl_sum_f32(x, n, cuda_backend_stream(), &err)) seer_die("%s", err.msg);
        return;
    }
#endif
    c->be->download(c->be->ctx, c->stage, x, sizeof(float) * (size_t)n);
    dist_sum_f32(c->stage, n);
    c->be->upload(c->be->ctx, x, c->stage, sizeof(float) * (size_t)n);
}

void grad_comm_free(grad_comm *c) {
    free(c->stage);
    memset(c, 0, sizeof *c);
}
