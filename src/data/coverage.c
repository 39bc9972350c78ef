/* data: the training data's range (see coverage.h). */
#include "data/coverage.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cov_pair COV_PAIRS[] = {
    // the BN-only skip of a reparameterisable block in its training form (MobileOne, RepGhostNet),
    // reading the previous block's ReLU or its BatchNormalization
    {"Relu", "BatchNormalization", "a reparameterisable block's identity branch"},
    {"BatchNormalization", "BatchNormalization", "a reparameterisable block's identity branch"},
};
const int COV_N_PAIRS = (int)(sizeof COV_PAIRS / sizeof COV_PAIRS[0]);
_Static_assert(sizeof COV_PAIRS / sizeof COV_PAIRS[0] <= COV_MAX_PAIRS, "too many watched pairs");

static void pair_name(char *out, const char *src, const char *dst) {
    snprintf(out, COV_PAIR_NAME, "%.63s>%.63s", src, dst);
}

const char *coverage_pair_what(const char *name) {
    char n[COV_PAIR_NAME];
    for (int p = 0; name && p < COV_N_PAIRS; p++) {
        pair_name(n, COV_PAIRS[p].src, COV_PAIRS[p].dst);
        if (!strcmp(n, name)) return COV_PAIRS[p].what;
    }
    return NULL;
}

static int find_op(char *const *names, int n, const char *want) {
    for (int i = 0; names && i < n; i++)
        if (!strcmp(names[i], want)) return i;
    return -1;
}

int coverage_pair_ids(char *const *op_names, int n_ops, int32_t *ids) {
    int k = 0;
    for (int p = 0; p < COV_N_PAIRS; p++) {
        ids[2 * p] = find_op(op_names, n_ops, COV_PAIRS[p].src);
        ids[2 * p + 1] = find_op(op_names, n_ops, COV_PAIRS[p].dst);
        if (ids[2 * p] < 0 || ids[2 * p + 1] < 0) ids[2 * p] = ids[2 * p + 1] = -1;
        else k++;
    }
    return k;
}

void coverage_count_pairs(const int32_t *ids, const int32_t *node_op, const int32_t *edge_index,
                          int64_t n_edges, int64_t node_base, double *counts) {
    for (int64_t e = 0; e < n_edges; e++) {
        int32_t a = node_op[node_base + edge_index[2 * e]], b = node_op[node_base + edge_index[2 * e + 1]];
        for (int p = 0; p < COV_N_PAIRS; p++)
            counts[p] += ids[2 * p] >= 0 && a == ids[2 * p] && b == ids[2 * p + 1];
    }
}

int coverage_pairs_rows(const int32_t *ids, const double *counts, double *rows) {
    int k = 0;
    for (int p = 0; p < COV_N_PAIRS; p++) {
        if (ids[2 * p] < 0) continue;
        rows[3 * k] = ids[2 * p], rows[3 * k + 1] = ids[2 * p + 1], rows[3 * k + 2] = counts[p];
        k++;
    }
    return k;
}

static const char *const KEYS[3][2] = {{"coverage.node_lo", "coverage.node_hi"},
                                       {"coverage.edge_lo", "coverage.edge_hi"},
                                       {"coverage.global_lo", "coverage.global_hi"}};

/* The pointers into a block: lo/hi per kind, label lo/hi, counts; returns its length. */
static int64_t layout(coverage *c, double *b) {
    int64_t n = 0;
    for (int k = 0; k < 3; k++) {
        c->lo[k] = b + n, n += c->F[k];
        c->hi[k] = b + n, n += c->F[k];
    }
    c->label_lo = b + n, n += c->M;
    c->label_hi = b + n, n += c->M;
    c->counts = b + n, n += COV_COUNTS;
    c->op_counts = b + n, n += c->n_ops;
    c->op_pairs = b + n, n += 3 * (int64_t)c->n_pairs;
    return n;
}

static void widen(double *lo, double *hi, double v) {
    if (v < *lo) *lo = v;
    if (v > *hi) *hi = v;
}

void coverage_fit(coverage *c, const pg_dataset *ds, const int8_t *which, const int *label_cols,
                  int M, const norm_comm *comm) {
    memset(c, 0, sizeof *c);
    c->F[0] = ds->Fn, c->F[1] = ds->Fe, c->F[2] = ds->Fg, c->M = M;
    c->n_ops = ds->node_op ? ds->n_ops : 0;
    int32_t ids[2 * COV_MAX_PAIRS];
    double pair_edges[COV_MAX_PAIRS] = {0};
    for (int i = 0; i < 2 * COV_MAX_PAIRS; i++) ids[i] = -1;
    c->n_pairs = c->n_ops && ds->edge_index ? coverage_pair_ids(ds->op_types, ds->n_ops, ids) : 0;
    int64_t B = 2 * ((int64_t)c->F[0] + c->F[1] + c->F[2] + M) + COV_COUNTS + c->n_ops + 3 * c->n_pairs;
    double *b = c->owned = seer_malloc(sizeof(double) * (size_t)B);
    layout(c, b);
    // every range starts empty (+inf, -inf), the graph count at 0
    double *lo[3], *hi[3], *llo = (double *)c->label_lo, *lhi = (double *)c->label_hi;
    double *cnt = (double *)c->counts, *opc = (double *)c->op_counts;
    for (int i = 0; i < c->n_ops; i++) opc[i] = 0;
    for (int k = 0; k < 3; k++) {
        lo[k] = (double *)c->lo[k], hi[k] = (double *)c->hi[k];
        for (int j = 0; j < c->F[k]; j++) lo[k][j] = INFINITY, hi[k][j] = -INFINITY;
    }
    for (int m = 0; m < M; m++) llo[m] = INFINITY, lhi[m] = -INFINITY;
    cnt[COV_NODES_LO] = cnt[COV_EDGES_LO] = INFINITY;
    cnt[COV_NODES_HI] = cnt[COV_EDGES_HI] = -INFINITY;
    cnt[COV_GRAPHS] = 0;
    const float *x[3] = {ds->node_x, ds->edge_x, ds->global_x};
    for (int64_t g = 0; g < ds->G; g++) {
        if (which[g] != SPLIT_TRAIN) continue;
        int64_t r0[3] = {ds->node_ptr[g], ds->edge_ptr[g], g};
        int64_t r1[3] = {ds->node_ptr[g + 1], ds->edge_ptr[g + 1], g + 1};
        for (int k = 0; k < 3; k++)
            for (int64_t r = r0[k]; r < r1[k]; r++)
                for (int j = 0; j < c->F[k]; j++)
                    if (isfinite(x[k][r * c->F[k] + j]))
                        widen(&lo[k][j], &hi[k][j], x[k][r * c->F[k] + j]);
        for (int m = 0; m < M; m++) {
            float y = ds->label_y[g * ds->M + label_cols[m]];
            if (isfinite(y) && y > 0) widen(&llo[m], &lhi[m], y);
        }
        widen(&cnt[COV_NODES_LO], &cnt[COV_NODES_HI], (double)(r1[0] - r0[0]));
        widen(&cnt[COV_EDGES_LO], &cnt[COV_EDGES_HI], (double)(r1[1] - r0[1]));
        cnt[COV_GRAPHS] += 1;
        for (int64_t r = r0[0]; r < r1[0] && c->n_ops; r++) {
            int32_t op = ds->node_op[r];
            if (op >= 0 && op < c->n_ops) opc[op] += 1;
        }
        if (c->n_pairs)
            coverage_count_pairs(ids, ds->node_op, ds->edge_index + 2 * r0[1], r1[1] - r0[1], r0[0],
                                 pair_edges);
    }
    coverage_pairs_rows(ids, pair_edges, (double *)c->op_pairs);
    for (int p = 0; p < c->n_pairs; p++)
        pair_name(c->pair_name[p], ds->op_types[(int)c->op_pairs[3 * p]], ds->op_types[(int)c->op_pairs[3 * p + 1]]);
    if (comm && comm->ranks > 1) { // an all-gather through the sum, then min and max of the rows
        int R = comm->ranks;
        double *all = seer_calloc((size_t)(R * B), sizeof(double));
        memcpy(all + (int64_t)comm->rank * B, b, sizeof(double) * (size_t)B);
        comm->sum_f64(all, R * B);
        memcpy(b, all, sizeof(double) * (size_t)B);
        for (int r = 1; r < R; r++) {
            coverage o = *c;
            layout(&o, all + (int64_t)r * B);
            for (int k = 0; k < 3; k++)
                for (int j = 0; j < c->F[k]; j++) {
                    widen(&lo[k][j], &hi[k][j], o.lo[k][j]);
                    widen(&lo[k][j], &hi[k][j], o.hi[k][j]);
                }
            for (int m = 0; m < M; m++) {
                widen(&llo[m], &lhi[m], o.label_lo[m]);
                widen(&llo[m], &lhi[m], o.label_hi[m]);
            }
            widen(&cnt[COV_NODES_LO], &cnt[COV_NODES_HI], o.counts[COV_NODES_LO]);
            widen(&cnt[COV_NODES_LO], &cnt[COV_NODES_HI], o.counts[COV_NODES_HI]);
            widen(&cnt[COV_EDGES_LO], &cnt[COV_EDGES_HI], o.counts[COV_EDGES_LO]);
            widen(&cnt[COV_EDGES_LO], &cnt[COV_EDGES_HI], o.counts[COV_EDGES_HI]);
            cnt[COV_GRAPHS] += o.counts[COV_GRAPHS];
            for (int i = 0; i < c->n_ops; i++) opc[i] += o.op_counts[i];
            for (int p = 0; p < c->n_pairs; p++) ((double *)c->op_pairs)[3 * p + 2] += o.op_pairs[3 * p + 2];
        }
        free(all);
    }
}

void coverage_free(coverage *c) {
    free(c->owned);
    memset(c, 0, sizeof *c);
}

void coverage_store(const coverage *c, seer_container *out) {
    if (!c->counts) return;
    for (int k = 0; k < 3; k++) {
        ctr_add_arr(out, KEYS[k][0], KV_F64ARR, c->lo[k], c->F[k]);
        ctr_add_arr(out, KEYS[k][1], KV_F64ARR, c->hi[k], c->F[k]);
    }
    ctr_add_arr(out, "coverage.label_lo", KV_F64ARR, c->label_lo, c->M);
    ctr_add_arr(out, "coverage.label_hi", KV_F64ARR, c->label_hi, c->M);
    ctr_add_arr(out, "coverage.counts", KV_F64ARR, c->counts, COV_COUNTS);
    if (c->n_ops) ctr_add_arr(out, "coverage.op_counts", KV_F64ARR, c->op_counts, c->n_ops);
    if (c->n_pairs) ctr_add_arr(out, "coverage.op_pairs", KV_F64ARR, c->op_pairs, 3 * (int64_t)c->n_pairs);
}

static int get(const seer_container *in, const char *key, int64_t n, const double **out,
               const char *origin, seer_err *err) {
    const ctr_kv *kv = ctr_get(in, key, KV_F64ARR, origin, err);
    if (!kv) return -1;
    if (kv->n != n)
        return seer_fail(err, "%s: %s has %lld values, the model needs %lld", origin, key,
                         (long long)kv->n, (long long)n);
    *out = kv->data;
    return 0;
}

/* coverage.op_pairs: rows of (producer id, consumer id, edges), ids in the op table. */
static int load_pairs(coverage *c, const seer_container *in, int n_ops, char *const *op_names,
                      const char *origin, seer_err *err) {
    const ctr_kv *kv = ctr_get(in, "coverage.op_pairs", KV_F64ARR, origin, err);
    if (!kv) return -1;
    if (kv->n % 3 || kv->n / 3 > COV_MAX_PAIRS || !op_names)
        return seer_fail(err, "%s: coverage.op_pairs has %lld values, not 3 per pair for at most %d "
                              "pairs: the file is corrupt (re-export it)", origin, (long long)kv->n,
                         COV_MAX_PAIRS);
    const double *v = kv->data;
    for (int64_t p = 0; p < kv->n / 3; p++) {
        for (int j = 0; j < 2; j++)
            if (!(v[3 * p + j] >= 0 && v[3 * p + j] < n_ops && v[3 * p + j] == floor(v[3 * p + j])))
                return seer_fail(err, "%s: coverage.op_pairs row %lld names operator %g, the op table has "
                                      "0 .. %d: the file is corrupt (re-export it)", origin, (long long)p,
                                 v[3 * p + j], n_ops - 1);
        if (!(v[3 * p + 2] >= 0 && isfinite(v[3 * p + 2])))
            return seer_fail(err, "%s: coverage.op_pairs row %lld counts %g edges: the file is corrupt "
                                  "(re-export it)", origin, (long long)p, v[3 * p + 2]);
        pair_name(c->pair_name[p], op_names[(int)v[3 * p]], op_names[(int)v[3 * p + 1]]);
    }
    c->op_pairs = v, c->n_pairs = (int)(kv->n / 3);
    return 0;
}

int coverage_load(coverage *c, const seer_container *in, const int F[3], int M, int n_ops,
                  char *const *op_names, const char *origin, seer_err *err) {
    memset(c, 0, sizeof *c);
    if (!ctr_find(in, "coverage.counts")) return 1;
    memcpy(c->F, F, sizeof c->F), c->M = M;
    for (int k = 0; k < 3; k++)
        if (get(in, KEYS[k][0], F[k], &c->lo[k], origin, err) ||
            get(in, KEYS[k][1], F[k], &c->hi[k], origin, err))
            return -1;
    if (get(in, "coverage.label_lo", M, &c->label_lo, origin, err) ||
        get(in, "coverage.label_hi", M, &c->label_hi, origin, err) ||
        get(in, "coverage.counts", COV_COUNTS, &c->counts, origin, err))
        return -1;
    if (ctr_find(in, "coverage.op_counts")) { // absent in files written before it existed
        if (get(in, "coverage.op_counts", n_ops, &c->op_counts, origin, err)) return -1;
        c->n_ops = n_ops;
    }
    if (ctr_find(in, "coverage.op_pairs") && load_pairs(c, in, n_ops, op_names, origin, err)) return -1;
    return 0;
}

/* Rounding slack: the raw features are float32. */
static double slack(double lo, double hi) {
    double a = fmax(fabs(lo), fabs(hi));
    return 1e-6 * (a > 1 ? a : 1);
}

/* Adds an item when [vmin, vmax] leaves [lo, hi] (an empty training range checks nothing). */
static int check_one(int kind, int index, double vmin, double vmax, double lo, double hi,
                     coverage_item *items, int max_items, int n) {
    if (lo > hi) return n;
    double s = slack(lo, hi), below = lo - s - vmin, above = vmax - (hi + s);
    if (!(below > 0 || above > 0 || vmin != vmin || vmax != vmax)) return n;
    if (n < max_items)
        items[n] = (coverage_item){kind, index, below >= above ? vmin : vmax, lo, hi};
    return n + 1;
}

static int op_recorded(const coverage *c) { return c->op_counts && c->counts[COV_GRAPHS] > 0; }

static int op_unseen(const coverage *c, int32_t op) {
    return op >= 0 && op < c->n_ops && !(c->op_counts[op] > 0);
}

int64_t coverage_unseen_nodes(const coverage *c, const int32_t *node_op, int64_t n_nodes) {
    if (!op_recorded(c) || !node_op) return -1;
    int64_t k = 0;
    for (int64_t r = 0; r < n_nodes; r++) k += op_unseen(c, node_op[r]);
    return k;
}

int coverage_check(const coverage *c, int64_t n_nodes, int64_t n_edges, const int32_t *node_op,
                   const int32_t *edge_index, const float *node_x, const float *edge_x, const float *global_x,
                   const double *pred, coverage_item *items, int max_items) {
    const float *x[3] = {node_x, edge_x, global_x};
    int64_t rows[3] = {n_nodes, n_edges, 1};
    int n = 0;
    // the predictions first (what a reader acts on), then the graph's size, then its features
    for (int m = 0; pred && m < c->M; m++) {
        double lo = c->label_lo[m], hi = c->label_hi[m], p = pred[m];
        if (lo > hi) continue;
        if (!(p >= lo / COV_METRIC_FACTOR && p <= hi * COV_METRIC_FACTOR)) { // NaN too
            if (n < max_items) items[n] = (coverage_item){COV_KIND_METRIC, m, p, lo, hi};
            n++;
        }
    }
    if (node_op && op_recorded(c)) {
        // each unseen operator once, in op-table order, with its node count in the graph
        for (int op = 0; op < c->n_ops; op++) {
            if (!op_unseen(c, op)) continue;
            int64_t k = 0;
            for (int64_t r = 0; r < n_nodes; r++) k += node_op[r] == op;
            if (!k) continue;
            if (n < max_items) items[n] = (coverage_item){COV_KIND_OP, op, (double)k, 0, 0};
            n++;
        }
    }
    if (node_op && edge_index && c->n_pairs && c->counts[COV_GRAPHS] > 0) {
        // each watched pair the training graphs never had, with its edges in the graph
        for (int p = 0; p < c->n_pairs; p++) {
            if (c->op_pairs[3 * p + 2] > 0) continue;
            int32_t a = (int32_t)c->op_pairs[3 * p], b = (int32_t)c->op_pairs[3 * p + 1];
            int64_t k = 0;
            for (int64_t e = 0; e < n_edges; e++)
                k += node_op[edge_index[2 * e]] == a && node_op[edge_index[2 * e + 1]] == b;
            if (!k) continue;
            if (n < max_items) items[n] = (coverage_item){COV_KIND_PAIR, p, (double)k, 0, 0};
            n++;
        }
    }
    n = check_one(COV_KIND_NODES, 0, (double)n_nodes, (double)n_nodes, c->counts[COV_NODES_LO],
                  c->counts[COV_NODES_HI], items, max_items, n);
    n = check_one(COV_KIND_EDGES, 0, (double)n_edges, (double)n_edges, c->counts[COV_EDGES_LO],
                  c->counts[COV_EDGES_HI], items, max_items, n);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < c->F[k]; j++) {
            if (!rows[k]) continue;
            double vmin = INFINITY, vmax = -INFINITY;
            for (int64_t r = 0; r < rows[k]; r++) widen(&vmin, &vmax, x[k][r * c->F[k] + j]);
            n = check_one(k, j, vmin, vmax, c->lo[k][j], c->hi[k][j], items, max_items, n);
        }
    return n;
}

void coverage_clamp(const coverage *c, int kind, float *x, int64_t rows) {
    int F = c->F[kind];
    for (int j = 0; j < F; j++) {
        double lo = c->lo[kind][j], hi = c->hi[kind][j];
        if (lo > hi) continue; // no training rows of this kind: nothing to clamp to
        for (int64_t r = 0; r < rows; r++) {
            float *v = &x[r * F + j];
            if (*v < lo) *v = (float)lo;
            else if (*v > hi) *v = (float)hi;
        }
    }
}

void coverage_fill_unseen(const coverage *c, float *embed, int64_t n_ops, int64_t width) {
    if (!c->op_counts || c->n_ops != n_ops) return;
    double total = 0;
    for (int64_t i = 0; i < n_ops; i++) total += c->op_counts[i];
    if (!(total > 0)) return;
    double *mean = seer_calloc((size_t)width, sizeof(double));
    for (int64_t i = 0; i < n_ops; i++)
        for (int64_t j = 0; j < width && c->op_counts[i] > 0; j++)
            mean[j] += c->op_counts[i] / total * embed[i * width + j];
    for (int64_t i = 0; i < n_ops; i++)
        for (int64_t j = 0; j < width && !(c->op_counts[i] > 0); j++) embed[i * width + j] = (float)mean[j];
    free(mean);
}
