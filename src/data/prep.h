/* data: splits and normalisation.
 *
 * Splits are seeded and keep graphs that share /graph/group in one split: groups are shuffled
 * and dealt out in order until each split has its share (fractions) or count (counts) of graphs.
 * Normalisation: every feature column is standardised with training-split statistics (a column
 * whose training std is below 1e-6 is only centred); targets are trained as standardised log
 * values. The statistics travel in every checkpoint and export. */
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

typedef struct {
    int Fn, Fe, Fg, M;
    double *node_mean, *node_std, *edge_mean, *edge_std, *global_mean, *global_std;
    double *label_mu, *label_sigma; // of log(y) over valid training labels
} norm_stats;

/* How norm_fit combines the shards of several ranks: sum_f64 sums a buffer over all ranks in
 * place (an all-reduce). NULL or ranks = 1: the data is all here. */
typedef struct {
    int rank, ranks;
    void (*sum_f64)(double *x, int64_t n);
} norm_comm;

/* Fits statistics on the training graphs (which[g] for the graphs of ds); label_cols selects M
 * label columns of ds. Fails when a selected label has no finite training value. */
int norm_fit(norm_stats *s, const pg_dataset *ds, const int8_t *which, const int *label_cols,
             int M, const norm_comm *comm, seer_err *err);
void norm_free(norm_stats *s);

/* Standardises the (rows, w) block x in place: x = (x - mean) / sd, in double, per column. */
void norm_rows(float *x, int64_t rows, int w, const double *mean, const double *sd);

/* Standardises ds's feature arrays in place. */
void norm_apply(const norm_stats *s, pg_dataset *ds);

/* targets (G, M) = (log y - mu) / sigma of the selected columns; NaN stays NaN. */
void norm_targets(const norm_stats *s, const pg_dataset *ds, const int *label_cols, float *targets);

/* Standardised log prediction -> native units. */
double norm_to_native(const norm_stats *s, int m, double t);

#endif
