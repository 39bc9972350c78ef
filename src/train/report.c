/* train: what a run reports: the per-label tables, summary.json, test_predictions.csv, the
 * start-up table of shards (see train.h for the files' contents and checkpoints/README.md). */
#define _POSIX_C_SOURCE 200809L
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backend/backend_open.h"
#include "dist/dist.h"

double report_peak_rss_mb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

double report_mean_mape(const label_metrics *m, int M) {
    label_metrics mean;
    metrics_mean(m, M, &mean);
    return mean.mape;
}

static void print_table(const trainer *t, const char *split, const label_metrics *m, FILE *f) {
    char *names[MODEL_MAX_HEADS];
    for (int i = 0; i < t->M; i++) names[i] = t->ds.labels[t->label_cols[i]];
    metrics_print_rows(f, split, names, m, t->M);
}

void report_json_metrics(FILE *f, const trainer *t, const char *split, const label_metrics *m) {
    fprintf(f, "\"%s\":{", split);
    static const char *const keys[6] = {"mape", "rmspe", "within5", "within10", "spearman", "kendall"};
    for (int i = 0; i < t->M; i++) {
        const double v[6] = {m[i].mape, m[i].rmspe, m[i].within5, m[i].within10, m[i].spearman,
                             m[i].kendall};
        fprintf(f, "%s\"%s\":{\"n\":%lld", i ? "," : "", t->ds.labels[t->label_cols[i]],
                (long long)m[i].n);
        for (int k = 0; k < 6; k++) {
            fprintf(f, ",\"%s\":", keys[k]);
            metrics_json_num(f, v[k]);
        }
        fputc('}', f);
    }
    fputc('}', f);
}

/* MAPE (per label, validation split) of predicting the training split's arithmetic mean. */
static void mean_baseline(const trainer *t, double *mape) {
    const pg_dataset *ds = &t->ds;
    for (int m = 0; m < t->M; m++) {
        int col = t->label_cols[m];
        double a[4] = {0}; // training sum and count, then validation APE sum and count
        for (int k = 0; k < 2; k++) {
            double mean = a[0] / (a[1] ? a[1] : 1);
            for (int64_t i = 0; i < t->n_ids[k]; i++) {
                int64_t g = t->ids[k][i] - ds->g0;
                if (g < 0 || g >= ds->G) continue;
                float y = ds->label_y[g * ds->M + col];
                if (isnan(y)) continue;
                if (k == SPLIT_TRAIN) a[0] += y, a[1]++;
                else a[2] += fabs(mean - y) / y, a[3]++;
            }
            dist_sum_f64(a + 2 * k, 2);
        }
        mape[m] = a[3] ? 100.0 * a[2] / a[3] : NAN;
    }
}

/* Test predictions of the reported weights: test_predictions.csv with graph id, name, and per
 * label the measurement and the prediction (native units; empty when not measured). */
int report_test_predictions(trainer *t, label_metrics *tm, seer_err *err) {
    int M = t->M;
    int64_t n = t->n_ids[SPLIT_TEST];
    if (!n) {
        metrics_none(tm, M);
        return 0;
    }
    double *pred = seer_malloc(sizeof(double) * (size_t)(n * M));
    float *y = seer_malloc(sizeof(float) * (size_t)(n * M));
    trainer_evaluate_labels(t, t->ids[SPLIT_TEST], n, tm, pred, y);
    char path[1200];
    snprintf(path, sizeof path, "%s/test_predictions.csv", t->run_dir);
    int rc = 0;
    FILE *f = t->rank == 0 ? fopen(path, "w") : NULL;
    if (t->rank == 0 && !f) rc = seer_fail(err, "%s: cannot write: %s", path, strerror(errno));
    if (f) {
        fprintf(f, "graph,name");
        for (int m = 0; m < M; m++)
            fprintf(f, ",%s,%s_pred", t->ds.labels[t->label_cols[m]], t->ds.labels[t->label_cols[m]]);
        fputc('\n', f);
        for (int64_t i = 0; i < n; i++) {
            int64_t g = t->ids[SPLIT_TEST][i];
            fprintf(f, "%lld,%s", (long long)g, t->ix.name[g]);
            for (int m = 0; m < M; m++) {
                float yv = y[i * M + m];
                if (isnan(yv)) fprintf(f, ",,%.9g", pred[i * M + m]);
                else fprintf(f, ",%.9g,%.9g", (double)yv, pred[i * M + m]);
            }
            fputc('\n', f);
        }
        if (ferror(f) | fclose(f)) rc = seer_fail(err, "%s: write failed: %s", path, strerror(errno));
    }
    free(pred), free(y);
    return rc;
}

/* Per-rank figures of the job, gathered on every rank: (ranks, RF_N). */
enum { RF_G0, RF_G, RF_N_NODES, RF_E, RF_READS, RF_LOAD, RF_LOAD_RSS, RF_RSS, RF_N };
static double *rank_figures(const trainer *t) {
    double *a = seer_calloc((size_t)(t->ranks * RF_N), sizeof(double)), *me = a + t->rank * RF_N;
    me[RF_G0] = (double)t->ds.g0, me[RF_G] = (double)t->ds.G, me[RF_N_NODES] = (double)t->ds.N;
    me[RF_E] = (double)t->ds.E, me[RF_READS] = (double)t->rd.reads, me[RF_LOAD] = t->load_seconds;
    me[RF_LOAD_RSS] = t->load_rss_mb, me[RF_RSS] = report_peak_rss_mb();
    dist_sum_f64(a, t->ranks * RF_N);
    return a;
}

/* The shards (one with one process), printed by rank 0 at the start of a run. */
void report_shards(const trainer *t) {
    double *a = rank_figures(t), most = 0, mean = 0;
    for (int r = 0; r < t->ranks; r++)
        most = fmax(most, a[r * RF_N + RF_N_NODES]), mean += a[r * RF_N + RF_N_NODES] / t->ranks;
    if (!t->quiet && t->ranks > 1)
        printf("seertrain: %d ranks (%s), [dist] batch = %s: %lld graphs per step in all\n",
               t->ranks, dist_library(), config_choice(CFG_KEY_dist_batch, t->cfg.dist_batch),
               (long long)t->global_batch);
    if (!t->quiet) {
        for (int r = 0; r < t->ranks; r++) {
            const double *f = a + r * RF_N;
            char who[32] = "data";
            if (t->ranks > 1) snprintf(who, sizeof who, "rank %d", r);
            printf("  %s: graphs %.0f..%.0f, %.0f nodes, %.0f edges, %.0f hyperslab reads, "
                   "loaded in %.2f s (%.0f MB), %.0f MB with the batch workspace\n", who, f[RF_G0],
                   f[RF_G0] + f[RF_G] - 1, f[RF_N_NODES], f[RF_E], f[RF_READS], f[RF_LOAD],
                   f[RF_LOAD_RSS], f[RF_RSS]);
        }
        if (t->ranks > 1)
            printf("  node imbalance: the largest shard holds %.3fx the mean\n", mean > 0 ? most / mean : 1.0);
    }
    free(a);
}

static const char *prof_names[PROF_N] = {"batch", "forward", "loss", "backward", "reduce",
                                         "clip", "optimizer", "evaluation"};

/* [output] profile: milliseconds per step of each phase (evaluation: per epoch, in seconds). */
static void print_profile(const trainer *t, FILE *f) {
    const step_profile *p = &t->prof;
    double steps = p->steps ? (double)p->steps : 1, total = 0;
    for (int k = 0; k < PROF_EVAL; k++) total += p->sec[k];
    fprintf(f, "\nprofile (output.profile = 1): %lld steps, %.3f ms per step\n", (long long)p->steps,
            1e3 * total / steps);
    for (int k = 0; k < PROF_EVAL; k++)
        fprintf(f, "  %-10s %9.3f ms per step  %5.1f%%\n", prof_names[k], 1e3 * p->sec[k] / steps,
                total > 0 ? 100 * p->sec[k] / total : 0.0);
    fprintf(f, "  %-10s %9.3f s in all (validation at epoch ends)\n", prof_names[PROF_EVAL],
            p->sec[PROF_EVAL]);
}

static void json_profile(const trainer *t, FILE *s) {
    const step_profile *p = &t->prof;
    fprintf(s, ",\"profile\":{\"steps\":%lld", (long long)p->steps);
    for (int k = 0; k < PROF_N; k++) fprintf(s, ",\"%s_s\":%.6g", prof_names[k], p->sec[k]);
    fputc('}', s);
}

/* summary.json and the final table (printed even with --quiet, which silences progress only). */
int report_final(trainer *t, const label_metrics *vm, const label_metrics *tm, int64_t best_step,
                 seer_err *err) {
    int M = t->M;
    char path[1200];
    memcpy(t->final_val, vm, sizeof(label_metrics) * (size_t)M);
    memcpy(t->final_test, tm, sizeof(label_metrics) * (size_t)M);
    double *base = seer_calloc((size_t)M, sizeof(double)), base_mean = 0;
    mean_baseline(t, base);
    int based = 0;
    for (int m = 0; m < M; m++)
        if (!isnan(base[m])) base_mean += base[m], based++;
    base_mean = based ? base_mean / based : NAN; // no validation graphs: no figure
    double *rk = rank_figures(t); // collective: before rank 0 goes its own way
    if (t->rank != 0) {
        free(base), free(rk);
        return 0;
    }
    snprintf(path, sizeof path, "%s/summary.json", t->run_dir);
    FILE *s = fopen(path, "w");
    int rc = 0;
    if (!s) rc = seer_fail(err, "%s: cannot write: %s", path, strerror(errno));
    if (s) {
        fprintf(s, "{\"model\":\"%s\",\"multi_task\":\"%s\",\"train_seconds\":%.1f,"
                   "\"best_step\":%lld",
                t->cfg.model_name, config_choice(CFG_KEY_train_multi_task, t->cfg.train_multi_task),
                t->train_seconds, (long long)best_step);
        static const char *const keys[4] = {"best_val_loss", "mean_val_mape", "mean_test_mape",
                                            "train_mean_val_mape"};
        const double v[4] = {t->best_val, report_mean_mape(vm, M), report_mean_mape(tm, M), base_mean};
        for (int k = 0; k < 4; k++) {
            fprintf(s, ",\"%s\":", keys[k]);
            metrics_json_num(s, v[k]);
        }
        fputc(',', s);
        report_json_metrics(s, t, "val", vm);
        fputc(',', s);
        report_json_metrics(s, t, "test", tm);
        if (t->be->device)
            fprintf(s, ",\"device\":\"%s\",\"device_memory_mb\":%.1f,\"batch_capacity_nodes\":%lld,"
                       "\"resident_data_mb\":%.1f",
                    t->device_name, (double)backend_device_bytes(t->be) / (1 << 20),
                    (long long)t->src.host.cap_N, (double)t->src.resident_bytes / (1 << 20));
        {
            fprintf(s, ",\"dist\":{\"ranks\":%d,\"library\":\"%s\",\"batch\":\"%s\"", t->ranks,
                    dist_library(), config_choice(CFG_KEY_dist_batch, t->cfg.dist_batch));
            static const char *keys[RF_N] = {"first_graph", "graphs", "nodes", "edges",
                                             "hyperslab_reads", "load_seconds", "loaded_rss_mb",
                                             "peak_rss_mb"};
            for (int k = 0; k < RF_N; k++) {
                fprintf(s, ",\"%s\":[", keys[k]);
                for (int r = 0; r < t->ranks; r++)
                    fprintf(s, "%s%.6g", r ? "," : "", rk[r * RF_N + k]);
                fputc(']', s);
            }
            fputc('}', s);
        }
        if (t->prof.on) json_profile(t, s);
        fputs("}\n", s);
        if (ferror(s) | fclose(s)) rc = seer_fail(err, "%s: write failed: %s", path, strerror(errno));
    }
    free(rk);
    if (t->closed)
        printf("\n%s, val loss %.4f\n", t->cost_only ? "the roofline cost alone (no learned weights)"
                                                     : "linear baseline (ridge on a bag of operators)",
               t->best_val);
    else printf("\nbest checkpoint: step %lld (val loss %.4f)\n", (long long)best_step, t->best_val);
    metrics_print_header(stdout);
    print_table(t, "val", vm, stdout);
    print_table(t, "test", tm, stdout);
    char f[3][32];
    const double v[3] = {report_mean_mape(vm, M), report_mean_mape(tm, M), base_mean};
    for (int k = 0; k < 3; k++) // "-" where a split had nothing to score
        snprintf(f[k], sizeof f[k], isnan(v[k]) ? "-" : "%.3f%%", v[k]);
    printf("mean MAPE: val %s, test %s; predicting the training mean gives %s on val\n", f[0], f[1],
           f[2]);
    if (t->prof.on) print_profile(t, stdout);
    free(base);
    return rc;
}

