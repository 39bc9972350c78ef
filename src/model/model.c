/* model: the registry, the shared heads, sizes and activation arena, and the layers the trunks
 * are built from (see model.h). */
#include "model.h"

#include <stdio.h>
#include <string.h>

extern const model_ops model_seernet, model_perfsage, model_gcn, model_linear, model_cost;

/* The registry: one line per model. */
static const model_ops *const REGISTRY[] = {&model_seernet, &model_perfsage, &model_gcn,
                                            &model_linear, &model_cost};
#define N_MODELS (int)(sizeof REGISTRY / sizeof *REGISTRY)

const model_ops *model_find(const char *name) {
    for (int i = 0; i < N_MODELS; i++)
        if (name && !strcmp(REGISTRY[i]->name, name)) return REGISTRY[i];
    return NULL;
}

const char *model_names(void) {
    static char buf[256];
    if (!buf[0])
        for (int i = 0; i < N_MODELS; i++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? ", " : "",
                     REGISTRY[i]->name);
    return buf;
}

int model_sizes_to_stored(const model_sizes *s, int64_t out[MODEL_STORED_MAX]) {
    int64_t v[MODEL_STORED_MAX] = {s->H,           s->L,     s->Fn,  s->Fe,     s->Fg, s->M,
                                   s->agg,         s->head_hidden, s->n_ops, s->emb, s->readout};
    memcpy(out, v, sizeof v);
    return s->readout != READOUT_POOLED ? 11 : 10;
}

int model_sizes_from_stored(const char *name, const int64_t *v, int64_t n, const char *origin,
                            model_sizes *s, seer_err *err) {
    memset(s, 0, sizeof *s);
    const model_ops *ops = model_find(name);
    if (!ops || (ops->flags & MODEL_CLOSED_FORM))
        return seer_fail(err, "%s: model '%s' is not a graph network this build knows (%s)",
                         origin, name, model_names());
    if (n != 8 && n != 10 && n != 11)
        return seer_fail(err, "%s: model.sizes has %lld values (8, 10 or 11 expected)", origin,
                         (long long)n);
    static const int64_t lo[MODEL_STORED_MAX] = {1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0};
    static const int64_t hi[MODEL_STORED_MAX] = {4096, MODEL_MAX_BLOCKS, 4096, 4096, 4096,
                                                 MODEL_MAX_HEADS, 1, 4096, 4096, 1024, 1};
    static const char *const what[MODEL_STORED_MAX] = {
        "width",      "blocks",         "node features",   "edge features",
        "global features", "metrics",   "aggregation",     "head width",
        "operator types",  "embedding width", "readout"};
    for (int i = 0; i < n; i++)
        if (v[i] < lo[i] || v[i] > hi[i])
            return seer_fail(err, "%s: model.sizes: %s = %lld is out of range (%lld..%lld)", origin,
                             what[i], (long long)v[i], (long long)lo[i], (long long)hi[i]);
    *s = (model_sizes){ops,       (int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4],
                       (int)v[5], (int)v[6], (int)v[7], n >= 10 ? (int)v[8] : 0,
                       n >= 10 ? (int)v[9] : 0, n == 11 ? (int)v[10] : READOUT_POOLED};
    return ops->check ? ops->check(s, n, origin, err) : 0;
}

model_sizes model_get_sizes(const model *m) {
    return (model_sizes){m->ops,         m->H,     m->L,   m->Fn,  m->Fe,     m->Fg, m->M,
                         m->agg,         m->head_hidden, m->n_ops, m->emb, m->readout};
}

void model_init(model *m, const model_sizes *s) {
    SEER_ASSERT(s->ops && s->ops->init && s->L >= 1 && s->L <= MODEL_MAX_BLOCKS && s->M >= 1 &&
                s->M <= MODEL_MAX_HEADS);
    memset(m, 0, sizeof *m);
    m->ops = s->ops, m->H = s->H, m->L = s->L, m->Fn = s->Fn, m->Fe = s->Fe, m->Fg = s->Fg;
    m->M = s->M, m->agg = s->agg, m->head_hidden = s->head_hidden, m->n_ops = s->n_ops;
    m->emb = s->emb, m->readout = s->readout;
    m->ops->init(m);
    param_table *t = &m->pt;
    m->trunk_params = t->total;
    for (int h = 0; h < m->M; h++) {
        char nm[32];
        snprintf(nm, sizeof nm, "head%d", h);
        m->head_begin[h] = t->total;
        m->head[h] = params_mlp(t, nm, m->D, m->head_hidden, 1);
        if (m->readout == READOUT_ADDITIVE) {
            snprintf(nm, sizeof nm, "node_head%d", h);
            m->node_head[h] = params_mlp(t, nm, m->Fn, NODE_HEAD_HIDDEN, 1);
        }
    }
    m->head_begin[m->M] = t->total;
}

void model_free(model *m) { params_free(&m->pt); }

/* ---- the activation arena ---- */

float *act_f(act_arena *ar, int64_t rows, int64_t cols) {
    size_t n = (size_t)(rows * cols + 15) & ~(size_t)15;
    ar->fo += n;
    return ar->fb ? ar->fb + ar->fo - n : NULL;
}

int64_t *act_i(act_arena *ar, int64_t rows, int64_t cols) {
    size_t n = (size_t)(rows * cols);
    ar->io += n;
    return ar->ib ? ar->ib + ar->io - n : NULL;
}

/* The trunk's layout, then the heads' hidden rows and the predictions. */
static void layout(model_acts *a, const model *m, float *fb, int64_t *ib) {
    act_arena ar = {fb, ib, 0, 0};
    m->ops->layout(a, m, &ar);
    a->head_hid = act_f(&ar, m->M * a->cap_G, m->head_hidden);
    a->pred = act_f(&ar, a->cap_G, m->M);
    if (m->readout == READOUT_ADDITIVE) {
        a->node_hid = act_f(&ar, m->M * a->cap_N, NODE_HEAD_HIDDEN);
        a->node_z = act_f(&ar, m->M, a->cap_N);
        a->node_alpha = act_f(&ar, m->M, a->cap_N);
    }
    a->fcount = ar.fo, a->icount = ar.io;
}

void model_acts_size(const model *m, int64_t cap_N, int64_t cap_E, int64_t cap_G, size_t *fcount,
                     size_t *icount) {
    model_acts a;
    memset(&a, 0, sizeof a);
    a.cap_N = cap_N, a.cap_E = cap_E, a.cap_G = cap_G;
    layout(&a, m, NULL, NULL);
    *fcount = a.fcount, *icount = a.icount;
}

void model_acts_bind(model_acts *a, const model *m, int64_t cap_N, int64_t cap_E, int64_t cap_G,
                     float *fbase, int64_t *ibase) {
    memset(a, 0, sizeof *a);
    a->cap_N = cap_N, a->cap_E = cap_E, a->cap_G = cap_G;
    a->fbase = fbase, a->ibase = ibase;
    layout(a, m, fbase, ibase);
}

int model_acts_init(model_acts *a, const model *m, const seer_backend *be, int64_t cap_N,
                    int64_t cap_E, int64_t cap_G) {
    memset(a, 0, sizeof *a);
    a->cap_N = cap_N, a->cap_E = cap_E, a->cap_G = cap_G;
    layout(a, m, NULL, NULL);
    a->fbase = be->alloc(be->ctx, a->fcount * sizeof(float));
    a->ibase = be->alloc(be->ctx, (a->icount ? a->icount : 1) * sizeof(int64_t));
    if (!a->fbase || !a->ibase) {
        model_acts_free(a, be);
        return -1;
    }
    be->zero(be->ctx, a->fbase, a->fcount * sizeof(float));
    layout(a, m, a->fbase, a->ibase);
    a->fcap = a->fcount, a->icap = a->icount;
    // every product runs over at most the nodes, the edges, the graphs, or nodes and graphs
    if (be->reserve) be->reserve(be->ctx, cap_N + cap_E + cap_G);
    return 0;
}

void model_acts_free(model_acts *a, const seer_backend *be) {
    be->release(be->ctx, a->fbase);
    be->release(be->ctx, a->ibase);
    memset(a, 0, sizeof *a);
}

void model_acts_zero(model_acts *a, const seer_backend *be) {
    be->zero(be->ctx, a->fbase, a->fcount * sizeof(float));
}

void model_acts_fit(model_acts *a, const model *m, int64_t N, int64_t E, int64_t G) {
    SEER_ASSERT(a->fcap && N >= 0 && E >= 0 && G >= 0);
    a->cap_N = N, a->cap_E = E, a->cap_G = G;
    layout(a, m, a->fbase, a->ibase); // each array's size grows with N, E and G: within the arena
    SEER_ASSERT(a->fcount <= a->fcap && a->icount <= a->icap);
}


model_input model_input_from_batch(const graph_batch *b) {
    model_input in = {
        .G = b->G, .N = b->N, .E = b->E,
        .node_ptr = b->node_ptr, .edge_ptr = b->edge_ptr, .src = b->src, .dst = b->dst,
        .node_graph = b->node_graph, .edge_graph = b->edge_graph,
        .in_ptr = b->in_ptr, .in_idx = b->in_idx, .out_ptr = b->out_ptr, .out_idx = b->out_idx,
        .xn = b->xn, .xe = b->xe, .xg = b->xg, .x = &b->x,
    };
    return in;
}

/* ---- layers ---- */

#define P(off) (params + (off))
#define D(off) (grads + (off))

void layer_lin_fwd(const seer_backend *be, const float *params, lin_p l, float *out, int64_t ldo,
                   const float *x, int64_t ldx, int64_t n, int flags) {
    be->linear_forward(be->ctx, out, ldo, x, ldx, P(l.w), l.fin, P(l.b), n, l.fin, l.fout, flags);
}

void layer_lin_bwd(const seer_backend *be, const float *params, float *grads, lin_p l, float *dx,
                   int64_t lddx, const float *dout, int64_t lddo, const float *x, int64_t ldx,
                   int64_t n) {
    be->linear_backward(be->ctx, dx, lddx, D(l.w), l.fin, D(l.b), dout, lddo, x, ldx, P(l.w), n, l.fin,
                        l.fout);
}

void layer_mlp_fwd(const seer_backend *be, const float *params, mlp_p p, const float *x,
                   int64_t ldx, int64_t n, mlp_act a) {
    layer_lin_fwd(be, params, p.l1, a.hid, p.l1.fout, x, ldx, n, LIN_RELU);
    layer_lin_fwd(be, params, p.l2, a.out, p.l2.fout, a.hid, p.l1.fout, n, 0);
}

void layer_mlp_bwd(const seer_backend *be, const float *params, float *grads, mlp_p p,
                   const float *x, int64_t ldx, float *dx, int64_t lddx, int64_t n, mlp_act a,
                   float *dhid, const float *dout) {
    layer_lin_bwd(be, params, grads, p.l2, dhid, p.l1.fout, dout, p.l2.fout, a.hid, p.l1.fout, n);
    be->relu_backward(be->ctx, dhid, a.hid, n * p.l1.fout);
    layer_lin_bwd(be, params, grads, p.l1, dx, lddx, dhid, p.l1.fout, x, ldx, n);
}

void layer_nbr_mean_fwd(const seer_backend *be, const edge_set *es, const float *x, int64_t w,
                        float *msg, float *agg) {
    be->gather_forward(be->ctx, msg, w, x, w, es->src, es->E, (int)w, 0);
    be->seg_mean_forward(be->ctx, agg, w, msg, w, es->in_ptr, es->in_idx, es->V, (int)w);
}

void layer_nbr_mean_bwd(const seer_backend *be, const edge_set *es, int64_t w, float *dmsg,
                        const float *dagg, float *dx) {
    be->seg_mean_backward(be->ctx, dmsg, w, dagg, w, es->in_ptr, es->in_idx, es->V, (int)w);
    if (dx) be->seg_sum_forward(be->ctx, dx, w, dmsg, w, es->out_ptr, es->out_idx, es->V, (int)w);
}

/* ---- forward and backward: the trunk, then one head per label ---- */

/* Head h's node-head rows (readout = additive). */
static mlp_act node_act(const model_acts *a, int h) {
    return (mlp_act){a->node_hid + (int64_t)h * a->cap_N * NODE_HEAD_HIDDEN,
                     a->node_z + (int64_t)h * a->cap_N};
}

void model_forward(const model *m, const seer_backend *be, const float *params,
                   const model_input *in, model_acts *a) {
    SEER_ASSERT(in->N <= a->cap_N && in->E <= a->cap_E && in->G <= a->cap_G);
    m->ops->forward(m, be, params, in, a);
    int hh = m->head_hidden;
    for (int h = 0; h < m->M; h++) {
        float *hid = a->head_hid + (int64_t)h * a->cap_G * hh;
        layer_lin_fwd(be, params, m->head[h].l1, hid, hh, a->emb, m->D, in->G, LIN_RELU);
        layer_lin_fwd(be, params, m->head[h].l2, a->pred + h, m->M, hid, hh, in->G, 0);
        if (m->readout == READOUT_ADDITIVE) {
            mlp_act na = node_act(a, h);
            layer_mlp_fwd(be, params, m->node_head[h], in->xn, m->Fn, in->N, na);
            be->seg_lse_forward(be->ctx, a->pred + h, m->M, a->node_alpha + h * a->cap_N, na.out,
                                in->node_ptr, in->G);
        }
    }
}

void model_backward(const model *m, const seer_backend *be, const float *params, float *grads,
                    const model_input *in, const model_acts *a, model_acts *d, int head) {
    if (m->ops->emb_grad) d->emb = m->ops->emb_grad(m, in, d);
    int hh = m->head_hidden;
    for (int h = head < 0 ? 0 : head; h < (head < 0 ? m->M : head + 1); h++) {
        float *hid = a->head_hid + (int64_t)h * a->cap_G * hh;
        float *dhid = d->head_hid + (int64_t)h * d->cap_G * hh;
        layer_lin_bwd(be, params, grads, m->head[h].l2, dhid, hh, d->pred + h, m->M, hid, hh, in->G);
        be->relu_backward(be->ctx, dhid, hid, in->G * hh);
        layer_lin_bwd(be, params, grads, m->head[h].l1, d->emb, m->D, dhid, hh, a->emb, m->D, in->G);
        if (m->readout == READOUT_ADDITIVE) {
            mlp_act na = node_act(a, h), nd = node_act(d, h);
            be->seg_lse_backward(be->ctx, nd.out, d->pred + h, m->M, a->node_alpha + h * a->cap_N,
                                 in->node_ptr, in->G);
            layer_mlp_bwd(be, params, grads, m->node_head[h], in->xn, m->Fn, NULL, 0, in->N, na,
                          nd.hid, nd.out);
        }
    }
    m->ops->backward(m, be, params, grads, in, a, d);
}
