/* nccl_comm: the all-reduce of GPU ranks through NCCL (built when the CUDA toolkit has it).
 * MPI bootstraps it: rank 0 makes the unique id and dist_bcast hands it out. The communicator is
 * non-blocking, so a collective that does not complete within the timeout is aborted
 * (ncclCommAbort) and reported instead of hanging the job. */
#ifndef SEER_NCCL_COMM_H
#define SEER_NCCL_COMM_H

#include <stdint.h>

#include "common/common.h"

/* Joins every rank of the dist job on GPU device (this rank's). */
int nccl_open(int device, double timeout_s, seer_err *err);
/* x (n floats, device memory) summed over the ranks in place, on stream (a cudaStream_t). */
int nccl_sum_f32(float *x, int64_t n, void *stream, seer_err *err);
/* Aborts the communicator (pending collectives included); safe to call at any time. */
void nccl_abort(void);
void nccl_close(void);
const char *nccl_version(void);

#endif
