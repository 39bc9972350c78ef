/* onnx: loading an ONNX model and inferring every tensor's shape (see onnx_graph.h). */
#define _POSIX_C_SOURCE 200809L
#include "onnx_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

double ox_dtype_size(int dtype) {
    switch (dtype) {
    case OX_DT_FLOAT16: case OX_DT_INT16: case OX_DT_UINT16: case OX_DT_BFLOAT16: return 2;
    case OX_DT_UINT8: case OX_DT_INT8: case OX_DT_BOOL: return 1;
    case OX_DT_INT32: case OX_DT_UINT32: return 4;
    case OX_DT_INT64: case OX_DT_DOUBLE: case OX_DT_UINT64: return 8;
    default: return 4; // float32 and the rest
    }
}

int ox_dtype_is_float(int dtype) {
    return dtype == OX_DT_FLOAT || dtype == OX_DT_FLOAT16 || dtype == OX_DT_DOUBLE ||
           dtype == OX_DT_BFLOAT16;
}

int64_t ox_numel(const ox_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0 || __builtin_mul_overflow(n, t->dims[i], &n)) return INT64_MAX;
    return n;
}

/* Largest tensor the reader accepts (2^48 elements: 1 PB of float32), so that element counts,
 * bytes and FLOPs stay far from int64's range. */
#define OX_MAX_NUMEL ((int64_t)1 << 48)

/* ---- nesting depth, before protobuf-c unpacks (it recurses once per nested message) ---- */

enum { PB_MODEL, PB_GRAPH, PB_NODE, PB_ATTR, PB_VALUE_INFO, PB_TYPE, PB_TYPE_ELEM, PB_TYPE_MAP,
       PB_FUNCTION, PB_TRAINING, PB_LEAF };

/* The message type of a length-delimited field of a message type that can nest (onnx.proto). */
static int pb_child(int msg, uint64_t field) {
    switch (msg) {
    case PB_MODEL: return field == 7 ? PB_GRAPH : field == 20 ? PB_TRAINING : field == 25 ? PB_FUNCTION : PB_LEAF;
    case PB_GRAPH: return field == 1 ? PB_NODE : (field == 11 || field == 12 || field == 13) ? PB_VALUE_INFO : PB_LEAF;
    case PB_NODE: return field == 5 ? PB_ATTR : PB_LEAF;
    case PB_ATTR: return (field == 6 || field == 11) ? PB_GRAPH : (field == 14 || field == 15) ? PB_TYPE : PB_LEAF;
    case PB_VALUE_INFO: return field == 2 ? PB_TYPE : PB_LEAF;
    case PB_TYPE: return (field == 4 || field == 9) ? PB_TYPE_ELEM : field == 5 ? PB_TYPE_MAP : PB_LEAF;
    case PB_TYPE_ELEM: return field == 1 ? PB_TYPE : PB_LEAF;
    case PB_TYPE_MAP: return field == 2 ? PB_TYPE : PB_LEAF;
    case PB_FUNCTION: return field == 7 ? PB_NODE : PB_LEAF;
    case PB_TRAINING: return (field == 1 || field == 2) ? PB_GRAPH : PB_LEAF;
    default: return PB_LEAF;
    }
}

static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    *v = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) return 0;
    }
    return -1;
}

/* How deep the messages of [p, end) nest below msg (0 when none), or -1 when the bytes are not
 * protobuf (then protobuf-c refuses them itself). Recursion stops at max, so the walk's own stack
 * is bounded. */
static int pb_depth(const uint8_t *p, const uint8_t *end, int msg, int max) {
    int deepest = 0;
    while (p < end) {
        uint64_t key, len;
        if (pb_varint(&p, end, &key)) return -1;
        switch (key & 7) {
        case 0: if (pb_varint(&p, end, &len)) return -1; break;
        case 1: if (end - p < 8) return -1; p += 8; break;
        case 5: if (end - p < 4) return -1; p += 4; break;
        case 2: {
            if (pb_varint(&p, end, &len) || len > (uint64_t)(end - p)) return -1;
            int child = pb_child(msg, key >> 3);
            if (child != PB_LEAF) {
                if (max <= 1) return max + 1; // deeper than allowed: stop here
                int d = pb_depth(p, p + len, child, max - 1);
                if (d < 0) return -1;
                if (d + 1 > deepest) deepest = d + 1;
                if (deepest > max) return deepest;
            }
            p += len;
            break;
        }
        default: return -1;
        }
    }
    return deepest;
}

#define OX_MAX_NESTING 64

static void *pb_alloc(void *oom, size_t n) {
    void *p = malloc(n);
    if (!p) *(int *)oom = 1;
    return p;
}
static void pb_free(void *oom, void *p) {
    (void)oom;
    free(p);
}

/* ---- name table ---- */
static uint64_t fnv(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int find_tensor(const ox_graph *g, const char *name) {
    for (int64_t i = (int64_t)(fnv(name) & (uint64_t)(g->hash_cap - 1));; i = (i + 1) & (g->hash_cap - 1)) {
        int64_t id = g->hash[i];
        if (id < 0) return -1;
        if (strcmp(g->t[id].name, name) == 0) return (int)id;
    }
}

static void rehash(ox_graph *g) {
    free(g->hash);
    g->hash = seer_malloc(sizeof(int64_t) * (size_t)g->hash_cap);
    for (int64_t i = 0; i < g->hash_cap; i++) g->hash[i] = -1;
    for (int id = 0; id < g->n_t; id++) {
        int64_t i = (int64_t)(fnv(g->t[id].name) & (uint64_t)(g->hash_cap - 1));
        while (g->hash[i] >= 0) i = (i + 1) & (g->hash_cap - 1);
        g->hash[i] = id;
    }
}

static int add_tensor(ox_graph *g, const char *name) {
    int id = find_tensor(g, name);
    if (id >= 0) return id;
    if (g->n_t == g->cap_t) {
        g->cap_t = g->cap_t ? 2 * g->cap_t : 256;
        g->t = seer_realloc(g->t, sizeof(ox_tensor) * (size_t)g->cap_t);
    }
    ox_tensor *t = &g->t[g->n_t];
    memset(t, 0, sizeof *t);
    t->name = seer_strdup(name);
    t->producer = -1;
    g->n_t++;
    if (2 * g->n_t > g->hash_cap) {
        g->hash_cap *= 2;
        rehash(g);
    } else {
        int64_t i = (int64_t)(fnv(name) & (uint64_t)(g->hash_cap - 1));
        while (g->hash[i] >= 0) i = (i + 1) & (g->hash_cap - 1);
        g->hash[i] = g->n_t - 1;
    }
    return g->n_t - 1;
}

void ox_free(ox_graph *g) {
    for (int i = 0; i < g->n_t; i++) free(g->t[i].name), free(g->t[i].value), free(g->t[i].fvalue);
    for (int i = 0; i < g->n_n; i++) free(g->n[i].in), free(g->n[i].out);
    free(g->t), free(g->n), free(g->order), free(g->hash);
    if (g->model) onnx__model_proto__free_unpacked(g->model, NULL);
    memset(g, 0, sizeof *g);
}

/* Initializers: names, dims, and the values of small int tensors. */
static int read_initializers(ox_graph *g, const Onnx__GraphProto *gp, const char *origin, seer_err *err) {
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !*tp->name) {
            seer_fail(err, "%s: initializer %zu has no name", origin, i);
            return -1;
        }
        if (tp->n_dims > OX_MAX_RANK) {
            seer_fail(err, "%s: initializer '%s' has rank %zu (at most 8)", origin, tp->name, tp->n_dims);
            return -1;
        }
        int id = add_tensor(g, tp->name);
        ox_tensor *t = &g->t[id];
        for (size_t k = 0; k < tp->n_dims; k++) {
            if (tp->dims[k] < 0 || tp->dims[k] > ((int64_t)1 << 40)) {
                seer_fail(err, "%s: initializer '%s' dimension %zu is %lld", origin, tp->name, k, (long long)tp->dims[k]);
                return -1;
            }
            t->dims[k] = tp->dims[k];
        }
        t->rank = (int)tp->n_dims, t->known = 1, t->is_init = 1, t->dtype = tp->data_type;
        ox_tensor_values(t, tp);
    }
    return 0;
}

/* Graph inputs that are not initializers: their shapes, the leading one set to batch. */
static int read_inputs(ox_graph *g, const Onnx__GraphProto *gp, const char *origin, int64_t batch, seer_err *err) {
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name) continue;
        if (find_tensor(g, vi->name) >= 0 && g->t[find_tensor(g, vi->name)].is_init) continue;
        if (find_tensor(g, vi->name) >= 0) {
            seer_fail(err, "%s: graph input '%s' is declared twice", origin, vi->name);
            return -1;
        }
        int id = add_tensor(g, vi->name);
        ox_tensor *t = &g->t[id];
        t->is_input = 1;
        const Onnx__TypeProto *tp = vi->type;
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type->shape) {
            seer_fail(err, "%s: graph input '%s' has no tensor shape", origin, vi->name);
            return -1;
        }
        int dt = tp->tensor_type->elem_type;
        if (dt <= 0 || dt == OX_DT_STRING || dt > OX_DT_BFLOAT16) {
            seer_fail(err, "%s: graph input '%s' has element type %d: a network's inputs are "
                           "numeric tensors", origin, vi->name, dt);
            return -1;
        }
        const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
        if (sh->n_dim > OX_MAX_RANK) {
            seer_fail(err, "%s: graph input '%s' has rank %zu (at most 8)", origin, vi->name, sh->n_dim);
            return -1;
        }
        t->rank = (int)sh->n_dim, t->dtype = tp->tensor_type->elem_type, t->known = 1;
        for (size_t k = 0; k < sh->n_dim; k++) {
            const Onnx__TensorShapeProto__Dimension *dm = sh->dim[k];
            int has = dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            int64_t v = has ? dm->dim_value : -1;
            if (k == 0 && (batch > 0 || !has)) v = batch > 0 ? batch : 1;
            if (!has && k > 0) {
                seer_fail(err, "%s: graph input '%s' dimension %zu is symbolic ('%s'); only the leading "
                               "(batch) dimension may be", origin, vi->name, k,
                          dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? dm->dim_param : "");
                return -1;
            }
            if (v <= 0 || v > ((int64_t)1 << 40)) {
                seer_fail(err, "%s: graph input '%s' dimension %zu is %lld: zero or negative", origin,
                          vi->name, k, (long long)v);
                return -1;
            }
            t->dims[k] = v;
        }
        if (g->batch <= 0 && t->rank > 0) g->batch = t->dims[0]; // the batch used: the model's own
        if (ox_numel(t) > OX_MAX_NUMEL) {
            seer_fail(err, "%s: graph input '%s' has %s elements (at most 2^48)", origin, vi->name,
                      ox_numel(t) == INT64_MAX ? "more than 2^63" : "over 2^48");
            return -1;
        }
    }
    return 0;
}

/* Nodes, their output tensors (each produced once) and their inputs (each produced). */
static int read_nodes(ox_graph *g, const Onnx__GraphProto *gp, const char *origin, seer_err *err) {
    g->n_n = (int)gp->n_node;
    g->n = seer_calloc((size_t)g->n_n, sizeof(ox_node));
    for (int v = 0; v < g->n_n; v++) {
        const Onnx__NodeProto *p = gp->node[v];
        ox_node *n = &g->n[v];
        n->proto = p;
        n->op_type = p->op_type ? p->op_type : "";
        n->name = p->name ? p->name : "";
        n->fused_into = -1;
        n->op = p->domain && *p->domain && strcmp(p->domain, "ai.onnx") ? OP_Other : ox_op_lookup(n->op_type);
        n->n_in = (int)p->n_input, n->n_out = (int)p->n_output;
        n->in = seer_malloc(sizeof(int) * (size_t)(n->n_in + 1));
        n->out = seer_malloc(sizeof(int) * (size_t)(n->n_out + 1));
        for (int i = 0; i < n->n_out; i++) {
            if (!p->output[i] || !*p->output[i]) {
                n->out[i] = -1;
                continue;
            }
            int id = add_tensor(g, p->output[i]);
            if (g->t[id].producer >= 0 || g->t[id].is_init || g->t[id].is_input) {
                seer_fail(err, "%s: node %d '%s' (%s): output '%s' is produced twice", origin, v,
                          n->name, n->op_type, p->output[i]);
                return -1;
            }
            g->t[id].producer = v;
            n->out[i] = id;
        }
    }
    for (int v = 0; v < g->n_n; v++) {
        const Onnx__NodeProto *p = gp->node[v];
        ox_node *n = &g->n[v];
        for (int i = 0; i < n->n_in; i++) {
            if (!p->input[i] || !*p->input[i]) {
                n->in[i] = -1;
                continue;
            }
            int id = find_tensor(g, p->input[i]);
            if (id < 0) {
                seer_fail(err, "%s: node %d '%s' (%s): input '%s' is not produced by any node, "
                               "initializer or graph input (dangling input)", origin, v, n->name,
                          n->op_type, p->input[i]);
                return -1;
            }
            n->in[i] = id;
        }
    }
    return 0;
}

/* Every graph output is produced by a node, an initializer or an input. */
static int check_outputs(const ox_graph *g, const Onnx__GraphProto *gp, const char *origin, seer_err *err) {
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *name = gp->output[i]->name;
        if (!name || !*name || find_tensor(g, name) < 0)
            return seer_fail(err, "%s: graph output %zu '%s' is produced by no node, initializer "
                                  "or input", origin, i, name ? name : "");
    }
    return 0;
}

/* Topological order (Kahn); what is left over lies on a cycle. */
static int topo_order(ox_graph *g, const char *origin, seer_err *err) {
    int *indeg = seer_calloc((size_t)g->n_n, sizeof(int)), *queue = seer_malloc(sizeof(int) * (size_t)g->n_n);
    int *cons_ptr = seer_calloc((size_t)g->n_t + 1, sizeof(int)), head = 0, tail = 0;
    for (int v = 0; v < g->n_n; v++)
        for (int i = 0; i < g->n[v].n_in; i++)
            if (g->n[v].in[i] >= 0 && g->t[g->n[v].in[i]].producer >= 0) indeg[v]++, cons_ptr[g->n[v].in[i] + 1]++;
    for (int t = 0; t < g->n_t; t++) cons_ptr[t + 1] += cons_ptr[t];
    int *cons = seer_malloc(sizeof(int) * (size_t)(cons_ptr[g->n_t] + 1)), *fill = seer_calloc((size_t)g->n_t, sizeof(int));
    for (int v = 0; v < g->n_n; v++)
        for (int i = 0; i < g->n[v].n_in; i++) {
            int t = g->n[v].in[i];
            if (t >= 0 && g->t[t].producer >= 0) cons[cons_ptr[t] + fill[t]++] = v;
        }
    for (int v = 0; v < g->n_n; v++)
        if (indeg[v] == 0) queue[tail++] = v;
    while (head < tail) {
        int v = queue[head++];
        for (int i = 0; i < g->n[v].n_out; i++) {
            int t = g->n[v].out[i];
            if (t < 0) continue;
            for (int k = cons_ptr[t]; k < cons_ptr[t + 1]; k++)
                if (--indeg[cons[k]] == 0) queue[tail++] = cons[k];
        }
    }
    int cyc = -1;
    for (int v = 0; v < g->n_n && cyc < 0; v++)
        if (indeg[v] > 0) cyc = v;
    free(indeg), free(cons_ptr), free(cons), free(fill);
    g->order = queue;
    if (cyc >= 0) {
        seer_fail(err, "%s: node %d '%s' (%s) lies on a cycle: an ONNX graph must be acyclic",
                  origin, cyc, g->n[cyc].name, g->n[cyc].op_type);
        return -1;
    }
    return 0;
}

/* Shapes in topological order; a node whose outputs are all constant is folded. */
static int infer_shapes(ox_graph *g, const char *origin, int allow_unknown, seer_err *err) {
    for (int k = 0; k < g->n_n; k++) {
        int v = g->order[k];
        if (ox_infer(g, v, origin, allow_unknown, err)) return -1;
        int folded = g->n[v].n_out > 0;
        for (int i = 0; i < g->n[v].n_out; i++) {
            ox_tensor *t = g->n[v].out[i] >= 0 ? &g->t[g->n[v].out[i]] : NULL;
            if (t && !t->known) {
                seer_fail(err, "%s: node %d '%s' (%s): output %d's shape could not be inferred",
                          origin, v, g->n[v].name, g->n[v].op_type, i);
                return -1;
            }
            for (int j = 0; t && j < t->rank; j++)
                // an empty tensor is shape arithmetic's (x.shape[2:] of a matrix) or an error
                if (t->dims[j] <= 0 && !(g->n[v].op == OP_Constant || g->n[v].op == OP_Shape) &&
                    !(t->dims[j] == 0 && t->value)) {
                    seer_fail(err, "%s: node %d '%s' (%s): output '%s' has a zero or negative "
                                   "dimension (%lld at axis %d)", origin, v, g->n[v].name,
                              g->n[v].op_type, t->name, (long long)t->dims[j], j);
                    return -1;
                }
            if (t && ox_numel(t) > OX_MAX_NUMEL) {
                seer_fail(err, "%s: node %d '%s' (%s): output '%s' would hold more than 2^48 "
                               "elements (its shape arithmetic overflows)", origin, v, g->n[v].name,
                          g->n[v].op_type, t->name);
                return -1;
            }
            folded &= t && (t->value != NULL || t->is_init);
        }
        g->n[v].folded = folded;
    }
    return 0;
}

int ox_load_mem(const void *buf, size_t len, const char *origin, int64_t batch, int allow_unknown,
                ox_graph *g, seer_err *err) {
    memset(g, 0, sizeof *g);
    if (len == 0) return seer_fail(err, "%s: empty file, not an ONNX model", origin);
    if (pb_depth(buf, (const uint8_t *)buf + len, PB_MODEL, OX_MAX_NESTING) > OX_MAX_NESTING)
        return seer_fail(err, "%s: messages nested more than %d deep (subgraphs of subgraphs): "
                              "refused before parsing", origin, OX_MAX_NESTING);
    int oom = 0; // protobuf-c reports an allocation that failed as a parse failure: tell them apart
    ProtobufCAllocator alloc = {pb_alloc, pb_free, &oom};
    Onnx__ModelProto *m = onnx__model_proto__unpack(&alloc, len, buf);
    if (!m && oom) return seer_fail(err, "%s: out of memory parsing the model", origin);
    if (!m) return seer_fail(err, "%s: not an ONNX model (the protobuf does not parse: truncated or another format)", origin);
    g->model = m;
    g->hash_cap = 1024;
    rehash(g);
    int rc = -1;
    if (!m->graph || m->graph->n_node == 0) {
        seer_fail(err, "%s: the model has no graph or no nodes (is it an ONNX model?)", origin);
        goto fail;
    }
    g->opset = -1;
    for (size_t i = 0; i < m->n_opset_import; i++) {
        const char *dom = m->opset_import[i]->domain;
        if (!dom || !*dom || !strcmp(dom, "ai.onnx")) g->opset = (int)m->opset_import[i]->version;
    }
    if (g->opset < 7 || g->opset > 18) {
        seer_fail(err, "%s: default-domain opset %d is not supported (this reader takes opsets 7 to 18; "
                       "re-export with opset_version in that range)", origin, g->opset);
        goto fail;
    }
    g->batch = batch;
    const Onnx__GraphProto *gp = m->graph;
    if (read_initializers(g, gp, origin, err) || read_inputs(g, gp, origin, batch, err) ||
        read_nodes(g, gp, origin, err) || check_outputs(g, gp, origin, err) ||
        topo_order(g, origin, err) ||
        infer_shapes(g, origin, allow_unknown, err))
        goto fail;
    rc = 0;
fail:
    if (rc) ox_free(g);
    return rc;
}

int ox_load(const char *path, int64_t batch, int allow_unknown, ox_graph *g, seer_err *err) {
    size_t len;
    char *buf = seer_read_file(path, &len, err);
    if (!buf) {
        memset(g, 0, sizeof *g);
        return -1;
    }
    int rc = ox_load_mem(buf, len, path, batch, allow_unknown, g, err);
    free(buf);
    return rc;
}
