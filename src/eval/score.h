/* eval: a .seer model (libseer) scored on a whole PerfGraph dataset, what `seerpredict MODEL.seer
 * DATA.h5` prints and what `seertrain`'s [eval] paths report at the end of a run: one code path,
 * so the two figures are the same. Every graph is predicted through libseer (the export a user
 * runs, not the trainer's copy of the network) and checked against the training range.
 * Built into seerscore (CMakeLists.txt), which links libseer and the HDF5 reader. */
#ifndef SEER_EVAL_SCORE_H
#define SEER_EVAL_SCORE_H

#include <stdint.h>
#include <stdio.h>

#include "common/common.h"
#include "data/perfgraph.h"
#include "eval/metrics.h"
#include "seer/seer.h"

#define SCORE_TOP 3 // the quantities most often outside the training range that a report names

typedef struct {
    int64_t graphs;  // graphs predicted
    double seconds;  // of the predictions alone
    int range_known; // the model records its training range (libseer 0.3 and later)
    int64_t outside; // graphs outside the training range (their predictions are guesses)
    int n_top;
    seer_range_item top[SCORE_TOP]; // the quantities most often outside, most frequent first
    int64_t top_graphs[SCORE_TOP];  // in how many graphs each was
    int n_scored;                   // metrics of the model the file has labels for
    int metric[SEER_MAX_METRICS];   // the model's index of each
    label_metrics lm[SEER_MAX_METRICS];
    // an ensemble: each metric's spread over the graphs (median, q95, q99; by the model's index)
    // and, per scored metric, the graphs above seer_spread_warn and the MAPE (%) there and elsewhere
    int ensemble;
    double spread_q[SEER_MAX_METRICS][3];
    int64_t flagged[SEER_MAX_METRICS];
    double mape_flagged[SEER_MAX_METRICS], mape_rest[SEER_MAX_METRICS];
} score_result;

/* Maps each name of an operator table (name_of(i, ctx), i < n) to the model's op id; a name the
 * model never saw maps to its Other (operators added to the converter after the model was
 * trained), or -1 where its table has no Other. The caller frees. */
int32_t *score_op_map(const seer_model *m, int n, const char *(*name_of)(int, const void *),
                      const void *ctx);
/* A graph's op ids (n nodes) in the model's table: *out a new array (for the model when it reads
 * operator types, for the training-range check of operators either way), or NULL when the model
 * has no op table or, for a model that does not read them, a node's type has no row. -1 (err
 * names what) when a node's type is unknown to a model that reads them. */
int score_remap_ops(const seer_model *m, const int32_t *ids, int64_t n, const int32_t *map,
                    const char *what, int32_t **out, seer_err *err);

/* Predicts the first limit graphs (0: all) of the dataset at path and scores every metric the
 * file has a label for; csv (may be NULL) receives name, one column per metric and in_range;
 * spreads (may be NULL; an ensemble only) name and each metric's member spread. */
int score_dataset(const seer_model *m, const char *path, int64_t limit, const char *csv,
                  const char *spreads, score_result *r, seer_err *err);

/* Reads the dataset at path into ds and predicts all its graphs: pred (G, M), the caller frees
 * it and pg_free(ds). On failure nothing is left to free. */
int score_predict(const seer_model *m, const char *path, pg_dataset *ds, double **pred,
                  seer_err *err);

/* The text report (a line, the per-metric table, the range warning) and the JSON object
 * {"dataset", "graphs", "seconds", "range_known", "out_of_range_graphs", "metrics": {...}}. */
/* "node feature ", "edge feature ", "global feature ", "prediction ", "operator " or "" for a range
 * item's kind (seer_range_item), and a JSON string with its escapes: what both reports print. */
const char *score_range_kind(int kind);
/* One range item as the warning line prints it: "node feature log_flops = 21.3 (trained 9.1 ..
 * 19.8)", or "operator Erf (12 nodes) never in the training data". */
void score_range_item_text(const seer_model *m, const seer_range_item *it, char *out, size_t len);
void score_json_str(FILE *f, const char *s);

/* The device of a metric named <device>_<metric>_<unit> (DESIGN.md's label convention) into out:
 * everything before the last two parts ("cpu_xeon" for "cpu_xeon_train_ms"), "" for a name of
 * fewer than three parts. */
void score_metric_device(const char *name, char *out, size_t len);

void score_print(FILE *f, const seer_model *m, const char *path, const score_result *r);
void score_json(FILE *f, const seer_model *m, const char *path, const score_result *r);

#endif
