/* infer: libseeronnx, the ONNX front end behind include/seer/seer_onnx.h. */
#include "seer/seer_onnx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_graph.h"
#include "onnx/perfgraph_build.h"

struct seer_onnx_graph {
    pgb_graph p;
    seer_graph view;
    int64_t batch; // the batch the graph was built at
};

seer_status seer_onnx_load(const char *path, int64_t batch, int fuse, seer_onnx_graph **out,
                           char *err, size_t err_len) {
    if (!path || !out || batch < 0) {
        if (err && err_len) snprintf(err, err_len, "seer_onnx_load: bad argument");
        return SEER_ERR_INVALID;
    }
    *out = NULL;
    // out of memory anywhere below returns here (common.h) instead of ending the host
    jmp_buf trap, *prev = seer_oom_trap;
    if (setjmp(trap)) {
        seer_oom_trap = prev;
        if (err && err_len) snprintf(err, err_len, "%s: %s", path, seer_oom_msg);
        return SEER_ERR_NOMEM;
    }
    seer_oom_trap = &trap;
    ox_graph g;
    seer_err e;
    if (ox_load(path, batch, 0, &g, &e)) {
        seer_oom_trap = prev;
        if (err && err_len) snprintf(err, err_len, "%s", e.msg);
        return strstr(e.msg, "out of memory") ? SEER_ERR_NOMEM
               : strstr(e.msg, "cannot open") ? SEER_ERR_IO : SEER_ERR_FORMAT;
    }
    seer_onnx_graph *o = seer_calloc(1, sizeof *o);
    pgb_build(&g, fuse, &o->p);
    o->batch = g.batch > 0 ? g.batch : 1;
    ox_free(&g);
    seer_oom_trap = prev;
    o->view = (seer_graph){
        .n_nodes = o->p.V, .n_edges = o->p.E, .n_node_features = PGB_NODE_F,
        .n_edge_features = PGB_EDGE_F, .n_global_features = PGB_GLOBAL_F, .node_x = o->p.xn,
        .node_op = o->p.op, .edge_index = o->p.edge, .edge_x = o->p.xe, .global_x = o->p.xg,
    };
    *out = o;
    return SEER_OK;
}

const seer_graph *seer_onnx_view(const seer_onnx_graph *g) { return g ? &g->view : NULL; }

void seer_onnx_free(seer_onnx_graph *g) {
    if (!g) return;
    pgb_free(&g->p);
    free(g);
}

double seer_onnx_flops(const seer_onnx_graph *g) { return g ? g->p.flops : 0; }
int64_t seer_onnx_batch(const seer_onnx_graph *g) { return g ? g->batch : 0; }
double seer_onnx_params(const seer_onnx_graph *g) { return g ? g->p.params : 0; }
int seer_onnx_deep_windows(const seer_onnx_graph *g) { return g ? g->p.n_deep_window : 0; }

static const char *const *names(int kind, int *n) {
    *n = kind == SEER_NODE ? PGB_NODE_F : kind == SEER_EDGE ? PGB_EDGE_F : kind == SEER_GLOBAL ? PGB_GLOBAL_F : 0;
    return kind == SEER_NODE ? pgb_node_feature_names() : kind == SEER_EDGE ? pgb_edge_feature_names()
           : kind == SEER_GLOBAL ? pgb_global_feature_names() : NULL;
}

int seer_onnx_n_features(int kind) {
    int n;
    names(kind, &n);
    return n;
}

const char *seer_onnx_feature_name(int kind, int i) {
    int n;
    const char *const *s = names(kind, &n);
    return i >= 0 && i < n ? s[i] : NULL;
}

int seer_onnx_n_op_types(void) {
    int n;
    ox_op_names(&n);
    return n;
}

const char *seer_onnx_op_name(int i) {
    int n;
    const char *const *s = ox_op_names(&n);
    return i >= 0 && i < n ? s[i] : NULL;
}

seer_status seer_onnx_check_schema(const seer_model *m, char *err, size_t err_len) {
    static const char *const kinds[] = {"node", "edge", "global"};
    for (int k = 0; k < 3; k++) {
        int n;
        const char *const *s = names(k, &n);
        // the converter appends global features: a model trained before reads its leading ones
        if (k == SEER_GLOBAL ? seer_n_features(m, k) > n : seer_n_features(m, k) != n) {
            if (err && err_len)
                snprintf(err, err_len, "the model has %d %s features, the ONNX converter makes %d: "
                                       "it was trained on a dataset from another converter",
                         seer_n_features(m, k), kinds[k], n);
            return SEER_ERR_INVALID;
        }
        n = seer_n_features(m, k);
        for (int i = 0; i < n; i++)
            if (strcmp(seer_feature_name(m, k, i), s[i]) != 0) {
                if (err && err_len)
                    snprintf(err, err_len, "%s feature %d is '%s' in the model, '%s' in the ONNX "
                                           "converter: the model was trained on other features",
                             kinds[k], i, seer_feature_name(m, k, i), s[i]);
                return SEER_ERR_INVALID;
            }
    }
    return SEER_OK;
}
