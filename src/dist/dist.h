/* dist: data-parallel training across processes (ranks), launched by mpirun or srun.
 *
 * One process is the default and needs nothing: every collective below is then a no-op. Under a
 * launcher, dist_init loads libseer_mpi.so (dist_plugin.h) and the ranks share MPI_COMM_WORLD.
 * State is global to the process (there is one job per process).
 *
 * Faults never hang the job: an error on any rank (seer_die) prints one line naming the rank and
 * calls MPI_Abort, which ends every rank; a collective that waits longer than the timeout (a rank
 * stopped responding) makes its rank print which collective and exit, and the launcher then ends
 * the others. */
#ifndef SEER_DIST_H
#define SEER_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

/* mode: "auto" (MPI when a launcher started this process), "mpi" (always), "none" (never; an
 * error under a launcher with several ranks). timeout_s bounds every collective (0 = none). */
int dist_init(const char *mode, double timeout_s, seer_err *err);
void dist_finalize(void);

int dist_rank(void);
int dist_ranks(void);
int dist_local_rank(void);   // rank on this node (picks the GPU)
const char *dist_library(void); // the MPI library, or "none"

/* Names what the job is doing, for timeout messages ("step 12"); a string literal or static. */
void dist_phase(const char *what);

/* In-place sums over all ranks. */
void dist_sum_f32(float *x, int64_t n);
void dist_sum_f64(double *x, int64_t n);
void dist_sum_i64(int64_t *x, int64_t n);
void dist_bcast(void *buf, size_t bytes, int root);
void dist_barrier(void);
/* Ends every rank of the job with status code. */
_Noreturn void dist_abort(int code);

#endif
