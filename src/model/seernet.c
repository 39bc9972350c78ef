/* model: SeerNet forward and backward from backend ops (equations in seernet.h). */
#include "seernet.h"

#include <stdio.h>
#include <string.h>

const char *model_arch_name(int arch) {
    return arch == ARCH_PERFSAGE ? "perfsage" : arch == ARCH_GCN ? "gcn" : "seernet";
}

int model_arch_parse(const char *s) {
    if (!strcmp(s, "seernet")) return ARCH_SEERNET;
    if (!strcmp(s, "perfsage")) return ARCH_PERFSAGE;
    if (!strcmp(s, "gcn")) return ARCH_GCN;
    return -1;
}

int model_sizes_to_stored(const model_sizes *s, int64_t out[10]) {
    int64_t v[10] = {s->H, s->L, s->Fn, s->Fe, s->Fg, s->M, s->agg, s->head_hidden, s->n_ops, s->emb};
    memcpy(out, v, sizeof v);
    return 10;
}

int model_sizes_from_stored(const char *name, const int64_t *v, int64_t n, const char *origin,
                            model_sizes *s, seer_err *err) {
    memset(s, 0, sizeof *s);
    if ((s->arch = model_arch_parse(name)) < 0)
        return seer_fail(err, "%s: model '%s' is not one this build knows (seernet, perfsage, gcn)",
                         origin, name);
    if ((n != 8 && n != 10) || (s->arch == ARCH_PERFSAGE && n != 10))
        return seer_fail(err, "%s: model.sizes has %lld values (8 or 10 expected)", origin, (long long)n);
    int64_t lo[10] = {1, 1, 1, 1, 1, 1, 0, 1, 0, 0}, hi[10] = {4096, SEERNET_MAX_BLOCKS, 4096, 4096,
                      4096, SEERNET_MAX_HEADS, 1, 4096, 4096, 1024};
    if (s->arch == ARCH_PERFSAGE) lo[8] = lo[9] = 1;
    static const char *const what[10] = {"width", "blocks", "node features", "edge features",
                                          "global features", "metrics", "aggregation",
                                          "head width", "operator types", "embedding width"};
    for (int i = 0; i < n; i++)
        if (v[i] < lo[i] || v[i] > hi[i])
            return seer_fail(err, "%s: model.sizes: %s = %lld is out of range (%lld..%lld)", origin,
                             what[i], (long long)v[i], (long long)lo[i], (long long)hi[i]);
    *s = (model_sizes){s->arch, (int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], (int)v[5],
                       (int)v[6], (int)v[7], n == 10 ? (int)v[8] : 0, n == 10 ? (int)v[9] : 0};
    return 0;
}

model_sizes seernet_sizes(const seernet *m) {
    return (model_sizes){m->arch, m->H, m->L, m->Fn, m->Fe, m->Fg, m->M, m->agg, m->head_hidden,
                         m->n_ops, m->emb};
}

static void heads_init(seernet *m) {
    param_table *t = &m->pt;
    m->trunk_params = t->total;
    for (int h = 0; h < m->M; h++) {
        char nm[32];
        snprintf(nm, sizeof nm, "head%d", h);
        m->head_begin[h] = t->total;
        m->head[h] = params_mlp(t, nm, m->D, m->head_hidden, 1);
    }
    m->head_begin[m->M] = t->total;
}

void seernet_init(seernet *m, const model_sizes *s) {
    int H = s->H, L = s->L, Fn = s->Fn, Fe = s->Fe, Fg = s->Fg, agg = s->agg;
    SEER_ASSERT(L >= 1 && L <= SEERNET_MAX_BLOCKS && s->M >= 1 && s->M <= SEERNET_MAX_HEADS);
    memset(m, 0, sizeof *m);
    m->arch = s->arch, m->H = H, m->L = L, m->Fn = Fn, m->Fe = Fe, m->Fg = Fg, m->M = s->M;
    m->agg = agg, m->head_hidden = s->head_hidden, m->n_ops = s->n_ops, m->emb = s->emb;
    m->D = s->arch == ARCH_PERFSAGE ? 2 * H : H;
    param_table *t = &m->pt;
    if (m->arch == ARCH_PERFSAGE) {
        SEER_ASSERT(s->n_ops >= 1 && s->emb >= 1);
        m->embed = params_add(t, "op_embed.weight", s->n_ops, s->emb);
        for (int l = 0; l < L; l++) {
            char nm[32];
            int in = l ? 2 * H : Fn + s->emb;
            snprintf(nm, sizeof nm, "sage%d.self", l);
            m->sage_self[l] = params_linear(t, nm, in, H);
            snprintf(nm, sizeof nm, "sage%d.neigh", l);
            m->sage_nbr[l] = params_linear(t, nm, in, H);
        }
        heads_init(m);
        return;
    }
    if (m->arch == ARCH_GCN) {
        for (int l = 0; l < L; l++) {
            char nm[32];
            snprintf(nm, sizeof nm, "gcn%d", l);
            m->gcn[l] = params_linear(t, nm, l ? H : Fn, H);
        }
        heads_init(m);
        return;
    }
    m->enc_n = params_mlp(t, "enc_node", Fn, H, H);
    m->enc_e = params_mlp(t, "enc_edge", Fe, H, H);
    m->enc_g = params_mlp(t, "enc_global", Fg, H, H);
    m->attn0 = params_linear(t, "gnpb.attn", H, 1);
    int aw = agg == AGG_SYNMM ? 2 * H : H;
    for (int l = 0; l < L; l++) {
        char nm[48];
        seernet_block *b = &m->blk[l];
#define NAME(s) (snprintf(nm, sizeof nm, "block%d.%s", l, s), nm)
        b->phi_e = params_mlp(t, NAME("phi_e"), 4 * H, H, H);
        b->phi_v = params_mlp(t, NAME("phi_v"), aw + 2 * H, H, H);
        b->attn = params_linear(t, NAME("attn"), H, 1);
        b->phi_z = params_mlp(t, NAME("phi_z"), H, H, H);
        b->readout = params_linear(t, NAME("readout"), 2 * H, H);
        b->phi_u = params_mlp(t, NAME("phi_u"), 3 * H, H, H);
#undef NAME
    }
    heads_init(m);
}

void seernet_free(seernet *m) { params_free(&m->pt); }

/* Bump layout of all activation buffers; with base == NULL it only counts. */
static void layout(seernet_acts *a, const seernet *m, float *fb, int64_t *ib) {
    int64_t N = a->cap_N, E = a->cap_E, G = a->cap_G;
    int H = m->H, aw = m->agg == AGG_SYNMM ? 2 * H : H;
    size_t fo = 0, io = 0;
    int64_t D = m->D;
#define F(rows, cols) (fo += (size_t)((rows) * (cols) + 15) & ~(size_t)15, fb ? fb + fo - ((size_t)((rows) * (cols) + 15) & ~(size_t)15) : NULL)
#define I(rows, cols) (io += (size_t)((rows) * (cols)), ib ? ib + io - (size_t)((rows) * (cols)) : NULL)
    if (m->arch != ARCH_SEERNET) {
        // PerfSAGE over N nodes and 2E directed neighbour pairs; GCN over N + G nodes and
        // E + 2N + G edges (graph/batch.h)
        int sage = m->arch == ARCH_PERFSAGE;
        int64_t V = sage ? N : N + G, EE = sage ? 2 * E : E + 2 * N + G;
        for (int l = 0; l < m->L; l++) {
            int64_t in = l ? (sage ? 2 * H : H) : (sage ? m->Fn + m->emb : m->Fn);
            if (l == 0) a->px[0] = F(V, in);
            a->pmsg[l] = F(EE, in), a->pagg[l] = F(V, in);
            a->px[l + 1] = F(V, sage ? 2 * H : H);
        }
        a->emb = sage ? F(G, D) : NULL; // GCN: rows of px[L], set by the forward pass
        a->head_hid = F(m->M * G, m->head_hidden), a->pred = F(G, m->M);
        a->fcount = fo, a->icount = io;
        return;
    }
    a->enc_n.hid = F(N, H), a->enc_n.out = F(N, H);
    a->enc_e.hid = F(E, H), a->enc_e.out = F(E, H);
    a->enc_g.hid = F(G, H), a->enc_g.out = F(G, H);
    a->score0 = F(N, 1), a->alpha0 = F(N, 1);
    a->h[0] = a->enc_n.out, a->e[0] = a->enc_e.out, a->g[0] = a->enc_g.out;
    a->z[0] = F(G, H);
    for (int l = 0; l < m->L; l++) {
        seernet_block_act *b = &a->blk[l];
        b->e.hid = F(E, H), b->e.out = F(E, H);
        b->ts = F(N, H), b->td = F(N, H), b->tg = F(G, H);
        a->e[l + 1] = F(E, H);
        b->agg = F(N, aw);
        b->agg_arg = m->agg == AGG_SYNMM ? I(N, H) : NULL;
        b->tzg = F(G, H);
        b->v.hid = F(N, H), b->v.out = F(N, H);
        a->h[l + 1] = F(N, H);
        b->score = F(N, 1), b->alpha = F(N, 1);
        b->pool = F(G, H), b->pz = F(G, H);
        b->z.hid = F(G, H), b->z.out = F(G, H);
        a->z[l + 1] = b->z.out;
        b->xr = F(G, 2 * H);
        b->r_arg = I(G, H);
        b->xu = F(G, 3 * H);
        b->u.hid = F(G, H), b->u.out = F(G, H);
        a->g[l + 1] = F(G, H);
    }
    a->head_hid = F(m->M * G, m->head_hidden), a->pred = F(G, m->M);
    a->emb = a->g[m->L];
#undef F
#undef I
    a->fcount = fo, a->icount = io;
}

void seernet_acts_size(const seernet *m, int64_t cap_N, int64_t cap_E, int64_t cap_G,
                       size_t *fcount, size_t *icount) {
    seernet_acts a;
    memset(&a, 0, sizeof a);
    a.cap_N = cap_N, a.cap_E = cap_E, a.cap_G = cap_G;
    layout(&a, m, NULL, NULL);
    *fcount = a.fcount, *icount = a.icount;
}

void seernet_acts_bind(seernet_acts *a, const seernet *m, int64_t cap_N, int64_t cap_E,
                       int64_t cap_G, float *fbase, int64_t *ibase) {
    memset(a, 0, sizeof *a);
    a->cap_N = cap_N, a->cap_E = cap_E, a->cap_G = cap_G;
    a->fbase = fbase, a->ibase = ibase;
    layout(a, m, fbase, ibase);
}

int seernet_acts_init(seernet_acts *a, const seernet *m, const seer_backend *be, int64_t cap_N,
                      int64_t cap_E, int64_t cap_G) {
    memset(a, 0, sizeof *a);
    a->cap_N = cap_N, a->cap_E = cap_E, a->cap_G = cap_G;
    layout(a, m, NULL, NULL);
    a->fbase = be->alloc(a->fcount * sizeof(float));
    a->ibase = be->alloc((a->icount ? a->icount : 1) * sizeof(int64_t));
    if (!a->fbase || !a->ibase) {
        seernet_acts_free(a, be);
        return -1;
    }
    be->zero(a->fbase, a->fcount * sizeof(float));
    layout(a, m, a->fbase, a->ibase);
    return 0;
}

void seernet_acts_free(seernet_acts *a, const seer_backend *be) {
    be->release(a->fbase);
    be->release(a->ibase);
    memset(a, 0, sizeof *a);
}

void seernet_acts_zero(seernet_acts *a, const seer_backend *be) {
    be->zero(a->fbase, a->fcount * sizeof(float));
}

seernet_input seernet_input_from_batch(const graph_batch *b) {
    seernet_input in = {
        .G = b->G, .N = b->N, .E = b->E,
        .node_ptr = b->node_ptr, .edge_ptr = b->edge_ptr, .src = b->src, .dst = b->dst,
        .node_graph = b->node_graph, .edge_graph = b->edge_graph,
        .in_ptr = b->in_ptr, .in_idx = b->in_idx, .out_ptr = b->out_ptr, .out_idx = b->out_idx,
        .xn = b->xn, .xe = b->xe, .xg = b->xg, .x = &b->x,
    };
    return in;
}

#define P(off) (params + (off))
#define D(off) (grads + (off))

static void lin_fwd(const seer_backend *be, const float *params, lin_p l, float *out, int64_t ldo,
                    const float *x, int64_t ldx, int64_t n, int flags) {
    be->linear_forward(out, ldo, x, ldx, P(l.w), l.fin, P(l.b), n, l.fin, l.fout, flags);
}

static void lin_bwd(const seer_backend *be, const float *params, float *grads, lin_p l, float *dx,
                    int64_t lddx, const float *dout, int64_t lddo, const float *x, int64_t ldx,
                    int64_t n) {
    be->linear_backward(dx, lddx, D(l.w), l.fin, D(l.b), dout, lddo, x, ldx, P(l.w), n, l.fin,
                        l.fout);
}

/* Backward of an attention score layer: the softmax over a segment ignores a shift of all its
 * scores, so the score bias has zero gradient in exact arithmetic; it gets none here rather than
 * rounding noise (which Adam would turn into full-size steps of a random walk). */
static void attn_bwd(const seer_backend *be, const float *params, float *grads, lin_p l, float *dx,
                     const float *dscore, const float *x, int64_t n) {
    be->linear_backward(dx, l.fin, D(l.w), l.fin, NULL, dscore, 1, x, l.fin, P(l.w), n, l.fin, 1);
}

/* Column block [col, col + fin) of a linear layer's weight: x W[:, col:col+fin]^T. */
static void blk_fwd(const seer_backend *be, const float *params, lin_p l, int col, int fin,
                    float *out, const float *x, int64_t n, const float *bias, int flags) {
    be->linear_forward(out, l.fout, x, fin, P(l.w) + col, l.fin, bias, n, fin, l.fout, flags);
}

static void blk_bwd(const seer_backend *be, const float *params, float *grads, lin_p l, int col,
                    int fin, float *dx, const float *dout, const float *x, int64_t n, float *dbias) {
    be->linear_backward(dx, fin, D(l.w) + col, l.fin, dbias, dout, l.fout, x, fin, P(l.w) + col, n,
                        fin, l.fout);
}

static void mlp_fwd(const seer_backend *be, const float *params, mlp_p p, const float *x,
                    int64_t ldx, int64_t n, mlp_act a) {
    lin_fwd(be, params, p.l1, a.hid, p.l1.fout, x, ldx, n, LIN_RELU);
    lin_fwd(be, params, p.l2, a.out, p.l2.fout, a.hid, p.l1.fout, n, 0);
}

/* dout: gradient of the MLP output (contiguous); dhid: scratch for the hidden gradient;
 * dx (may be NULL) receives the input gradient. */
static void mlp_bwd(const seer_backend *be, const float *params, float *grads, mlp_p p,
                    const float *x, int64_t ldx, float *dx, int64_t lddx, int64_t n, mlp_act a,
                    float *dhid, const float *dout) {
    lin_bwd(be, params, grads, p.l2, dhid, p.l1.fout, dout, p.l2.fout, a.hid, p.l1.fout, n);
    be->relu_backward(dhid, a.hid, n * p.l1.fout);
    lin_bwd(be, params, grads, p.l1, dx, lddx, dhid, p.l1.fout, x, ldx, n);
}

static void heads_forward(const seernet *m, const seer_backend *be, const float *params,
                          int64_t G, seernet_acts *a) {
    int hh = m->head_hidden;
    for (int h = 0; h < m->M; h++) {
        float *hid = a->head_hid + (int64_t)h * a->cap_G * hh;
        lin_fwd(be, params, m->head[h].l1, hid, hh, a->emb, m->D, G, LIN_RELU);
        lin_fwd(be, params, m->head[h].l2, a->pred + h, m->M, hid, hh, G, 0);
    }
}

static void heads_backward(const seernet *m, const seer_backend *be, const float *params,
                           float *grads, int64_t G, const seernet_acts *a, seernet_acts *d,
                           int head) {
    int hh = m->head_hidden;
    for (int h = head < 0 ? 0 : head; h < (head < 0 ? m->M : head + 1); h++) {
        float *hid = a->head_hid + (int64_t)h * a->cap_G * hh;
        float *dhid = d->head_hid + (int64_t)h * d->cap_G * hh;
        lin_bwd(be, params, grads, m->head[h].l2, dhid, hh, d->pred + h, m->M, hid, hh, G);
        be->relu_backward(dhid, hid, G * hh);
        lin_bwd(be, params, grads, m->head[h].l1, d->emb, m->D, dhid, hh, a->emb, m->D, G);
    }
}

/* PerfSAGE and GCN trunks (equations at the top of seernet.h). */
static void graph_trunk_forward(const seernet *m, const seer_backend *be, const float *params,
                                const seernet_input *in, seernet_acts *a) {
    int64_t N = in->N, G = in->G;
    int H = m->H, Fn = m->Fn, sage = m->arch == ARCH_PERFSAGE;
    const edge_set *es = sage ? &in->x->sym : &in->x->gcn;
    int64_t V = es->V, in0 = sage ? Fn + m->emb : Fn, out_w = sage ? 2 * H : H;
    be->copy_rows(a->px[0], in0, in->xn, Fn, N, Fn);
    if (sage) be->gather_forward(a->px[0] + Fn, in0, P(m->embed), m->emb, in->x->op, N, m->emb, 0);
    else be->zero(a->px[0] + N * in0, sizeof(float) * (size_t)(G * in0)); // global nodes: zero input
    for (int l = 0; l < m->L; l++) {
        int64_t w = l ? out_w : in0;
        be->gather_forward(a->pmsg[l], w, a->px[l], w, es->src, es->E, (int)w, 0);
        be->seg_mean_forward(a->pagg[l], w, a->pmsg[l], w, es->in_ptr, es->in_idx, V, (int)w);
        if (sage) {
            lin_fwd(be, params, m->sage_self[l], a->px[l + 1], out_w, a->px[l], w, V, LIN_RELU);
            lin_fwd(be, params, m->sage_nbr[l], a->px[l + 1] + H, out_w, a->pagg[l], w, V, LIN_RELU);
        } else {
            lin_fwd(be, params, m->gcn[l], a->px[l + 1], out_w, a->pagg[l], w, V, LIN_RELU);
        }
    }
    if (sage) be->seg_mean_forward(a->emb, out_w, a->px[m->L], out_w, in->node_ptr, NULL, G, (int)out_w);
    else a->emb = a->px[m->L] + N * out_w; // the global nodes' rows
}

static void graph_trunk_backward(const seernet *m, const seer_backend *be, const float *params,
                                 float *grads, const seernet_input *in, const seernet_acts *a,
                                 seernet_acts *d) {
    int64_t G = in->G;
    int H = m->H, Fn = m->Fn, sage = m->arch == ARCH_PERFSAGE;
    const edge_set *es = sage ? &in->x->sym : &in->x->gcn;
    int64_t V = es->V, in0 = sage ? Fn + m->emb : Fn, out_w = sage ? 2 * H : H;
    if (sage)
        be->seg_mean_backward(d->px[m->L], out_w, d->emb, out_w, in->node_ptr, NULL, G, (int)out_w);
    for (int l = m->L - 1; l >= 0; l--) {
        int64_t w = l ? out_w : in0;
        be->relu_backward(d->px[l + 1], a->px[l + 1], V * out_w);
        if (sage) {
            lin_bwd(be, params, grads, m->sage_self[l], d->px[l], w, d->px[l + 1], out_w, a->px[l], w, V);
            lin_bwd(be, params, grads, m->sage_nbr[l], d->pagg[l], w, d->px[l + 1] + H, out_w,
                    a->pagg[l], w, V);
        } else {
            lin_bwd(be, params, grads, m->gcn[l], d->pagg[l], w, d->px[l + 1], out_w, a->pagg[l], w, V);
        }
        be->seg_mean_backward(d->pmsg[l], w, d->pagg[l], w, es->in_ptr, es->in_idx, V, (int)w);
        if (l > 0 || sage) // the backward of the gather, on the transposed index
            be->seg_sum_forward(d->px[l], w, d->pmsg[l], w, es->out_ptr, es->out_idx, V, (int)w);
    }
    if (sage) // the embedding rows: nodes grouped by operator
        be->seg_sum_forward(D(m->embed), m->emb, d->px[0] + Fn, in0, in->x->op_ptr, in->x->op_idx,
                            m->n_ops, m->emb);
}

void seernet_forward(const seernet *m, const seer_backend *be, const float *params,
                     const seernet_input *in, seernet_acts *a) {
    int64_t N = in->N, E = in->E, G = in->G;
    int H = m->H, aw = m->agg == AGG_SYNMM ? 2 * H : H;
    SEER_ASSERT(N <= a->cap_N && E <= a->cap_E && G <= a->cap_G);
    if (m->arch != ARCH_SEERNET) {
        graph_trunk_forward(m, be, params, in, a);
        heads_forward(m, be, params, G, a);
        return;
    }
    mlp_fwd(be, params, m->enc_n, in->xn, m->Fn, N, a->enc_n);
    mlp_fwd(be, params, m->enc_e, in->xe, m->Fe, E, a->enc_e);
    mlp_fwd(be, params, m->enc_g, in->xg, m->Fg, G, a->enc_g);
    lin_fwd(be, params, m->attn0, a->score0, 1, a->h[0], H, N, 0);
    be->attn_pool_forward(a->z[0], a->alpha0, a->h[0], a->score0, in->node_ptr, G, H);
    for (int l = 0; l < m->L; l++) {
        const seernet_block *p = &m->blk[l];
        seernet_block_act *b = &a->blk[l];
        const float *h = a->h[l], *e = a->e[l], *g = a->g[l], *z = a->z[l];
        // edge update, first layer by parts: e We^T + b + (h Ws^T)[src] + (h Wd^T)[dst] + (g Wg^T)[graph]
        lin_p e1 = p->phi_e.l1;
        blk_fwd(be, params, e1, 0, H, b->e.hid, e, E, P(e1.b), 0);
        blk_fwd(be, params, e1, H, H, b->ts, h, N, NULL, 0);
        blk_fwd(be, params, e1, 2 * H, H, b->td, h, N, NULL, 0);
        blk_fwd(be, params, e1, 3 * H, H, b->tg, g, G, NULL, 0);
        be->gather_forward(b->e.hid, H, b->ts, H, in->src, E, H, 1);
        be->gather_forward(b->e.hid, H, b->td, H, in->dst, E, H, 1);
        be->gather_forward(b->e.hid, H, b->tg, H, in->edge_graph, E, H, 1);
        be->relu_forward(b->e.hid, E * H);
        lin_fwd(be, params, p->phi_e.l2, b->e.out, H, b->e.hid, H, E, 0);
        be->copy_rows(a->e[l + 1], H, e, H, E, H);
        be->add_rows(a->e[l + 1], H, b->e.out, H, E, H);
        // node aggregation of incoming messages
        if (m->agg == AGG_SYNMM) {
            be->seg_max_forward(b->agg, aw, b->agg_arg, b->e.out, H, in->in_ptr, in->in_idx, N, H);
            be->seg_mean_forward(b->agg + H, aw, b->e.out, H, in->in_ptr, in->in_idx, N, H);
        } else {
            be->seg_mean_forward(b->agg, aw, b->e.out, H, in->in_ptr, in->in_idx, N, H);
        }
        // node update, first layer by parts: agg Wa^T + b + h Wh^T + (z Wh^T + g Wg^T)[graph]
        lin_p v1 = p->phi_v.l1;
        blk_fwd(be, params, v1, 0, aw, b->v.hid, b->agg, N, P(v1.b), 0);
        blk_fwd(be, params, v1, aw, H, b->v.hid, h, N, NULL, LIN_ACC);
        blk_fwd(be, params, v1, aw, H, b->tzg, z, G, NULL, 0);
        blk_fwd(be, params, v1, aw + H, H, b->tzg, g, G, NULL, LIN_ACC);
        be->gather_forward(b->v.hid, H, b->tzg, H, in->node_graph, N, H, 1);
        be->relu_forward(b->v.hid, N * H);
        lin_fwd(be, params, p->phi_v.l2, b->v.out, H, b->v.hid, H, N, 0);
        be->copy_rows(a->h[l + 1], H, h, H, N, H);
        be->add_rows(a->h[l + 1], H, b->v.out, H, N, H);
        const float *hn = a->h[l + 1];
        // global node (GNPB)
        lin_fwd(be, params, p->attn, b->score, 1, hn, H, N, 0);
        be->attn_pool_forward(b->pool, b->alpha, hn, b->score, in->node_ptr, G, H);
        be->copy_rows(b->pz, H, b->pool, H, G, H);
        be->add_rows(b->pz, H, z, H, G, H);
        mlp_fwd(be, params, p->phi_z, b->pz, H, G, b->z);
        // SynMM readout and global update
        be->seg_max_forward(b->xr, 2 * H, b->r_arg, hn, H, in->node_ptr, NULL, G, H);
        be->seg_mean_forward(b->xr + H, 2 * H, hn, H, in->node_ptr, NULL, G, H);
        lin_fwd(be, params, p->readout, b->xu, 3 * H, b->xr, 2 * H, G, 0);
        be->copy_rows(b->xu + H, 3 * H, b->z.out, H, G, H);
        be->copy_rows(b->xu + 2 * H, 3 * H, g, H, G, H);
        mlp_fwd(be, params, p->phi_u, b->xu, 3 * H, G, b->u);
        be->copy_rows(a->g[l + 1], H, g, H, G, H);
        be->add_rows(a->g[l + 1], H, b->u.out, H, G, H);
    }
    heads_forward(m, be, params, G, a);
}

void seernet_backward(const seernet *m, const seer_backend *be, const float *params, float *grads,
                      const seernet_input *in, const seernet_acts *a, seernet_acts *d, int head) {
    int64_t N = in->N, E = in->E, G = in->G;
    int H = m->H, aw = m->agg == AGG_SYNMM ? 2 * H : H;
    if (m->arch == ARCH_GCN) d->emb = d->px[m->L] + N * H; // the global nodes' rows
    heads_backward(m, be, params, grads, G, a, d, head);
    if (m->arch != ARCH_SEERNET) {
        graph_trunk_backward(m, be, params, grads, in, a, d);
        return;
    }
    for (int l = m->L - 1; l >= 0; l--) {
        const seernet_block *p = &m->blk[l];
        const seernet_block_act *b = &a->blk[l];
        seernet_block_act *db = &d->blk[l];
        const float *h = a->h[l], *g = a->g[l], *hn = a->h[l + 1];
        float *dh = d->h[l], *de = d->e[l], *dg = d->g[l], *dz = d->z[l];
        float *dhn = d->h[l + 1], *den = d->e[l + 1], *dgn = d->g[l + 1], *dzn = d->z[l + 1];
        // g' = g + phi_u([r, z', g])
        be->add_rows(dg, H, dgn, H, G, H);
        mlp_bwd(be, params, grads, p->phi_u, b->xu, 3 * H, db->xu, 3 * H, G, b->u, db->u.hid, dgn);
        be->add_rows(dg, H, db->xu + 2 * H, 3 * H, G, H);
        be->add_rows(dzn, H, db->xu + H, 3 * H, G, H);
        lin_bwd(be, params, grads, p->readout, db->xr, 2 * H, db->xu, 3 * H, b->xr, 2 * H, G);
        be->seg_max_backward(dhn, H, db->xr, 2 * H, b->r_arg, G, H);
        be->seg_mean_backward(dhn, H, db->xr + H, 2 * H, in->node_ptr, NULL, G, H);
        // z' = phi_z(attnpool(h') + z)
        mlp_bwd(be, params, grads, p->phi_z, b->pz, H, db->pz, H, G, b->z, db->z.hid, dzn);
        be->add_rows(dz, H, db->pz, H, G, H);
        be->attn_pool_backward(dhn, db->score, db->pz, hn, b->pool, b->alpha, in->node_ptr, G, H);
        attn_bwd(be, params, grads, p->attn, dhn, db->score, hn, N);
        // h' = h + phi_v([agg, h + z, g]), first layer by parts
        be->add_rows(dh, H, dhn, H, N, H);
        lin_bwd(be, params, grads, p->phi_v.l2, db->v.hid, H, dhn, H, b->v.hid, H, N);
        be->relu_backward(db->v.hid, b->v.hid, N * H);
        lin_p v1 = p->phi_v.l1;
        blk_bwd(be, params, grads, v1, 0, aw, db->agg, db->v.hid, b->agg, N, D(v1.b));
        blk_bwd(be, params, grads, v1, aw, H, dh, db->v.hid, h, N, NULL);
        be->seg_sum_forward(db->tzg, H, db->v.hid, H, in->node_ptr, NULL, G, H);
        blk_bwd(be, params, grads, v1, aw, H, dz, db->tzg, a->z[l], G, NULL);
        blk_bwd(be, params, grads, v1, aw + H, H, dg, db->tzg, g, G, NULL);
        float *dm = db->e.out;
        if (m->agg == AGG_SYNMM) {
            be->seg_max_backward(dm, H, db->agg, aw, b->agg_arg, N, H);
            be->seg_mean_backward(dm, H, db->agg + H, aw, in->in_ptr, in->in_idx, N, H);
        } else {
            be->seg_mean_backward(dm, H, db->agg, aw, in->in_ptr, in->in_idx, N, H);
        }
        // e' = e + m, m = phi_e([e, h_src, h_dst, g]), first layer by parts
        be->add_rows(de, H, den, H, E, H);
        be->add_rows(dm, H, den, H, E, H);
        lin_bwd(be, params, grads, p->phi_e.l2, db->e.hid, H, dm, H, b->e.hid, H, E);
        be->relu_backward(db->e.hid, b->e.hid, E * H);
        lin_p e1 = p->phi_e.l1;
        blk_bwd(be, params, grads, e1, 0, H, de, db->e.hid, a->e[l], E, D(e1.b));
        be->seg_sum_forward(db->ts, H, db->e.hid, H, in->out_ptr, in->out_idx, N, H);
        be->seg_sum_forward(db->td, H, db->e.hid, H, in->in_ptr, in->in_idx, N, H);
        be->seg_sum_forward(db->tg, H, db->e.hid, H, in->edge_ptr, NULL, G, H);
        blk_bwd(be, params, grads, e1, H, H, dh, db->ts, h, N, NULL);
        blk_bwd(be, params, grads, e1, 2 * H, H, dh, db->td, h, N, NULL);
        blk_bwd(be, params, grads, e1, 3 * H, H, dg, db->tg, g, G, NULL);
    }
    // z0 = attnpool(h0)
    be->attn_pool_backward(d->h[0], d->score0, d->z[0], a->h[0], a->z[0], a->alpha0, in->node_ptr,
                           G, H);
    attn_bwd(be, params, grads, m->attn0, d->h[0], d->score0, a->h[0], N);
    mlp_bwd(be, params, grads, m->enc_n, in->xn, m->Fn, NULL, 0, N, a->enc_n, d->enc_n.hid,
            d->h[0]);
    mlp_bwd(be, params, grads, m->enc_e, in->xe, m->Fe, NULL, 0, E, a->enc_e, d->enc_e.hid,
            d->e[0]);
    mlp_bwd(be, params, grads, m->enc_g, in->xg, m->Fg, NULL, 0, G, a->enc_g, d->enc_g.hid,
            d->g[0]);
}
