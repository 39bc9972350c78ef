/* test_export: a .seer export predicts what the trainer predicts.
 *
 *   test_export CKPT FP32.seer FP16.seer INT8.seer [--graphs-csv OUT.csv]
 *
 * The trainer (seercore, OpenBLAS) rebuilds the run from the checkpoint's stored config and
 * predicts the test split; libseer (no BLAS) loads each export and predicts the same graphs from
 * the raw dataset features. Checks: fp32 within 1e-5 relative of the trainer, fp16 within 1e-3,
 * int8 test MAPE within 0.2 points of the trainer's; single-graph and batched calls agree; four
 * threads predicting at once on one model give the single-threaded results; the model's
 * metadata. --graphs-csv writes name,prediction... of the fp32 export (the Python binding test
 * compares against it). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seer/seer.h"
#include "testutil.h"
#include "train/train.h"

typedef struct {
    const seer_model *m;
    const seer_graph *gs;
    int64_t n;
    double *out;
    int rc;
} job;

static void *run_job(void *arg) {
    job *j = arg;
    char err[256];
    // one graph at a time, so the threads interleave many calls
    for (int64_t i = 0; i < j->n && !j->rc; i++)
        j->rc = seer_predict(j->m, &j->gs[i], j->out + i * seer_n_metrics(j->m), err, sizeof err);
    return NULL;
}

static seer_graph raw_graph(const pg_dataset *ds, int64_t g) {
    int64_t n0 = ds->node_ptr[g], e0 = ds->edge_ptr[g];
    return (seer_graph){
        .n_nodes = ds->node_ptr[g + 1] - n0, .n_edges = ds->edge_ptr[g + 1] - e0,
        .n_node_features = ds->Fn, .n_edge_features = ds->Fe, .n_global_features = ds->Fg,
        .node_x = ds->node_x + n0 * ds->Fn, .node_op = ds->node_op + n0,
        .edge_index = ds->edge_index + 2 * e0, .edge_x = ds->edge_x + e0 * ds->Fe,
        .global_x = ds->global_x + g * ds->Fg,
    };
}

/* seer_check_range: every training graph lies inside the recorded range (it is their min and
 * max); a node feature pushed far out, and predictions 1000x the real ones, are reported. */
static void check_ranges(const seer_model *m, const trainer *t, const pg_dataset *ds,
                         const double *test_pred) {
    int M = t->M, n_out;
    seer_range_item it[16];
    char msg[512];
    int64_t outside = 0, ntr = t->n_ids[SPLIT_TRAIN];
    for (int64_t i = 0; i < ntr; i++) {
        seer_graph g = raw_graph(ds, t->ids[SPLIT_TRAIN][i]);
        CHECK(seer_check_range(m, &g, NULL, it, 16, &n_out, msg, sizeof msg) == SEER_OK, "%s", msg);
        outside += n_out != 0;
    }
    CHECK(outside == 0, "%lld of %lld training graphs reported outside their own range",
          (long long)outside, (long long)ntr);
    seer_graph g = raw_graph(ds, t->ids[SPLIT_TEST][0]);
    float *xn = seer_malloc(sizeof(float) * (size_t)(g.n_nodes * ds->Fn));
    memcpy(xn, g.node_x, sizeof(float) * (size_t)(g.n_nodes * ds->Fn));
    xn[0] = 1e9f;
    g.node_x = xn;
    double far[MODEL_MAX_HEADS];
    for (int j = 0; j < M; j++) far[j] = test_pred[j] * 1000;
    CHECK(seer_check_range(m, &g, far, it, 16, &n_out, msg, sizeof msg) == SEER_OK, "%s", msg);
    CHECK(n_out >= M + 1, "%d quantities outside, want at least %d", n_out, M + 1);
    int metrics = 0, feature = 0;
    for (int i = 0; i < n_out && i < 16; i++) {
        if (it[i].kind == SEER_METRIC) {
            metrics++;
            CHECK(i < M && it[i].value == far[it[i].index] && it[i].value > 10 * it[i].hi,
                  "metric item %d: %g (range %g .. %g)", i, it[i].value, it[i].lo, it[i].hi);
        }
        if (it[i].kind == SEER_NODE && it[i].index == 0) {
            feature++;
            CHECK(it[i].value == 1e9 && !strcmp(seer_range_item_name(m, &it[i]), seer_feature_name(m, SEER_NODE, 0)),
                  "node feature item: %g %s", it[i].value, seer_range_item_name(m, &it[i]));
        }
    }
    CHECK(metrics == M && feature == 1, "%d metric items (want %d), %d for node feature 0", metrics, M, feature);
    // an operator type no training graph had: reported once, with its node count, and only
    // when the graph names its operators
    int unseen = -1;
    CHECK(t->cov.op_counts && t->cov.n_ops == seer_n_op_types(m), "op counts: %d rows, the model has %d",
          t->cov.n_ops, seer_n_op_types(m));
    for (int op = 0; op < t->cov.n_ops && unseen < 0; op++)
        if (t->cov.op_counts[op] == 0) unseen = op;
    CHECK(unseen >= 0, "every operator type of the table is in the training data");
    g = raw_graph(ds, t->ids[SPLIT_TEST][0]);
    CHECK(seer_check_range(m, &g, NULL, it, 16, &n_out, msg, sizeof msg) == SEER_OK, "%s", msg);
    int base_out = n_out;
    int32_t *ops = seer_malloc(sizeof(int32_t) * (size_t)g.n_nodes);
    memcpy(ops, g.node_op, sizeof(int32_t) * (size_t)g.n_nodes);
    ops[0] = ops[g.n_nodes - 1] = unseen;
    g.node_op = ops;
    CHECK(seer_check_range(m, &g, NULL, it, 16, &n_out, msg, sizeof msg) == SEER_OK, "%s", msg);
    int op_items = 0;
    for (int i = 0; i < n_out && i < 16; i++)
        if (it[i].kind == SEER_OP) {
            op_items++;
            CHECK(it[i].index == unseen && it[i].value == 2 &&
                      !strcmp(seer_range_item_name(m, &it[i]), seer_op_name(m, unseen)),
                  "op item: index %d value %g name %s", it[i].index, it[i].value, seer_range_item_name(m, &it[i]));
        }
    CHECK(op_items == 1 && n_out == base_out + 1, "%d op items, %d quantities (%d without the operator)",
          op_items, n_out, base_out);
    g.node_op = NULL;
    CHECK(seer_check_range(m, &g, NULL, it, 16, &n_out, msg, sizeof msg) == SEER_OK, "%s", msg);
    CHECK(n_out == base_out, "without node_op: %d quantities, want %d", n_out, base_out);
    // a watched operator pair no training graph had (data/coverage.h: COV_PAIRS): the edges made
    // of it are counted, named "producer>consumer", and only with node_op and edge_index
    CHECK(t->cov.n_pairs == COV_N_PAIRS, "%d watched pairs recorded, the op table has all %d",
          t->cov.n_pairs, COV_N_PAIRS);
    int pair = -1;
    for (int p = 0; p < t->cov.n_pairs && pair < 0; p++)
        if (t->cov.op_pairs[3 * p + 2] == 0) pair = p;
    CHECK(pair >= 0, "the training graphs have every watched pair: the test tests nothing");
    g = raw_graph(ds, t->ids[SPLIT_TEST][0]);
    CHECK(g.n_edges >= 3, "test graph of %lld edges", (long long)g.n_edges);
    memcpy(ops, g.node_op, sizeof(int32_t) * (size_t)g.n_nodes);
    int32_t a = (int32_t)t->cov.op_pairs[3 * pair], b = (int32_t)t->cov.op_pairs[3 * pair + 1];
    int64_t e2 = 1; // two edges of the pair: edge 0 and the first whose ends differ from its ends
    const int32_t *ei = g.edge_index;
    while (e2 < g.n_edges && (ei[2 * e2] == ei[0] || ei[2 * e2] == ei[1] || ei[2 * e2 + 1] == ei[0] ||
                              ei[2 * e2 + 1] == ei[1]))
        e2++;
    CHECK(e2 < g.n_edges, "no two edges with four distinct ends in a graph of %lld", (long long)g.n_edges);
    ops[ei[0]] = a, ops[ei[1]] = b;
    if (e2 < g.n_edges) ops[ei[2 * e2]] = a, ops[ei[2 * e2 + 1]] = b;
    int64_t want = 0;
    for (int64_t e = 0; e < g.n_edges; e++) want += ops[g.edge_index[2 * e]] == a && ops[g.edge_index[2 * e + 1]] == b;
    g.node_op = ops;
    CHECK(seer_check_range(m, &g, NULL, it, 16, &n_out, msg, sizeof msg) == SEER_OK, "%s", msg);
    int pair_items = 0;
    char pname[2 * 64 + 2];
    snprintf(pname, sizeof pname, "%s>%s", seer_op_name(m, a), seer_op_name(m, b));
    for (int i = 0; i < n_out && i < 16; i++)
        if (it[i].kind == SEER_OP_PAIR) {
            pair_items++;
            CHECK(it[i].index == pair && it[i].value == (double)want && it[i].lo == 0 && it[i].hi == 0 &&
                      !strcmp(seer_range_item_name(m, &it[i]), pname),
                  "pair item: index %d value %g (want %lld) name %s (want %s)", it[i].index, it[i].value,
                  (long long)want, seer_range_item_name(m, &it[i]), pname);
        }
    CHECK(pair_items == 1 && want >= 2, "%d pair items for %lld edges of %s", pair_items, (long long)want, pname);
    g.node_op = NULL;
    CHECK(seer_check_range(m, &g, NULL, it, 16, &n_out, msg, sizeof msg) == SEER_OK, "%s", msg);
    for (int i = 0; i < n_out && i < 16; i++)
        CHECK(it[i].kind != SEER_OP_PAIR, "a pair item without node_op");
    printf("seer_check_range: %lld training graphs inside their range; a pushed feature, 1000x "
           "predictions, an unseen operator (%s) and %lld edges of an unseen pair (%s) reported\n",
           (long long)ntr, seer_op_name(m, unseen), (long long)want, pname);
    free(ops);
    free(xn);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: test_export CKPT FP32.seer FP16.seer INT8.seer [--graphs-csv OUT]\n");
        return 2;
    }
    const char *ckpt = argv[1], *csv = argc > 6 && !strcmp(argv[5], "--graphs-csv") ? argv[6] : NULL;
    seer_config cfg;
    seer_err err;
    config_defaults(&cfg);
    if (ckpt_read_config(ckpt, &cfg, &err)) seer_die("%s", err.msg);
    cfg.train_threads = 1;
    trainer *t = seer_calloc(1, sizeof *t);
    t->quiet = 1;
    if (trainer_init(t, &cfg, &err) || trainer_load_params(t, ckpt, NULL, &err)) seer_die("%s", err.msg);
    int M = t->M;
    int64_t n = t->n_ids[SPLIT_TEST];
    const int64_t *ids = t->ids[SPLIT_TEST];
    double *ref = seer_malloc(sizeof(double) * (size_t)(n * M));
    label_metrics ref_m[MODEL_MAX_HEADS];
    trainer_evaluate(t, ids, n, ref_m, ref);

    pg_dataset ds; // raw features (the trainer's copy is standardised in place)
    if (pg_read(cfg.data_path, &ds, &err)) seer_die("%s", err.msg);
    seer_graph *gs = seer_calloc((size_t)n, sizeof *gs);
    for (int64_t i = 0; i < n; i++) gs[i] = raw_graph(&ds, ids[i]);
    const double tol[3] = {1e-5, 1e-3, -1}; // int8: judged by MAPE
    const char *names[3] = {"fp32", "fp16", "int8"};
    double *pred = seer_malloc(sizeof(double) * (size_t)(n * M));
    for (int k = 0; k < 3; k++) {
        seer_model *m;
        char msg[1024];
        seer_status st = seer_load(argv[2 + k], &m, msg, sizeof msg);
        CHECK(st == SEER_OK, "%s", msg);
        if (st) break;
        CHECK(seer_n_metrics(m) == M, "%d metrics, want %d", seer_n_metrics(m), M);
        CHECK(!strcmp(seer_info(m, "dtype"), names[k]), "dtype %s", seer_info(m, "dtype"));
        CHECK(!strcmp(seer_info(m, "model"), "seernet"), "model %s", seer_info(m, "model"));
        for (int j = 0; j < M; j++) {
            CHECK(!strcmp(seer_metric_name(m, j), t->ds.labels[t->label_cols[j]]), "metric %d", j);
            CHECK(!strcmp(seer_metric_unit(m, j), "ms"), "unit of %s: '%s'", seer_metric_name(m, j),
                  seer_metric_unit(m, j));
        }
        CHECK(seer_info(m, "val_mape") && seer_info(m, "val_mape")[0], "no validation figures");
        CHECK(seer_n_params(m) > 0 && seer_n_params(m) <= t->P, "%lld params",
              (long long)seer_n_params(m));
        CHECK(seer_predict_batch(m, gs, n, pred, msg, sizeof msg) == SEER_OK, "%s", msg);
        double worst = 0;
        for (int64_t i = 0; i < n * M; i++) {
            double r = fabs(pred[i] - ref[i]) / fabs(ref[i]);
            if (r > worst) worst = r;
        }
        label_metrics lm[MODEL_MAX_HEADS];
        double mape_ref = 0, mape = 0;
        for (int j = 0; j < M; j++) {
            double *p = seer_malloc(sizeof(double) * (size_t)n), *y = seer_malloc(sizeof(double) * (size_t)n);
            for (int64_t i = 0; i < n; i++)
                p[i] = pred[i * M + j], y[i] = ds.label_y[ids[i] * ds.M + t->label_cols[j]];
            metrics_compute(p, y, n, &lm[j]);
            mape += lm[j].mape / M, mape_ref += ref_m[j].mape / M;
            free(p), free(y);
        }
        printf("%s: %lld test graphs, worst relative difference from the trainer %.3g, test MAPE "
               "%.4f%% (trainer %.4f%%, change %+.4f points)\n", names[k], (long long)n, worst,
               mape, mape_ref, mape - mape_ref);
        if (tol[k] > 0) CHECK(worst <= tol[k], "%s: worst relative difference %.3g > %.0e", names[k], worst, tol[k]);
        else CHECK(fabs(mape - mape_ref) <= 0.2, "int8 changes test MAPE by %.3f points", mape - mape_ref);
        if (k == 0) {
            // one graph per call, from four threads at once, equals the batched call
            enum { T = 4 };
            pthread_t th[T];
            job jobs[T];
            double *tp = seer_malloc(sizeof(double) * (size_t)(n * M) * T);
            for (int q = 0; q < T; q++) {
                jobs[q] = (job){m, gs, n, tp + (size_t)(q * n * M), 0};
                pthread_create(&th[q], NULL, run_job, &jobs[q]);
            }
            for (int q = 0; q < T; q++) pthread_join(th[q], NULL);
            double wb = 0;
            for (int q = 0; q < T; q++) {
                CHECK(jobs[q].rc == SEER_OK, "thread %d failed", q);
                for (int64_t i = 0; i < n * M; i++) {
                    double r = fabs(tp[q * n * M + i] - pred[i]) / fabs(pred[i]);
                    if (r > wb) wb = r;
                    if (q) CHECK(tp[q * n * M + i] == tp[i], "threads disagree at %lld", (long long)i);
                }
            }
            printf("fp32: single-graph calls on 4 threads vs one batched call: worst relative "
                   "difference %.3g\n", wb);
            CHECK(wb <= 1e-6, "single vs batched %.3g", wb);
            free(tp);
            if (csv) {
                FILE *f = fopen(csv, "w");
                for (int64_t i = 0; i < n; i++) {
                    fprintf(f, "%lld", (long long)ids[i]);
                    for (int j = 0; j < M; j++) fprintf(f, ",%.17g", pred[i * M + j]);
                    fputc('\n', f);
                }
                fclose(f);
            }
            check_ranges(m, t, &ds, pred);
        }
        seer_free(m);
    }
    free(pred), free(ref), free(gs);
    pg_free(&ds);
    trainer_free(t);
    free(t);
    config_free(&cfg);
    return test_finish("test_export");
}
