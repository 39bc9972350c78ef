/* model: the linear baseline every graph network must beat (BRP-NAS / HELP style): ridge
 * regression of the standardised log target on a bag of operators: for each operator type the
 * count of its nodes, log1p of their summed FLOPs and log1p of their summed bytes, plus the
 * model's log FLOPs, log bytes and log weights (global features). Columns are standardised with
 * training statistics (a constant column gets weight 0), one ridge per label, lambda picked per
 * label on the validation split from a fixed grid; the solve is a Cholesky factorisation in
 * float64. */
#ifndef SEER_LINEAR_H
#define SEER_LINEAR_H

#include <stdint.h>

#include "common/common.h"

typedef struct {
    int n_ops, F;                    // F = 3 n_ops + 3
    int col_flops, col_bytes;        // node feature columns (log1p FLOPs, log1p bytes)
    int gcol_flops, gcol_bytes, gcol_weights; // global feature columns
} linear_schema;

/* Finds the columns by name (log_flops, log_mem_bytes; log_flops_total, log_mem_total,
 * log_weight_total); fails naming the missing one. */
int linear_schema_init(linear_schema *s, char *const *node_features, int Fn,
                       char *const *global_features, int Fg, int n_ops, const char *origin,
                       seer_err *err);

/* The F features of one graph from its raw (unstandardised) features; op ids must lie in
 * [0, n_ops). */
void linear_features(const linear_schema *s, const float *xn, int Fn, const int32_t *op, int64_t N,
                     const float *xg, double *out);

/* Ridge on standardised columns: minimises sum_i (x_i w + b - y_i)^2 + lambda n |w|^2 over the
 * rows whose y is finite; X is (n, F) already standardised. Returns -1 (err) when no row has a
 * label. */
int ridge_fit(const double *X, const double *y, int64_t n, int F, double lambda, double *w, double *b,
              seer_err *err);

#endif
