/* onnx: the operator table (see onnx_ops.h) and the helpers of shape inference (onnx_infer.h);
 * the infer_* functions of the rows are in onnx_shapes.c. */
#include "onnx_infer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx.pb-c.h"


/* ---- attributes ---- */
const Onnx__AttributeProto *ix_attr(const Onnx__NodeProto *n, const char *name) {
    for (size_t i = 0; i < n->n_attribute; i++)
        if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0) return n->attribute[i];
    return NULL;
}
int64_t ix_attr_i(const Onnx__NodeProto *n, const char *name, int64_t def) {
    const Onnx__AttributeProto *a = ix_attr(n, name);
    return a && a->has_i ? a->i : def;
}
/* Copies up to max ints; returns the count, or -1 when the attribute is absent. */
int ix_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max) {
    const Onnx__AttributeProto *a = ix_attr(n, name);
    if (!a) return -1;
    int k = a->n_ints < (size_t)max ? (int)a->n_ints : max;
    for (int i = 0; i < k; i++) out[i] = a->ints[i];
    return (int)a->n_ints;
}
int ix_attr_is(const Onnx__NodeProto *n, const char *name, const char *value) {
    const Onnx__AttributeProto *a = ix_attr(n, name);
    return a && a->has_s && a->s.len == strlen(value) && memcmp(a->s.data, value, a->s.len) == 0;
}

int64_t ox_attr_int_at(const ox_node *n, const char *name, size_t k, int64_t def) {
    const Onnx__AttributeProto *a = ix_attr(n->proto, name);
    if (a && a->n_ints > k) return a->ints[k];
    if (a && a->has_i && k == 0) return a->i;
    return def;
}

double ox_attr_float(const ox_node *n, const char *name, double def) {
    const Onnx__AttributeProto *a = ix_attr(n->proto, name);
    return a && a->has_f ? (double)a->f : def;
}

double ox_attr_ints_product(const ox_node *n, const char *name) {
    const Onnx__AttributeProto *a = ix_attr(n->proto, name);
    double k = 1;
    for (size_t i = 0; a && i < a->n_ints; i++) k *= (double)a->ints[i];
    return k;
}

int ox_attr_str_is(const ox_node *n, const char *name, const char *value) {
    if (value) return ix_attr_is(n->proto, name, value);
    const Onnx__AttributeProto *a = ix_attr(n->proto, name);
    return a && a->has_s;
}

/* ---- tensor data (only small int64/int32 tensors are read, for shape arithmetic) ---- */
void ox_tensor_values(ox_tensor *t, const void *proto) {
    const Onnx__TensorProto *tp = proto;
    int64_t n = ox_numel(t);
    if (n > OX_MAX_VALUE || (tp->data_type != OX_DT_INT64 && tp->data_type != OX_DT_INT32)) return;
    int64_t *v = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    int ok = 0;
    if (tp->data_type == OX_DT_INT64 && tp->n_int64_data == (size_t)n) {
        memcpy(v, tp->int64_data, sizeof(int64_t) * (size_t)n), ok = 1;
    } else if (tp->data_type == OX_DT_INT32 && tp->n_int32_data == (size_t)n) {
        for (int64_t i = 0; i < n; i++) v[i] = tp->int32_data[i];
        ok = 1;
    } else if (tp->has_raw_data) {
        size_t es = tp->data_type == OX_DT_INT64 ? 8 : 4;
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

int ix_fail(ictx *c, const char *what) {
    return seer_fail(c->err, "%s: node %d '%s' (%s): %s", c->origin, c->v,
                     c->p->name && *c->p->name ? c->p->name : "?", c->p->op_type, what);
}

ox_tensor *ix_in(ictx *c, int i) {
    const ox_node *n = &c->g->n[c->v];
    return i < n->n_in && n->in[i] >= 0 ? &c->g->t[n->in[i]] : NULL;
}
ox_tensor *ix_out(ictx *c, int i) {
    const ox_node *n = &c->g->n[c->v];
    return i < n->n_out && n->out[i] >= 0 ? &c->g->t[n->out[i]] : NULL;
}

void ix_set_shape(ox_tensor *t, const int64_t *dims, int rank, int dtype) {
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->known = 1;
    t->dtype = dtype;
}

void ix_set_value(ox_tensor *t, const int64_t *v, int64_t n) {
    free(t->value);
    t->value = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (n) memcpy(t->value, v, sizeof(int64_t) * (size_t)n);
    t->n_value = n;
}

void ix_set_fvalue(ox_tensor *t, const double *v, int64_t n) {
    free(t->fvalue);
    t->fvalue = seer_malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (n) memcpy(t->fvalue, v, sizeof(double) * (size_t)n);
    t->n_fvalue = n;
    // whole numbers are also kept as int64 values, so that the operators that only move values
    // (Unsqueeze, Concat, Gather, ...) carry them to the next Cast
    int whole = 1;
    for (int64_t i = 0; i < n && whole; i++) whole = v[i] == floor(v[i]) && fabs(v[i]) < 9e15;
    free(t->value);
    t->value = NULL, t->n_value = 0;
    if (whole) {
        int64_t *iv = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
        for (int64_t i = 0; i < n; i++) iv[i] = (int64_t)v[i];
        t->value = iv, t->n_value = n;
    }
}

int64_t ix_in_numbers(ictx *c, int i, double *buf, int64_t max) {
    ox_tensor *t = ix_in(c, i);
    if (!t) return -1;
    if (t->fvalue && t->n_fvalue <= max) {
        memcpy(buf, t->fvalue, sizeof(double) * (size_t)t->n_fvalue);
        return t->n_fvalue;
    }
    if (t->value && t->n_value <= max) {
        for (int64_t k = 0; k < t->n_value; k++) buf[k] = (double)t->value[k];
        return t->n_value;
    }
    return -1;
}

/* Float shape arithmetic: Add, Sub, Mul, Div of known values into a float output. */
static int fold_float(ictx *c, int op) {
    ox_tensor *o = ix_out(c, 0), *ta = ix_in(c, 0), *tb = ix_in(c, 1);
    // most float nodes are the network's own arithmetic, with no known values: nothing to do
    if (!o || !ta || !tb || !(ta->fvalue || ta->value) || !(tb->fvalue || tb->value)) return 0;
    int64_t n = ox_numel(o), ma = ox_numel(ta), mb = ox_numel(tb);
    if (n > OX_MAX_VALUE || ma > OX_MAX_VALUE || mb > OX_MAX_VALUE) return 0;
    double *a = seer_malloc(sizeof(double) * (size_t)(ma + mb + n + 1)), *b = a + ma, *v = b + mb;
    int64_t na = ix_in_numbers(c, 0, a, ma), nb = ix_in_numbers(c, 1, b, mb);
    int ok = na >= 0 && nb >= 0 && (na == n || na == 1) && (nb == n || nb == 1) && na == ma && nb == mb;
    for (int64_t i = 0; ok && i < n; i++) {
        double x = a[na == 1 ? 0 : i], y = b[nb == 1 ? 0 : i];
        v[i] = op == OP_Add ? x + y : op == OP_Sub ? x - y : op == OP_Mul ? x * y : op == OP_Div ? x / y : NAN;
        ok = isfinite(v[i]); // else not shape arithmetic this reader follows: left unknown
    }
    if (ok) ix_set_fvalue(o, v, n);
    free(a);
    return 0;
}

int ix_axis(int64_t a, int rank) { return (int)(a < 0 ? a + rank : a); }

/* numpy broadcasting of a and b into out (rank returned, -1 when incompatible) */
int ix_broadcast(const ox_tensor *a, const ox_tensor *b, int64_t *out) {
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
int ix_window_shape(ictx *c, const ox_tensor *x, const int64_t *kernel, int nk, int64_t *out,
                        int ceil_mode) {
    int ns = x->rank - 2;
    if (ns < 1 || nk != ns) return ix_fail(c, "kernel rank does not match the input's spatial rank");
    int64_t strides[OX_MAX_RANK], pads[2 * OX_MAX_RANK], dil[OX_MAX_RANK];
    for (int i = 0; i < ns; i++) strides[i] = 1, dil[i] = 1, pads[i] = pads[i + ns] = 0;
    ix_attr_ints(c->p, "strides", strides, ns);
    ix_attr_ints(c->p, "dilations", dil, ns);
    int np = ix_attr_ints(c->p, "pads", pads, 2 * ns);
    if (np >= 0 && np != 2 * ns) return ix_fail(c, "pads must hold 2 values per spatial axis");
    int same = ix_attr_is(c->p, "auto_pad", "SAME_UPPER") || ix_attr_is(c->p, "auto_pad", "SAME_LOWER");
    int valid = ix_attr_is(c->p, "auto_pad", "VALID");
    if (ix_attr(c->p, "auto_pad") && !same && !valid && !ix_attr_is(c->p, "auto_pad", "NOTSET"))
        return ix_fail(c, "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or VALID");
    const int64_t big = (int64_t)1 << 31; // no real window comes near; keeps the arithmetic in range
    for (int i = 0; i < ns; i++) {
        if (strides[i] < 1 || dil[i] < 1 || kernel[i] < 1)
            return ix_fail(c, "kernel, strides and dilations must be positive");
        if (strides[i] > big || dil[i] > big || kernel[i] > big || pads[i] > big || pads[i + ns] > big)
            return ix_fail(c, "a kernel, stride, dilation or pad is larger than 2^31");
        if (pads[i] < 0 || pads[i + ns] < 0) return ix_fail(c, "pads must not be negative");
        int64_t in = x->dims[2 + i];
        if (same) out[i] = (in + strides[i] - 1) / strides[i];
        else if (valid) out[i] = window_out(in, kernel[i], strides[i], 0, 0, dil[i], 0);
        else out[i] = window_out(in, kernel[i], strides[i], pads[i], pads[i + ns], dil[i], ceil_mode);
        if (out[i] < 1) return ix_fail(c, "the window is larger than the padded input");
    }
    return 0;
}

int ix_need_in(ictx *c, int i) {
    ox_tensor *t = ix_in(c, i);
    if (!t) {
        char m[80];
        snprintf(m, sizeof m, "input %d is missing", i);
        return ix_fail(c, m);
    }
    if (!t->known) {
        char m[600];
        snprintf(m, sizeof m, "the shape of input '%s' is unknown", t->name);
        return ix_fail(c, m);
    }
    return 0;
}

/* The int64 values of input i (a constant, an initializer with data, or folded shape arithmetic). */
const int64_t *ix_in_values(ictx *c, int i, int64_t *n) {
    ox_tensor *t = ix_in(c, i);
    if (!t || !t->value) return NULL;
    *n = t->n_value;
    return t->value;
}

/* The axes of Squeeze / Unsqueeze / ReduceMean: an attribute before opset `as_input`, input 1
 * from it on. na = -1 when absent. */
int ix_read_axes(ictx *c, int as_input, int64_t *axes, int64_t *na) {
    if (c->g->opset < as_input) {
        *na = ix_attr_ints(c->p, "axes", axes, OX_MAX_RANK);
    } else {
        const int64_t *v = ix_in_values(c, 1, na);
        if (ix_in(c, 1) && !v) return ix_fail(c, "axes must be a known constant");
        if (!v) *na = -1;
        else if (*na <= OX_MAX_RANK) memcpy(axes, v, sizeof(int64_t) * (size_t)*na);
    }
    if (*na > OX_MAX_RANK) return ix_fail(c, "too many axes");
    return 0;
}

int ix_fold_elementwise(ictx *c, int op) {
    ox_tensor *a = ix_in(c, 0), *b = ix_in(c, 1), *o = ix_out(c, 0);
    if (o && ox_dtype_is_float(o->dtype)) return op == OP_Mod || op == OP_Equal ? 0 : fold_float(c, op);
    if (!a || !b || !a->value || !b->value || !o) return 0;
    int64_t n = ox_numel(o);
    if (n > OX_MAX_VALUE || a->n_value != ox_numel(a) || b->n_value != ox_numel(b)) return 0;
    if (!(a->n_value == n || a->n_value == 1) || !(b->n_value == n || b->n_value == 1)) return 0;
    int64_t *v = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    int overflow = 0;
    for (int64_t i = 0; i < n && !overflow; i++) {
        int64_t x = a->value[a->n_value == 1 ? 0 : i], y = b->value[b->n_value == 1 ? 0 : i], r = 0;
        if (op == OP_Add) overflow = __builtin_add_overflow(x, y, &r);
        else if (op == OP_Sub) overflow = __builtin_sub_overflow(x, y, &r);
        else if (op == OP_Mul) overflow = __builtin_mul_overflow(x, y, &r);
        else if (op == OP_Equal) r = x == y;
        else if (y == -1 && x == INT64_MIN) overflow = 1; // INT64_MIN / -1 traps
        else if (y && op == OP_Mod) { // integer Mod (fmod = 0): the result takes the divisor's sign
            r = x % y;
            if (r && (r < 0) != (y < 0)) r += y;
        } else if (y) r = x / y;
        v[i] = r;
    }
    if (!overflow) ix_set_value(o, v, n);
    free(v);
    return overflow ? ix_fail(c, "its integer shape arithmetic overflows int64") : 0;
}

/* ---- the operator table ---- */

static const ox_op_def OPS[OP_COUNT] = {
#define X(name, infer, cost, k, flags, buffers, min_in, max_in) \
    [OP_##name] = {#name, ix_infer_##infer, COST_##cost, k, flags, buffers, min_in, max_in},
    OX_OPS(X)
#undef X
};

const ox_op_def *ox_op(int op) { return &OPS[op >= 0 && op < OP_COUNT ? op : OP_Other]; }

int ox_op_lookup(const char *op_type) {
    for (int i = 0; i < OP_COUNT; i++)
        if (i != OP_Other && strcmp(OPS[i].name, op_type) == 0) return i;
    return OP_Other;
}

const char *const *ox_op_names(int *count) {
    static const char *names[OP_COUNT];
    for (int i = 0; i < OP_COUNT; i++) names[i] = OPS[i].name;
    *count = OP_COUNT;
    return names;
}

int ox_infer(ox_graph *g, int v, const char *origin, int allow_unknown, seer_err *err) {
    ictx c = {.g = g, .origin = origin, .err = err, .v = v, .op = g->n[v].op, .p = g->n[v].proto};
    const ox_op_def *def = ox_op(c.op);
    if (!ix_out(&c, 0) && !(def->flags & OPF_MULTI_OUT)) return ix_fail(&c, "has no output");
    if (g->n[v].n_in < def->min_in || g->n[v].n_in > def->max_in) {
        char want[64], msg[160];
        if (def->min_in == def->max_in) snprintf(want, sizeof want, "%d", def->min_in);
        else if (def->max_in == IN_ANY) snprintf(want, sizeof want, "at least %d", def->min_in);
        else snprintf(want, sizeof want, "%d to %d", def->min_in, def->max_in);
        snprintf(msg, sizeof msg, "has %d inputs; %s takes %s", g->n[v].n_in, def->name, want);
        return ix_fail(&c, msg);
    }
    if (c.op == OP_Other && !allow_unknown) // before its inputs: SequenceEmpty has none
        return seer_fail(err, "%s: node %d '%s': operator '%s' is not supported (seerconvert "
                              "--allow-unknown converts it as an elementwise operator)", origin, v, g->n[v].name, g->n[v].op_type);
    if (c.op == OP_Other && !ix_in(&c, 0)) // --allow-unknown reads it as elementwise on input 0
        return seer_fail(err, "%s: node %d '%s': operator '%s' is not supported and has no input to "
                              "read it as elementwise from (--allow-unknown cannot guess it)", origin, v,
                         g->n[v].name, g->n[v].op_type);
    if (!(def->flags & OPF_NO_INPUT) && ix_need_in(&c, 0)) return -1;
    return def->infer(&c);
}
