/* eval: a .seer model scored on a PerfGraph dataset (see score.h). */
#include "score.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "data/coverage.h"
#include "data/perfgraph.h"

int32_t *score_op_map(const seer_model *m, int n, const char *(*name_of)(int, const void *),
                      const void *ctx) {
    int32_t *map = seer_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    int other = -1; // an operator the model never saw is what its table calls Other
    for (int k = 0; k < seer_n_op_types(m); k++)
        if (!strcmp(seer_op_name(m, k), "Other")) other = k;
    for (int i = 0; i < n; i++) {
        map[i] = other;
        for (int k = 0; k < seer_n_op_types(m); k++)
            if (!strcmp(name_of(i, ctx), seer_op_name(m, k))) map[i] = k;
    }
    return map;
}

int score_remap_ops(const seer_model *m, const int32_t *ids, int64_t n, const int32_t *map,
                    const char *what, int32_t **out, seer_err *err) {
    *out = NULL;
    if (seer_n_op_types(m) < 1) return 0;
    int32_t *o = seer_malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    for (int64_t v = 0; v < n; v++) {
        o[v] = map[ids[v]];
        if (o[v] < 0) {
            free(o);
            if (!seer_uses_op_types(m)) return 0; // only the range check goes without
            return seer_fail(err, "%s: node %lld has an operator type the model was not trained on",
                             what, (long long)v);
        }
    }
    *out = o;
    return 0;
}

static const char *ds_op(int i, const void *ctx) { return ((const pg_dataset *)ctx)->op_types[i]; }

/* The dataset's features must be the model's, by count and name; the dataset may have global
 * features after the model's (a later converter's, which the model does not read). */
static int same_features(const seer_model *m, const pg_dataset *ds, const char *path,
                         seer_err *err) {
    static const char *const kinds[] = {"node", "edge", "global"};
    int F[3] = {ds->Fn, ds->Fe, ds->Fg};
    char **names[3] = {ds->node_features, ds->edge_features, ds->global_features};
    for (int k = 0; k < 3; k++) {
        if (k == SEER_GLOBAL && F[k] < seer_n_features(m, k))
            return seer_fail(err, "%s: %d global features, the model reads %d ('%s' on are missing): "
                                  "the file is from an older seerconvert, convert it again",
                             path, F[k], seer_n_features(m, k), seer_feature_name(m, k, F[k]));
        if (F[k] != seer_n_features(m, k) && k != SEER_GLOBAL)
            return seer_fail(err, "%s: %d %s features, the model was trained on %d", path, F[k],
                             kinds[k], seer_n_features(m, k));

        for (int i = 0; i < seer_n_features(m, k); i++)
            if (strcmp(names[k][i], seer_feature_name(m, k, i)) != 0)
                return seer_fail(err, "%s: %s feature %d is '%s', the model's is '%s' (the model "
                                      "was trained on other features)", path, kinds[k], i,
                                 names[k][i], seer_feature_name(m, k, i));
    }
    return 0;
}

/* How often each quantity was outside the training range, laid out in kind order (the node, edge
 * and global features, the node count, the edge count, the metrics); the SCORE_TOP most frequent
 * go to r. */
static void top_outside(const seer_model *m, const seer_graph *gs, const double *pred,
                        score_result *r, seer_err *err, int *failed) {
    int M = seer_n_metrics(m);
    int64_t base[SEER_CALIB + 2] = {0};
    for (int k = 0; k <= SEER_CALIB; k++)
        base[k + 1] = base[k] + (k < 3           ? seer_n_features(m, k)
                                 : k == SEER_METRIC ? M
                                 : k == SEER_OP     ? seer_n_op_types(m)
                                 : k == SEER_CALIB  ? seer_n_features(m, SEER_GLOBAL)
                                                    : 1);
    int64_t slots = base[SEER_CALIB + 1];
    int64_t *freq = seer_calloc((size_t)slots, sizeof(int64_t));
    r->range_known = 1;
    for (int64_t g = 0; g < r->graphs && r->range_known; g++) {
        enum { ITEMS = 8 };
        seer_range_item it[ITEMS];
        int n;
        char msg[512];
        if (seer_check_range(m, &gs[g], pred + g * M, it, ITEMS, &n, msg, sizeof msg)) {
            seer_fail(err, "graph %lld: %s", (long long)g, msg);
            *failed = 1;
            break;
        }
        r->range_known = n >= 0;
        r->outside += n > 0;
        for (int i = 0; i < n && i < ITEMS; i++) freq[base[it[i].kind] + it[i].index]++;
    }
    for (r->n_top = 0; r->n_top < SCORE_TOP; r->n_top++) {
        int64_t best = -1;
        for (int64_t s = 0; s < slots; s++)
            if (freq[s] > 0 && (best < 0 || freq[s] > freq[best])) best = s;
        if (best < 0) break;
        seer_range_item it = {0, 0, 0, 0, 0};
        while (best >= base[it.kind + 1]) it.kind++;
        it.index = (int)(best - base[it.kind]);
        r->top[r->n_top] = it, r->top_graphs[r->n_top] = freq[best];
        freq[best] = 0;
    }
    free(freq);
}

/* The file's graphs (the first G) as libseer graphs over ds's arrays, their predictions. */
static int predict_graphs(const seer_model *m, const pg_dataset *ds, int64_t G, const char *path,
                          seer_graph **gs_out, int32_t **ops_out, double **pred_out, double *spread,
                          double *secs, seer_err *err) {
    int M = seer_n_metrics(m);
    *gs_out = NULL, *ops_out = NULL, *pred_out = NULL;
    if (same_features(m, ds, path, err)) return -1;
    int32_t *map = score_op_map(m, ds->n_ops, ds_op, ds), *ops;
    int rc = score_remap_ops(m, ds->node_op, ds->node_ptr[G], map, path, &ops, err);
    free(map);
    if (rc) return -1;
    seer_graph *gs = seer_calloc((size_t)(G ? G : 1), sizeof *gs);
    double *pred = seer_malloc(sizeof(double) * (size_t)(G ? G : 1) * (size_t)M);
    for (int64_t g = 0; g < G; g++) {
        int64_t n0 = ds->node_ptr[g], e0 = ds->edge_ptr[g];
        gs[g] = (seer_graph){
            .n_nodes = ds->node_ptr[g + 1] - n0, .n_edges = ds->edge_ptr[g + 1] - e0,
            .n_node_features = ds->Fn, .n_edge_features = ds->Fe, .n_global_features = ds->Fg,
            .node_x = ds->node_x + n0 * ds->Fn, .node_op = ops ? ops + n0 : NULL,
            .edge_index = ds->edge_index + 2 * e0,
            .edge_x = ds->edge_x + e0 * ds->Fe, .global_x = ds->global_x + g * ds->Fg,
        };
    }
    char msg[1024];
    double t0 = seer_now();
    *gs_out = gs, *ops_out = ops, *pred_out = pred;
    if (seer_predict_spread(m, gs, G, pred, spread, msg, sizeof msg))
        return seer_fail(err, "%s: %s", path, msg);
    if (secs) *secs = seer_now() - t0;
    return 0;
}

int score_predict(const seer_model *m, const char *path, pg_dataset *ds, double **pred,
                  seer_err *err) {
    *pred = NULL;
    if (pg_read(path, ds, err)) return -1;
    seer_graph *gs;
    int32_t *ops;
    int rc = predict_graphs(m, ds, ds->G, path, &gs, &ops, pred, NULL, NULL, err);
    free(gs), free(ops);
    if (rc) {
        free(*pred), *pred = NULL;
        pg_free(ds);
    }
    return rc;
}

/* name, one column per metric of vals (G x M), and in_range (when gs is not NULL: each graph's
 * seer_check_range with vals as its predictions), written whole to a temporary name and renamed:
 * never a half-written file. */
static int write_csv(const char *csv, const seer_model *m, const pg_dataset *ds, int64_t G,
                     const double *vals, const seer_graph *gs, seer_err *err) {
    int M = seer_n_metrics(m);
    char tmp[1100], msg[256];
    snprintf(tmp, sizeof tmp, "%s.tmp", csv);
    FILE *f = fopen(tmp, "w");
    if (!f) return seer_fail(err, "%s: cannot create (%s)", csv, strerror(errno));
    fprintf(f, "name");
    for (int k = 0; k < M; k++) fprintf(f, ",%s", seer_metric_name(m, k));
    fprintf(f, gs ? ",in_range\n" : "\n");
    for (int64_t g = 0; g < G; g++) {
        fprintf(f, "%s", ds->name[g]);
        for (int k = 0; k < M; k++) fprintf(f, ",%.9g", vals[g * M + k]);
        if (gs) {
            seer_range_item it;
            int n = 0;
            seer_check_range(m, &gs[g], vals + g * M, &it, 1, &n, msg, sizeof msg);
            fprintf(f, ",%s", n < 0 ? "" : n ? "0" : "1");
        }
        fputc('\n', f);
    }
    if ((ferror(f) | fclose(f)) || rename(tmp, csv) != 0) {
        remove(tmp);
        return seer_fail(err, "%s: write failed (%s)", csv, strerror(errno));
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted v[0..n) (linear between order statistics); NaN when n is 0. */
static double quantile(const double *v, int64_t n, double q) {
    if (n <= 0) return NAN;
    double at = q * (double)(n - 1);
    int64_t i = (int64_t)at;
    return i + 1 < n ? v[i] + (at - (double)i) * (v[i + 1] - v[i]) : v[n - 1];
}

/* The MAPE (%) of the graphs whose spread lies above (flagged) or not above the threshold. */
static double mape_where(const double *pv, const double *tv, const double *sv, int64_t n, double warn,
                         int flagged, int64_t *count) {
    double sum = 0;
    int64_t c = 0;
    for (int64_t i = 0; i < n; i++)
        if ((sv[i] > warn) == flagged) sum += fabs(pv[i] - tv[i]) / fabs(tv[i]), c++;
    if (count) *count = c;
    return c ? 100.0 * sum / (double)c : NAN;
}

int score_dataset(const seer_model *m, const char *path, int64_t limit, const char *csv,
                  const char *spreads, score_result *r, seer_err *err) {
    memset(r, 0, sizeof *r);
    pg_dataset ds;
    if (pg_read(path, &ds, err)) return -1;
    int rc = -1, failed = 0, M = seer_n_metrics(m);
    int64_t G = limit > 0 && limit < ds.G ? limit : ds.G;
    int32_t *ops = NULL;
    seer_graph *gs = NULL;
    const char *kind = seer_info(m, "model");
    r->ensemble = kind && !strcmp(kind, "ensemble");
    double *pred = NULL, *pv = NULL, *tv = NULL, *sv = NULL;
    double *spread = r->ensemble || spreads ? seer_malloc(sizeof(double) * (size_t)(G ? G : 1) * (size_t)M) : NULL;
    r->graphs = G;
    if (predict_graphs(m, &ds, G, path, &gs, &ops, &pred, spread, &r->seconds, err)) goto out;
    top_outside(m, gs, pred, r, err, &failed);
    if (failed) goto out;
    if (csv && write_csv(csv, m, &ds, G, pred, gs, err)) goto out;
    if (spreads && write_csv(spreads, m, &ds, G, spread, NULL, err)) goto out;
    pv = seer_malloc(sizeof(double) * (size_t)(G ? G : 1));
    tv = seer_malloc(sizeof(double) * (size_t)(G ? G : 1));
    sv = seer_malloc(sizeof(double) * (size_t)(G ? G : 1));
    for (int k = 0; r->ensemble && k < M; k++) { // the spread over every graph predicted
        for (int64_t g = 0; g < G; g++) sv[g] = spread[g * M + k];
        qsort(sv, (size_t)G, sizeof *sv, cmp_double);
        r->spread_q[k][0] = quantile(sv, G, 0.5);
        r->spread_q[k][1] = quantile(sv, G, 0.95);
        r->spread_q[k][2] = quantile(sv, G, 0.99);
    }
    for (int k = 0; k < M; k++) { // where the file has a label of the metric's name
        int col = pg_find_name(ds.labels, ds.M, seer_metric_name(m, k));
        if (col < 0) continue;
        int64_t n = 0;
        for (int64_t g = 0; g < G; g++) {
            float y = ds.label_y[g * ds.M + col];
            if (isnan(y)) continue;
            pv[n] = pred[g * M + k], tv[n] = y, sv[n] = spread ? spread[g * M + k] : 1, n++;
        }
        int i = r->n_scored++;
        metrics_compute(pv, tv, n, &r->lm[i]);
        r->metric[i] = k;
        double warn = seer_spread_warn(m, k);
        r->mape_flagged[i] = mape_where(pv, tv, sv, n, warn, 1, &r->flagged[i]);
        r->mape_rest[i] = mape_where(pv, tv, sv, n, warn, 0, NULL);
    }
    rc = 0;
out:
    free(ops), free(gs), free(pred), free(pv), free(tv), free(sv), free(spread);
    pg_free(&ds);
    return rc;
}

void score_metric_device(const char *name, char *out, size_t len) {
    const char *u = strrchr(name, '_');
    const char *k = u ? u - 1 : NULL;
    while (k && k > name && *k != '_') k--;
    size_t n = k && k > name ? (size_t)(k - name) : 0;
    snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), name);
}

const char *score_range_kind(int kind) {
    static const char *const k[] = {"node feature ", "edge feature ", "global feature ", "", "",
                                    "prediction ", "operator ", "calibration beyond ", "operator pair "};
    return kind >= 0 && kind <= SEER_OP_PAIR ? k[kind] : "";
}

void score_range_item_text(const seer_model *m, const seer_range_item *it, char *out, size_t len) {
    const char *name = seer_range_item_name(m, it);
    if (it->kind == SEER_CALIB && name && !strcmp(name, "log_batch")) // the feature is log1p(batch)
        snprintf(out, len, "batch %.0f beyond the batches it was calibrated at (%.0f .. %.0f: the "
                 "nearest one's factor holds)", expm1(it->value), expm1(it->lo), expm1(it->hi));
    else if (it->kind == SEER_CALIB && name && !strcmp(name, "log_flops_total")) // --with-flops, --power
        snprintf(out, len, "%.3g FLOPs beyond those it was calibrated on (%.3g .. %.3g: the "
                 "calibration's fit extrapolates)", expm1(it->value), expm1(it->lo), expm1(it->hi));
    else if (it->kind == SEER_CALIB && name && !strcmp(name, "log_nodes")) // --with-feature log_nodes
        snprintf(out, len, "%.0f operators beyond those it was calibrated on (%.0f .. %.0f: the "
                 "calibration's fit extrapolates)", expm1(it->value), expm1(it->lo), expm1(it->hi));
    else if (it->kind == SEER_CALIB)
        snprintf(out, len, "global feature %s = %.4g beyond the calibrated range %.4g .. %.4g", name,
                 it->value, it->lo, it->hi);
    else if (it->kind == SEER_OP)
        snprintf(out, len, "operator %s (%.0f node%s) never in the training data",
                 seer_range_item_name(m, it), it->value, it->value == 1 ? "" : "s");
    else if (it->kind == SEER_OP_PAIR) { // a watched structure: what it is, when the library knows
        const char *what = coverage_pair_what(name);
        snprintf(out, len, "operator pair %s (%.0f edge%s%s%s) never in the training data", name ? name : "?",
                 it->value, it->value == 1 ? "" : "s", what ? ": " : "", what ? what : "");
    }
    else
        snprintf(out, len, "%s%s = %.4g (trained %.4g .. %.4g)", score_range_kind(it->kind),
                 seer_range_item_name(m, it), it->value, it->lo, it->hi);
}

void score_print(FILE *f, const seer_model *m, const char *path, const score_result *r) {
    fprintf(f, "%s: %lld graphs predicted in %.3f s (%.0f graphs/s)\n", path, (long long)r->graphs,
            r->seconds, (double)r->graphs / (r->seconds > 0 ? r->seconds : 1e-9));
    if (r->n_scored) {
        char *names[SEER_MAX_METRICS];
        for (int i = 0; i < r->n_scored; i++) names[i] = (char *)seer_metric_name(m, r->metric[i]);
        metrics_print_header(f);
        metrics_print_rows(f, "all", names, r->lm, r->n_scored);
    } else {
        fprintf(f, "(the file has no labels named like the model's metrics: nothing to score)\n");
    }
    if (!r->range_known) {
        fprintf(f, "note: this model records no training range (exported before libseer 0.3)\n");
    } else if (r->outside) {
        fprintf(f, "warning: %lld of %lld graphs lie outside the training data (their predictions "
                   "are guesses); most often outside:", (long long)r->outside, (long long)r->graphs);
        for (int i = 0; i < r->n_top; i++)
            fprintf(f, "%s %s%s (%lld graphs)", i ? "," : "", score_range_kind(r->top[i].kind),
                    seer_range_item_name(m, &r->top[i]), (long long)r->top_graphs[i]);
        fputc('\n', f);
    }
    if (!r->ensemble) return;
    fprintf(f, "the members' spread (largest over smallest member prediction) over the %lld graphs; "
               "above the file's threshold, the warning's graphs and their MAPE against the rest's:\n"
               "%-28s %8s %8s %8s %9s %8s %13s %10s\n", (long long)r->graphs, "metric", "median",
            "q95", "q99", "threshold", "flagged", "MAPE flagged", "MAPE rest");
    for (int k = 0; k < seer_n_metrics(m); k++) {
        int i = 0;
        while (i < r->n_scored && r->metric[i] != k) i++;
        fprintf(f, "%-28s %8.3f %8.3f %8.3f %9.3f", seer_metric_name(m, k), r->spread_q[k][0],
                r->spread_q[k][1], r->spread_q[k][2], seer_spread_warn(m, k));
        if (i < r->n_scored && r->flagged[i])
            fprintf(f, " %8lld %12.2f%% %9.2f%%\n", (long long)r->flagged[i], r->mape_flagged[i],
                    r->mape_rest[i]);
        else if (i < r->n_scored)
            fprintf(f, " %8d %13s %9.2f%%\n", 0, "-", r->mape_rest[i]);

        else
            fprintf(f, " %8s %13s %10s\n", "-", "-", "-");
    }
}

void score_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

void score_json(FILE *f, const seer_model *m, const char *path, const score_result *r) {
    fprintf(f, "{\"dataset\":");
    score_json_str(f, path);
    fprintf(f, ",\"graphs\":%lld,\"seconds\":%.6g,\"range_known\":%s,\"out_of_range_graphs\":%lld,"
               "\"metrics\":{", (long long)r->graphs, r->seconds, r->range_known ? "true" : "false",
            (long long)r->outside);
    for (int i = 0; i < r->n_scored; i++) {
        const label_metrics *lm = &r->lm[i];
        fprintf(f, "%s", i ? "," : "");
        score_json_str(f, seer_metric_name(m, r->metric[i]));
        fprintf(f, ":{\"n\":%lld", (long long)lm->n);
        const double v[6] = {lm->mape, lm->rmspe, lm->within5, lm->within10, lm->spearman,
                             lm->kendall};
        static const char *const keys[6] = {"mape", "rmspe", "within5", "within10", "spearman",
                                            "kendall"};
        for (int k = 0; k < 6; k++) {
            fprintf(f, ",\"%s\":", keys[k]);
            metrics_json_num(f, v[k]);
        }
        if (r->ensemble) { // where the members' spread lies above the file's threshold
            fprintf(f, ",\"spread_flagged\":%lld,\"mape_flagged\":", (long long)r->flagged[i]);
            metrics_json_num(f, r->mape_flagged[i]);
            fprintf(f, ",\"mape_rest\":");
            metrics_json_num(f, r->mape_rest[i]);
        }
        fputc('}', f);
    }
    fprintf(f, "},\"member_spread\":");
    if (!r->ensemble) fprintf(f, "null");
    for (int k = 0; r->ensemble && k < seer_n_metrics(m); k++) {
        fprintf(f, "%s", k ? "," : "{");
        score_json_str(f, seer_metric_name(m, k));
        static const char *const q[3] = {"median", "q95", "q99"};
        for (int j = 0; j < 3; j++) {
            fprintf(f, "%s\"%s\":", j ? "," : ":{", q[j]);
            metrics_json_num(f, r->spread_q[k][j]);
        }
        fprintf(f, ",\"warn\":");
        metrics_json_num(f, seer_spread_warn(m, k));
        fputc('}', f);
    }
    fprintf(f, "%s}", r->ensemble ? "}" : "");
}
