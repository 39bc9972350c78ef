/* onnx: shape inference, one function per operator family (the infer column of OX_OPS in
 * onnx_ops.h). Each reads its node's attributes and inputs through onnx_infer.h, sets every
 * output's shape, folds small int64 values (shape arithmetic) where it can, and fails naming
 * the node. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_infer.h"

static int64_t ix_tensor_floats(const Onnx__TensorProto *tp, float *buf, int64_t max);

int ix_infer_constant(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    const Onnx__AttributeProto *a = ix_attr(p, "value");
    if (a && a->t) {
        const Onnx__TensorProto *tp = a->t;
        if (tp->n_dims > OX_MAX_RANK) return ix_fail(c, "constant of rank above 8");
        for (size_t i = 0; i < tp->n_dims; i++) {
            if (tp->dims[i] < 0) return ix_fail(c, "constant with a negative dimension");
            d[i] = tp->dims[i];
        }
        ix_set_shape(o, d, (int)tp->n_dims, tp->data_type);
        ox_tensor_values(o, tp);
        float f[16]; // a small float constant: a value of float shape arithmetic
        int64_t nf = ix_tensor_floats(tp, f, 16);
        if (nf >= 0 && nf == ox_numel(o)) {
            double v[16];
            for (int64_t i = 0; i < nf; i++) v[i] = f[i];
            ix_set_fvalue(o, v, nf);
        }
        return 0;
    }
    const Onnx__AttributeProto *vi = ix_attr(p, "value_ints"), *vf = ix_attr(p, "value_int");
    if (vi) {
        d[0] = (int64_t)vi->n_ints;
        ix_set_shape(o, d, 1, OX_DT_INT64);
        if (vi->n_ints <= OX_MAX_VALUE) ix_set_value(o, vi->ints, (int64_t)vi->n_ints);
        return 0;
    }
    if (vf && vf->has_i) {
        ix_set_shape(o, d, 0, OX_DT_INT64);
        ix_set_value(o, &vf->i, 1);
        return 0;
    }
    if (ix_attr(p, "value_float")) {
        double v = ix_attr(p, "value_float")->f;
        ix_set_shape(o, d, 0, OX_DT_FLOAT);
        ix_set_fvalue(o, &v, 1);
        return 0;
    }
    if (ix_attr(p, "value_floats")) {
        d[0] = (int64_t)ix_attr(p, "value_floats")->n_floats;
        return ix_set_shape(o, d, 1, OX_DT_FLOAT), 0;
    }
    return ix_fail(c, "Constant without a value attribute this reader supports");
}

int ix_infer_constant_of_shape(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *o = ix_out(c, 0);
    int64_t n;
    const int64_t *v = ix_in_values(c, 0, &n);
    if (!v || n > OX_MAX_RANK) return ix_fail(c, "the shape input must be a known constant");
    for (int64_t i = 0; i < n; i++)
        if (v[i] < 0) return ix_fail(c, "negative dimension in the shape input");
    const Onnx__AttributeProto *a = ix_attr(p, "value");
    ix_set_shape(o, v, (int)n, a && a->t ? a->t->data_type : OX_DT_FLOAT);
    // an integer fill is shape arithmetic (torch.onnx writes it around Expand): keep its values
    ox_tensor fill = {.rank = 0};
    if (a && a->t) ox_tensor_values(&fill, a->t);
    int64_t m = ox_numel(o);
    if (fill.value && m <= OX_MAX_VALUE) {
        int64_t *f = seer_malloc(sizeof(int64_t) * (size_t)(m ? m : 1));
        for (int64_t i = 0; i < m; i++) f[i] = fill.value[0];
        ix_set_value(o, f, m);
        free(f);
    }
    free(fill.value);
    return 0;
}

int ix_infer_conv(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    if (ix_need_in(c, 1)) return -1;
    ox_tensor *w = ix_in(c, 1);
    int64_t group = ix_attr_i(p, "group", 1);
    if (x->rank < 3 || w->rank != x->rank) return ix_fail(c, "input and weight ranks must match (N, C, spatial...)");
    int64_t cin;
    if (group < 1 || __builtin_mul_overflow(w->dims[1], group, &cin) || x->dims[1] != cin)
        return ix_fail(c, "input channels do not equal weight channels x group");
    int64_t k[OX_MAX_RANK];
    int nk = ix_attr_ints(p, "kernel_shape", k, OX_MAX_RANK);
    if (nk < 0) {
        nk = w->rank - 2;
        for (int i = 0; i < nk; i++) k[i] = w->dims[2 + i];
    }
    d[0] = x->dims[0], d[1] = w->dims[0];
    if (ix_window_shape(c, x, k, nk, d + 2, 0)) return -1;
    ix_set_shape(o, d, x->rank, x->dtype);
    return 0;
}

int ix_infer_conv_transpose(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    if (ix_need_in(c, 1)) return -1;
    ox_tensor *w = ix_in(c, 1);
    int64_t group = ix_attr_i(p, "group", 1);
    int ns = x->rank - 2;
    if (ns < 1 || w->rank != x->rank || group < 1 || w->dims[0] != x->dims[1])
        return ix_fail(c, "input channels must equal the weight's first dimension");
    int64_t strides[OX_MAX_RANK], pads[2 * OX_MAX_RANK], dil[OX_MAX_RANK], outpad[OX_MAX_RANK], oshape[OX_MAX_RANK];
    for (int i = 0; i < ns; i++) strides[i] = dil[i] = 1, pads[i] = pads[i + ns] = outpad[i] = 0;
    ix_attr_ints(p, "strides", strides, ns);
    ix_attr_ints(p, "dilations", dil, ns);
    ix_attr_ints(p, "pads", pads, 2 * ns);
    ix_attr_ints(p, "output_padding", outpad, ns);
    int nos = ix_attr_ints(p, "output_shape", oshape, ns);
    d[0] = x->dims[0];
    if (group < 1 || __builtin_mul_overflow(w->dims[1], group, &d[1]))
        return ix_fail(c, "group must be positive and output channels representable");
    for (int i = 0; i < ns; i++) {
        int64_t k = w->dims[2 + i];
        d[2 + i] = nos == ns ? oshape[i]
                             : strides[i] * (x->dims[2 + i] - 1) + outpad[i] + (k - 1) * dil[i] + 1 - pads[i] - pads[i + ns];
        if (d[2 + i] < 1) return ix_fail(c, "non-positive output size");
    }
    ix_set_shape(o, d, x->rank, x->dtype);
    return 0;
}

int ix_infer_gemm(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    if (ix_need_in(c, 1)) return -1;
    ox_tensor *b = ix_in(c, 1);
    if (x->rank != 2 || b->rank != 2) return ix_fail(c, "Gemm inputs must be 2-D");
    int ta = (int)ix_attr_i(p, "transA", 0), tb = (int)ix_attr_i(p, "transB", 0);
    int64_t M = ta ? x->dims[1] : x->dims[0], K = ta ? x->dims[0] : x->dims[1];
    int64_t K2 = tb ? b->dims[1] : b->dims[0], N = tb ? b->dims[0] : b->dims[1];
    if (K != K2) return ix_fail(c, "inner dimensions differ");
    d[0] = M, d[1] = N;
    ix_set_shape(o, d, 2, x->dtype);
    return 0;
}

int ix_infer_matmul(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    if (ix_need_in(c, 1)) return -1;
    ox_tensor a = *x, b = *ix_in(c, 1);
    int a1 = a.rank == 1, b1 = b.rank == 1;
    if (a.rank == 0 || b.rank == 0) return ix_fail(c, "MatMul of a scalar");
    if (a1) a.rank = 2, a.dims[1] = a.dims[0], a.dims[0] = 1;
    if (b1) b.rank = 2, b.dims[1] = 1;
    if (a.dims[a.rank - 1] != b.dims[b.rank - 2]) return ix_fail(c, "inner dimensions differ");
    ox_tensor ab = a, bb = b;
    ab.rank -= 2, bb.rank -= 2;
    int r = ix_broadcast(&ab, &bb, d);
    if (r < 0) return ix_fail(c, "batch dimensions do not broadcast");
    if (!a1) d[r++] = a.dims[a.rank - 2];
    if (!b1) d[r++] = b.dims[b.rank - 1];
    ix_set_shape(o, d, r, x->dtype);
    return 0;
}

/* Known values through Identity, Cast (float <-> integer: truncated toward zero), Ceil, Floor and
 * Clip (its bounds known or absent): the shape arithmetic of timm's same padding,
 * max((ceil(size / stride) - 1) * stride + (k - 1) * dilation + 1 - size, 0) // 2. */
static void fold_values(ictx *c, int dtype) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int op = c->op, is_float = ox_dtype_is_float(dtype);
    if (!is_float && op != OP_Clip && x->value && !x->fvalue) { // integers stay integers
        ix_set_value(o, x->value, x->n_value);
        return;
    }
    int64_t n = x->fvalue ? x->n_fvalue : x->value ? x->n_value : -1;
    if (n < 0 || n > OX_MAX_VALUE) return;
    double *v = seer_malloc(sizeof(double) * (size_t)(n + 2)), lo = -INFINITY, hi = INFINITY;
    ix_in_numbers(c, 0, v, n);
    int ok = 1;
    if (op == OP_Clip) { // bounds: inputs 1 and 2 from opset 11, attributes min and max before
        double b[1];
        const Onnx__AttributeProto *amin = ix_attr(c->p, "min"), *amax = ix_attr(c->p, "max");
        if (amin) lo = amin->f;
        if (amax) hi = amax->f;
        for (int k = 1; k <= 2; k++)
            if (ix_in(c, k)) {
                if (ix_in_numbers(c, k, b, 1) != 1) ok = 0;
                else if (k == 1) lo = b[0];
                else hi = b[0];
            }
    }
    int64_t *iv = seer_malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (int64_t i = 0; ok && i < n; i++) {
        if (op == OP_Ceil) v[i] = ceil(v[i]);
        else if (op == OP_Floor) v[i] = floor(v[i]);
        else if (op == OP_Clip) v[i] = v[i] < lo ? lo : v[i] > hi ? hi : v[i];
        if (!is_float) { // to an integer: truncated toward zero, in range
            ok = isfinite(v[i]) && fabs(v[i]) < 9e15;
            iv[i] = ok ? (int64_t)v[i] : 0;
        }
    }
    if (ok && is_float) ix_set_fvalue(o, v, n);
    else if (ok) ix_set_value(o, iv, n);
    free(v), free(iv);
}

int ix_infer_same(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int op = c->op;
    int dtype = x->dtype;
    if (op == OP_Cast) dtype = (int)ix_attr_i(p, "to", x->dtype);
    ix_set_shape(o, x->dims, x->rank, dtype);
    if (op == OP_Identity || op == OP_Cast || op == OP_Ceil || op == OP_Floor || op == OP_Clip) fold_values(c, dtype);
    // Dropout's optional mask (F.dropout exported with its training flag as an input names it)
    if (op == OP_Dropout && ix_out(c, 1)) ix_set_shape(ix_out(c, 1), x->dims, x->rank, OX_DT_BOOL);
    // BatchNormalization in training mode (NFNet's weight standardisation) also writes the running
    // mean and variance (and below opset 14 the saved ones), each shaped like input 3, the mean
    ox_tensor *mean = op == OP_BatchNormalization ? ix_in(c, 3) : NULL;
    for (int i = 1; mean && i < c->g->n[c->v].n_out; i++)
        if (ix_out(c, i)) ix_set_shape(ix_out(c, i), mean->dims, mean->rank, mean->dtype);
    // exporters deduplicate equal initializers through Identity: the copy is a weight too
    if (op == OP_Identity && x->is_init) o->is_init = 1;
    return 0;
}

int ix_infer_binary(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int op = c->op;
    if (ix_need_in(c, 1)) return -1;
    int r = ix_broadcast(x, ix_in(c, 1), d);
    if (r < 0) return ix_fail(c, "input shapes do not broadcast");
    ix_set_shape(o, d, r, op == OP_Equal ? OX_DT_BOOL : x->dtype);
    return op == OP_Pow ? 0 : ix_fold_elementwise(c, op);
}

int ix_infer_where(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    if (ix_need_in(c, 1) || ix_need_in(c, 2)) return -1;
    int64_t d2[OX_MAX_RANK];
    int r = ix_broadcast(ix_in(c, 1), ix_in(c, 2), d2);
    ox_tensor tmp = {.rank = r};
    if (r >= 0) memcpy(tmp.dims, d2, sizeof d2);
    r = r < 0 ? -1 : ix_broadcast(x, &tmp, d);
    if (r < 0) return ix_fail(c, "input shapes do not broadcast");
    ix_set_shape(o, d, r, ix_in(c, 1)->dtype);
    // fold known values (the -1 handling torch.onnx writes around Expand's shape)
    int64_t nc, na, nb, n = ox_numel(o);
    const int64_t *vc = ix_in_values(c, 0, &nc), *va = ix_in_values(c, 1, &na), *vb = ix_in_values(c, 2, &nb);
    if (!vc || !va || !vb || n > OX_MAX_VALUE) return 0;
    if ((nc != n && nc != 1) || (na != n && na != 1) || (nb != n && nb != 1)) return 0;
    int64_t *v = seer_malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++)
        v[i] = vc[nc == 1 ? 0 : i] ? va[na == 1 ? 0 : i] : vb[nb == 1 ? 0 : i];
    ix_set_value(o, v, n);
    free(v);
    return 0;
}

int ix_infer_expand(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int64_t n;
    const int64_t *v = ix_in_values(c, 1, &n);
    if (!v || n > OX_MAX_RANK) return ix_fail(c, "the shape input must be a known constant");
    ox_tensor s = {.rank = (int)n};
    memcpy(s.dims, v, sizeof(int64_t) * (size_t)n);
    int r = ix_broadcast(x, &s, d);
    if (r < 0) return ix_fail(c, "shape does not broadcast");
    ix_set_shape(o, d, r, x->dtype);
    return 0;
}

int ix_infer_concat(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    const ox_node *n = &c->g->n[c->v];
    int ax = ix_axis(ix_attr_i(p, "axis", 0), x->rank);
    if (ax < 0 || ax >= x->rank) return ix_fail(c, "axis out of range");
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    d[ax] = 0;
    int all_values = 1;
    int64_t total = 0;
    for (int i = 0; i < n->n_in; i++) {
        if (ix_need_in(c, i)) return -1;
        ox_tensor *t = ix_in(c, i);
        if (t->rank != x->rank) return ix_fail(c, "inputs of different ranks");
        for (int k = 0; k < x->rank; k++)
            if (k != ax && t->dims[k] != x->dims[k]) return ix_fail(c, "inputs differ outside the axis");
        d[ax] += t->dims[ax];
        all_values &= t->value != NULL;
        total += t->n_value;
    }
    ix_set_shape(o, d, x->rank, x->dtype);
    if (all_values && x->rank == 1 && total <= OX_MAX_VALUE) {
        int64_t v[OX_MAX_VALUE], k = 0;
        for (int i = 0; i < n->n_in; i++)
            for (int64_t j = 0; j < ix_in(c, i)->n_value; j++) v[k++] = ix_in(c, i)->value[j];
        ix_set_value(o, v, k);
    }
    return 0;
}

int ix_infer_split(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0);
    int64_t d[OX_MAX_RANK];
    int opset = c->g->opset;
    const ox_node *n = &c->g->n[c->v];
    int ax = ix_axis(ix_attr_i(p, "axis", 0), x->rank);
    if (ax < 0 || ax >= x->rank) return ix_fail(c, "axis out of range");
    int64_t parts[64], np;
    int k = n->n_out;
    if (k > 64) return ix_fail(c, "more than 64 outputs");
    const int64_t *sv = opset >= 13 ? ix_in_values(c, 1, &np) : NULL;
    if (opset < 13) {
        int m = ix_attr_ints(p, "split", parts, 64);
        np = m;
        sv = m >= 0 ? parts : NULL;
    }
    if (sv && np != k) return ix_fail(c, "split sizes do not match the outputs");
    int64_t sum = 0;
    for (int i = 0; i < k; i++) {
        int64_t len = sv ? sv[i] : (x->dims[ax] + k - 1) / k;
        if (!sv && i == k - 1) len = x->dims[ax] - sum;
        if (len < 0) return ix_fail(c, "negative split size");
        sum += len;
        memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
        d[ax] = len;
        if (ix_out(c, i)) ix_set_shape(ix_out(c, i), d, x->rank, x->dtype);
    }
    if (sum != x->dims[ax]) return ix_fail(c, "split sizes do not add up to the axis length");
    return 0;
}

/* Folds o's values from x's where both are small (shape arithmetic): o's element at multi-index
 * i reads x at index start[k] + i[k] * step[k] along x's axis map[k], for each of o's axes k.
 * Slice (map the identity) and Transpose (map the permutation, start 0, step 1) use it; torch.onnx
 * reverses F.pad's pads with both. */
static void fold_strided(const ox_tensor *x, ox_tensor *o, const int *map, const int64_t *start,
                         const int64_t *step) {
    int64_t n = ox_numel(o), xs[OX_MAX_RANK], s = 1, idx[OX_MAX_RANK] = {0}, v[OX_MAX_VALUE];
    if (!x->value || x->n_value != ox_numel(x) || n > OX_MAX_VALUE || o->rank != x->rank) return;
    for (int k = x->rank - 1; k >= 0; k--) xs[k] = s, s *= x->dims[k];
    for (int64_t f = 0; f < n; f++) {
        int64_t off = 0;
        for (int k = 0; k < o->rank; k++) {
            int64_t j = start[k] + idx[k] * step[k];
            if (j < 0 || j >= x->dims[map[k]]) return;
            off += j * xs[map[k]];
        }
        v[f] = x->value[off];
        for (int k = o->rank - 1; k >= 0 && ++idx[k] == o->dims[k]; k--) idx[k] = 0;
    }
    ix_set_value(o, v, n);
}

int ix_infer_slice(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int opset = c->g->opset;
    int64_t st[OX_MAX_RANK], en[OX_MAX_RANK], ax[OX_MAX_RANK], sp[OX_MAX_RANK];
    int64_t ns = -1, ne = -1, na = -1, nstep = -1;
    if (opset < 10) {
        ns = ix_attr_ints(p, "starts", st, OX_MAX_RANK), ne = ix_attr_ints(p, "ends", en, OX_MAX_RANK);
        na = ix_attr_ints(p, "axes", ax, OX_MAX_RANK);
    } else {
        const int64_t *a = ix_in_values(c, 1, &ns), *b = ix_in_values(c, 2, &ne);
        if (!a || !b || ns > OX_MAX_RANK || ne > OX_MAX_RANK) return ix_fail(c, "starts and ends must be known constants");
        memcpy(st, a, sizeof(int64_t) * (size_t)ns), memcpy(en, b, sizeof(int64_t) * (size_t)ne);
        const int64_t *aa = ix_in_values(c, 3, &na), *ss = ix_in_values(c, 4, &nstep);
        if (ix_in(c, 3) && !aa) return ix_fail(c, "axes must be a known constant");
        if (ix_in(c, 4) && !ss) return ix_fail(c, "steps must be a known constant");
        if (aa) {
            if (na > OX_MAX_RANK) return ix_fail(c, "too many axes");
            memcpy(ax, aa, sizeof(int64_t) * (size_t)na);
        } else na = -1;
        if (ss) {
            if (nstep > OX_MAX_RANK) return ix_fail(c, "too many steps");
            memcpy(sp, ss, sizeof(int64_t) * (size_t)nstep);
        } else nstep = -1;
    }
    if (ns < 0 || ns != ne || (na >= 0 && na != ns) || (nstep >= 0 && nstep != ns))
        return ix_fail(c, "starts, ends, axes and steps differ in length");
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    int64_t vstart[OX_MAX_RANK] = {0}, vstep[OX_MAX_RANK];
    int map[OX_MAX_RANK];
    for (int k = 0; k < x->rank; k++) vstep[k] = 1, map[k] = k;
    for (int i = 0; i < ns; i++) {
        int a = ix_axis(na >= 0 ? ax[i] : i, x->rank);
        if (a < 0 || a >= x->rank) return ix_fail(c, "axis out of range");
        int64_t dim = x->dims[a], step = nstep >= 0 ? sp[i] : 1;
        if (step == 0) return ix_fail(c, "step 0");
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
        vstart[a] = s, vstep[a] = step;
    }
    ix_set_shape(o, d, x->rank, x->dtype);
    fold_strided(x, o, map, vstart, vstep);
    return 0;
}

int ix_infer_pool(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int64_t k[OX_MAX_RANK];
    int nk = ix_attr_ints(p, "kernel_shape", k, OX_MAX_RANK);
    if (nk < 0) return ix_fail(c, "kernel_shape is required");
    d[0] = x->dims[0], d[1] = x->dims[1];
    if (ix_window_shape(c, x, k, nk, d + 2, (int)ix_attr_i(p, "ceil_mode", 0))) return -1;
    ix_set_shape(o, d, x->rank, x->dtype);
    return 0;
}

int ix_infer_global_pool(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    if (x->rank < 3) return ix_fail(c, "input must be (N, C, spatial...)");
    for (int i = 0; i < x->rank; i++) d[i] = i < 2 ? x->dims[i] : 1;
    ix_set_shape(o, d, x->rank, x->dtype);
    return 0;
}

int ix_infer_flatten(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int ax = ix_axis(ix_attr_i(p, "axis", 1), x->rank);
    if (ax < 0 || ax > x->rank) return ix_fail(c, "axis out of range");
    d[0] = d[1] = 1;
    for (int i = 0; i < x->rank; i++) d[i < ax ? 0 : 1] *= x->dims[i];
    ix_set_shape(o, d, 2, x->dtype);
    return 0;
}

int ix_infer_reshape(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int64_t n;
    const int64_t *v = ix_in_values(c, 1, &n);
    if (!v) return ix_fail(c, "the target shape is not a known constant (its subgraph did not fold)");
    if (n > OX_MAX_RANK) return ix_fail(c, "target rank above 8");
    int64_t known = 1, neg = -1;
    for (int i = 0; i < n; i++) {
        d[i] = v[i] == 0 && !ix_attr_i(p, "allowzero", 0) ? (i < x->rank ? x->dims[i] : 0) : v[i];
        if (d[i] == -1) {
            if (neg >= 0) return ix_fail(c, "more than one -1 in the target shape");
            neg = i;
        } else if (d[i] < 0) {
            return ix_fail(c, "negative dimension in the target shape");
        } else if (__builtin_mul_overflow(known, d[i], &known)) {
            return ix_fail(c, "the target shape has another element count (its product overflows)");
        }
    }
    int64_t total = ox_numel(x);
    if (neg >= 0) d[neg] = known ? total / known : 0;
    int64_t check = 1;
    for (int i = 0; i < n; i++)
        if (__builtin_mul_overflow(check, d[i], &check))
            return ix_fail(c, "the target shape has another element count (its product overflows)");
    if (check != total) return ix_fail(c, "the target shape has another element count");
    ix_set_shape(o, d, (int)n, x->dtype);
    if (x->value) ix_set_value(o, x->value, x->n_value);
    return 0;
}

int ix_infer_transpose(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int64_t perm[OX_MAX_RANK];
    int np = ix_attr_ints(p, "perm", perm, OX_MAX_RANK);
    if (np < 0) {
        np = x->rank;
        for (int i = 0; i < np; i++) perm[i] = x->rank - 1 - i;
    }
    if (np != x->rank) return ix_fail(c, "perm length differs from the rank");
    int seen[OX_MAX_RANK] = {0}, map[OX_MAX_RANK];
    int64_t start[OX_MAX_RANK] = {0}, step[OX_MAX_RANK];
    for (int i = 0; i < np; i++) {
        if (perm[i] < 0 || perm[i] >= x->rank || seen[perm[i]]++) return ix_fail(c, "perm is not a permutation");
        d[i] = x->dims[perm[i]];
        map[i] = (int)perm[i], step[i] = 1;
    }
    ix_set_shape(o, d, x->rank, x->dtype);
    fold_strided(x, o, map, start, step);
    return 0;
}

int ix_infer_squeeze(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int op = c->op;
    int64_t axes[OX_MAX_RANK], na;
    if (ix_read_axes(c, 13, axes, &na)) return -1;
    int mark[OX_MAX_RANK] = {0}, r = 0;
    if (op == OP_Squeeze) {
        for (int i = 0; i < na; i++) {
            int a = ix_axis(axes[i], x->rank);
            if (a < 0 || a >= x->rank || x->dims[a] != 1) return ix_fail(c, "squeezed axis is not of size 1");
            mark[a] = 1;
        }
        for (int i = 0; i < x->rank; i++)
            if (!(na < 0 ? x->dims[i] == 1 : mark[i])) d[r++] = x->dims[i];
    } else {
        int orank = x->rank + (int)(na < 0 ? 0 : na);
        if (na < 0 || orank > OX_MAX_RANK) return ix_fail(c, "axes are required (and rank at most 8)");
        for (int i = 0; i < na; i++) {
            int a = ix_axis(axes[i], orank);
            if (a < 0 || a >= orank || mark[a]) return ix_fail(c, "axis out of range or repeated");
            mark[a] = 1;
        }
        for (int i = 0, j = 0; i < orank; i++) d[r++] = mark[i] ? 1 : x->dims[j++];
    }
    ix_set_shape(o, d, r, x->dtype);
    if (x->value) ix_set_value(o, x->value, x->n_value);
    return 0;
}

int ix_infer_pad(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int opset = c->g->opset;
    int64_t pads[2 * OX_MAX_RANK], np;
    if (opset < 11) {
        np = ix_attr_ints(p, "pads", pads, 2 * OX_MAX_RANK);
        if (np < 0) np = ix_attr_ints(p, "paddings", pads, 2 * OX_MAX_RANK);
    } else {
        const int64_t *v = ix_in_values(c, 1, &np);
        if (!v) return ix_fail(c, "pads must be a known constant");
        if (np <= 2 * OX_MAX_RANK) memcpy(pads, v, sizeof(int64_t) * (size_t)np);
    }
    int64_t axes[OX_MAX_RANK], na = -1;
    const int64_t *av = opset >= 18 ? ix_in_values(c, 3, &na) : NULL;
    if (av && na <= OX_MAX_RANK) memcpy(axes, av, sizeof(int64_t) * (size_t)na);
    else na = -1;
    int naxes = na >= 0 ? (int)na : x->rank;
    if (np != 2 * naxes) return ix_fail(c, "pads must hold 2 values per axis");
    memcpy(d, x->dims, sizeof(int64_t) * (size_t)x->rank);
    for (int i = 0; i < naxes; i++) {
        int a = na >= 0 ? ix_axis(axes[i], x->rank) : i;
        if (a < 0 || a >= x->rank) return ix_fail(c, "axis out of range");
        d[a] += pads[i] + pads[i + naxes];
        if (d[a] < 1) return ix_fail(c, "padding leaves a non-positive size");
    }
    ix_set_shape(o, d, x->rank, x->dtype);
    return 0;
}

/* A float tensor's data into buf (at most max values): the count, or -1 when it is not there. */
static int64_t ix_tensor_floats(const Onnx__TensorProto *tp, float *buf, int64_t max) {
    if (!tp || tp->data_type != OX_DT_FLOAT) return -1;
    int64_t n;
    const void *src;
    if (tp->n_float_data) n = (int64_t)tp->n_float_data, src = tp->float_data;
    else if (tp->has_raw_data && tp->raw_data.len % 4 == 0) n = (int64_t)(tp->raw_data.len / 4), src = tp->raw_data.data;
    else return -1;
    if (n > max) return -1;
    if (n) memcpy(buf, src, (size_t)n * 4);
    return n;
}

/* The float values of tensor t when they are known without running the model: an initializer, a
 * Constant's output, or a Concat along axis 0 of such (torch.onnx writes an upsampling's scales
 * for a symbolic batch as Concat([1, 1], [sh, sw])). The count (at most max, into buf), or -1. */
static int64_t ix_float_values(const ictx *c, const ox_tensor *t, float *buf, int64_t max, int depth) {
    if (!t || depth > 8) return -1;
    const Onnx__GraphProto *gp = ((const Onnx__ModelProto *)c->g->model)->graph;
    if (t->is_init) {
        for (size_t i = 0; i < gp->n_initializer; i++)
            if (gp->initializer[i]->name && !strcmp(gp->initializer[i]->name, t->name))
                return ix_tensor_floats(gp->initializer[i], buf, max);
        return -1;
    }
    if (t->producer < 0) return -1;
    const ox_node *nd = &c->g->n[t->producer];
    const Onnx__NodeProto *q = nd->proto;
    if (!strcmp(q->op_type, "Constant")) {
        const Onnx__AttributeProto *a = ix_attr(q, "value");
        return a ? ix_tensor_floats(a->t, buf, max) : -1;
    }
    if (strcmp(q->op_type, "Concat") || ix_attr_i(q, "axis", 0) != 0) return -1;
    int64_t n = 0;
    for (int k = 0; k < nd->n_in; k++) {
        if (nd->in[k] < 0) return -1;
        int64_t got = ix_float_values(c, &c->g->t[nd->in[k]], buf + n, max - n, depth + 1);
        if (got < 0) return -1;
        n += got;
    }
    return n;
}

int ix_infer_resize(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int opset = c->g->opset;
    int64_t n;
    const int64_t *sizes = ix_in_values(c, opset >= 11 ? 3 : 99, &n);
    if (sizes) {
        if (n != x->rank) return ix_fail(c, "sizes must hold one value per axis");
        ix_set_shape(o, sizes, x->rank, x->dtype);
        return 0;
    }
    // scales are float: an initializer's or a Constant's data, or a Concat of such
    float sc[OX_MAX_RANK];
    int64_t ns = ix_float_values(c, ix_in(c, opset >= 11 ? 2 : 1), sc, OX_MAX_RANK, 0);
    if (ns != x->rank) return ix_fail(c, "scales or sizes must be a known constant");
    for (int i = 0; i < x->rank; i++) {
        double size = (double)x->dims[i] * (double)sc[i];
        if (!(size < (double)((int64_t)1 << 40))) return ix_fail(c, "a scale gives a size above 2^40");
        d[i] = (int64_t)size;
        if (d[i] < 1) return ix_fail(c, "a scale gives a size below 1");
    }
    ix_set_shape(o, d, x->rank, x->dtype);
    return 0;
}

int ix_infer_shape(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int64_t start = ix_attr_i(p, "start", 0), end = ix_attr_i(p, "end", x->rank);
    start = start < 0 ? start + x->rank : start, end = end < 0 ? end + x->rank : end;
    start = start < 0 ? 0 : start > x->rank ? x->rank : start;
    end = end < start ? start : end > x->rank ? x->rank : end;
    d[0] = end - start;
    ix_set_shape(o, d, 1, OX_DT_INT64);
    ix_set_value(o, x->dims + start, end - start);
    return 0;
}

int ix_infer_gather(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    if (ix_need_in(c, 1)) return -1;
    ox_tensor *idx = ix_in(c, 1);
    int ax = ix_axis(ix_attr_i(p, "axis", 0), x->rank);
    if (ax < 0 || ax >= x->rank || x->rank + idx->rank - 1 > OX_MAX_RANK) return ix_fail(c, "axis out of range");
    int r = 0;
    for (int i = 0; i < ax; i++) d[r++] = x->dims[i];
    for (int i = 0; i < idx->rank; i++) d[r++] = idx->dims[i];
    for (int i = ax + 1; i < x->rank; i++) d[r++] = x->dims[i];
    ix_set_shape(o, d, r, x->dtype);
    if (x->value && x->rank == 1 && idx->value) {
        int64_t v[OX_MAX_VALUE];
        for (int64_t i = 0; i < idx->n_value && i < OX_MAX_VALUE; i++) {
            int64_t j = idx->value[i] < 0 ? idx->value[i] + x->n_value : idx->value[i];
            if (j < 0 || j >= x->n_value) return ix_fail(c, "index out of range");
            v[i] = x->value[j];
        }
        ix_set_value(o, v, idx->n_value);
    }
    return 0;
}

int ix_infer_reduce(ictx *c) {
    const Onnx__NodeProto *p = c->p;
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t d[OX_MAX_RANK];
    int64_t axes[OX_MAX_RANK], na;
    // ReduceSum took its axes as an input from opset 13, the others from opset 18
    if (ix_read_axes(c, c->op == OP_ReduceSum ? 13 : 18, axes, &na)) return -1;
    int keep = (int)ix_attr_i(p, "keepdims", 1), mark[OX_MAX_RANK] = {0}, r = 0;
    for (int i = 0; i < na; i++) {
        int a = ix_axis(axes[i], x->rank);
        if (a < 0 || a >= x->rank) return ix_fail(c, "axis out of range");
        mark[a] = 1;
    }
    for (int i = 0; i < x->rank; i++) {
        int red = na < 0 || mark[i];
        if (!red) d[r++] = x->dims[i];
        else if (keep) d[r++] = 1;
    }
    ix_set_shape(o, d, r, x->dtype);
    return 0;
}

/* LSTM, GRU, RNN: X (seq, batch, input), or (batch, seq, input) with layout = 1; W (dirs, gates *
 * hidden, input), R (dirs, gates * hidden, hidden). Y (seq, dirs, batch, hidden) or (batch, seq,
 * dirs, hidden); Y_h and LSTM's Y_c (dirs, batch, hidden) or (batch, dirs, hidden). */
int ix_infer_rnn(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *w = ix_in(c, 1), *r = ix_in(c, 2);
    if (ix_need_in(c, 1) || ix_need_in(c, 2)) return -1;
    int gates = c->op == OP_LSTM ? 4 : c->op == OP_GRU ? 3 : 1;
    int layout = (int)ix_attr_i(c->p, "layout", 0);
    int64_t dirs = ix_attr_is(c->p, "direction", "bidirectional") ? 2 : 1;
    int64_t h = ix_attr_i(c->p, "hidden_size", r->rank == 3 ? r->dims[2] : 0);
    if (x->rank != 3 || w->rank != 3 || r->rank != 3) return ix_fail(c, "X, W and R must have rank 3");
    if (layout != 0 && layout != 1) return ix_fail(c, "layout must be 0 or 1");
    if (h < 1 || w->dims[0] != dirs || r->dims[0] != dirs || w->dims[1] != gates * h || r->dims[1] != gates * h ||
        r->dims[2] != h || w->dims[2] != x->dims[2])
        return ix_fail(c, "W, R, hidden_size, direction and X's input size disagree");
    int64_t seq = x->dims[layout ? 1 : 0], batch = x->dims[layout ? 0 : 1];
    int64_t y[4] = {seq, dirs, batch, h}, y1[4] = {batch, seq, dirs, h};
    int64_t s[3] = {dirs, batch, h}, s1[3] = {batch, dirs, h};
    if (ix_out(c, 0)) ix_set_shape(ix_out(c, 0), layout ? y1 : y, 4, x->dtype);
    for (int i = 1; i < 3; i++)
        if (ix_out(c, i)) ix_set_shape(ix_out(c, i), layout ? s1 : s, 3, x->dtype);
    return 0;
}

/* Tile: each dimension times its repeat (input 1, known constants, one per dimension). */
int ix_infer_tile(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t n, d[OX_MAX_RANK];
    const int64_t *rep = ix_in_values(c, 1, &n);
    if (!rep) return ix_fail(c, "repeats (input 1) must be a known constant");
    if (n != x->rank) return ix_fail(c, "repeats must have one value per input dimension");
    for (int i = 0; i < x->rank; i++) {
        if (rep[i] < 0) return ix_fail(c, "a repeat is negative");
        if (__builtin_mul_overflow(x->dims[i], rep[i], &d[i])) return ix_fail(c, "its output size overflows int64");
    }
    ix_set_shape(o, d, x->rank, x->dtype);
    return 0;
}

/* --allow-unknown: elementwise on the first input, every output (counted in unknown_ops). */
int ix_infer_unknown(ictx *c) {
    ox_tensor *x = ix_in(c, 0);
    for (int i = 0; i < c->g->n[c->v].n_out; i++)
        if (ix_out(c, i)) ix_set_shape(ix_out(c, i), x->dims, x->rank, x->dtype);
    c->g->unknown_ops++;
    return 0;
}

int ix_infer_range(ictx *c) {
    ox_tensor *x = ix_in(c, 0), *o = ix_out(c, 0);
    int64_t n0, n1, n2;
    const int64_t *a = ix_in_values(c, 0, &n0), *b = ix_in_values(c, 1, &n1), *d = ix_in_values(c, 2, &n2);
    if (!a || !b || !d || n0 != 1 || n1 != 1 || n2 != 1)
        return ix_fail(c, "start, limit and delta must be known integer scalars");
    if (!d[0]) return ix_fail(c, "delta 0");
    int64_t span, len;
    if (__builtin_sub_overflow(b[0], a[0], &span) || (d[0] == -1 && span == INT64_MIN))
        return ix_fail(c, "limit - start overflows int64");
    len = span / d[0] + (span % d[0] != 0 && (span < 0) == (d[0] < 0)); // ceil(span / delta)
    if (len < 0) len = 0;
    ix_set_shape(o, &len, 1, x->dtype);
    if (len <= OX_MAX_VALUE) {
        int64_t v[OX_MAX_VALUE];
        for (int64_t i = 0; i < len; i++) v[i] = a[0] + i * d[0];
        ix_set_value(o, v, len);
    }
    return 0;
}

/* Einsum (opset 12): an equation of letter labels, "bhid,bhjd->bhij", with at most one "..."
 * per term (dimensions broadcast as numpy does) and, without "->", the implicit output: the
 * ellipsis dimensions, then every label used once, in ASCII order. Shared by shape inference and
 * the cost count (perfgraph_build.c): the contraction's multiply-adds are the product of every
 * label's size and the ellipsis dimensions (one per combination; none for one operand). */
#define OX_MAX_INPUTS_EINSUM 16

static int label_id(char ch) {
    return ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch >= 'a' && ch <= 'z' ? 26 + ch - 'a' : -1;
}

int ox_einsum(const ox_graph *g, const ox_node *n, int64_t *dims, int *rank, double *macs, char *why,
              size_t wl) {
    const Onnx__AttributeProto *a = ix_attr(n->proto, "equation");
    if (!a || !a->has_s) return snprintf(why, wl, "needs its equation attribute"), -1;
    char eq[256];
    size_t len = 0;
    for (size_t i = 0; i < a->s.len; i++)
        if (a->s.data[i] != ' ') {
            if (len + 1 >= sizeof eq) return snprintf(why, wl, "equation longer than 255 characters"), -1;
            eq[len++] = (char)a->s.data[i];
        }
    eq[len] = 0;
    char *arrow = strstr(eq, "->");
    if (arrow) *arrow = 0;
    // the terms, one per input: where each starts, its length, its ellipsis rank (-1: none)
    const char *term[OX_MAX_INPUTS_EINSUM];
    size_t tlen[OX_MAX_INPUTS_EINSUM];
    int er[OX_MAX_INPUTS_EINSUM], nt = 0, n_ell = 0;
    for (const char *t = eq;;) {
        const char *end = strchr(t, ',');
        if (nt == OX_MAX_INPUTS_EINSUM || nt >= n->n_in || n->in[nt] < 0)
            return snprintf(why, wl, "equation '%s' has more terms than the node's %d inputs", eq, n->n_in), -1;
        term[nt] = t, tlen[nt] = end ? (size_t)(end - t) : strlen(t);
        int labels = 0, ell = 0;
        for (size_t i = 0; i < tlen[nt]; i++) {
            if (t[i] == '.') {
                if (ell || i + 3 > tlen[nt] || strncmp(t + i, "...", 3) != 0)
                    return snprintf(why, wl, "equation term %d: at most one '...', written as three dots", nt), -1;
                ell = 1, i += 2;
            } else if (label_id(t[i]) >= 0) {
                labels++;
            } else {
                return snprintf(why, wl, "equation term %d: '%c' is not a letter label", nt, t[i]), -1;
            }
        }
        int rank_in = g->t[n->in[nt]].rank;
        er[nt] = ell ? rank_in - labels : -1;
        if (ell ? er[nt] < 0 : labels != rank_in)
            return snprintf(why, wl, "equation term %d names %d dimensions; input %d has %d", nt, labels, nt,
                            rank_in), -1;
        if (er[nt] > n_ell) n_ell = er[nt];
        nt++;
        if (!end) break;
        t = end + 1;
    }
    if (nt != n->n_in) return snprintf(why, wl, "equation has %d terms for the node's %d inputs", nt, n->n_in), -1;
    int64_t size[52], ell[OX_MAX_RANK];
    int count[52] = {0};
    for (int l = 0; l < 52; l++) size[l] = -1;
    for (int k = 0; k < n_ell; k++) ell[k] = 1;
    for (int t = 0; t < nt; t++) { // sizes: a label's must agree (or be 1); under '...' numpy broadcasting
        const ox_tensor *x = &g->t[n->in[t]];
        int64_t here[52]; // a label repeated inside one term takes its diagonal: equal sizes only
        for (int l = 0; l < 52; l++) here[l] = -1;
        for (size_t i = 0, d = 0; i < tlen[t]; i++) {
            if (term[t][i] == '.') {
                for (int k = 0; k < er[t]; k++) {
                    int64_t v = x->dims[d++], *e = &ell[n_ell - er[t] + k];
                    if (*e != v && *e != 1 && v != 1)
                        return snprintf(why, wl, "the dimensions under '...' do not broadcast"), -1;
                    if (v != 1) *e = v;
                }
                i += 2;
                continue;
            }
            int l = label_id(term[t][i]);
            int64_t v = x->dims[d++];
            if (here[l] >= 0 && here[l] != v)
                return snprintf(why, wl, "label '%c' repeats in term %d with sizes %lld and %lld (a diagonal "
                                         "needs equal ones)", term[t][i], t, (long long)here[l], (long long)v), -1;
            here[l] = v;
            if (size[l] >= 0 && size[l] != v && size[l] != 1 && v != 1)
                return snprintf(why, wl, "label '%c' is %lld in one place and %lld in another", term[t][i],
                                (long long)size[l], (long long)v), -1;
            if (size[l] < 0 || size[l] == 1) size[l] = v;
            count[l]++;
        }
    }
    int r = 0, used[52] = {0}, out_ell = 0;
    if (arrow) {
        for (const char *o = arrow + 2; *o; o++) {
            if (*o == '.' && strncmp(o, "...", 3) == 0 && !out_ell) {
                if (r + n_ell > OX_MAX_RANK) return snprintf(why, wl, "output rank over %d", OX_MAX_RANK), -1;
                for (int k = 0; k < n_ell; k++) dims[r++] = ell[k];
                out_ell = 1, o += 2;
                continue;
            }
            int l = label_id(*o);
            if (l < 0 || size[l] < 0 || used[l]++)
                return snprintf(why, wl, "output label '%c' is not an input label, or repeated", *o), -1;
            if (r >= OX_MAX_RANK) return snprintf(why, wl, "output rank over %d", OX_MAX_RANK), -1;
            dims[r++] = size[l];
        }
        if (n_ell && !out_ell) // numpy refuses it too: no label names those dimensions
            return snprintf(why, wl, "the inputs' '...' covers %d dimensions that the output does not name "
                                     "(add '...' to the output)", n_ell), -1;
    } else {
        for (int k = 0; k < n_ell; k++) dims[r++] = ell[k];
        for (int l = 0; l < 52; l++) // ASCII order: 'A'..'Z' are ids 0..25, 'a'..'z' 26..51
            if (count[l] == 1) {
                if (r >= OX_MAX_RANK) return snprintf(why, wl, "output rank over %d", OX_MAX_RANK), -1;
                dims[r++] = size[l];
            }
    }
    *rank = r;
    double m = 1;
    for (int l = 0; l < 52; l++)
        if (size[l] >= 0) m *= (double)size[l];
    for (int k = 0; k < n_ell; k++) m *= (double)ell[k];
    *macs = n->n_in > 1 ? m : 0;
    return 0;
}

int ix_infer_einsum(ictx *c) {
    for (int i = 0; i < c->g->n[c->v].n_in; i++)
        if (ix_need_in(c, i)) return -1;
    int64_t d[OX_MAX_RANK];
    int r;
    double macs;
    char why[400];
    if (ox_einsum(c->g, &c->g->n[c->v], d, &r, &macs, why, sizeof why)) return ix_fail(c, why);
    ix_set_shape(ix_out(c, 0), d, r, ix_in(c, 0)->dtype);
    return 0;
}
