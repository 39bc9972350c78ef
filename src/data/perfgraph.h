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
    int64_t g0;          // file index of graph 0 (a shard read by pg_read_range; 0 otherwise)
    int Fn, Fe, Fg, M, n_ops;
    int64_t *node_ptr;   // (G+1)
    int64_t *edge_ptr;   // (G+1)
    int64_t *group;      // (G)
    char **name;         // (G)
    char **family;       // (G) the search space or family of each graph; NULL when the file has none
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

/* Sharded reading. The index (graph offsets, groups and names: a few numbers per graph) is read
 * whole by every rank; the node, edge, global and label rows of a contiguous range of graphs are
 * read with one hyperslab per dataset, so a rank holds only its shard. */
typedef struct pg_index {
    int64_t G, G_file;            // graphs in use (G <= G_file after pg_index_limit), in the file
    int64_t N, E;                 // node and edge rows stored in the file
    int64_t *node_ptr, *edge_ptr; // (G_file + 1)
    int64_t *group;               // (G_file)
    char **name;                  // (G_file)
    char **family;                // (G_file), NULL when the file has no /graph/family
    // several files read as one (pg_read_index_paths): each file's own index, in order
    int n_parts;
    struct pg_index *parts;
    char **part_paths;
} pg_index;

enum { PG_RD_NODE_X, PG_RD_NODE_OP, PG_RD_EDGE_INDEX, PG_RD_EDGE_X, PG_RD_GLOBAL_X, PG_RD_LABEL_Y,
       PG_RD_N };

/* What a range read took from the file: hyperslab reads issued, and per dataset (PG_RD_*) the
 * first row and the number of rows read. */
typedef struct {
    int64_t reads;
    int64_t first[PG_RD_N], rows[PG_RD_N];
} pg_read_stats;

int pg_read_index(const char *path, pg_index *ix, seer_err *err);
void pg_index_free(pg_index *ix);
/* Uses only the first n graphs (n <= 0: all). */
void pg_index_limit(pg_index *ix, int64_t n);
/* Graph range [lo, hi) of rank of ranks: contiguous, cut at graph boundaries nearest equal node
 * counts (the ranks' work in a step scales with nodes). */
void pg_shard(const pg_index *ix, int rank, int ranks, int64_t *lo, int64_t *hi);
/* Reads and validates graphs [lo, hi) of the index (ds->g0 = lo; ids in messages are file ids);
 * st (may be NULL) counts what was read. */
int pg_read_range(const char *path, const pg_index *ix, int64_t lo, int64_t hi, pg_dataset *ds,
                  pg_read_stats *st, seer_err *err);

/* Several files with one schema read as one dataset ([data] path = a.h5,b.h5): the graphs of
 * each file in order; groups stay apart (file k's group ids are offset by k << 40); a file without
 * /graph/family gives its graphs the file's name without folder and extension as family. With one
 * path these are pg_read_index and pg_read_range. */
int pg_read_index_paths(const char *paths, pg_index *ix, seer_err *err);
int pg_read_range_paths(const char *paths, const pg_index *ix, int64_t lo, int64_t hi,
                        pg_dataset *ds, pg_read_stats *st, seer_err *err);

/* Writes ds as format version 1 through a temporary file that is renamed into place, so a failed
 * write never leaves a corrupt file at path. It does not validate: tests use it to make bad files. */
int pg_write(const char *path, const pg_dataset *ds, seer_err *err);
/* The same with the node, edge, global and label arrays chunked, byte-shuffled and deflated at
 * level 1..9 (0: contiguous, as pg_write), or LZ4-compressed (PG_LZ4: HDF5's registered LZ4 filter
 * 32004, a plugin: Debian's hdf5-filter-plugin, which h5py and every HDF5 reader on the machine
 * load too). At levels other than 0 every chunk also carries HDF5's Fletcher-32 checksum (built
 * into HDF5; the index arrays are chunked for it, uncompressed), so a damaged byte is refused on
 * reading. Every reader reads all of them, and files written before the checksums. */
#define PG_LZ4 (-1)
#define PG_LZ4_FILTER 32004
int pg_write_level(const char *path, const pg_dataset *ds, int level, seer_err *err);
/* The chunk size compressed writes aim at (whole rows; 0: the default, 512 KiB); returns the
 * previous one. Tests make many small chunks with it. */
size_t pg_chunk_bytes(size_t bytes);
/* Whether compressed writes add the checksums (default 1); returns the previous setting. Tests
 * write files as Seer did before the checksums with it. */
int pg_write_checksums(int on);
/* 1 when the file's arrays carry the checksums of pg_write_level, 0 when not (uncompressed, or
 * written before them), -1 when it cannot be opened. It reads no data: pg_read verifies them. */
int pg_checksummed(const char *path);
/* 1 when this HDF5 can write PG_LZ4 (its LZ4 plugin is installed). */
int pg_lz4_available(void);

/* The checks pg_read applies; path is used only in messages. */
int pg_validate(const pg_dataset *ds, const char *path, seer_err *err);

void pg_free(pg_dataset *ds);

/* Reads only /schema/labels (names, NULL-terminated list; free each and the list). */
int pg_read_label_names(const char *path, char ***names, int *M, seer_err *err);

/* Index of a name in a list of n names, or -1. */
int pg_find_name(char *const *names, int n, const char *name);

#endif
