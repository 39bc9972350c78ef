/* PerfGraph: the HDF5 dataset of DESIGN.md (format version 1), in memory and on disk.
 *
 * Size letters: G graphs, N nodes, E edges, Fn/Fe/Fg feature widths, M labels.
 * Graphs are stored concatenated; node ids in /edge/index are local to their graph. */
#ifndef SEER_PERFGRAPH_H
#define SEER_PERFGRAPH_H

#include <stdint.h>

#include "common/common.h"

#define PG_VERSION 1

typedef struct {
    int64_t G, N, E;
    int Fn, Fe, Fg, M, n_ops;
    int64_t *node_ptr;   // (G+1)
    int64_t *edge_ptr;   // (G+1)
    int64_t *group;      // (G)
    char **name;         // (G)
    float *node_x;       // (N, Fn)
    int32_t *node_op;    // (N)
    int32_t *edge_index; // (E, 2) local (src, dst)
    float *edge_x;       // (E, Fe)
    float *global_x;     // (G, Fg)
    float *label_y;      // (G, M) native units, NaN = not measured
    char **node_features, **edge_features, **global_features, **op_types, **labels;
    char *source, *device;
} pg_dataset;

/* Reads and validates a whole file. On failure ds is left empty and err names the file, the
 * dataset path or graph index, and what is wrong. */
int pg_read(const char *path, pg_dataset *ds, seer_err *err);

/* Writes ds as format version 1 through a temporary file that is renamed into place, so a failed
 * write never leaves a corrupt file at path. It does not validate: tests use it to make bad files. */
int pg_write(const char *path, const pg_dataset *ds, seer_err *err);

/* The checks pg_read applies; path is used only in messages. */
int pg_validate(const pg_dataset *ds, const char *path, seer_err *err);

void pg_free(pg_dataset *ds);

/* Reads only /schema/labels (names, NULL-terminated list; free each and the list). */
int pg_read_label_names(const char *path, char ***names, int *M, seer_err *err);

/* Index of a name in a list of n names, or -1. */
int pg_find_name(char *const *names, int n, const char *name);

#endif
