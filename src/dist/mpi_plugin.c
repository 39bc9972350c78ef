/* libseer_mpi.so: the MPI side of seertrain's data-parallel training (see dist_plugin.h). */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>

#include "dist/dist_plugin.h"

static char lib_name[MPI_MAX_LIBRARY_VERSION_STRING + 8] = "MPI";

static int p_init(int *rank, int *size, int *local_rank, char *err, size_t err_len) {
    int provided = 0, inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        snprintf(err, err_len, "MPI_Init_thread failed");
        return -1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_free(&node);
    int len = 0;
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(v, &len);
    // the first line ("Open MPI v4.1.4, package: ...") up to the first comma
    int n = 0;
    while (n < len && v[n] && v[n] != ',' && v[n] != '\n' && n < (int)sizeof lib_name - 1) n++;
    snprintf(lib_name, sizeof lib_name, "%.*s", n, v);
    return 0;
}

static int p_allreduce_sum(void *buf, int64_t count, int type) {
    MPI_Datatype t = type == DIST_F32 ? MPI_FLOAT : type == DIST_F64 ? MPI_DOUBLE : MPI_INT64_T;
    size_t elem = type == DIST_F32 ? 4 : 8;
    for (int64_t done = 0; done < count;) { // MPI counts are int
        int n = count - done > INT_MAX / 2 ? INT_MAX / 2 : (int)(count - done);
        if (MPI_Allreduce(MPI_IN_PLACE, (char *)buf + (size_t)done * elem, n, t, MPI_SUM,
                          MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
        done += n;
    }
    return 0;
}

static int p_bcast(void *buf, int64_t bytes, int root) {
    for (int64_t done = 0; done < bytes;) {
        int n = bytes - done > INT_MAX / 2 ? INT_MAX / 2 : (int)(bytes - done);
        if (MPI_Bcast((char *)buf + done, n, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS) return -1;
        done += n;
    }
    return 0;
}

static int p_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1; }
static void p_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
static void p_finalize(void) { MPI_Finalize(); }

static seer_dist_plugin_t table = {SEER_DIST_PLUGIN_ABI, lib_name, p_init, p_allreduce_sum, p_bcast,
                                 p_barrier, p_abort, p_finalize};

__attribute__((visibility("default"))) const seer_dist_plugin_t *seer_dist_plugin(void) {
    return &table;
}
