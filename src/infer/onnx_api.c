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

seer_status seer_onnx_model_graph(const seer_onnx_graph *og, const seer_model *m, seer_graph *out,
                                  int32_t **ops, char *err, size_t err_len) {
    if (!og || !m || !out || !ops) {
        if (err && err_len) snprintf(err, err_len, "seer_onnx_model_graph: bad argument");
        return SEER_ERR_INVALID;
    }
    *out = og->view, *ops = NULL;
    int n_model = seer_n_op_types(m), other = -1;
    out->node_op = NULL;
    if (n_model < 1) return SEER_OK; // no op table: nothing reads or checks operator types
    for (int k = 0; k < n_model; k++)
        if (!strcmp(seer_op_name(m, k), "Other")) other = k;
    int n_types = seer_onnx_n_op_types();
    int32_t *map = malloc(sizeof(int32_t) * (size_t)n_types); // converter id -> the model's, by name
    int32_t *o = malloc(sizeof(int32_t) * (size_t)(og->view.n_nodes ? og->view.n_nodes : 1));
    if (!o || !map) {
        free(o), free(map);
        if (err && err_len) snprintf(err, err_len, "seer_onnx_model_graph: out of memory");
        return SEER_ERR_NOMEM;
    }
    for (int t = 0; t < n_types; t++) {
        map[t] = other;
        for (int k = 0; k < n_model; k++)
            if (!strcmp(seer_onnx_op_name(t), seer_op_name(m, k))) map[t] = k;
    }
    for (int64_t v = 0; v < og->view.n_nodes; v++) {
        o[v] = map[og->view.node_op[v]];
        if (o[v] >= 0) continue;
        free(o), free(map);
        if (!seer_uses_op_types(m)) return SEER_OK; // only the operator check goes without
        if (err && err_len)
            snprintf(err, err_len, "node %lld is a %s, an operator type the model was not trained on "
                                   "(and its table has no Other)", (long long)v, seer_onnx_op_name(og->view.node_op[v]));
        return SEER_ERR_INVALID;
    }
    free(map);
    out->node_op = *ops = o;
    return SEER_OK;
}

/* The structures of og that m's training graphs never had (seer_check_range's SEER_OP and
 * SEER_OP_PAIR items), first max of them into it; how many, or -1 with err set. */
static int structural_gap(const seer_onnx_graph *og, const seer_model *m, seer_range_item *it, int max,
                          char *err, size_t err_len) {
    seer_graph g;
    int32_t *ops;
    int n, k = 0;
    if (seer_onnx_model_graph(og, m, &g, &ops, err, err_len)) return -1;
    seer_range_item *all = NULL;
    seer_status rc = SEER_OK;
    for (int cap = 64;; cap = n) { // every item: the ones wanted may come after the features'
        free(all);
        all = malloc(sizeof *all * (size_t)cap);
        rc = all ? seer_check_range(m, &g, NULL, all, cap, &n, err, err_len) : SEER_ERR_NOMEM;
        if (rc || n <= cap) break;
    }
    free(ops);
    if (rc) {
        if (!all && err && err_len) snprintf(err, err_len, "out of memory");
        free(all);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (all[i].kind == SEER_OP || all[i].kind == SEER_OP_PAIR) {
            if (k < max) it[k] = all[i];
            k++;
        }
    free(all);
    return k;
}

seer_status seer_onnx_route(const seer_onnx_graph *og, const seer_model *main_m, const seer_model *spec,
                            int *answer, seer_range_item *items, int max_items, int *n_out, char *err,
                            size_t err_len) {
    if (!og || !main_m || !spec || !answer || !n_out || max_items < 0 || (max_items && !items)) {
        if (err && err_len) snprintf(err, err_len, "seer_onnx_route: bad argument");
        return SEER_ERR_INVALID;
    }
    *answer = 0, *n_out = 0;
    if (!seer_info(spec, "specialist")) {
        if (err && err_len)
            snprintf(err, err_len, "the second model is not a specialist (mark it with seerexport --specialist)");
        return SEER_ERR_INVALID;
    }
    enum { MAX_GAP = 64 };
    seer_range_item a[MAX_GAP], b[MAX_GAP];
    int na = structural_gap(og, main_m, a, MAX_GAP, err, err_len);
    if (na <= 0) return na < 0 ? SEER_ERR_INVALID : SEER_OK; // nothing new to main: it answers
    int nb = structural_gap(og, spec, b, MAX_GAP, err, err_len);
    if (nb < 0) return SEER_ERR_INVALID;
    for (int i = 0; i < na && i < MAX_GAP; i++) { // main's gaps that the specialist does not share
        int shared = 0;
        for (int j = 0; j < nb && j < MAX_GAP && !shared; j++)
            shared = a[i].kind == b[j].kind &&
                     !strcmp(seer_range_item_name(main_m, &a[i]), seer_range_item_name(spec, &b[j]));
        if (shared) continue;
        if (*n_out < max_items) items[*n_out] = a[i];
        ++*n_out;
    }
    *answer = *n_out > 0;
    return SEER_OK;
}
