/* seerpredict: predictions of a .seer model (libseer) for ONNX files or a whole PerfGraph dataset.
 *   seerpredict MODEL.seer NET.onnx [NET.onnx ...] [--batch 1,8,64] [--fuse] [--json]
 *   seerpredict MODEL.seer DATA.h5 [--json] [--predictions OUT.csv] [--spreads OUT.csv] [--limit N]
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "eval/score.h"
#include "seer/seer.h"
#include "seer/seer_onnx.h"

#define MAX_BATCHES 64

static void usage(FILE *f) {
    fputs("usage: seerpredict MODEL.seer NET.onnx [NET.onnx ...] [--batch 1,8,64] [--fuse] [--json]\n"
          "       seerpredict NET.onnx [...] --device DEVICE [--batch ...]   (a shipped predictor)\n"
          "       seerpredict --list-devices\n"
          "       seerpredict MODEL.seer DATA.h5 [--json] [--predictions OUT.csv] [--spreads OUT.csv]\n"
          "                   [--limit N] [--plot OUT.png]\n\n"
          "ONNX: converts each model through Seer's ONNX front end at each batch size and prints\n"
          "every metric of the predictor with its unit, and a warning when the graph lies outside\n"
          "what the model was trained on (an operator type or a watched operator pair its training\n"
          "graphs never had, such as the BatchNormalization-only identity branch of MobileOne and\n"
          "RepGhostNet, \"Relu>BatchNormalization\"; a feature, the node or edge count, or a\n"
          "prediction more than 10x beyond the training labels): the prediction is then a guess.\n"
          "An ensemble also warns where its members disagree (largest over smallest prediction\n"
          "above the file's threshold per metric, seerexport --spread-warn, or 1.5; --json:\n"
          "member_spread and member_spread_warn). When more than 20% of the network's operators\n"
          "are of types the training data never had, a line of its own says so first (--json:\n"
          "unseen_op_share and unseen_op_share_warn): the surest sign of a guess\n"
          "(benchmarks/RESULTS.md).\n"
          "HDF5 (a PerfGraph dataset, datasets/FORMAT.md): predicts every graph; where the file has\n"
          "labels named like the model's metrics, prints MAPE, RMSPE, share within 5%/10%,\n"
          "Spearman and Kendall per metric (a model trained on one dataset scored on another).\n"
          "An ensemble also prints its members' spread per metric (median, q95, q99 over the\n"
          "graphs) and, where labelled, the MAPE where it warns against the MAPE elsewhere.\n\n"
          "Without MODEL.seer, --device picks the shipped predictor that has metrics of that device\n"
          "(metrics are named <device>_<metric>_<unit>) from the predictor folders: $SEER_PREDICTORS\n"
          "(colon-separated), then predictors/ next to the build or share/seer/predictors of the\n"
          "install; only that device's metrics are printed. --list-devices lists them. Where the\n"
          "device also has a specialist (seerexport --specialist: a predictor trained on more, e.g.\n"
          "on reparameterisable blocks in their training form), a network in which the main\n"
          "predictor reports an operator or a watched operator pair never trained on that the\n"
          "specialist does not is answered by the specialist, and a line says so (--json:\n"
          "answered_by, routed_because): on the real networks so routed the training step's MAPE\n"
          "fell from 22-28% to 11-19% on three CPUs (benchmarks/route_gap.md).\n\n"
          "  --batch LIST        comma-separated batch sizes (default: the ONNX model's own, or 1)\n"
          "  --device DEVICE     predict with the shipped predictor of this device (see above)\n"
          "  --list-devices      the devices of the shipped predictors, with their files\n"
          "  --fuse              fold BatchNormalization/activations into Conv/Gemm (as seerconvert)\n"
          "  --json              one JSON document on stdout instead of text\n"
          "  --predictions PATH  HDF5: also write a CSV of name,metric,... per graph\n"
          "  --spreads PATH      HDF5, an ensemble: also write a CSV of name,metric,... per graph\n"
          "                      with each metric's member spread (largest over smallest member)\n"
          "  --limit N           HDF5: only the first N graphs\n"
          "  --plot OUT.png      HDF5: predicted against measured, log-log, a panel per metric\n"
          "                      (scripts/run_plot.py; needs python3-matplotlib and python3-h5py)\n",
          f);
}

static void die(const char *fmt, const char *a, const char *b) {
    fputs("seerpredict: error: ", stderr);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    exit(1);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), k = strlen(suf);
    return n >= k && strcmp(s + n - k, suf) == 0;
}

static void json_str(const char *s) { score_json_str(stdout, s); }

static void json_num(double v) { metrics_json_num(stdout, v); } // null for NaN and infinities

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


/* The families a model trained on, for the warning line: as recorded when there are up to six,
 * else counted by what precedes their slash: "space/... (29)". */
static void families_text(const char *fams, char *out, size_t len) {
    int count = 1;
    for (const char *p = fams; *p; p++) count += *p == ',';
    if (count <= 6) {
        snprintf(out, len, "%s", fams);
        return;
    }
    char seen[8][64];
    int n_seen = 0, per[8] = {0}, other = 0;
    for (const char *p = fams; *p;) {
        size_t k = strcspn(p, ","), slash = strcspn(p, "/");
        size_t plen = slash < k ? slash : k;
        int i = 0;
        while (i < n_seen && (strlen(seen[i]) != plen || strncmp(seen[i], p, plen))) i++;
        if (i == n_seen && n_seen < 8 && plen < sizeof seen[0])
            snprintf(seen[n_seen++], sizeof seen[0], "%.*s", (int)plen, p);
        if (i < n_seen) per[i]++;
        else other++;
        p += k + (p[k] == ',');
    }
    size_t o = 0;
    out[0] = 0;
    for (int i = 0; i < n_seen && o < len; i++)
        o += (size_t)snprintf(out + o, len - o, "%s%s%s (%d)", i ? ", " : "", seen[i],
                              per[i] > 1 ? "/..." : "", per[i]);
    if (other && o < len) snprintf(out + o, len - o, ", %d more", other);
}

/* The ONNX operators behind the model's Other: ids are the converter's (seer_onnx_op_name), mine
 * the same nodes in the model's table (seer_onnx_model_graph); "Einsum 44, Foo 2", or "" when
 * none; an "operator Other" warning names them. */
static void other_ops(const seer_model *m, const int32_t *ids, const int32_t *mine, int64_t n, char *out,
                      size_t len) {
    int n_types = seer_onnx_n_op_types(), o = 0;
    out[0] = 0;
    if (!mine) return;
    for (int t = 0; t < n_types; t++) {
        if (!strcmp(seer_onnx_op_name(t), "Other")) continue;
        int64_t c = 0;
        for (int64_t v = 0; v < n; v++) c += ids[v] == t && !strcmp(seer_op_name(m, mine[v]), "Other");
        if (c && (size_t)o < len)
            o += snprintf(out + o, len - (size_t)o, "%s%s %lld", o ? ", " : "", seer_onnx_op_name(t), (long long)c);
    }
}

static int is_other_op(const seer_model *m, const seer_range_item *it) {
    return it->kind == SEER_OP && !strcmp(seer_range_item_name(m, it), "Other");
}

static void range_text(const seer_model *m, int n, const seer_range_item *it, const char *other_as) {
    if (n < 0) {
        printf("  note: this model records no training range (exported before libseer 0.3), so "
               "it cannot tell whether this network is like its training data\n");
        return;
    }
    if (n == 0) return;
    const char *fams = seer_info(m, "families");
    char short_fams[512];
    if (fams) families_text(fams, short_fams, sizeof short_fams);
    printf("  warning: outside the training data%s%s%s, so these predictions are guesses (%d quantit%s):",
           fams ? " (families " : "", fams ? short_fams : "", fams ? ")" : "", n, n == 1 ? "y" : "ies");
    for (int i = 0; i < n && i < RANGE_ITEMS; i++) {
        char t[512];
        if (is_other_op(m, &it[i]) && other_as && *other_as) // the model's Other: which ONNX operators
            snprintf(t, sizeof t, "operator Other (%.0f node%s: %s) never in the training data", it[i].value,
                     it[i].value == 1 ? "" : "s", other_as);
        else
            score_range_item_text(m, &it[i], t, sizeof t);
        printf("%s %s", i ? ";" : "", t);
    }
    if (n > RANGE_ITEMS) printf("; and %d more", n - RANGE_ITEMS);
    putchar('\n');
}

/* The share of operators of types never trained on (seer_unseen_op_share) above
 * SEER_UNSEEN_OP_WARN: a warning line of its own, before the list of everything out of range. */
static void unseen_text(double share) {
    if (share > SEER_UNSEEN_OP_WARN)
        printf("  warning: %.0f%% of its operators are of types the training data never had, so these "
               "predictions are guesses however well the rest fits (above %.0f%%, real networks were up to 4 "
               "times as far off as the others: benchmarks/RESULTS.md, \"Which warnings tell\")\n",
               100 * share, 100 * SEER_UNSEEN_OP_WARN);
}

static int metric_shown(const seer_model *m, int k, const char *device);

/* An ensemble's members disagreeing beyond the file's threshold (seer_spread_warn) on a shown
 * metric. */
static void spread_text(const seer_model *m, const double *spread, const char *device) {
    int n = 0;
    for (int k = 0; k < seer_n_metrics(m); k++) {
        if (!metric_shown(m, k, device) || !(spread[k] > seer_spread_warn(m, k))) continue;
        printf("%s %s x%.2f (above %.2f)", n++ ? "," : "  warning: the ensemble's members disagree, so these predictions are guesses:",
               seer_metric_name(m, k), spread[k], seer_spread_warn(m, k));
    }
    if (n) printf(" (largest over smallest member)\n");
}

/* "member_spread": {metric: largest / smallest member prediction} and "member_spread_warn":
 * {metric: the threshold above which it warns} (an ensemble), or both null. */
static void spread_json(const seer_model *m, const double *spread, const char *device) {
    const char *kind = seer_info(m, "model");
    if (!kind || strcmp(kind, "ensemble")) {
        printf(",\"member_spread\":null,\"member_spread_warn\":null");
        return;
    }
    for (int w = 0; w < 2; w++) {
        printf(w ? "},\"member_spread_warn\":{" : ",\"member_spread\":{");
        for (int k = 0, shown = 0; k < seer_n_metrics(m); k++) {
            if (!metric_shown(m, k, device)) continue;
            printf("%s", shown++ ? "," : "");
            json_str(seer_metric_name(m, k));
            putchar(':');
            json_num(w ? seer_spread_warn(m, k) : spread[k]);
        }
    }
    putchar('}');
}

#define DEEP_WINDOW_TEXT "operators sliding a window over 3 or more spatial dimensions"

/* The structure no feature describes (seer_onnx_deep_windows): a warning line of its own. */
static void deep_text(int deep) {
    if (deep)
        printf("  warning: %d %s (Conv3d, video); the node features describe two, so these predictions "
               "are guesses\n", deep, DEEP_WINDOW_TEXT);
}

/* deep: seer_onnx_deep_windows of an ONNX network, one more item ("structure") when above 0 */
static void range_json(const seer_model *m, int n, const seer_range_item *it, int deep, const char *other_as) {
    static const char *const kinds[] = {"node", "edge", "global", "nodes", "edges", "metric", "op",
                                        "calibration", "op_pair"};
    printf(",\"in_range\":%s,\"out_of_range\":[", deep ? "false" : n < 0 ? "null" : n == 0 ? "true" : "false");
    int i = 0;
    for (; i < n && i < RANGE_ITEMS; i++) {
        printf("%s{\"kind\":\"%s\",\"name\":", i ? "," : "", kinds[it[i].kind]);
        json_str(seer_range_item_name(m, &it[i]));
        printf(",\"value\":");
        json_num(it[i].value);
        printf(",\"lo\":%.6g,\"hi\":%.6g", it[i].lo, it[i].hi);
        if (is_other_op(m, &it[i]) && other_as && *other_as) { // the ONNX operators behind Other
            printf(",\"onnx_ops\":");
            json_str(other_as);
        }
        putchar('}');
    }
    if (deep) printf("%s{\"kind\":\"structure\",\"name\":\"%s\",\"value\":%d,\"lo\":0,\"hi\":0}", i ? "," : "",
                     DEEP_WINDOW_TEXT, deep);
    printf("],\"out_of_range_count\":%d", (n < 0 ? 0 : n) + (deep > 0));
}

static int metric_shown(const seer_model *m, int k, const char *device) {
    char d[128];
    if (!device) return 1;
    score_metric_device(seer_metric_name(m, k), d, sizeof d);
    return !strcmp(d, device);
}

#define GAP_ITEMS 64

/* --device with a specialist (seerexport --specialist): which answers for og (seer_onnx_route),
 * and why into why ("operator pair Relu>BatchNormalization, ..."; empty: the main one answers). */
static const seer_model *route(const seer_model *main_m, const seer_model *alt, const seer_onnx_graph *og,
                               const char *net, char *why, size_t len) {
    seer_range_item it[GAP_ITEMS];
    char err[1024];
    int answer, n;
    size_t o = 0;
    why[0] = 0;
    if (!alt) return main_m;
    if (seer_onnx_route(og, main_m, alt, &answer, it, GAP_ITEMS, &n, err, sizeof err)) die("%s: %s", net, err);
    for (int i = 0; i < n && i < GAP_ITEMS && o < len; i++)
        o += (size_t)snprintf(why + o, len - o, "%s%s %s", o ? ", " : "",
                              it[i].kind == SEER_OP ? "operator" : "operator pair", seer_range_item_name(main_m, &it[i]));
    return answer ? alt : main_m;
}

static int predict_onnx(const seer_model *m0, char **nets, int n_nets, const int64_t *batches,
                        int n_batches, int fuse, int json, const char *device, const char *picked,
                        const seer_model *alt_m, const char *alt_path) {
    char err[1024];
    if (seer_onnx_check_schema(m0, err, sizeof err)) die("%s%s", err, "");
    if (alt_m && seer_onnx_check_schema(alt_m, err, sizeof err)) die("%s%s", err, "");
    double y[SEER_MAX_METRICS];
    if (json) {
        printf("{\"model_info\":{\"model\":\"%s\",\"dtype\":\"%s\",\"target\":\"%s\",\"families\":",
               seer_info(m0, "model"), seer_info(m0, "dtype"), seer_info(m0, "target"));
        if (seer_info(m0, "families")) json_str(seer_info(m0, "families")); // what it was trained on
        else fputs("null", stdout);
        printf(",\"calibration\":"); // seercalibrate's factors and file, or null
        if (seer_info(m0, "calibration")) json_str(seer_info(m0, "calibration"));
        else fputs("null", stdout);
        if (picked) { // --device: the shipped predictor it chose
            printf(",\"predictor\":");
            json_str(picked);
            printf(",\"specialist\":"); // and the one it routes to, or null
            if (alt_path) json_str(alt_path);
            else fputs("null", stdout);
        }
        printf("},\"results\":[");
    }
    int first = 1;
    for (int i = 0; i < n_nets; i++)
        for (int b = 0; b < n_batches; b++) {
            seer_onnx_graph *og;
            if (seer_onnx_load(nets[i], batches[b], fuse, &og, err, sizeof err)) die("%s%s", err, "");
            char why[2048];
            const seer_model *m = route(m0, alt_m, og, nets[i], why, sizeof why); // the one that answers
            const char *answered_by = m == m0 ? picked : alt_path;
            int M = seer_n_metrics(m);
            seer_graph g; // in the model's op table (node_op NULL when it has none)
            int32_t *ops;
            char other_as[256];
            if (seer_onnx_model_graph(og, m, &g, &ops, err, sizeof err)) die("%s: %s", nets[i], err);
            other_ops(m, seer_onnx_view(og)->node_op, ops, g.n_nodes, other_as, sizeof other_as);
            double spread[SEER_MAX_METRICS];
            if (seer_predict_spread(m, &g, 1, y, spread, err, sizeof err)) die("%s: %s", nets[i], err);
            seer_range_item it[RANGE_ITEMS];
            int n_out = range_check(m, &g, y, it, nets[i]);
            double unseen = seer_unseen_op_share(m, &g); // NAN: no operator counts recorded
            free(ops);
            if (json) {
                printf("%s{\"onnx\":", first ? "" : ",");
                json_str(nets[i]);
                if (picked) { // which predictor answered, and why the specialist did
                    printf(",\"answered_by\":");
                    json_str(answered_by);
                    printf(",\"routed_because\":");
                    if (why[0]) json_str(why);
                    else fputs("null", stdout);
                }
                printf(",\"batch\":%lld,\"operators\":%lld,\"flops\":%.6g,\"metrics\":{",
                       (long long)seer_onnx_batch(og), (long long)g.n_nodes, seer_onnx_flops(og));
                for (int k = 0, shown = 0; k < M; k++) {
                    if (!metric_shown(m, k, device)) continue;
                    printf("%s", shown++ ? "," : "");
                    json_str(seer_metric_name(m, k));
                    printf(":{\"value\":");
                    json_num(y[k]);
                    printf(",\"unit\":");
                    json_str(seer_metric_unit(m, k));
                    putchar('}');
                }
                putchar('}');
                range_json(m, n_out, it, seer_onnx_deep_windows(og), other_as);
                printf(",\"unseen_op_share\":");
                json_num(unseen);
                printf(",\"unseen_op_share_warn\":%g", SEER_UNSEEN_OP_WARN);
                spread_json(m, spread, device);
                putchar('}');
            } else {
                printf("%s%s (batch %lld): %lld operators, %.3g GFLOPs\n", first ? "" : "\n",
                       nets[i], (long long)seer_onnx_batch(og), (long long)g.n_nodes,
                       seer_onnx_flops(og) / 1e9);
                if (why[0]) // routed: say by which predictor and why
                    printf("  answered by %s (%s), which learned what %s never did: %s\n", alt_path,
                           seer_info(alt_m, "specialist"), picked, why);
                for (int k = 0; k < M; k++)
                    if (metric_shown(m, k, device))
                        printf("  %-28s %12.4f %s\n", seer_metric_name(m, k), y[k], seer_metric_unit(m, k));
                unseen_text(unseen);
                range_text(m, n_out, it, other_as);
                deep_text(seer_onnx_deep_windows(og));
                spread_text(m, spread, device);
            }
            first = 0;
            seer_onnx_free(og);
        }
    if (json) printf("]}\n");
    return 0;
}

/* A whole dataset (eval/score.h: the same code as seertrain's [eval] paths). */
static int predict_h5(const seer_model *m, const char *path, int64_t limit, const char *csv,
                      const char *spreads, int json, const char *plot) {
    score_result r;
    seer_err e;
    char tmp[1200];
    if (plot && !csv) { // the plot reads the predictions from a CSV: a temporary one
        snprintf(tmp, sizeof tmp, "%s.predictions.csv", plot);
        csv = tmp;
    }
    if (score_dataset(m, path, limit, csv, spreads, &r, &e)) die("%s%s", e.msg, "");
    if (json) {
        score_json(stdout, m, path, &r);
        putchar('\n');
    } else {
        score_print(stdout, m, path, &r);
    }
    if (plot) {
        char args[4000];
        snprintf(args, sizeof args, "data '%s' '%s' '%s'", csv, path, plot);
        seer_plot("run_plot.py", args, plot, json ? stderr : stdout); // the JSON stays clean
        if (csv == tmp) remove(tmp);
    }
    return 0;
}

/* The shipped predictors: every *.seer of the predictor folders, in search order. */
typedef struct {
    char path[1024];
    seer_model *m;
} shipped;

static int find_predictors(const char *argv0, shipped **out) {
    char dirs[4][1024];
    int nd = 0, n = 0, cap = 8;
    const char *env = getenv("SEER_PREDICTORS");
    char exe[1024] = ".";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) exe[len] = 0;
    else snprintf(exe, sizeof exe, "%s", argv0);
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    else snprintf(exe, sizeof exe, ".");
    shipped *p = calloc((size_t)cap, sizeof *p);
    char list[4096];
    snprintf(list, sizeof list, "%s", env ? env : "");
    for (char *tok = strtok(list, ":"); tok && nd < 2; tok = strtok(NULL, ":"))
        snprintf(dirs[nd++], sizeof dirs[0], "%.1000s", tok);
    if (!env) { // next to a build tree, then an install's share folder
        snprintf(dirs[nd++], sizeof dirs[0], "%.900s/../predictors", exe);
        snprintf(dirs[nd++], sizeof dirs[0], "%.900s/../share/seer/predictors", exe);
    }
    for (int d = 0; d < nd; d++) {
        DIR *dir = opendir(dirs[d]);
        if (!dir) continue;
        char *names[256];
        int nn = 0;
        for (struct dirent *e; (e = readdir(dir)) && nn < 256;)
            if (ends_with(e->d_name, ".seer")) names[nn++] = strdup(e->d_name);
        closedir(dir);
        qsort(names, (size_t)nn, sizeof *names, cmp_str);
        for (int i = 0; i < nn; i++) {
            if (n == cap) p = realloc(p, sizeof *p * (size_t)(cap *= 2));
            snprintf(p[n].path, sizeof p[n].path, "%.900s/%.100s", dirs[d], names[i]);
            char err[1024];
            if (seer_load(p[n].path, &p[n].m, err, sizeof err))
                fprintf(stderr, "seerpredict: warning: skipping %s\n", err);
            else n++;
            free(names[i]);
        }
    }
    *out = p;
    return n;
}

/* --list-devices, and the predictor of a device (NULL: none has it; the caller names them). */
static int list_devices(shipped *p, int n) {
    if (!n) die("no shipped predictors found (set SEER_PREDICTORS to a folder of .seer files)%s%s", "", "");
    int w = 9; // the predictor column fits the longest path
    for (int i = 0; i < n; i++)
        if ((int)strlen(p[i].path) > w) w = (int)strlen(p[i].path);
    printf("%-16s %-*s %s\n", "device", w, "predictor", "metrics");
    for (int i = 0; i < n; i++) {
        int M = seer_n_metrics(p[i].m);
        for (int k = 0; k < M; k++) {
            char d[128], e[128];
            score_metric_device(seer_metric_name(p[i].m, k), d, sizeof d);
            int seen = 0;
            for (int j = 0; j < k && !seen; j++) {
                score_metric_device(seer_metric_name(p[i].m, j), e, sizeof e);
                seen = !strcmp(d, e);
            }
            if (seen || !d[0]) continue;
            printf("%-16s %-*s%s", d, w, p[i].path, seer_info(p[i].m, "specialist") ? " (specialist)" : "");
            for (int j = k; j < M; j++) {
                score_metric_device(seer_metric_name(p[i].m, j), e, sizeof e);
                if (!strcmp(d, e)) printf(" %s", seer_metric_name(p[i].m, j));
            }
            putchar('\n');
        }
    }
    return 0;
}

static int covers(const seer_model *m, const char *device) {
    for (int k = 0; k < seer_n_metrics(m); k++)
        if (metric_shown(m, k, device)) return 1;
    return 0;
}

/* The device's main predictor (the first covering it that is not a specialist; a specialist when
 * only specialists do) and its specialist (the first other one marked so: seerexport --specialist),
 * or NULL. */
static const seer_model *device_model(shipped *p, int n, const char *device, const char **path,
                                      const seer_model **alt, const char **alt_path) {
    int main_i = -1, alt_i = -1;
    for (int pass = 0; pass < 2 && main_i < 0; pass++) // non-specialists first
        for (int i = 0; i < n && main_i < 0; i++)
            if (covers(p[i].m, device) && (pass || !seer_info(p[i].m, "specialist"))) main_i = i;
    for (int i = 0; i < n && alt_i < 0 && main_i >= 0; i++)
        if (i != main_i && covers(p[i].m, device) && seer_info(p[i].m, "specialist")) alt_i = i;
    if (main_i >= 0) {
        fprintf(stderr, "seerpredict: %s: %s%s%s\n", device, p[main_i].path, alt_i >= 0 ? "; specialist " : "",
                alt_i >= 0 ? p[alt_i].path : "");
        *path = p[main_i].path, *alt = alt_i >= 0 ? p[alt_i].m : NULL, *alt_path = alt_i >= 0 ? p[alt_i].path : NULL;
        return p[main_i].m;
    }
    char known[2048] = "";
    size_t len = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < seer_n_metrics(p[i].m); k++) {
            char d[128];
            score_metric_device(seer_metric_name(p[i].m, k), d, sizeof d);
            if (d[0] && !strstr(known, d) && len + strlen(d) + 3 < sizeof known)
                len += (size_t)snprintf(known + len, sizeof known - len, "%s%s", len ? ", " : "", d);
        }
    fprintf(stderr, "seerpredict: error: no shipped predictor knows device '%s' (%s%s; "
                    "seerpredict --list-devices; for a new device, measure a few networks on it "
                    "and run seercalibrate --device KNOWN=%s; for a CPU, 40 design-space "
                    "architectures timed on it do: README, 'A predictor for a CPU of your own')\n",
            device, n ? "known: " : "no predictors found", known, device);
    exit(1);
}

int main(int argc, char **argv) {
    const char *model = NULL, *csv = NULL, *device = NULL, *plot = NULL, *spreads = NULL;
    int list = 0;
    char **inputs = calloc((size_t)argc, sizeof(char *));
    int n_in = 0, fuse = 0, json = 0, n_batches = 0;
    int64_t batches[MAX_BATCHES], limit = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if ((!strcmp(a, "--batch") || !strcmp(a, "--predictions") || !strcmp(a, "--limit") ||
             !strcmp(a, "--device") || !strcmp(a, "--plot") || !strcmp(a, "--spreads")) && i + 1 >= argc)
            die("%s needs a value (see --help)", a, "");
        if (!strcmp(a, "--fuse")) fuse = 1;
        else if (!strcmp(a, "--list-devices")) list = 1;
        else if (!strcmp(a, "--device")) device = argv[++i];
        else if (!strcmp(a, "--plot")) plot = argv[++i];
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--predictions")) csv = argv[++i];
        else if (!strcmp(a, "--spreads")) spreads = argv[++i];
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
    shipped *ship = NULL;
    int n_ship = 0;
    if (list || (device && model && !ends_with(model, ".seer"))) {
        n_ship = find_predictors(argv[0], &ship);
        if (list) return list_devices(ship, n_ship);
        for (int i = n_in; i > 0; i--) inputs[i] = inputs[i - 1]; // MODEL was the first network
        inputs[0] = (char *)model, n_in++, model = NULL;
    }
    if (model && ends_with(model, ".onnx"))
        die("%s is a network, not a .seer model: give the model first, or --device DEVICE for a "
            "shipped predictor (seerpredict --list-devices)", model, "");
    if ((!model && !device) || !n_in) {
        usage(stderr);
        return 2;
    }
    if (!n_batches) batches[n_batches++] = 0;
    seer_model *own = NULL;
    const seer_model *m;
    const char *picked = NULL, *alt_path = NULL;
    const seer_model *alt_m = NULL; // --device: the device's specialist (seerexport --specialist)
    char err[1024];
    if (model) {
        if (seer_load(model, &own, err, sizeof err)) die("%s%s", err, "");
        m = own;
    } else {
        m = device_model(ship, n_ship, device, &picked, &alt_m, &alt_path);
    }
    int h5 = 0;
    for (int i = 0; i < n_in; i++) h5 += ends_with(inputs[i], ".h5") || ends_with(inputs[i], ".hdf5");
    if (h5 && (h5 != 1 || n_in != 1)) die("give either one HDF5 dataset or ONNX files%s%s", "", "");
    if (plot && !h5) die("--plot %s: plots are of a scored dataset (DATA.h5)", plot, "");
    if (spreads && !h5) die("--spreads %s: the spreads CSV is of a dataset (DATA.h5; ONNX input prints "
                            "member_spread with --json)", spreads, "");
    if (spreads && strcmp(seer_info(m, "model"), "ensemble"))
        die("--spreads %s: %s is not an ensemble (seerexport --ensemble): one model has no members "
            "to disagree", spreads, model ? model : "the shipped predictor");

    int rc = h5 ? predict_h5(m, inputs[0], limit, csv, spreads, json, plot)

                : predict_onnx(m, inputs, n_in, batches, n_batches, fuse, json, device, picked, alt_m, alt_path);
    seer_free(own);
    for (int i = 0; i < n_ship; i++) seer_free(ship[i].m);
    free(ship), free(inputs);
    return rc;
}
