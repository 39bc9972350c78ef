/* onnx: loading an ONNX model and inferring every tensor's shape (see onnx_graph.h). */
#define _POSIX_C_SOURCE 200809L
#include "onnx_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"

#define OX_OPS(X)                                                                                  \
    X(Conv) X(ConvTranspose) X(Gemm) X(MatMul) X(BatchNormalization) X(LayerNormalization)          \
    X(InstanceNormalization) X(Relu) X(LeakyRelu) X(PRelu) X(Clip) X(Sigmoid) X(HardSigmoid)        \
    X(HardSwish) X(Tanh) X(Erf) X(Gelu) X(Softmax) X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Sqrt)       \
    X(Concat) X(Split) X(Slice) X(MaxPool) X(AveragePool) X(GlobalAveragePool) X(GlobalMaxPool)    \
    X(Flatten) X(Reshape) X(Transpose) X(Squeeze) X(Unsqueeze) X(Pad) X(Resize) X(Identity)        \
    X(Dropout) X(Constant) X(Shape) X(Gather) X(ReduceMean) X(Expand) X(Where) X(Cast)              \
    X(ConstantOfShape) X(Other)

enum {
#define X(name) OP_##name,
    OX_OPS(X)
#undef X
    OP_COUNT
};

static const char *const OP_NAMES[] = {
#define X(name) #name,
    OX_OPS(X)
#undef X
};

const char *const *ox_op_names(int *count) {
    *count = OP_COUNT;
    return OP_NAMES;
}

enum { DT_FLOAT = 1, DT_INT32 = 6, DT_INT64 = 7, DT_BOOL = 9, DT_DOUBLE = 11 };

int64_t ox_numel(const ox_tensor *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
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

/* ---- attributes ---- */
static const Onnx__AttributeProto *attr(const Onnx__NodeProto *n, const char *name) {
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0) return n->attribute[i];
    return NULL;
}
static int64_t attr_i(const Onnx__NodeProto *n, const char *name, int64_t def) {
    const Onnx__AttributeProto *a = attr(n, name);
    return a && a->has_i ? a->i : def;
}
/* Copies up to max ints; returns the count, or -1 when the attribute is absent. */
static int attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max) {
    const Onnx__AttributeProto *a = attr(n, name);
    if (!a) return -1;
    int k = a->n_ints < (size_t)max ? (int)a->n_ints : max;
    for (int i = 0; i < k; i++) out[i] = a->ints[i];
    return (int)a->n_ints;
}
static int attr_is(const Onnx__NodeProto *n, const char *name, const char *value) {
    const Onnx__AttributeProto *a = attr(n, name);
    return a && a->has_s && a->s.len == strlen(value) && memcmp(a->s.data, value, a->s.len) == 0;
}

/* ---- tensor data (only small int64/int32 tensors are read, for shape arithmetic) ---- */
static void tensor_values(ox_tensor *t, const Onnx__TensorProto *tp) {
    int64_t n = ox_numel(t);
    if (n > OX_MAX_VALUE || (tp->data_type != DT_INT64 && tp->data_type != DT_INT32)) return;
    int64_t *v = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    int ok = 0;
    if (tp->data_type == DT_INT64 && tp->n_int64_data == (size_t)n) {
        memcpy(v, tp->int64_data, sizeof(int64_t) * (size_t)n), ok = 1;
    } else if (tp->data_type == DT_INT32 && tp->n_int32_data == (size_t)n) {
        for (int64_t i = 0; i < n; i++) v[i] = tp->int32_data[i];
        ok = 1;
    } else if (tp->has_raw_data) {
        size_t es = tp->data_type == DT_INT64 ? 8 : 4;
        if (tp->raw_data.len == (size_t)n * es) {
            for (int64_t i = 0; i < n; i++) {
                if (es == 8) memcpy(&v[i], tp->raw_data.data + 8 * i, 8);
                else {
                    int32_t x;
                    memcpy(&x, tp->raw_data.data + 4 * i, 4);
                    v[i] = x;
                }
            }
            ok = 1;
        }
    }
    if (ok) t->value = v, t->n_value = n;
    else free(v);
}

/* ---- helpers for inference ---- */
typedef struct {
    ox_graph *g;
    const char *origin;
    seer_err *err;
    int v;
    const Onnx__NodeProto *p;
} ictx;

static int nfail(ictx *c, const char *what) {
    return seer_fail(c->err, "%s: node %d '%s' (%s): %s", c->origin, c->v,
                     c->p->name && *c->p->name ? c->p->name : "?", c->p->op_type, what);
}

static ox_tensor *in_t(ictx *c, int i) {
    const ox_node *n = &c->g->n[c->v];
    return i < n->n_in && n->in[i] >= 0 ? &c->g->t[n->in[i]] : NULL;
}
static ox_tensor *out_t(ictx *c, int i) {
    const ox_node *n = &c->g->n[c->v];
    return i < n->n_out && n->out[i] >= 0 ? &c->g->t[n->out[i]] : NULL;
}

static void set_shape(ox_tensor *t, const int64_t *dims, int rank, int dtype) {
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->known = 1;
    t->dtype = dtype;
}

static void set_value(ox_tensor *t, const int64_t *v, int64_t n) {
    free(t->value);
    t->value = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (n) memcpy(t->value, v, sizeof(int64_t) * (size_t)n);
    t->n_value = n;
}

static int norm_axis(int64_t a, int rank) { return (int)(a < 0 ? a + rank : a); }

/* numpy broadcasting of a and b into out (rank returned, -1 when incompatible) */
static int broadcast(const ox_tensor *a, const ox_tensor *b, int64_t *out) {
    int r = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - a->rank), ib = i - (r - b->rank);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return -1;
        out[i] = da == 1 ? db : da;
    }
    return r;
}

/* Output spatial size of a window op (Conv, pools). */
static int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pb, int64_t pe,
                          int64_t dil, int ceil_mode) {
    int64_t span = in + pb + pe - dil * (k - 1) - 1;
    if (span < 0) return 0;
    return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

/* Conv / pools: spatial dims after the window (X is (N, C, spatial...)). */
static int window_shape(ictx *c, const ox_tensor *x, const int64_t *kernel, int nk, int64_t *out,
                        int ceil_mode) {
    int ns = x->rank - 2;
    if (ns < 1 || nk != ns) return nfail(c, "kernel rank does not match the input's spatial rank");
    int64_t strides[OX_MAX_RANK], pads[2 * OX_MAX_RANK], dil[OX_MAX_RANK];
    for (int i = 0; i < ns; i++) strides[i] = 1, dil[i] = 1, pads[i] = pads[i + ns] = 0;
    attr_ints(c->p, "strides", strides, ns);
    attr_ints(c->p, "dilations", dil, ns);
    int np = attr_ints(c->p, "pads", pads, 2 * ns);
    if (np >= 0 && np != 2 * ns) return nfail(c, "pads must hold 2 values per spatial axis");
    int same = attr_is(c->p, "auto_pad", "SAME_UPPER") || attr_is(c->p, "auto_pad", "SAME_LOWER");
    int valid = attr_is(c->p, "auto_pad", "VALID");
    for (int i = 0; i < ns; i++) {
        if (strides[i] < 1 || dil[i] < 1 || kernel[i] < 1)
            return nfail(c, "kernel, strides and dilations must be positive");
        int64_t in = x->dims[2 + i];
        if (same) out[i] = (in + strides[i] - 1) / strides[i];
        else if (valid) out[i] = window_out(in, kernel[i], strides[i], 0, 0, dil[i], 0);
        else out[i] = window_out(in, kernel[i], strides[i], pads[i], pads[i + ns], dil[i], ceil_mode);
        if (out[i] < 1) return nfail(c, "the window is larger than the padded input");
    }
    return 0;
}

static int need_in(ictx *c, int i) {
    ox_tensor *t = in_t(c, i);
    if (!t) {
        char m[80];
        snprintf(m, sizeof m, "input %d is missing", i);
        return nfail(c, m);
    }
    if (!t->known) {
        char m[600];
        snprintf(m, sizeof m, "the shape of input '%s' is unknown", t->name);
        return nfail(c, m);
    }
    return 0;
}

/* The int64 values of input i (a constant, an initializer with data, or folded shape arithmetic). */
static const int64_t *in_values(ictx *c, int i, int64_t *n) {
    ox_tensor *t = in_t(c, i);
    if (!t || !t->value) return NULL;
    *n = t->n_value;
    return t->value;
}

/* The axes of Squeeze / Unsqueeze / ReduceMean: an attribute before opset `as_input`, input 1
 * from it on. na = -1 when absent. */
static int read_axes(ictx *c, int as_input, int64_t *axes, int64_t *na) {
    if (c->g->opset < as_input) {
        *na = attr_ints(c->p, "axes", axes, OX_MAX_RANK);
    } else {
        const int64_t *v = in_values(c, 1, na);
        if (in_t(c, 1) && !v) return nfail(c, "axes must be a known constant");
        if (!v) *na = -1;
        else if (*na <= OX_MAX_RANK) memcpy(axes, v, sizeof(int64_t) * (size_t)*na);
    }
    if (*na > OX_MAX_RANK) return nfail(c, "too many axes");
    return 0;
}

static int fold_elementwise(ictx *c, int op) {
    ox_tensor *a = in_t(c, 0), *b = in_t(c, 1), *o = out_t(c, 0);
    if (!a || !b || !a->value || !b->value || !o) return 0;
    int64_t n = ox_numel(o);
    if (n > OX_MAX_VALUE || a->n_value != ox_numel(a) || b->n_value != ox_numel(b)) return 0;
    if (!(a->n_value == n || a->n_value == 1) || !(b->n_value == n || b->n_value == 1)) return 0;
    int64_t *v = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        int64_t x = a->value[a->n_value == 1 ? 0 : i], y = b->value[b->n_value == 1 ? 0 : i];
        v[i] = op == OP_Add ? x + y : op == OP_Sub ? x - y : op == OP_Mul ? x * y : y ? x / y : 0;
    }
    set_value(o, v, n);
    free(v);
    return 0;
}

static int infer_node(ictx *c, int op, int allow_unknown) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = in_t(c, 0), *o = out_t(c, 0);
    int64_t d[OX_MAX_RANK];
    int opset = c->g->opset;
    if (!o && op != OP_Split) return nfail(c, "has no output");
    switch (op) {
    case OP_Constant: {
        const Onnx__AttributeProto *a = attr(p, "value");
        if (a && a->t) {
            const Onnx__TensorProto *tp = a->t;
            if (tp->n_dims > OX_MAX_RANK) return nfail(c, "constant of rank above 8");
            for (size_t i = 0; i < tp->n_dims; i++) {
                if (tp->dims[i] < 0) return nfail(c, "constant with a negative dimension");
                d[i] = tp->dims[i];
            }
            set_shape(o, d, (int)tp->n_dims, tp->data_type);
            tensor_values(o, tp);
            return 0;
        }
        const Onnx__AttributeProto *vi = attr(p, "value_ints"), *vf = attr(p, "value_int");
        if (vi) {
            d[0] = (int64_t)vi->n_ints;
            set_shape(o, d, 1, DT_INT64);
            if (vi->n_ints <= OX_MAX_VALUE) set_value(o, vi->ints, (int64_t)vi->n_ints);
            return 0;
        }
        if (vf && vf->has_i) {
            set_shape(o, d, 0, DT_INT64);
            set_value(o, &vf->i, 1);
            return 0;
        }
        if (attr(p, "value_float")) return set_shape(o, d, 0, DT_FLOAT), 0;
        if (attr(p, "value_floats")) {
            d[0] = (int64_t)attr(p, "value_floats")->n_floats;
            return set_shape(o, d, 1, DT_FLOAT), 0;
        }
        return nfail(c, "Constant without a value attribute this reader supports");
    }
    case OP_ConstantOfShape: {
        int64_t n;
        const int64_t *v = in_values(c, 0, &n);
        if (!v || n > OX_MAX_RANK) return nfail(c, "the shape input must be a known constant");
        for (int64_t i = 0; i < n; i++)
            if (v[i] < 0) return nfail(c, "negative dimension in the shape input");
        const Onnx__AttributeProto *a = attr(p, "value");
        set_shape(o, v, (int)n, a && a->t ? a->t->data_type : DT_FLOAT);
        return 0;
    }
    default: break;
    }
    if (need_in(c, 0)) return -1;
    switch (op) {
    case OP_Conv: {
        if (need_in(c, 1)) return -1;
        ox_tensor *w = in_t(c, 1);
        int64_t group = attr_i(p, "group", 1);
        if (x->rank < 3 || w->rank != x->rank) return nfail(c, "input and weight ranks must match (N, C, spatial...)");
        if (group < 1 || x->dims[1] != w->dims[1] * group) return nfail(c, "input channels do not equal weight channels x group");
        int64_t k[OX_MAX_RANK];
        int nk = attr_ints(p, "kernel_shape", k, OX_MAX_RANK);
        if (nk < 0) {
            nk = w->rank - 2;
            for (int i = 0; i < nk; i++) k[i] = w->dims[2 + i];
        }
        d[0] = x->dims[0], d[1] = w->dims[0];
        if (window_shape(c, x, k, nk, d + 2, 0)) return -1;
        set_shape(o, d, x->rank, x->dtype);
        return 0;
    }
    case OP_ConvTranspose: {
        if (need_in(c, 1)) return -1;
        ox_tensor *w = in_t(c, 1);
        int64_t group = attr_i(p, "group", 1);
        int ns = x->rank - 2;
        if (ns < 1 || w->rank != x->rank || group < 1 || w->dims[0] != x->dims[1])
            return nfail(c, "input channels must equal the weight's first dimension");
        int64_t strides[OX_MAX_RANK], pads[2 * OX_MAX_RANK], dil[OX_MAX_RANK], outpad[OX_MAX_RANK], oshape[OX_MAX_RANK];
        for (int i = 0; i < ns; i++) strides[i] = dil[i] = 1, pads[i] = pads[i + ns] = outpad[i] = 0;
        attr_ints(p, "strides", strides, ns);
        attr_ints(p, "dilations", dil, ns);
        attr_ints(p, "pads", pads, 2 * ns);
        attr_ints(p, "output_padding", outpad, ns);
        int nos = attr_ints(p, "output_shape", oshape, ns);
        d[0] = x->dims[0], d[1] = w->dims[1] * group;
        for (int i = 0; i < ns; i++) {
            int64_t k = w->dims[2 + i];
            d[2 + i] = nos == ns ? oshape[i]
                                 : strides[i] * (x->dims[2 + i] - 1) + outpad[i] + (k - 1) * dil[i] + 1 - pads[i] - pads[i + ns];
            if (d[2 + i] < 1) return nfail(c, "non-positive output size");
        }
        set_shape(o, d, x->rank, x->dtype);
        return 0;
    }
    case OP_Gemm: {
        if (need_in(c, 1)) return -1;
        ox_tensor *b = in_t(c, 1);
        if (x->rank != 2 || b->rank != 2) return nfail(c, "Gemm inputs must be 2-D");
        int ta = (int)attr_i(p, "transA", 0), tb = (int)attr_i(p, "transB", 0);
        int64_t M = ta ? x->dims[1] : x->dims[0], K = ta ? x->dims[0] : x->dims[1];
        int64_t K2 = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
        if (K != K2) return nfail(c, "inner dimensions differ");
        d[0] = M, d[1] = N;
        set_shape(o, d, 2, x->dtype);
        return 0;
    }
    case OP_MatMul: {
        if (need_in(c, 1)) return -1;
        ox_tensor a = *x, b = *in_t(c, 1);
        int a1 = a.rank == 1, b1 = b.rank == 1;
        if (a.rank == 0 || b.rank == 0) return nfail(c, "MatMul of a scalar");
        if (a1) a.rank = 2, a.dims[1] = a.dims[0], a.dims[0] = 1;
        if (b1) b.rank = 2, b.dims[1] = 1;
        if (a.dims[a.rank - 1] != b.dims[b.rank - 2]) return nfail(c, "inner dimensions differ");
        ox_tensor ab = a, bb = b;
        ab.rank -= 2, bb.rank -= 2;
        int r = broadcast(&ab, &bb, d);
        if (r < 0) return nfail(c, "batch dimensions do not broadcast");
        if (!a1) d[r++] = a.dims[a.rank - 2];
        if (!b1) d[r++] = b.dims[b.rank - 1];
        set_shape(o, d, r, x->dtype);
        return 0;
    }
    case OP_BatchNormalization: case OP_LayerNormalization: case OP_InstanceNormalization:
    case OP_Relu: case OP_LeakyRelu: case OP_PRelu: case OP_Clip: case OP_Sigmoid:
    case OP_HardSigmoid: case OP_HardSwish: case OP_Tanh: case OP_Erf: case OP_Gelu:
    case OP_Softmax: case OP_Sqrt: case OP_Identity: case OP_Dropout: case OP_Cast: {
        int dtype = x->dtype;
        if (op == OP_Cast) dtype = (int)attr_i(p, "to", x->dtype);
        set_shape(o, x->dims, x->rank, dtype);
        if ((op == OP_Identity || op == OP_Cast) && x->value) set_value(o, x->value, x->n_value);
        // exporters deduplicate equal initializers through Identity: the copy is a weight too
        if (op == OP_Identity && x->is_init) o->is_init = 1;
        return 0;
    }
    case OP_Add: case OP_Sub: case OP_Mul: case OP_Div: case OP_Pow: {
        if (need_in(c, 1)) return -1;
        int r = broadcast(x, in_t(c, 1), d);
        if (r < 0) return nfail(c, "input shapes do not broadcast");
        set_shape(o, d, r, x->dtype);
        return op == OP_Pow ? 0 : fold_elementwise(c, op);
    }
    case OP_Where: {
        if (need_in(c, 1) || need_in(c, 2)) return -1;
        int64_t d2[OX_MAX_RANK];
        int r = broadcast(in_t(c, 1), in_t(c, 2), d2);
        ox_tensor tmp = {.rank = r};
        if (r >= 0) memcpy(tmp.dims, d2, sizeof d2);
        r = r < 0 ? -1 : broadcast(x, &tmp, d);
        if (r < 0) return nfail(c, "input shapes do not broadcast");
        set_shape(o, d, r, in_t(c, 1)->dtype);
        return 0;
    }
    case OP_Expand: {
        int64_t n;
        const int64_t *v = in_values(c, 1, &n);
        if (!v || n > OX_MAX_RANK) return nfail(c, "the shape input must be a known constant");
        ox_tensor s = {.rank = (int)n};
        memcpy(s.dims, v, sizeof(int64_t) * (size_t)n);
        int r = broadcast(x, &s, d);
        if (r < 0) return nfail(c, "shape does not broadcast");
        set_shape(o, d, r, x->dtype);
        return 0;
    }
    case OP_Concat: {
        const ox_node *n = &c->g->n[c->v];
        int ax = norm_axis(attr_i(p, "axis", 0), x->rank);
        if (ax < 0 || ax >= x->rank) return nfail(c, "axis out of range");
        memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
        d[ax] = 0;
        int all_values = 1;
        int64_t total = 0;
        for (int i = 0; i < n->n_in; i++) {
            if (need_in(c, i)) return -1;
            ox_tensor *t = in_t(c, i);
            if (t->rank != x->rank) return nfail(c, "inputs of different ranks");
            for (int k = 0; k < x->rank; k++)
                if (k != ax && t->dims[k] != x->dims[k]) return nfail(c, "inputs differ outside the axis");
            d[ax] += t->dims[ax];
            all_values &= t->value != NULL;
            total += t->n_value;
        }
        set_shape(o, d, x->rank, x->dtype);
        if (all_values && x->rank == 1 && total <= OX_MAX_VALUE) {
            int64_t v[OX_MAX_VALUE], k = 0;
            for (int i = 0; i < n->n_in; i++)
                for (int64_t j = 0; j < in_t(c, i)->n_value; j++) v[k++] = in_t(c, i)->value[j];
            set_value(o, v, k);
        }
        return 0;
    }
    case OP_Split: {
        const ox_node *n = &c->g->n[c->v];
        int ax = norm_axis(attr_i(p, "axis", 0), x->rank);
        if (ax < 0 || ax >= x->rank) return nfail(c, "axis out of range");
        int64_t parts[64], np;
        int k = n->n_out;
        if (k > 64) return nfail(c, "more than 64 outputs");
        const int64_t *sv = opset >= 13 ? in_values(c, 1, &np) : NULL;
        if (opset < 13) {
            int m = attr_ints(p, "split", parts, 64);
            np = m;
            sv = m >= 0 ? parts : NULL;
        }
        if (sv && np != k) return nfail(c, "split sizes do not match the outputs");
        int64_t sum = 0;
        for (int i = 0; i < k; i++) {
            int64_t len = sv ? sv[i] : (x->dims[ax] + k - 1) / k;
            if (!sv && i == k - 1) len = x->dims[ax] - sum;
            if (len < 0) return nfail(c, "negative split size");
            sum += len;
            memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
            d[ax] = len;
            if (out_t(c, i)) set_shape(out_t(c, i), d, x->rank, x->dtype);
        }
        if (sum != x->dims[ax]) return nfail(c, "split sizes do not add up to the axis length");
        return 0;
    }
    case OP_Slice: {
        int64_t st[OX_MAX_RANK], en[OX_MAX_RANK], ax[OX_MAX_RANK], sp[OX_MAX_RANK], ns, ne, na = -1, nstep = -1;
        if (opset < 10) {
            ns = attr_ints(p, "starts", st, OX_MAX_RANK), ne = attr_ints(p, "ends", en, OX_MAX_RANK);
            na = attr_ints(p, "axes", ax, OX_MAX_RANK);
        } else {
            const int64_t *a = in_values(c, 1, &ns), *b = in_values(c, 2, &ne);
            if (!a || !b || ns > OX_MAX_RANK || ne > OX_MAX_RANK) return nfail(c, "starts and ends must be known constants");
            memcpy(st, a, sizeof(int64_t) * (size_t)ns), memcpy(en, b, sizeof(int64_t) * (size_t)ne);
            const int64_t *aa = in_values(c, 3, &na), *ss = in_values(c, 4, &nstep);
            if (in_t(c, 3) && !aa) return nfail(c, "axes must be a known constant");
            if (in_t(c, 4) && !ss) return nfail(c, "steps must be a known constant");
            if (aa) {
                if (na > OX_MAX_RANK) return nfail(c, "too many axes");
                memcpy(ax, aa, sizeof(int64_t) * (size_t)na);
            } else na = -1;
            if (ss) {
                if (nstep > OX_MAX_RANK) return nfail(c, "too many steps");
                memcpy(sp, ss, sizeof(int64_t) * (size_t)nstep);
            } else nstep = -1;
        }
        if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nstep >= 0 && nstep != ns))
            return nfail(c, "starts, ends, axes and steps differ in length");
        memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
        int64_t vstart = 0, vstep = 1;
        for (int i = 0; i < ns; i++) {
            int a = norm_axis(na >= 0 ? ax[i] : i, x->rank);
            if (a < 0 || a >= x->rank) return nfail(c, "axis out of range");
            int64_t dim = x->dims[a], step = nstep >= 0 ? sp[i] : 1;
            if (step == 0) return nfail(c, "step 0");
            int64_t s = st[i] < 0 ? st[i] + dim : st[i], e = en[i] < 0 ? en[i] + dim : en[i];
            if (step > 0) {
                s = s < 0 ? 0 : s > dim ? dim : s;
                e = e < 0 ? 0 : e > dim ? dim : e;
                d[a] = e > s ? (e - s + step - 1) / step : 0;
            } else {
                s = s < 0 ? -1 : s > dim - 1 ? dim - 1 : s;
                e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
                d[a] = s > e ? (s - e + (-step) - 1) / (-step) : 0;
            }
            if (a == 0) vstart = s, vstep = step;
        }
        set_shape(o, d, x->rank, x->dtype);
        if (x->value && x->rank == 1) {
            int64_t v[OX_MAX_VALUE];
            for (int64_t i = 0; i < d[0] && i < OX_MAX_VALUE; i++) {
                int64_t j = vstart + i * vstep;
                if (j < 0 || j >= x->n_value) return 0;
                v[i] = x->value[j];
            }
            set_value(o, v, d[0]);
        }
        return 0;
    }
    case OP_MaxPool: case OP_AveragePool: {
        int64_t k[OX_MAX_RANK];
        int nk = attr_ints(p, "kernel_shape", k, OX_MAX_RANK);
        if (nk < 0) return nfail(c, "kernel_shape is required");
        d[0] = x->dims[0], d[1] = x->dims[1];
        if (window_shape(c, x, k, nk, d + 2, (int)attr_i(p, "ceil_mode", 0))) return -1;
        set_shape(o, d, x->rank, x->dtype);
        return 0;
    }
    case OP_GlobalAveragePool: case OP_GlobalMaxPool:
        if (x->rank < 3) return nfail(c, "input must be (N, C, spatial...)");
        for (int i = 0; i < x->rank; i++) d[i] = i < 2 ? x->dims[i] : 1;
        set_shape(o, d, x->rank, x->dtype);
        return 0;
    case OP_Flatten: {
        int ax = norm_axis(attr_i(p, "axis", 1), x->rank);
        if (ax < 0 || ax > x->rank) return nfail(c, "axis out of range");
        d[0] = d[1] = 1;
        for (int i = 0; i < x->rank; i++) d[i < ax ? 0 : 1] *= x->dims[i];
        set_shape(o, d, 2, x->dtype);
        return 0;
    }
    case OP_Reshape: {
        int64_t n;
        const int64_t *v = in_values(c, 1, &n);
        if (!v) return nfail(c, "the target shape is not a known constant (its subgraph did not fold)");
        if (n > OX_MAX_RANK) return nfail(c, "target rank above 8");
        int64_t known = 1, neg = -1;
        for (int i = 0; i < n; i++) {
            d[i] = v[i] == 0 && !attr_i(p, "allowzero", 0) ? (i < x->rank ? x->dims[i] : 0) : v[i];
            if (d[i] == -1) {
                if (neg >= 0) return nfail(c, "more than one -1 in the target shape");
                neg = i;
            } else if (d[i] < 0) {
                return nfail(c, "negative dimension in the target shape");
            } else {
                known *= d[i];
            }
        }
        int64_t total = ox_numel(x);
        if (neg >= 0) d[neg] = known ? total / known : 0;
        int64_t check = 1;
        for (int i = 0; i < n; i++) check *= d[i];
        if (check != total) return nfail(c, "the target shape has another element count");
        set_shape(o, d, (int)n, x->dtype);
        if (x->value) set_value(o, x->value, x->n_value);
        return 0;
    }
    case OP_Transpose: {
        int64_t perm[OX_MAX_RANK];
        int np = attr_ints(p, "perm", perm, OX_MAX_RANK);
        if (np < 0) {
            np = x->rank;
            for (int i = 0; i < np; i++) perm[i] = x->rank - 1 - i;
        }
        if (np != x->rank) return nfail(c, "perm length differs from the rank");
        int seen[OX_MAX_RANK] = {0};
        for (int i = 0; i < np; i++) {
            if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]]++) return nfail(c, "perm is not a permutation");
            d[i] = x->dims[perm[i]];
        }
        set_shape(o, d, x->rank, x->dtype);
        return 0;
    }
    case OP_Squeeze: case OP_Unsqueeze: {
        int64_t axes[OX_MAX_RANK], na;
        if (read_axes(c, 13, axes, &na)) return -1;
        int mark[OX_MAX_RANK] = {0}, r = 0;
        if (op == OP_Squeeze) {
            for (int i = 0; i < na; i++) {
                int a = norm_axis(axes[i], x->rank);
                if (a < 0 || a >= x->rank || x->dims[a] != 1) return nfail(c, "squeezed axis is not of size 1");
                mark[a] = 1;
            }
            for (int i = 0; i < x->rank; i++)
                if (!(na < 0 ? x->dims[i] == 1 : mark[i])) d[r++] = x->dims[i];
        } else {
            int orank = x->rank + (int)(na < 0 ? 0 : na);
            if (na < 0 || orank > OX_MAX_RANK) return nfail(c, "axes are required (and rank at most 8)");
            for (int i = 0; i < na; i++) {
                int a = norm_axis(axes[i], orank);
                if (a < 0 || a >= orank || mark[a]) return nfail(c, "axis out of range or repeated");
                mark[a] = 1;
            }
            for (int i = 0, j = 0; i < orank; i++) d[r++] = mark[i] ? 1 : x->dims[j++];
        }
        set_shape(o, d, r, x->dtype);
        if (x->value) set_value(o, x->value, x->n_value);
        return 0;
    }
    case OP_Pad: {
        int64_t pads[2 * OX_MAX_RANK], np;
        if (opset < 11) {
            np = attr_ints(p, "pads", pads, 2 * OX_MAX_RANK);
            if (np < 0) np = attr_ints(p, "paddings", pads, 2 * OX_MAX_RANK);
        } else {
            const int64_t *v = in_values(c, 1, &np);
            if (!v) return nfail(c, "pads must be a known constant");
            if (np <= 2 * OX_MAX_RANK) memcpy(pads, v, sizeof(int64_t) * (size_t)np);
        }
        int64_t axes[OX_MAX_RANK], na = -1;
        const int64_t *av = opset >= 18 ? in_values(c, 3, &na) : NULL;
        if (av && na <= OX_MAX_RANK) memcpy(axes, av, sizeof(int64_t) * (size_t)na);
        else na = -1;
        int naxes = na >= 0 ? (int)na : x->rank;
        if (np != 2 * naxes) return nfail(c, "pads must hold 2 values per axis");
        memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
        for (int i = 0; i < naxes; i++) {
            int a = na >= 0 ? norm_axis(axes[i], x->rank) : i;
            if (a < 0 || a >= x->rank) return nfail(c, "axis out of range");
            d[a] += pads[i] + pads[i + naxes];
            if (d[a] < 1) return nfail(c, "padding leaves a non-positive size");
        }
        set_shape(o, d, x->rank, x->dtype);
        return 0;
    }
    case OP_Resize: {
        int64_t n;
        const int64_t *sizes = in_values(c, opset >= 11 ? 3 : 99, &n);
        if (sizes) {
            if (n != x->rank) return nfail(c, "sizes must hold one value per axis");
            set_shape(o, sizes, x->rank, x->dtype);
            return 0;
        }
        // scales are float: read them from the constant or initializer tensor's data
        ox_tensor *s = in_t(c, opset >= 11 ? 2 : 1);
        const float *sc = NULL;
        int64_t ns = 0;
        for (size_t i = 0; s && i < ((Onnx__ModelProto *)c->g->model)->graph->n_initializer && !sc; i++) {
            const Onnx__TensorProto *tp = ((Onnx__ModelProto *)c->g->model)->graph->initializer[i];
            if (tp->name && !strcmp(tp->name, s->name) && tp->data_type == DT_FLOAT) {
                if (tp->n_float_data) sc = tp->float_data, ns = (int64_t)tp->n_float_data;
                else if (tp->has_raw_data) sc = (const float *)tp->raw_data.data, ns = (int64_t)(tp->raw_data.len / 4);
            }
        }
        for (int v = 0; s && !sc && v < c->g->n_n; v++) {
            const Onnx__NodeProto *q = c->g->n[v].proto;
            if (c->g->n[v].n_out && c->g->n[v].out[0] == s - c->g->t && !strcmp(q->op_type, "Constant")) {
                const Onnx__AttributeProto *a = attr(q, "value");
                if (a && a->t && a->t->data_type == DT_FLOAT) {
                    if (a->t->n_float_data) sc = a->t->float_data, ns = (int64_t)a->t->n_float_data;
                    else if (a->t->has_raw_data) sc = (const float *)a->t->raw_data.data, ns = (int64_t)(a->t->raw_data.len / 4);
                }
            }
        }
        if (!sc || ns != x->rank) return nfail(c, "scales or sizes must be a known constant");
        for (int i = 0; i < x->rank; i++) {
            float f;
            memcpy(&f, sc + i, 4);
            d[i] = (int64_t)((double)x->dims[i] * (double)f);
            if (d[i] < 1) return nfail(c, "a scale gives a size below 1");
        }
        set_shape(o, d, x->rank, x->dtype);
        return 0;
    }
    case OP_Shape: {
        int64_t start = attr_i(p, "start", 0), end = attr_i(p, "end", x->rank);
        start = start < 0 ? start + x->rank : start, end = end < 0 ? end + x->rank : end;
        start = start < 0 ? 0 : start > x->rank ? x->rank : start;
        end = end < start ? start : end > x->rank ? x->rank : end;
        d[0] = end - start;
        set_shape(o, d, 1, DT_INT64);
        set_value(o, x->dims + start, end - start);
        return 0;
    }
    case OP_Gather: {
        if (need_in(c, 1)) return -1;
        ox_tensor *idx = in_t(c, 1);
        int ax = norm_axis(attr_i(p, "axis", 0), x->rank);
        if (ax < 0 || ax >= x->rank || x->rank + idx->rank - 1 > OX_MAX_RANK) return nfail(c, "axis out of range");
        int r = 0;
        for (int i = 0; i < ax; i++) d[r++] = x->dims[i];
        for (int i = 0; i < idx->rank; i++) d[r++] = idx->dims[i];
        for (int i = ax + 1; i < x->rank; i++) d[r++] = x->dims[i];
        set_shape(o, d, r, x->dtype);
        if (x->value && x->rank == 1 && idx->value) {
            int64_t v[OX_MAX_VALUE];
            for (int64_t i = 0; i < idx->n_value && i < OX_MAX_VALUE; i++) {
                int64_t j = idx->value[i] < 0 ? idx->value[i] + x->n_value : idx->value[i];
                if (j < 0 || j >= x->n_value) return nfail(c, "index out of range");
                v[i] = x->value[j];
            }
            set_value(o, v, idx->n_value);
        }
        return 0;
    }
    case OP_ReduceMean: {
        int64_t axes[OX_MAX_RANK], na;
        if (read_axes(c, 18, axes, &na)) return -1;
        int keep = (int)attr_i(p, "keepdims", 1), mark[OX_MAX_RANK] = {0}, r = 0;
        for (int i = 0; i < na; i++) {
            int a = norm_axis(axes[i], x->rank);
            if (a < 0 || a >= x->rank) return nfail(c, "axis out of range");
            mark[a] = 1;
        }
        for (int i = 0; i < x->rank; i++) {
            int red = na < 0 || mark[i];
            if (!red) d[r++] = x->dims[i];
            else if (keep) d[r++] = 1;
        }
        set_shape(o, d, r, x->dtype);
        return 0;
    }
    default:
        break;
    }
    if (!allow_unknown) return -2;
    // --allow-unknown: elementwise on the first input, every output
    for (int i = 0; i < c->g->n[c->v].n_out; i++)
        if (out_t(c, i)) set_shape(out_t(c, i), x->dims, x->rank, x->dtype);
    c->g->unknown_ops++;
    return 0;
}

static int lookup_op(const char *op_type) {
    for (int i = 0; i < OP_Other; i++)
        if (strcmp(OP_NAMES[i], op_type) == 0) return i;
    return OP_Other;
}

void ox_free(ox_graph *g) {
    for (int i = 0; i < g->n_t; i++) free(g->t[i].name), free(g->t[i].value);
    for (int i = 0; i < g->n_n; i++) free(g->n[i].in), free(g->n[i].out);
    free(g->t), free(g->n), free(g->order), free(g->hash);
    if (g->model) onnx__model_proto__free_unpacked(g->model, NULL);
    memset(g, 0, sizeof *g);
}

int ox_load_mem(const void *buf, size_t len, const char *origin, int64_t batch, int allow_unknown,
                ox_graph *g, seer_err *err) {
    memset(g, 0, sizeof *g);
    if (len == 0) return seer_fail(err, "%s: empty file, not an ONNX model", origin);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, buf);
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
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !*tp->name) {
            seer_fail(err, "%s: initializer %zu has no name", origin, i);
            goto fail;
        }
        if (tp->n_dims > OX_MAX_RANK) {
            seer_fail(err, "%s: initializer '%s' has rank %zu (at most 8)", origin, tp->name, tp->n_dims);
            goto fail;
        }
        int id = add_tensor(g, tp->name);
        ox_tensor *t = &g->t[id];
        for (size_t k = 0; k < tp->n_dims; k++) {
            if (tp->dims[k] < 0 || tp->dims[k] > ((int64_t)1 << 40)) {
                seer_fail(err, "%s: initializer '%s' dimension %zu is %lld", origin, tp->name, k, (long long)tp->dims[k]);
                goto fail;
            }
            t->dims[k] = tp->dims[k];
        }
        t->rank = (int)tp->n_dims, t->known = 1, t->is_init = 1, t->dtype = tp->data_type;
        tensor_values(t, tp);
    }
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name) continue;
        if (find_tensor(g, vi->name) >= 0 && g->t[find_tensor(g, vi->name)].is_init) continue;
        int id = add_tensor(g, vi->name);
        ox_tensor *t = &g->t[id];
        t->is_input = 1;
        const Onnx__TypeProto *tp = vi->type;
        if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type->shape) {
            seer_fail(err, "%s: graph input '%s' has no tensor shape", origin, vi->name);
            goto fail;
        }
        const Onnx__TensorShapeProto *sh = tp->tensor_type->shape;
        if (sh->n_dim > OX_MAX_RANK) {
            seer_fail(err, "%s: graph input '%s' has rank %zu (at most 8)", origin, vi->name, sh->n_dim);
            goto fail;
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
                goto fail;
            }
            if (v <= 0 || v > ((int64_t)1 << 40)) {
                seer_fail(err, "%s: graph input '%s' dimension %zu is %lld: zero or negative", origin,
                          vi->name, k, (long long)v);
                goto fail;
            }
            t->dims[k] = v;
        }
    }
    // nodes and their tensors
    g->n_n = (int)gp->n_node;
    g->n = seer_calloc((size_t)g->n_n, sizeof(ox_node));
    for (int v = 0; v < g->n_n; v++) {
        const Onnx__NodeProto *p = gp->node[v];
        ox_node *n = &g->n[v];
        n->proto = p;
        n->op_type = p->op_type ? p->op_type : "";
        n->name = p->name ? p->name : "";
        n->fused_into = -1;
        n->op = p->domain && *p->domain && strcmp(p->domain, "ai.onnx") ? OP_Other : lookup_op(n->op_type);
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
                goto fail;
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
                goto fail;
            }
            n->in[i] = id;
        }
    }
    // topological order (Kahn); what is left over lies on a cycle
    {
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
            goto fail;
        }
    }
    for (int k = 0; k < g->n_n; k++) {
        int v = g->order[k];
        ictx c = {.g = g, .origin = origin, .err = err, .v = v, .p = gp->node[v]};
        int r = infer_node(&c, g->n[v].op, allow_unknown);
        if (r == -2) {
            seer_fail(err, "%s: node %d '%s': operator '%s' is not supported (use --allow-unknown to "
                           "treat it as elementwise)", origin, v, g->n[v].name, g->n[v].op_type);
            goto fail;
        }
        if (r) goto fail;
        int folded = g->n[v].n_out > 0;
        for (int i = 0; i < g->n[v].n_out; i++) {
            ox_tensor *t = g->n[v].out[i] >= 0 ? &g->t[g->n[v].out[i]] : NULL;
            if (t && !t->known) {
                seer_fail(err, "%s: node %d '%s' (%s): output %d's shape could not be inferred",
                          origin, v, g->n[v].name, g->n[v].op_type, i);
                goto fail;
            }
            for (int j = 0; t && j < t->rank; j++)
                if (t->dims[j] <= 0 && !(g->n[v].op == OP_Constant || g->n[v].op == OP_Shape)) {
                    seer_fail(err, "%s: node %d '%s' (%s): output '%s' has a zero or negative "
                                   "dimension (%lld at axis %d)", origin, v, g->n[v].name,
                              g->n[v].op_type, t->name, (long long)t->dims[j], j);
                    goto fail;
                }
            folded &= t && (t->value != NULL || t->is_init);
        }
        g->n[v].folded = folded;
    }
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
