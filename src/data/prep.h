/* data: splits and normalisation.
 *
 * Splits are seeded and keep graphs that share /graph/group in one split: groups are shuffled
 * and dealt out in order until each split has its share (fractions) or count (counts) of graphs.
 * Normalisation: every feature column is standardised with training-split statistics (a column
 * whose training std is below 1e-6 is only centred); targets are trained as standardised log
 * values. The statistics travel in every checkpoint and export.
 *
 * [model] target = roofline: the target is the log of the label over a roofline cost fitted per
 * label on the training split,
 *   cost(g) = c0 + c1 nodes(g) + c2 FLOPs(g) + c3 bytes(g),   c >= 0,
 * minimising the relative error sum ((cost - y) / y)^2 (a non-negative least squares over the four
 * terms, solved exactly by trying every subset). nodes, FLOPs and bytes are the graph's raw global
 * features log_nodes, log_flops_total and log_mem_total (log1p values; the converter's schema).
 * A prediction is then y = cost(g) exp(t sigma + mu): the scale comes from the graph's physics,
 * which holds far outside the training data, and the network learns the correction.
 * roofline_weights adds c4 weight bytes (log_weight_total); roofline_light splits the bytes in
 * two, the light operators' (log_mem_light: elementwise arithmetic and views, which a runtime fuses,
 * does in place or never copies) and the rest's, each with its own coefficient:
 *   cost(g) = c0 + c1 nodes + c2 FLOPs + c3 (bytes - light bytes) + c4 weight bytes + c5 light bytes.
 * roofline_kept adds to roofline_weights the bytes a training step keeps for the backward pass
 * (log_mem_kept: perfgraph_build.h), which follow a training step's peak memory across network
 * families where all the bytes do not (benchmarks/RESULTS.md, "The bytes autograd keeps"):
 *   cost(g) = c0 + c1 nodes + c2 FLOPs + c3 bytes + c4 weight bytes + c5 kept bytes.
 * roofline_kept_silu is the same with the kept bytes counting SiLU as one operator that keeps its
 * input (log_mem_kept_silu: EfficientNets' count is then autograd's, where log_mem_kept's is 1.28x);
 * roofline_kept_acts leaves out of that count the tensors computed from weights alone
 * (log_mem_kept_acts: a transposed weight is a weight; ViT-B/16's count is then autograd's, where
 * log_mem_kept's is 2.1x). */
#ifndef SEER_PREP_H
#define SEER_PREP_H

#include <stdint.h>

#include "data/perfgraph.h"

enum { SPLIT_TRAIN = 0, SPLIT_VAL = 1, SPLIT_TEST = 2 };

/* which[g] gets SPLIT_*; by_counts selects counts over fractions. */
int split_assign(int64_t G, const int64_t *group, int by_counts, double train_frac, double val_frac,
                 int64_t train_count, int64_t val_count, uint64_t seed, int8_t *which,
                 seer_err *err);

/* Ids of the graphs with which[g] == kind, in increasing order; returns the count. */
int64_t split_ids(const int8_t *which, int64_t G, int kind, int64_t *ids);

// [model] target (the same as config.h's CFG_TARGET_*): roofline's cost has the terms constant,
// nodes, FLOPs and bytes; roofline_weights adds the bytes of the weights (which a training step
// reads, updates and keeps gradients of, whatever the batch); roofline_light prices the light
// operators' bytes apart from the rest's; roofline_kept adds the bytes kept for the backward pass
// (roofline_kept_silu: with SiLU counted as one operator; roofline_kept_acts: and weights
// transposed at run time left out); roofline_peak adds to roofline_kept_acts the mean activation
// tensor's bytes (the gradients a backward pass holds beside what it keeps scale with it);
// roofline_dw adds to roofline_peak the depthwise convolutions' FLOPs (log_flops_dw), which a CPU's
// backward pass runs far slower than the rest's
enum {
    TARGET_LOG = 0,
    TARGET_ROOFLINE = 1,
    TARGET_ROOFLINE_W = 2,
    TARGET_ROOFLINE_L = 3,
    TARGET_ROOFLINE_K = 4,
    TARGET_ROOFLINE_KS = 5,
    TARGET_ROOFLINE_KA = 6,
    TARGET_ROOFLINE_P = 7,
    TARGET_ROOFLINE_DW = 8
};
#define TARGET_LAST TARGET_ROOFLINE_DW // the highest kind this library knows
#define ROOF_TERMS_MAX 8 // the most terms a cost has (roofline_dw)
#define NORM_TARGET_HEAD 5 // norm.target for log and roofline: kind, clamp, three global columns
// norm.target's longest: kind, clamp, a global column per term but the constant, the terms per metric
#define NORM_TARGET_MAX(M) (2 + (ROOF_TERMS_MAX - 1) + ROOF_TERMS_MAX * (int64_t)(M))

/* The cost's terms for a target kind: 0 (log), 4 (roofline), 5 (roofline_weights), 6
 * (roofline_light, roofline_kept, roofline_kept_silu, roofline_kept_acts), 7 (roofline_peak), 8
 * (roofline_dw). */
static inline int norm_roof_terms(int target) {
    return target == TARGET_ROOFLINE     ? 4
           : target == TARGET_ROOFLINE_W ? 5
           : target >= TARGET_ROOFLINE_L && target <= TARGET_ROOFLINE_KA ? 6
           : target == TARGET_ROOFLINE_P ? 7
           : target == TARGET_ROOFLINE_DW ? 8
                                         : 0;
}

typedef struct {
    int Fn, Fe, Fg, M;
    double *node_mean, *node_std, *edge_mean, *edge_std, *global_mean, *global_std;
    double *label_mu, *label_sigma; // of log(y) (or log(y / cost)) over valid training labels
    int target;                     // TARGET_*
    int clamp;                      // 1: features are clamped to the training range (coverage.h)
    int roof_col[ROOF_TERMS_MAX - 1]; // global columns of log_nodes, log_flops_total,
                                      // log_mem_total (and log_weight_total: roofline_weights;
                                      // and log_mem_light: roofline_light; log_mem_kept:
                                      // roofline_kept; log_mem_kept_silu: roofline_kept_silu;
                                      // log_mem_kept_acts: roofline_kept_acts; it and
                                      // log_tensor_bytes_mean: roofline_peak; and
                                      // log_flops_dw: roofline_dw)
    double *roof; // (M, norm_roof_terms(target)) the fitted costs (the roofline targets)
    // seercalibrate's batch-dependent factors (calib.batch; libseer only, 0 knots: none): log y
    // gains calib_y[m * calib_n + j] where the raw global feature calib_col equals calib_x[j],
    // linear in between, constant beyond the first and last knot
    int calib_col, calib_n;
    const double *calib_x, *calib_y;
    // seercalibrate --with-flops or --power (calib.flops; libseer only, NULL: none): the native
    // prediction y becomes exp(a + b log y + c x) with (a, b, c) = aff[3 m ..] and x the raw
    // global feature aff_col (log_flops_total), fitted on graphs with x in [aff_lo, aff_hi]
    int aff_col;
    double aff_lo, aff_hi;
    const double *aff;
} norm_stats;

/* How norm_fit combines the shards of several ranks: sum_f64 sums a buffer over all ranks in
 * place (an all-reduce). NULL or ranks = 1: the data is all here. */
typedef struct {
    int rank, ranks;
    void (*sum_f64)(double *x, int64_t n);
} norm_comm;

/* Fits statistics on the training graphs (which[g] for the graphs of ds); label_cols selects M
 * label columns of ds. Fails when a selected label has no finite training value, or when the
 * target's cost reads a global feature ds lacks (the message starts with origin: the file). */
int norm_fit(norm_stats *s, const pg_dataset *ds, const int8_t *which, const int *label_cols,
             int M, int target, const char *origin, const norm_comm *comm, seer_err *err);
void norm_free(norm_stats *s);

/* Standardises the (rows, w) block x in place: x = (x - mean) / sd, in double, per column. */
void norm_rows(float *x, int64_t rows, int w, const double *mean, const double *sd);

/* Standardises ds's feature arrays in place. */
void norm_apply(const norm_stats *s, pg_dataset *ds);

/* "log", "roofline", "roofline_weights", "roofline_light", "roofline_kept", "roofline_kept_silu",
 * "roofline_kept_acts"
 * ([model] target's names). */

const char *norm_target_name(int target);

/* The global columns target's cost reads (-1 when a name is missing: the error names it). */
int norm_roof_columns(
char *const *global_names, int Fg, int target, int col[ROOF_TERMS_MAX - 1],
                      const char *origin, seer_err *err);

/* log cost(g) of label m from one graph's raw (unstandardised) global features (0 when the target
 * is plain log), plus the calibration's log factor at the graph's knot feature when there is one. */
double norm_log_cost(const norm_stats *s, int m, const float *global_raw);

/* targets (G, M) = (log y - log cost - mu) / sigma of the selected columns; NaN stays NaN. Reads
 * ds's raw global features (call before norm_apply); log_cost (G, M), optional, receives each
 * graph's log cost for norm_to_native. */
void norm_targets(const norm_stats *s, const pg_dataset *ds, const int *label_cols, float *targets,
                  double *log_cost);

/* Standardised prediction t of label m -> native units, given the graph's log cost (0 for
 * target = log). */
double norm_to_native(const norm_stats *s, int m, double t, double log_cost);

/* norm.target as stored in checkpoints and exports, float64 values: target, clamp, the cost's
 * global columns (3; roofline_weights 4), then roof (M x 4; roofline_weights M x 5; log: zeros),
 * NORM_TARGET_MAX(M) at most. pack returns the count; unpack checks every value (a message
 * naming origin) and points s->roof into v. Files written before roofline_weights read alike. */
int64_t norm_target_pack(const norm_stats *s, double *v);
int norm_target_unpack(norm_stats *s, const double *v, int64_t n, const char *origin, seer_err *err);

/* y at v of the piecewise-linear function through the n knots (x ascending, y): linear between
 * knots, y[0] before the first, y[n-1] after the last. */
double norm_interp(const double *x, const double *y, int n, double v);

/* calib.batch as stored in a calibrated .seer: (2 + n + M n) float64 values: the global feature
 * column, n, the knots x (strictly ascending), then each metric's n log factors. unpack checks
 * every value (a message naming origin) and points s's calib_* into v. */
#define NORM_CALIB_MAX 256 // knots
int norm_calib_unpack(norm_stats *s, const double *v, int64_t n, const char *origin, seer_err *err);

/* calib.flops: (3 + 3 M) float64 values: the global feature column, the lowest and highest value
 * of it among the graphs fitted on, then per metric a, b, c (b in (0, 10], |a| and |c| under
 * 100); unpack checks them and points s->aff into v. */
int norm_affine_unpack(norm_stats *s, const double *v, int64_t n, const char *origin, seer_err *err);
/* Metric m's native prediction y of a graph (its raw global features) through calib.flops; y
 * itself when there is none. */
double norm_affine(const norm_stats *s, int m, double y, const float *global_raw);

#endif
