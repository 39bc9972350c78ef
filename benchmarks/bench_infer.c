/* bench_infer: libseer speed on one core.
 *
 *   bench_infer MODEL.seer DATA.h5 [--graphs 500] [--batch 64] [--onnx NET.onnx ...]
 *
 * Prints, for the dataset's first `graphs` graphs: single-graph latency (median and p90 of one
 * seer_predict per graph, each graph timed on its own), and batched throughput (graphs/s with
 * seer_predict_batch over chunks of `batch`); for each ONNX file: the time from the file to a
 * prediction (seer_onnx_load + seer_predict, median of 20), and the two parts apart.
 * Run under `taskset -c 0` for one core (libseer itself never starts threads). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/perfgraph.h"
#include "seer/seer.h"
#include "seer/seer_onnx.h"

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_infer MODEL.seer DATA.h5 [--graphs N] [--batch B] [--onnx NET.onnx ...]\n");
        return 2;
    }
    int64_t n_graphs = 500, bs = 64;
    int first_onnx = argc;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--graphs") && i + 1 < argc) n_graphs = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) bs = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--onnx")) {
            first_onnx = i + 1;
            break;
        }
    }
    seer_model *m;
    char err[1024];
    if (seer_load(argv[1], &m, err, sizeof err)) seer_die("%s", err);
    pg_dataset ds;
    seer_err e;
    if (pg_read(argv[2], &ds, &e)) seer_die("%s", e.msg);
    int64_t G = n_graphs < ds.G ? n_graphs : ds.G;
    int M = seer_n_metrics(m);
    seer_graph *gs = calloc((size_t)G, sizeof *gs);
    double *out = malloc(sizeof(double) * (size_t)(G * M)), *lat = malloc(sizeof(double) * (size_t)G);
    double nodes = 0;
    for (int64_t g = 0; g < G; g++) {
        int64_t n0 = ds.node_ptr[g], e0 = ds.edge_ptr[g];
        gs[g] = (seer_graph){.n_nodes = ds.node_ptr[g + 1] - n0, .n_edges = ds.edge_ptr[g + 1] - e0,
                             .n_node_features = ds.Fn, .n_edge_features = ds.Fe,
                             .n_global_features = ds.Fg, .node_x = ds.node_x + n0 * ds.Fn,
                             .edge_index = ds.edge_index + 2 * e0, .edge_x = ds.edge_x + e0 * ds.Fe,
                             .global_x = ds.global_x + g * ds.Fg};
        nodes += (double)gs[g].n_nodes;
    }
    for (int64_t g = 0; g < G && g < 20; g++) seer_predict(m, &gs[g], out, err, sizeof err); // warm up
    for (int64_t g = 0; g < G; g++) {
        double t0 = seer_now();
        if (seer_predict(m, &gs[g], out + g * M, err, sizeof err)) seer_die("%s", err);
        lat[g] = seer_now() - t0;
    }
    qsort(lat, (size_t)G, sizeof *lat, cmp_d);
    printf("libseer %s, %s weights, %lld parameters; %lld graphs of %s (mean %.0f nodes)\n",
           seer_version(), seer_info(m, "dtype"), (long long)seer_n_params(m), (long long)G, argv[2],
           nodes / (double)G);
    printf("single-graph latency: median %.1f us, p90 %.1f us\n", lat[G / 2] * 1e6,
           lat[(G * 9) / 10] * 1e6);
    double t0 = seer_now();
    int reps = 0;
    do {
        for (int64_t g = 0; g < G; g += bs)
            if (seer_predict_batch(m, gs + g, G - g < bs ? G - g : bs, out + g * M, err, sizeof err))
                seer_die("%s", err);
        reps++;
    } while (seer_now() - t0 < 1.0);
    double secs = seer_now() - t0;
    printf("batched throughput (batch %lld): %.0f graphs/s\n", (long long)bs,
           (double)(G * reps) / secs);
    for (int i = first_onnx; i < argc; i++) {
        double tl[20], tp[20], tt[20];
        for (int r = 0; r < 20; r++) {
            seer_onnx_graph *og;
            double a = seer_now();
            if (seer_onnx_load(argv[i], 1, 0, &og, err, sizeof err)) seer_die("%s", err);
            double b = seer_now();
            seer_graph g = *seer_onnx_view(og);
            g.node_op = NULL;
            if (seer_predict(m, &g, out, err, sizeof err)) seer_die("%s", err);
            double c = seer_now();
            tl[r] = b - a, tp[r] = c - b, tt[r] = c - a;
            seer_onnx_free(og);
        }
        qsort(tl, 20, sizeof(double), cmp_d);
        qsort(tp, 20, sizeof(double), cmp_d);
        qsort(tt, 20, sizeof(double), cmp_d);
        printf("%s: ONNX file to prediction %.3f ms (convert %.3f ms + predict %.3f ms), median of 20\n",
               argv[i], tt[10] * 1e3, tl[10] * 1e3, tp[10] * 1e3);
    }
    free(gs), free(out), free(lat);
    pg_free(&ds);
    seer_free(m);
    return 0;
}
