/* tests: an in-memory PerfGraph with the edge cases message passing must survive:
 *   graph 0: 6 nodes, a node with no incoming edges, a self loop, parallel edges
 *   graph 1: a single node, no edges
 *   graph 2: no nodes at all
 *   graph 3: 12 nodes with one huge-degree destination (every other node points at node 0)
 *   graph 4: 5 nodes, no edges (isolated nodes)
 *   then `extra` random graphs.
 * Features are random normals; labels positive with one NaN. */
#ifndef SEER_TESTGRAPHS_H
#define SEER_TESTGRAPHS_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "data/perfgraph.h"

static char **tg_names(const char *prefix, int n) {
    char **s = seer_calloc((size_t)n + 1, sizeof(char *));
    for (int i = 0; i < n; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s%d", prefix, i);
        s[i] = seer_strdup(buf);
    }
    return s;
}

static void tg_build(pg_dataset *ds, int extra, int Fn, int Fe, int Fg, int M, uint64_t seed) {
    memset(ds, 0, sizeof *ds);
    seer_rng r;
    rng_seed(&r, seed);
    int G = 5 + extra;
    int nn[64], ne[64];
    int32_t edges[64][64][2];
    SEER_ASSERT(G <= 64);
    // graph 0
    nn[0] = 6;
    int32_t e0[][2] = {{1, 2}, {2, 3}, {3, 3}, {1, 3}, {1, 3}, {4, 5}, {2, 5}, {5, 4}};
    ne[0] = 8;
    memcpy(edges[0], e0, sizeof e0);
    nn[1] = 1, ne[1] = 0;
    nn[2] = 0, ne[2] = 0;
    nn[3] = 12, ne[3] = 11;
    for (int i = 0; i < 11; i++) edges[3][i][0] = i + 1, edges[3][i][1] = 0;
    nn[4] = 5, ne[4] = 0;
    for (int g = 5; g < G; g++) {
        nn[g] = 2 + (int)rng_below(&r, 9);
        ne[g] = (int)rng_below(&r, 2 * (uint64_t)nn[g] + 1);
        for (int e = 0; e < ne[g]; e++) {
            edges[g][e][0] = (int32_t)rng_below(&r, (uint64_t)nn[g]);
            edges[g][e][1] = (int32_t)rng_below(&r, (uint64_t)nn[g]);
        }
    }
    ds->G = G, ds->Fn = Fn, ds->Fe = Fe, ds->Fg = Fg, ds->M = M, ds->n_ops = 3;
    ds->node_ptr = seer_calloc((size_t)G + 1, 8);
    ds->edge_ptr = seer_calloc((size_t)G + 1, 8);
    for (int g = 0; g < G; g++) {
        ds->node_ptr[g + 1] = ds->node_ptr[g] + nn[g];
        ds->edge_ptr[g + 1] = ds->edge_ptr[g] + ne[g];
    }
    ds->N = ds->node_ptr[G], ds->E = ds->edge_ptr[G];
    ds->group = seer_calloc((size_t)G, 8);
    ds->name = tg_names("g", G);
    ds->node_x = seer_calloc((size_t)(ds->N * Fn) + 1, 4);
    ds->node_op = seer_calloc((size_t)ds->N + 1, 4);
    ds->edge_index = seer_calloc((size_t)ds->E * 2 + 1, 4);
    ds->edge_x = seer_calloc((size_t)(ds->E * Fe) + 1, 4);
    ds->global_x = seer_calloc((size_t)(G * Fg), 4);
    ds->label_y = seer_calloc((size_t)(G * M), 4);
    for (int64_t i = 0; i < ds->N * Fn; i++) ds->node_x[i] = (float)rng_normal(&r);
    for (int64_t i = 0; i < ds->N; i++) ds->node_op[i] = (int32_t)rng_below(&r, 3);
    for (int64_t i = 0; i < ds->E * Fe; i++) ds->edge_x[i] = (float)rng_normal(&r);
    for (int64_t i = 0; i < G * Fg; i++) ds->global_x[i] = (float)rng_normal(&r);
    for (int g = 0; g < G; g++) {
        ds->group[g] = g / 2;
        for (int e = 0; e < ne[g]; e++) {
            ds->edge_index[2 * (ds->edge_ptr[g] + e)] = edges[g][e][0];
            ds->edge_index[2 * (ds->edge_ptr[g] + e) + 1] = edges[g][e][1];
        }
        for (int m = 0; m < M; m++) ds->label_y[g * M + m] = (float)(0.5 + rng_uniform(&r) * 10.0);
    }
    if (G * M > 3) ds->label_y[3] = NAN;
    ds->node_features = tg_names("nf", Fn);
    ds->edge_features = tg_names("ef", Fe);
    ds->global_features = tg_names("gf", Fg);
    ds->op_types = tg_names("op", 3);
    ds->labels = tg_names("label_ms", M);
    ds->source = seer_strdup("tests/testgraphs.h");
    ds->device = seer_strdup("none");
}

#endif
