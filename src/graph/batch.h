/* graph: a mini-batch of whole graphs, concatenated, with the CSR (by destination) and CSC (by
 * source) indexes that message passing needs.
 *
 * Size letters: G graphs, N nodes, E edges in the batch; F feature widths, M targets. Node ids
 * in src/dst are batch-global. in_idx lists edge ids grouped by destination in increasing edge
 * id (a stable counting sort), which is what makes "ties to the lowest edge id" hold. */
#ifndef SEER_BATCH_H
#define SEER_BATCH_H

#include <stdint.h>

#include "data/perfgraph.h"

/* A set of directed edges over V nodes with both indexes: CSR by destination (gathers and
 * reductions) and CSC by source (the backward of a gather, without atomics). */
typedef struct {
    int64_t E, V;
    int64_t *src, *dst;         // (E)
    int64_t *in_ptr, *in_idx;   // (V+1), (E)
    int64_t *out_ptr, *out_idx; // (V+1), (E)
} edge_set;

/* The indexes PerfSAGE and the GCN need besides the graph's own edges, built from the batch:
 *   sym  every edge in both directions, over the N nodes (GraphSAGE neighbourhoods: predecessors
 *        and successors);
 *   gcn  the edges, a self loop on every node, an edge from every node to its graph's global
 *        node, and a self loop on each global node, over N + G nodes (global node of graph g is
 *        node N + g);
 *   op   operator ids (int64) and the nodes grouped by operator (the embedding's gradient). */
typedef struct {
    edge_set sym, gcn;
    int64_t *op, *op_ptr, *op_idx; // (N), (n_ops+1), (N)
    int n_ops;
} extra_index;

/* int64 words extra_index_build needs for these sizes. */
size_t extra_index_words(int64_t N, int64_t E, int64_t G, int n_ops);
/* Lays the indexes out in buf (any memory, host or device; no values written); returns the words
 * used. */
size_t extra_index_layout(extra_index *x, int64_t *buf, int64_t N, int64_t E, int64_t G, int n_ops);
/* Lays the indexes out in buf and builds them; op may be NULL (all operators 0). */
void extra_index_build(extra_index *x, int64_t *buf, const int64_t *src, const int64_t *dst,
                       const int64_t *node_graph, const int32_t *op, int64_t N, int64_t E,
                       int64_t G, int n_ops);

typedef struct {
    int64_t G, N, E;
    int64_t cap_G, cap_N, cap_E;
    int Fn, Fe, Fg, M;
    int64_t *graph_id;               // (G) dataset graph ids
    int64_t *node_ptr, *edge_ptr;    // (G+1)
    int64_t *src, *dst;              // (E)
    int64_t *node_graph, *edge_graph; // (N), (E)
    int64_t *in_ptr, *in_idx;        // (N+1), (E): edges by destination
    int64_t *out_ptr, *out_idx;      // (N+1), (E): edges by source
    int32_t *op;                     // (N)
    float *xn, *xe, *xg;             // (N, Fn), (E, Fe), (G, Fg)
    float *y;                        // (G, M) standardised targets, NaN = masked
    int n_ops;
    int want_extra;                  // build x (default 1; SeerNet's trainer turns it off)
    int index_only;                  // build only the graph ids, src/dst, node_graph, op and x
                                     // (no features, no CSR/CSC: a GPU batch's host part)
    int64_t *xbuf;                   // storage of x
    extra_index x;
} graph_batch;

/* Allocates for up to cap_G graphs / cap_N nodes / cap_E edges of a dataset with n_ops operator
 * types; no allocation happens later. */
void batch_init(graph_batch *b, int64_t cap_G, int64_t cap_N, int64_t cap_E, int Fn, int Fe,
                int Fg, int M, int n_ops);
void batch_free(graph_batch *b);

/* Fills b with the graphs ids[0..count) of ds (features as stored in ds) and their targets
 * (rows of targets, width M; may be NULL). */
void batch_build(graph_batch *b, const pg_dataset *ds, const float *targets, const int64_t *ids,
                 int64_t count);

/* Stable counting sort of edge ids by key (dst for the CSR, src for the CSC): ptr (N+1), idx (E);
 * keys must lie in [0, N). */
void batch_index(int64_t *ptr, int64_t *idx, const int64_t *key, int64_t N, int64_t E);

/* Largest node and edge totals over any `count` graphs of the given id list: the capacity that
 * holds every batch of that size. */
void batch_capacity(const pg_dataset *ds, const int64_t *ids, int64_t n_ids, int64_t count,
                    int64_t *max_nodes, int64_t *max_edges);

#endif
