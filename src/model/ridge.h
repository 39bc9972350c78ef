/* model: "linear", the ridge baseline every graph network must beat (BRP-NAS / HELP style): ridge
 * regression of the standardised log target on a bag of operators: for each operator type the
 * count of its nodes, log1p of their summed FLOPs and log1p of their summed bytes, plus the
 * model's log FLOPs, log bytes and log weights (global features). Columns are standardised with
 * training statistics (a constant column gets weight 0), one ridge per label, lambda picked per
 * label on the validation split from a fixed grid; the solve is a Cholesky factorisation in
 * float64. The registry's "linear" entry (model.h) carries MODEL_CLOSED_FORM; its callers use the
 * functions below instead of a forward and backward pass.
 * Size letters: G graphs, M labels, F features (3 n_ops + 3). */
#ifndef SEER_RIDGE_H
#define SEER_RIDGE_H

#include <stdint.h>

#include "common/common.h"
#include "common/container.h"

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

/* A fitted ridge model: the raw features' training statistics and one solution per label, in
 * standardised-log-target units. Stored as linear.sizes (n_ops, F, M) and the float64 tensors
 * linear.mean, linear.std, linear.weight, linear.bias, linear.lambda (and linear.lo, linear.hi,
 * linear.tlo, linear.thi with a clamp). */
typedef struct {
    linear_schema s;
    int M;
    double *mean, *std;     // (F)
    double *w, *b, *lambda; // (M, F), (M), (M); lambda may be NULL (exports need not keep it)
    // (F) the raw features' training range ([model] clamp = range, stored as linear.lo and
    // linear.hi): every row is clamped into it before it is standardised, so an operator count
    // or FLOPs sum far beyond the training data cannot drive the linear target without bound.
    // NULL: no clamp.
    double *lo, *hi;
    // (M) with the clamp also the training range of each label's target (linear.tlo, linear.thi):
    // a prediction is clamped into it, since features each inside their range can still combine
    // into a graph no training graph resembles, where a linear model has no bound.
    double *tlo, *thi;
    int owned;              // the arrays are this struct's (else a container's)
} ridge_model;

/* Allocates a zeroed model for M labels over the schema s (the trainer's). */
void ridge_alloc(ridge_model *r, const linear_schema *s, int M);
void ridge_free(ridge_model *r);

/* Fits the columns' statistics on the training rows of X (G, F) (raw features), with clamp their
 * range too, and standardises every row of X in place; a constant column is centred only. */
void ridge_standardise_fit(ridge_model *r, double *X, int64_t G, const int64_t *train, int64_t n_train,
                           int clamp);
/* Clamps (when the model has a range) and standardises one row of raw features in place. */
void ridge_standardise(const ridge_model *r, double *x);

/* One ridge per label on the standardised rows X: targets (G, M) (NaN = not measured), lambda
 * per label from a fixed grid by mean squared error on the validation rows (1e-3 without any);
 * with a feature range (the clamp), the targets' training range too. intercept_only (M values;
 * the model "cost"): no ridge, every weight 0 and label m's bias intercept_only[m], no lambda
 * (r->lambda freed). Sets *val_loss to the mean over labels of the best validation losses. */
int ridge_fit_labels(ridge_model *r, const double *X, const float *targets, const int64_t *train,
                     int64_t n_train, const int64_t *val, int64_t n_val, const double *intercept_only,
                     double *val_loss, seer_err *err);

/* The standardised log target of label m for a standardised feature row x (clamped into the
 * label's training range when the model has one). */
double ridge_predict(const ridge_model *r, int m, const double *x);

/* Adds linear.sizes and the tensors to c (pointers into r: r must outlive the write). */
void ridge_store(const ridge_model *r, seer_container *c);
/* Reads them back for a schema s and M labels: every size and value checked (finite, std > 0).
 * copy = 0 points into c's data (c must outlive r); copy = 1 allocates. */
int ridge_load(ridge_model *r, const linear_schema *s, int M, const seer_container *c, int copy,
               const char *origin, seer_err *err);

/* ridge_load for the schema a checkpoint or export states (schema.node_features,
 * schema.global_features, schema.op_types). */
int ridge_load_stored(ridge_model *r, int M, const seer_container *c, int copy, const char *origin,
                      seer_err *err);

#endif
