/* libseer: load a compact Seer predictor (.seer, written by seerexport) and predict the
 * performance metrics of neural networks given as operator graphs. Plain C, no dependency beyond
 * libc and libm; no BLAS, HDF5, CUDA, MPI or threads of its own.
 *
 *   seer_model *m;
 *   char err[512];
 *   if (seer_load("model.seer", &m, err, sizeof err)) { fprintf(stderr, "%s\n", err); ... }
 *   double y[SEER_MAX_METRICS];
 *   if (seer_predict(m, &graph, y, err, sizeof err)) ...   // y[i] in seer_metric_unit(m, i)
 *   seer_free(m);
 *
 * Errors: every call that can fail returns a seer_status and writes one line into err (when err
 * is not NULL); nothing exits, aborts or prints. Threads: a loaded model is read-only, so any
 * number of threads may call seer_predict* on one model at once; each call allocates its own
 * scratch memory. The graph is the PerfGraph form of datasets/FORMAT.md with raw (unstandardised)
 * features, as seerconvert writes them or seer_onnx.h builds them. */
#ifndef SEER_SEER_H
#define SEER_SEER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SEER_API __attribute__((visibility("default")))
#else
#define SEER_API
#endif

#define SEER_MAX_METRICS 64

typedef enum {
    SEER_OK = 0,
    SEER_ERR_IO = 1,      // the file cannot be opened or read
    SEER_ERR_FORMAT = 2,  // not a .seer file, truncated, corrupt, or an unsupported version
    SEER_ERR_INVALID = 3, // a bad argument or graph (sizes, edge ids, non-finite features)
    SEER_ERR_NOMEM = 4,
} seer_status;

typedef struct seer_model seer_model;

enum { SEER_NODE = 0, SEER_EDGE = 1, SEER_GLOBAL = 2 };

/* One graph. Node ids in edge_index are local (0 .. n_nodes-1); edges run producer -> consumer.
 * The node and edge feature widths must equal the model's (seer_n_features); the global ones may
 * exceed it (a converter appends new global features; the model reads its own leading ones).
 * node_op may be NULL for models that do not use operator types (seer_uses_op_types). */
typedef struct {
    int64_t n_nodes, n_edges;
    int n_node_features, n_edge_features, n_global_features;
    const float *node_x;       // (n_nodes, n_node_features)
    const int32_t *node_op;    // (n_nodes) indexes into the model's op table (seer_op_name)
    const int32_t *edge_index; // (n_edges, 2) (src, dst)
    const float *edge_x;       // (n_edges, n_edge_features)
    const float *global_x;     // (n_global_features)
} seer_graph;

/* A .seer file: one model, or an ensemble of them (seerexport --ensemble: the prediction is the
 * geometric mean of the members'; seer_info(m, "model") is "ensemble"). */
SEER_API seer_status seer_load(const char *path, seer_model **out, char *err, size_t err_len);
/* The buffer is copied; origin names it in messages (may be NULL). */
SEER_API seer_status seer_load_memory(const void *buf, size_t len, const char *origin,
                                      seer_model **out, char *err, size_t err_len);
SEER_API void seer_free(seer_model *m);

/* Predicts every metric of one graph into out (seer_n_metrics values, native units). */
SEER_API seer_status seer_predict(const seer_model *m, const seer_graph *g, double *out, char *err,
                                  size_t err_len);
/* count graphs at once (faster per graph); out is (count, seer_n_metrics). */
SEER_API seer_status seer_predict_batch(const seer_model *m, const seer_graph *g, int64_t count,
                                        double *out, char *err, size_t err_len);

/* Is the graph inside what the model was trained on? Compares the graph's raw features (each
 * column's min and max over its nodes, its edges, and the global vector), its node and edge
 * counts, its operator types (when node_op is given: an operator no training graph had) and,
 * when pred is not NULL, its predictions (seer_n_metrics values) with the ranges of the training
 * split that the export recorded. *n_out gets how many quantities lie outside (0: inside), or -1
 * when the model records no range (exported before libseer 0.3); the first max_items of them go
 * to items. A prediction counts as outside when it is more than 10 times below the smallest or
 * above the largest training label of its metric. Exports made before libseer 0.4 record no
 * operator types and check none; those made before libseer 0.13 record no operator pairs. */
enum { SEER_NODE_COUNT = 3, SEER_EDGE_COUNT = 4, SEER_METRIC = 5, SEER_OP = 6, SEER_CALIB = 7,
       SEER_OP_PAIR = 8 };
#define SEER_OP_PAIR_NAME_MAX 132
typedef struct {
    int kind;        // SEER_NODE / SEER_EDGE / SEER_GLOBAL feature, SEER_NODE_COUNT,
                     // SEER_EDGE_COUNT, SEER_METRIC (a prediction), SEER_OP (an operator type
                     // the training data never had) or SEER_CALIB (a batch beyond those the
                     // model was calibrated at by seercalibrate: it takes the nearest one's
                     // factor; or FLOPs beyond those of a --with-flops or --power calibration; listed
                     // first, batch before FLOPs) or SEER_OP_PAIR (edges from one operator type
                     // to another that the training data never had, of a pair the model watches:
                     // a structure no feature tells apart, such as the BatchNormalization-only
                     // identity branch of a reparameterisable block, "Relu>BatchNormalization";
                     // since libseer 0.13, in files that record it)
    int index;       // the feature column, metric, op id or watched pair
    double value;    // the graph's value farthest outside (a feature's min or max over its
                     // rows; SEER_OP: the graph's nodes of that operator; SEER_OP_PAIR: its edges)
    double lo, hi;   // the training range (SEER_OP, SEER_OP_PAIR: 0, 0; SEER_CALIB: the calibrated one, in the
                     // global feature's units, like value; index is that feature's column)
} seer_range_item;
SEER_API seer_status seer_check_range(const seer_model *m, const seer_graph *g, const double *pred,
                                      seer_range_item *items, int max_items, int *n_out,
                                      char *err, size_t err_len);
/* The name of an item's quantity: the feature's name, "nodes", "edges", the metric's name, the
 * operator's, the pair's as "producer>consumer" (at most SEER_OP_PAIR_NAME_MAX bytes) (SEER_CALIB: the global feature's, "log_batch", "log_flops_total" or the one of
 * seercalibrate --with-feature). */
SEER_API const char *seer_range_item_name(const seer_model *m, const seer_range_item *it);

/* An ensemble's disagreement on graph g: for each metric k, spread[k] = the largest of its
 * members' predictions over the smallest (1 for a model that is not an ensemble). On networks
 * like its training data the members agree closely; a large spread says the prediction is a
 * guess even where every feature lies in range (seerpredict warns above seer_spread_warn).
 * Since libseer 0.6. */
#define SEER_SPREAD_WARN 1.5
SEER_API seer_status seer_member_spread(const seer_model *m, const seer_graph *g, double *spread,
                                        char *err, size_t err_len);
/* seer_predict_batch and, in the same pass over the members, each graph's spread (count x
 * seer_n_metrics values; NULL: none). Since libseer 0.8. */
SEER_API seer_status seer_predict_spread(const seer_model *m, const seer_graph *g, int64_t count,
                                         double *out, double *spread, char *err, size_t err_len);
/* The spread above which metric k's members disagree: the file's own threshold where its export
 * set one (seerexport --spread-warn, e.g. the 99th percentile of the spread on held-out graphs
 * of the training distribution), else SEER_SPREAD_WARN; NAN for a k out of range. Since libseer
 * 0.8. */
SEER_API double seer_spread_warn(const seer_model *m, int k);
/* The share of g's operators (its nodes, ids in the model's op table) of types the model's training
 * data never had, 0 .. 1; NAN when the model records no operator counts or g has no op ids. Above
 * SEER_UNSEEN_OP_WARN a prediction is a guess however well the rest fits: on real networks such
 * graphs were up to 4 times as far off as the others (the H200's transformers predicted by a model
 * of CNNs; benchmarks/RESULTS.md, "Which warnings tell"); seerpredict says so on a line of its own.
 * Since libseer 0.12. */
#define SEER_UNSEEN_OP_WARN 0.2
SEER_API double seer_unseen_op_share(const seer_model *m, const seer_graph *g);

SEER_API int seer_n_metrics(const seer_model *m);
SEER_API const char *seer_metric_name(const seer_model *m, int i); // e.g. "train_time_ms"
SEER_API const char *seer_metric_unit(const seer_model *m, int i); // e.g. "ms" ("" if none)
SEER_API int seer_n_features(const seer_model *m, int kind);       // SEER_NODE/EDGE/GLOBAL
SEER_API const char *seer_feature_name(const seer_model *m, int kind, int i);
SEER_API int seer_n_op_types(const seer_model *m);
SEER_API const char *seer_op_name(const seer_model *m, int i);
SEER_API int seer_uses_op_types(const seer_model *m);
/* Metadata by key: "model" (architecture name), "dtype" (fp32/fp16/int8), "target" ([model]
 * target: log, roofline, roofline_weights, roofline_light, roofline_kept, roofline_kept_silu, roofline_kept_acts,
 * roofline_peak; "mixed" for an ensemble whose members
 * differ), "dataset", "device", "trained_step", "exported_at", "checkpoint", "val_mape" (per metric,
 * comma separated), ...; NULL when absent. */
SEER_API const char *seer_info(const seer_model *m, const char *key);
SEER_API int64_t seer_n_params(const seer_model *m);
SEER_API const char *seer_version(void);

#ifdef __cplusplus
}
#endif

#endif
