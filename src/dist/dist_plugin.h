/* dist_plugin: the interface between seertrain and libseer_mpi.so, the one object that links MPI.
 *
 * seertrain does not link MPI: a single process needs no MPI library at run time. When a launcher
 * (mpirun, srun) started it, dist.c dlopen()s the plugin and calls seer_dist_plugin() for this
 * table. All collectives are blocking and act on MPI_COMM_WORLD. */
#ifndef SEER_DIST_PLUGIN_H
#define SEER_DIST_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#define SEER_DIST_PLUGIN_ABI 1

enum { DIST_F32 = 0, DIST_F64 = 1, DIST_I64 = 2 };

typedef struct {
    int abi;           // SEER_DIST_PLUGIN_ABI
    const char *name;  // e.g. "Open MPI v4.1.4"
    // MPI_Init; rank and size in the world, local_rank on this node (shared-memory split).
    // Returns 0, or -1 with a message in err.
    int (*init)(int *rank, int *size, int *local_rank, char *err, size_t err_len);
    // In-place sum over all ranks of count elements of type DIST_*.
    int (*allreduce_sum)(void *buf, int64_t count, int type);
    int (*bcast)(void *buf, int64_t bytes, int root);
    int (*barrier)(void);
    void (*abort)(int code); // MPI_Abort: ends every rank of the job
    void (*finalize)(void);
} seer_dist_plugin_t;

typedef const seer_dist_plugin_t *(*seer_dist_plugin_fn)(void);

#endif
