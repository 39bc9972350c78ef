/* data: what the training data covered, so that a predictor can say when it is guessing.
 *
 * The trainer fits it on the training split's raw (unstandardised) features next to the
 * normalisation statistics; checkpoints and .seer exports carry it as coverage.* float64 arrays;
 * libseer checks a graph (and its predictions) against it (seer_check_range).
 *
 *   coverage.{node,edge,global}_lo / _hi   per feature column, min and max over training rows
 *   coverage.label_lo / _hi                per label, min and max of the finite training labels
 *                                          (native units)
 *   coverage.counts                        min and max nodes, min and max edges per training
 *                                          graph, and the number of training graphs
 *   coverage.op_counts                     per operator type of the op table, its nodes in the
 *                                          training graphs (0: an operator the data never had;
 *                                          absent in files written before it existed) */
#ifndef SEER_COVERAGE_H
#define SEER_COVERAGE_H

#include <stdint.h>

#include "common/container.h"
#include "data/perfgraph.h"
#include "data/prep.h"

enum { COV_NODES_LO, COV_NODES_HI, COV_EDGES_LO, COV_EDGES_HI, COV_GRAPHS, COV_COUNTS };

typedef struct {
    int F[3], M;               // feature widths (node, edge, global), labels
    int n_ops;                 // rows of op_counts (0: not recorded)
    const double *lo[3], *hi[3];
    const double *label_lo, *label_hi;
    const double *counts;      // (COV_COUNTS)
    const double *op_counts;   // (n_ops) or NULL
    double *owned;             // fitted: the one block the pointers above point into
} coverage;

/* Fits on the training graphs of ds (which[g] == SPLIT_TRAIN), before norm_apply; with several
 * ranks every rank gets the ranges of all shards. */
void coverage_fit(coverage *c, const pg_dataset *ds, const int8_t *which, const int *label_cols,
                  int M, const norm_comm *comm);
void coverage_free(coverage *c);
void coverage_store(const coverage *c, seer_container *out);
/* Points c into a checkpoint's or export's arrays. Returns 1 when the file has none (written
 * before coverage existed), 0 when loaded, -1 (err filled) when present with wrong sizes.
 * n_ops: the model's op table (coverage.op_counts, when present, must have that many values). */
int coverage_load(coverage *c, const seer_container *in, const int F[3], int M, int n_ops,
                  const char *origin, seer_err *err);

/* One quantity of a graph outside the training range. kind: 0 node, 1 edge, 2 global feature
 * (index = column), COV_KIND_NODES / COV_KIND_EDGES (the graph's size), COV_KIND_METRIC (a
 * prediction more than COV_METRIC_FACTOR times outside the training labels; index = metric),
 * COV_KIND_OP (an operator type no training graph had; index = its op id, value = its nodes in
 * the graph, lo = hi = 0). */
enum { COV_KIND_NODES = 3, COV_KIND_EDGES = 4, COV_KIND_METRIC = 5, COV_KIND_OP = 6 };
#define COV_METRIC_FACTOR 10.0
typedef struct {
    int kind, index;
    double value, lo, hi;
} coverage_item;

/* The nodes of node_op (n_nodes ids into the op table) whose operator type the training data never
 * had; -1 when op_counts was not recorded (coverage_check's op items count the same nodes). */
int64_t coverage_unseen_nodes(const coverage *c, const int32_t *node_op, int64_t n_nodes);

/* Checks, in this order, the M predictions (when pred is not NULL), the operator types (when
 * node_op is not NULL and op_counts was recorded: ids into the op table, n_nodes of them), the
 * node and edge counts and the raw features (node_x (n_nodes, F[0]), edge_x (n_edges, F[1]),
 * global_x (F[2]); per column its min and max over the rows). Writes the first max_items items (a
 * feature's value is the one farther outside) and returns how many quantities lie outside. */
int coverage_check(const coverage *c, int64_t n_nodes, int64_t n_edges, const int32_t *node_op,
                   const float *node_x, const float *edge_x, const float *global_x,
                   const double *pred, coverage_item *items, int max_items);

/* The operator embedding rows (n_ops, width) of an operator type the training data never had
 * carry their initial random values (no gradient ever reached them); this sets each such row
 * to the mean of the seen rows weighted by their node counts, so that an unseen operator reads
 * as an average one rather than as noise. Does nothing without op_counts or without a seen row. */
void coverage_fill_unseen(const coverage *c, float *embed, int64_t n_ops, int64_t width);

/* [model] clamp = range: clamps the raw features x (rows, F[kind]) of one kind (0 node, 1 edge,
 * 2 global) to the training range, column by column, so that a graph unlike the training data
 * cannot push the network into extrapolation (the roofline cost reads the unclamped values). */
void coverage_clamp(const coverage *c, int kind, float *x, int64_t rows);

#endif
