/* dist: summing a step's gradients over the ranks, wherever they live: MPI on host buffers;
 * NCCL on GPU buffers when the build has it ([dist] collectives = auto or nccl); else MPI through
 * a host copy of a GPU buffer. One process: nothing to do. */
#ifndef SEER_GRAD_COMM_H
#define SEER_GRAD_COMM_H

#include <stdint.h>

#include "backend/backend.h"

enum { COLLECTIVES_AUTO = 0, COLLECTIVES_NCCL = 1, COLLECTIVES_MPI = 2 };

typedef struct {
    const seer_backend *be;
    int ranks, nccl;
    float *stage; // host copy of a GPU buffer (MPI over GPU ranks)
} grad_comm;

/* For buffers of up to max_n floats on be; gpu: this rank's GPU (-1 on the CPU). file names the
 * config for messages. */
int grad_comm_init(grad_comm *c, const seer_backend *be, int ranks, int collectives, int gpu,
                   double timeout, int64_t max_n, const char *file, seer_err *err);
/* x (n floats, backend memory) summed over the ranks in place. */
void grad_comm_sum(grad_comm *c, float *x, int64_t n);
void grad_comm_free(grad_comm *c);

#endif
