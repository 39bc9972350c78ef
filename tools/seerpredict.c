/* seerpredict: predictions of a .seer model (libseer) for ONNX files or a whole PerfGraph dataset.
 *   seerpredict MODEL.seer NET.onnx [NET.onnx ...] [--batch 1,8,64] [--fuse] [--json]
 *   seerpredict MODEL.seer DATA.h5 [--json] [--predictions OUT.csv] [--limit N]
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/score.h"
#include "seer/seer.h"
#include "seer/seer_onnx.h"

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

static const char *onnx_op(int i, const void *ctx) {
    (void)ctx;
    return seer_onnx_op_name(i);
}

static int predict_onnx(const seer_model *m, char **nets, int n_nets, const int64_t *batches,
                        int n_batches, int fuse, int json) {
    char err[1024];
    if (seer_onnx_check_schema(m, err, sizeof err)) die("%s%s", err, "");
    int32_t *map = score_op_map(m, seer_onnx_n_op_types(), onnx_op, NULL);
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
            int32_t *ops;
            seer_err e;
            if (score_remap_ops(m, g.node_op, g.n_nodes, map, nets[i], &ops, &e)) die("%s%s", e.msg, "");
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

/* A whole dataset (eval/score.h: the same code as seertrain's [eval] paths). */
static int predict_h5(const seer_model *m, const char *path, int64_t limit, const char *csv, int json) {
    score_result r;
    seer_err e;
    if (score_dataset(m, path, limit, csv, &r, &e)) die("%s%s", e.msg, "");
    if (json) {
        score_json(stdout, m, path, &r);
        putchar('\n');
    } else {
        score_print(stdout, m, path, &r);
    }
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
