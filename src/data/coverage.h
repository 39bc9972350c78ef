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
 *                                          absent in files written before it existed)
 *   coverage.op_pairs                      the watched operator pairs (COV_PAIRS below), three
 *                                          values each: producer op id, consumer op id, the
 *                                          training graphs' edges between the two (0: a structure
 *                                          the data never had; absent before libseer 0.13) */
#ifndef SEER_COVERAGE_H
#define SEER_COVERAGE_H

#include <stdint.h>

#include "common/container.h"
#include "data/perfgraph.h"
#include "data/prep.h"

enum { COV_NODES_LO, COV_NODES_HI, COV_EDGES_LO, COV_EDGES_HI, COV_GRAPHS, COV_COUNTS };

/* Operator pairs whose edges the coverage counts: structures that no node or edge feature tells
 * apart and that a predictor never trained on them gets wrong in one direction. Each was named
 * before it was tested on networks it had not seen (benchmarks/RESULTS.md, "The identity branch
 * through a BatchNormalization"). At most COV_MAX_PAIRS; a new pair goes at the end. */
#define COV_MAX_PAIRS 16
#define COV_PAIR_NAME 132 // "producer>consumer"
typedef struct {
    const char *src, *dst, *what;
} cov_pair;
extern const cov_pair COV_PAIRS[];
extern const int COV_N_PAIRS;
/* What a watched pair is (COV_PAIRS' what) from its name "producer>consumer", or NULL. */
const char *coverage_pair_what(const char *name);

typedef struct {
    int F[3], M;               // feature widths (node, edge, global), labels
    int n_ops;                 // rows of op_counts (0: not recorded)
    int n_pairs;               // rows of op_pairs (0: not recorded)
    const double *lo[3], *hi[3];
    const double *label_lo, *label_hi;
    const double *counts;      // (COV_COUNTS)
    const double *op_counts;   // (n_ops) or NULL
    const double *op_pairs;    // (n_pairs, 3) producer id, consumer id, training edges; or NULL
    char pair_name[COV_MAX_PAIRS][COV_PAIR_NAME]; // "producer>consumer" per op_pairs row
    double *owned;             // fitted: the one block the pointers above point into
} coverage;

/* Fits on the training graphs of ds (which[g] == SPLIT_TRAIN), before norm_apply; with several
 * ranks every rank gets the ranges of all shards. The watched pairs are those of COV_PAIRS whose
 * two operators ds's op table has. */
void coverage_fit(coverage *c, const pg_dataset *ds, const int8_t *which, const int *label_cols,
                  int M, const norm_comm *comm);
void coverage_free(coverage *c);
void coverage_store(const coverage *c, seer_container *out);
/* Points c into a checkpoint's or export's arrays. Returns 1 when the file has none (written
 * before coverage existed), 0 when loaded, -1 (err filled) when present with wrong sizes.
 * n_ops, op_names: the model's op table (coverage.op_counts, when present, must have n_ops
 * values; coverage.op_pairs ids must lie in it; op_names may be NULL without op_pairs). */
int coverage_load(coverage *c, const seer_container *in, const int F[3], int M, int n_ops,
                  char *const *op_names, const char *origin, seer_err *err);

/* The watched pairs (COV_PAIRS) in an op table: ids[2p], ids[2p+1] the producer's and the
 * consumer's id of row p, both -1 when op_names lacks either. Returns how many rows resolved. */
int coverage_pair_ids(char *const *op_names, int n_ops, int32_t *ids);
/* counts[p] += the edges of COV_PAIRS row p among n_edges (edge_index (n_edges, 2) of node ids
 * local to node_base, node_op indexed from 0). */
void coverage_count_pairs(const int32_t *ids, const int32_t *node_op, const int32_t *edge_index,
                          int64_t n_edges, int64_t node_base, double *counts);
/* The op_pairs rows (3 values each) of the resolved COV_PAIRS rows with their counts; returns
 * how many. */
int coverage_pairs_rows(const int32_t *ids, const double *counts, double *rows);

/* One quantity of a graph outside the training range. kind: 0 node, 1 edge, 2 global feature
 * (index = column), COV_KIND_NODES / COV_KIND_EDGES (the graph's size), COV_KIND_METRIC (a
 * prediction more than COV_METRIC_FACTOR times outside the training labels; index = metric),
 * COV_KIND_OP (an operator type no training graph had; index = its op id, value = its nodes in
 * the graph, lo = hi = 0), COV_KIND_PAIR (a watched operator pair no training graph had; index =
 * its op_pairs row, value = its edges in the graph, lo = hi = 0; 7 is libseer's SEER_CALIB). */
enum { COV_KIND_NODES = 3, COV_KIND_EDGES = 4, COV_KIND_METRIC = 5, COV_KIND_OP = 6, COV_KIND_PAIR = 8 };
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
 * watched operator pairs (when node_op and edge_index (n_edges, 2) are not NULL and op_pairs was
 * recorded), the node and edge counts and the raw features (node_x (n_nodes, F[0]), edge_x (n_edges, F[1]),
 * global_x (F[2]); per column its min and max over the rows). Writes the first max_items items (a
 * feature's value is the one farther outside) and returns how many quantities lie outside. */
int coverage_check(const coverage *c, int64_t n_nodes, int64_t n_edges, const int32_t *node_op,
                   const int32_t *edge_index, const float *node_x, const float *edge_x, const float *global_x,
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
