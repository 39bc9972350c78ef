/* seerpredict: predictions of a .seer model (libseer) for ONNX files or a whole PerfGraph dataset.
 *   seerpredict MODEL.seer NET.onnx [NET.onnx ...] [--batch 1,8,64] [--fuse] [--json]
 *   seerpredict MODEL.seer DATA.h5 [--json] [--predictions OUT.csv] [--limit N]
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/perfgraph.h"
#include "seer/seer.h"
#include "seer/seer_onnx.h"
#include "eval/metrics.h"

#define MAX_BATCHES 64

static void usage(FILE *f) {
    fputs("usage: seerpredict MODEL.seer NET.onnx [NET.onnx ...] [--batch 1,8,64] [--fuse] [--json]\n"
          "       seerpredict MODEL.seer DATA.h5 [--json] [--predictions OUT.csv] [--limit N]\n\n"
          "ONNX: converts each model through Seer's ONNX front end at each batch size and prints\n"
          "every metric of the predictor with its unit, and a warning when the graph lies outside\n"
          "what the model was trained on (a feature, the node or edge count, or a prediction more\n"
          "than 10x beyond the training labels): the prediction is then a guess.\n"
          "HDF5 (a PerfGraph dataset, datasets/FORMAT.md): predicts every graph; where the file has\n"
          "labels named like the model's metrics, prints MAPE, RMSPE, share within 5%/10%,\n"
          "Spearman and Kendall per metric (a model trained on one dataset scored on another).\n\n"
          "  --batch LIST        comma-separated batch sizes (default: the ONNX model's own, or 1)\n"
          "  --fuse              fold BatchNormalization/activations into Conv/Gemm (as seerconvert)\n"
          "  --json              one JSON document on stdout instead of text\n"
          "  --predictions PATH  HDF5: also write a CSV of name,metric,... per graph\n"
          "  --limit N           HDF5: only the first N graphs\n",
          f);
}

static void die(const char *fmt, const char *a, const char *b) {
    fputs("seerpredict: error: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(1);
}

static int ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

static void json_str(const char *s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

/* A number in JSON (null for NaN and infinities, which JSON cannot hold). */
static void json_num(double v) {
    if (isfinite(v)) printf("%.6g", v);
    else fputs("null", stdout);
}

#define RANGE_ITEMS 8

/* The training-range check of one graph and its predictions: how many quantities lie outside
 * (-1: the model records no range), the first RANGE_ITEMS of them in it. */
static int range_check(const seer_model *m, const seer_graph *g, const double *y,
                       seer_range_item *it, const char *what) {
    int n;
    char err[512];
    if (seer_check_range(m, g, y, it, RANGE_ITEMS, &n, err, sizeof err)) die("%s: %s", what, err);
    return n;
}

static const char *range_kind(int kind) {
    static const char *const k[] = {"node feature ", "edge feature ", "global feature ", "", "", "prediction "};
    return kind >= 0 && kind <= SEER_METRIC ? k[kind] : "";
}

static void range_text(const seer_model *m, int n, const seer_range_item *it) {
    if (n < 0) {
        printf("  note: this model records no training range (exported before libseer 0.3), so "
               "it cannot tell whether this network is like its training data\n");
        return;
    }
    if (n == 0) return;
    const char *fams = seer_info(m, "families");
    printf("  warning: outside the training data%s%s%s, so these predictions are guesses (%d quantit%s):",
           fams ? " (families " : "", fams ? fams : "", fams ? ")" : "", n, n == 1 ? "y" : "ies");
    for (int i = 0; i < n && i < RANGE_ITEMS; i++)
        printf("%s %s%s = %.4g (trained %.4g .. %.4g)", i ? ";" : "", range_kind(it[i].kind),
               seer_range_item_name(m, &it[i]), it[i].value, it[i].lo, it[i].hi);
    if (n > RANGE_ITEMS) printf("; and %d more", n - RANGE_ITEMS);
    putchar('\n');
}

static void range_json(const seer_model *m, int n, const seer_range_item *it) {
    static const char *const kinds[] = {"node", "edge", "global", "nodes", "edges", "metric"};
    printf(",\"in_range\":%s,\"out_of_range\":[", n < 0 ? "null" : n == 0 ? "true" : "false");
    for (int i = 0; i < n && i < RANGE_ITEMS; i++) {
        printf("%s{\"kind\":\"%s\",\"name\":", i ? "," : "", kinds[it[i].kind]);
        json_str(seer_range_item_name(m, &it[i]));
        printf(",\"value\":");
        json_num(it[i].value);
        printf(",\"lo\":%.6g,\"hi\":%.6g}", it[i].lo, it[i].hi);
    }
    printf("],\"out_of_range_count\":%d", n < 0 ? 0 : n);
}

/* Maps each operator name of a table to the model's op id (-1: the model has never seen it). */
static int32_t *op_map(const seer_model *m, int n, const char *(*name_of)(int, const void *),
                       const void *ctx) {
    int32_t *map = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        map[i] = -1;
        for (int k = 0; k < seer_n_op_types(m); k++)
            if (!strcmp(name_of(i, ctx), seer_op_name(m, k))) map[i] = k;
    }
    return map;
}

static const char *onnx_op(int i, const void *ctx) {
    (void)ctx;
    return seer_onnx_op_name(i);
}

static const char *ds_op(int i, const void *ctx) { return ((const pg_dataset *)ctx)->op_types[i]; }

/* The graph's op ids in the model's table (a new array), or NULL when the model ignores them. */
static int32_t *remap_ops(const seer_model *m, const int32_t *ids, int64_t n, const int32_t *map,
                          const char *what) {
    if (!seer_uses_op_types(m)) return NULL;
    int32_t *out = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    for (int64_t v = 0; v < n; v++) {
        out[v] = map[ids[v]];
        if (out[v] < 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s: node %lld has an operator type the model was not trained on",
                     what, (long long)v);
            die("%s%s", msg, "");
        }
    }
    return out;
}

static int predict_onnx(const seer_model *m, char **nets, int n_nets, const int64_t *batches,
                        int n_batches, int fuse, int json) {
    char err[1024];
    if (seer_onnx_check_schema(m, err, sizeof err)) die("%s%s", err, "");
    int32_t *map = op_map(m, seer_onnx_n_op_types(), onnx_op, NULL);
    int M = seer_n_metrics(m);
    double y[SEER_MAX_METRICS];
    if (json) {
        printf("{\"model_info\":{\"model\":\"%s\",\"dtype\":\"%s\",\"families\":",
               seer_info(m, "model"), seer_info(m, "dtype"));
        if (seer_info(m, "families")) json_str(seer_info(m, "families")); // what it was trained on
        else fputs("null", stdout);
        printf("},\"results\":[");
    }
    int first = 1;
    for (int i = 0; i < n_nets; i++)
        for (int b = 0; b < n_batches; b++) {
            seer_onnx_graph *og;
            if (seer_onnx_load(nets[i], batches[b], fuse, &og, err, sizeof err)) die("%s%s", err, "");
            seer_graph g = *seer_onnx_view(og);
            int32_t *ops = remap_ops(m, g.node_op, g.n_nodes, map, nets[i]);
            g.node_op = ops; // the model's op table (NULL for models that read features only)
            if (seer_predict(m, &g, y, err, sizeof err)) die("%s: %s", nets[i], err);
            seer_range_item it[RANGE_ITEMS];
            int n_out = range_check(m, &g, y, it, nets[i]);
            free(ops);
            if (json) {
                printf("%s{\"onnx\":", first ? "" : ",");
                json_str(nets[i]);
                printf(",\"batch\":%lld,\"operators\":%lld,\"flops\":%.6g,\"metrics\":{",
                       (long long)seer_onnx_batch(og), (long long)g.n_nodes, seer_onnx_flops(og));
                for (int k = 0; k < M; k++) {
                    printf("%s", k ? "," : "");
                    json_str(seer_metric_name(m, k));
                    printf(":{\"value\":");
                    json_num(y[k]);
                    printf(",\"unit\":");
                    json_str(seer_metric_unit(m, k));
                    putchar('}');
                }
                putchar('}');
                range_json(m, n_out, it);
                putchar('}');
            } else {
                printf("%s%s (batch %lld): %lld operators, %.3g GFLOPs\n", first ? "" : "\n",
                       nets[i], (long long)seer_onnx_batch(og), (long long)g.n_nodes,
                       seer_onnx_flops(og) / 1e9);
                for (int k = 0; k < M; k++)
                    printf("  %-28s %12.4f %s\n", seer_metric_name(m, k), y[k], seer_metric_unit(m, k));
                range_text(m, n_out, it);
            }
            first = 0;
            seer_onnx_free(og);
        }
    if (json) printf("]}\n");
    free(map);
    return 0;
}

static int predict_h5(const seer_model *m, const char *path, int64_t limit, const char *csv, int json) {
    pg_dataset ds;
    seer_err e;
    if (pg_read(path, &ds, &e)) die("%s%s", e.msg, "");
    static const char *const kinds[] = {"node", "edge", "global"};
    int F[3] = {ds.Fn, ds.Fe, ds.Fg};
    char **names[3] = {ds.node_features, ds.edge_features, ds.global_features};
    for (int k = 0; k < 3; k++) {
        char msg[512];
        if (F[k] != seer_n_features(m, k)) {
            snprintf(msg, sizeof msg, "%s: %d %s features, the model was trained on %d", path,
                     F[k], kinds[k], seer_n_features(m, k));
            die("%s%s", msg, "");
        }
        for (int i = 0; i < F[k]; i++)
            if (strcmp(names[k][i], seer_feature_name(m, k, i)) != 0) {
                snprintf(msg, sizeof msg, "%s: %s feature %d is '%s', the model's is '%s' (the model "
                                          "was trained on other features)", path, kinds[k], i,
                         names[k][i], seer_feature_name(m, k, i));
                die("%s%s", msg, "");
            }
    }
    int64_t G = limit > 0 && limit < ds.G ? limit : ds.G;
    int M = seer_n_metrics(m);
    int32_t *map = op_map(m, ds.n_ops, ds_op, &ds);
    int32_t *ops = remap_ops(m, ds.node_op, ds.node_ptr[G], map, path);
    seer_graph *gs = calloc((size_t)(G ? G : 1), sizeof *gs);
    double *pred = malloc(sizeof(double) * (size_t)(G ? G : 1) * (size_t)M);
    if (!gs || !pred) die("out of memory for %s%s", path, "");
    for (int64_t g = 0; g < G; g++) {
        int64_t n0 = ds.node_ptr[g], e0 = ds.edge_ptr[g];
        gs[g] = (seer_graph){
            .n_nodes = ds.node_ptr[g + 1] - n0, .n_edges = ds.edge_ptr[g + 1] - e0,
            .n_node_features = ds.Fn, .n_edge_features = ds.Fe, .n_global_features = ds.Fg,
            .node_x = ds.node_x + n0 * ds.Fn, .node_op = ops ? ops + n0 : NULL,
            .edge_index = ds.edge_index + 2 * e0,
            .edge_x = ds.edge_x + e0 * ds.Fe, .global_x = ds.global_x + g * ds.Fg,
        };
    }
    char err[1024];
    double t0 = seer_now();
    if (seer_predict_batch(m, gs, G, pred, err, sizeof err)) die("%s: %s", path, err);
    double secs = seer_now() - t0;
    // the training-range check of every graph; how often each quantity was outside
    int *outs = malloc(sizeof(int) * (size_t)(G ? G : 1)), known = 1;
    // a count per quantity, in kind order: the node, edge and global features, the node count,
    // the edge count, the metrics; base[kind] is where a kind's quantities start
    int64_t n_outside = 0, base[SEER_METRIC + 2] = {0};
    for (int k = 0; k <= SEER_METRIC; k++)
        base[k + 1] = base[k] + (k < 3 ? seer_n_features(m, k) : k == SEER_METRIC ? M : 1);
    int64_t slots = base[SEER_METRIC + 1];
    int64_t *freq = calloc((size_t)slots, sizeof(int64_t));
    if (!outs || !freq) die("out of memory for %s%s", path, "");
    for (int64_t g = 0; g < G; g++) {
        seer_range_item it[RANGE_ITEMS];
        outs[g] = range_check(m, &gs[g], pred + g * M, it, path);
        known = outs[g] >= 0;
        n_outside += outs[g] > 0;
        for (int i = 0; i < outs[g] && i < RANGE_ITEMS; i++) freq[base[it[i].kind] + it[i].index]++;
    }
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (!f) die("%s: cannot create", csv, "");
        fprintf(f, "name");
        for (int k = 0; k < M; k++) fprintf(f, ",%s", seer_metric_name(m, k));
        fprintf(f, ",in_range\n");
        for (int64_t g = 0; g < G; g++) {
            fprintf(f, "%s", ds.name[g]);
            for (int k = 0; k < M; k++) fprintf(f, ",%.9g", pred[g * M + k]);
            fprintf(f, ",%s\n", outs[g] < 0 ? "" : outs[g] ? "0" : "1");
        }
        if (fclose(f) != 0) die("%s: write failed", csv, "");
    }
    // metrics where the dataset has the label
    label_metrics lm[SEER_MAX_METRICS];
    char *mnames[SEER_MAX_METRICS];
    int n_scored = 0;
    double *pv = malloc(sizeof(double) * (size_t)(G ? G : 1)), *tv = malloc(sizeof(double) * (size_t)(G ? G : 1));
    for (int k = 0; k < M; k++) {
        int col = pg_find_name(ds.labels, ds.M, seer_metric_name(m, k));
        if (col < 0) continue;
        int64_t n = 0;
        for (int64_t g = 0; g < G; g++) {
            float y = ds.label_y[g * ds.M + col];
            if (isnan(y)) continue;
            pv[n] = pred[g * M + k], tv[n] = y, n++;
        }
        metrics_compute(pv, tv, n, &lm[n_scored]);
        mnames[n_scored++] = (char *)seer_metric_name(m, k);
    }
    if (json) {
        printf("{\"dataset\":");
        json_str(path);
        printf(",\"graphs\":%lld,\"seconds\":%.6g,\"range_known\":%s,\"out_of_range_graphs\":%lld,"
               "\"metrics\":{", (long long)G, secs, known ? "true" : "false", (long long)n_outside);
        for (int i = 0; i < n_scored; i++) {
            printf("%s", i ? "," : "");
            json_str(mnames[i]);
            printf(":{\"n\":%lld", (long long)lm[i].n);
            const double v[6] = {lm[i].mape, lm[i].rmspe, lm[i].within5, lm[i].within10,
                                 lm[i].spearman, lm[i].kendall};
            static const char *const keys[6] = {"mape", "rmspe", "within5", "within10", "spearman", "kendall"};
            for (int k = 0; k < 6; k++) {
                printf(",\"%s\":", keys[k]);
                metrics_json_num(stdout, v[k]);
            }
            putchar('}');
        }
        printf("}}\n");
    } else {
        printf("%s: %lld graphs predicted in %.3f s (%.0f graphs/s)\n", path, (long long)G, secs,
               (double)G / (secs > 0 ? secs : 1e-9));
        if (n_scored) {
            metrics_print_header(stdout);
            metrics_print_rows(stdout, "all", mnames, lm, n_scored);
        } else printf("(the file has no labels named like the model's metrics: nothing to score)\n");
        if (!known)
            printf("note: this model records no training range (exported before libseer 0.3)\n");
        else if (n_outside) {
            printf("warning: %lld of %lld graphs lie outside the training data (their predictions "
                   "are guesses); most often outside:", (long long)n_outside, (long long)G);
            for (int shown = 0; shown < 3; shown++) { // the three most frequent quantities
                int64_t best = -1;
                for (int64_t s = 0; s < slots; s++)
                    if (freq[s] > 0 && (best < 0 || freq[s] > freq[best])) best = s;
                if (best < 0) break;
                seer_range_item it = {0, 0, 0, 0, 0};
                while (best >= base[it.kind + 1]) it.kind++;
                it.index = (int)(best - base[it.kind]);
                printf("%s %s%s (%lld graphs)", shown ? "," : "", range_kind(it.kind),
                       seer_range_item_name(m, &it), (long long)freq[best]);
                freq[best] = 0;
            }
            putchar('\n');
        }
    }
    free(pv), free(tv), free(gs), free(pred), free(ops), free(map), free(outs), free(freq);
    pg_free(&ds);
    return 0;
}

int main(int argc, char **argv) {
    const char *model = NULL, *csv = NULL;
    char **inputs = calloc((size_t)argc, sizeof(char *));
    int n_in = 0, fuse = 0, json = 0, n_batches = 0;
    int64_t batches[MAX_BATCHES], limit = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if ((!strcmp(a, "--batch") || !strcmp(a, "--predictions") || !strcmp(a, "--limit")) && i + 1 >= argc)
            die("%s needs a value (see --help)", a, "");
        if (!strcmp(a, "--fuse")) fuse = 1;
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--predictions")) csv = argv[++i];
        else if (!strcmp(a, "--limit")) limit = atoll(argv[++i]);
        else if (!strcmp(a, "--batch")) {
            char *s = argv[++i], *end;
            while (*s) {
                long long v = strtoll(s, &end, 10);
                if (end == s || v < 1 || v > (1 << 20) || n_batches == MAX_BATCHES || (*end && *end != ','))
                    die("--batch %s: give comma-separated sizes from 1 (at most 64 of them)", argv[i], "");
                batches[n_batches++] = v;
                s = *end ? end + 1 : end;
            }
        } else if (a[0] == '-') die("unknown option %s (see --help)", a, "");
        else if (!model) model = a;
        else inputs[n_in++] = argv[i];
    }
    if (!model || !n_in) {
        usage(stderr);
        return 2;
    }
    if (!n_batches) batches[n_batches++] = 0;
    seer_model *m;
    char err[1024];
    if (seer_load(model, &m, err, sizeof err)) die("%s%s", err, "");
    int h5 = 0;
    for (int i = 0; i < n_in; i++) h5 += ends_with(inputs[i], ".h5") || ends_with(inputs[i], ".hdf5");
    if (h5 && (h5 != 1 || n_in != 1)) die("give either one HDF5 dataset or ONNX files%s%s", "", "");
    int rc = h5 ? predict_h5(m, inputs[0], limit, csv, json)
                : predict_onnx(m, inputs, n_in, batches, n_batches, fuse, json);
    seer_free(m);
    free(inputs);
    return rc;
}
