/* model: SeerNet (PerfSeer, arXiv 2502.01206), the trunk behind model.h.
 *
 *   encoders     h0 = mlp_n(xn) (N,H), e0 = mlp_e(xe) (E,H), g0 = mlp_g(xg) (G,H)
 *   GNPB         z0 = attnpool(h0) (G,H), score = linear(h) (N,1), softmax per graph
 *   block l      m  = phi_e([e, h_src, h_dst, g])            (E,H)  e' = e + m
 *                a  = mean_in(m) | SynMM [max_in(m), mean_in(m)]
 *                h' = h + phi_v([a, h + z, g])                (N,H)
 *                z' = phi_z(attnpool(h') + z)                 (G,H)
 *                r  = W_r [max_pool(h'), mean_pool(h')]       (G,H)
 *                g' = g + phi_u([r, z', g])                   (G,H)
 *   embedding    g_L (G,H), read by the heads (D = H)
 * Every phi is a one-hidden-layer ReLU MLP of width H.
 *
 * The first layer of phi_e and phi_v acts on a concatenation; it is computed by parts (DGL's
 * "transform, then gather"): [e, h_src, h_dst, g] W^T = e We^T + (h Ws^T)[src] + (h Wd^T)[dst]
 * + (g Wg^T)[graph], so the node and graph terms cost N and G rows instead of E, and no (E, 4H)
 * concatenation is stored. phi_v likewise: [a, h + z, g] W^T = a Wa^T + h Wh^T
 * + (z Wh^T + g Wg^T)[graph]. */
#include "model.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    mlp_p phi_e, phi_v, phi_z, phi_u;
    lin_p attn, readout;
} seernet_block;

typedef struct {
    mlp_p enc_n, enc_e, enc_g;
    lin_p attn0;
    seernet_block blk[MODEL_MAX_BLOCKS];
} seernet_params;

typedef struct {
    mlp_act e;        // hid = relu(first layer) (E, H), out = m (E, H)
    float *ts, *td;   // (N, H) h Ws^T, h Wd^T
    float *tg;        // (G, H) g Wg^T (edge update)
    float *agg;       // (N, AW) mean, or SynMM [max, mean] of incoming m
    int64_t *agg_arg; // (N, H) SynMM max argmax
    float *tzg;       // (G, H) z Wh^T + g Wg^T (node update)
    mlp_act v;
    float *score, *alpha; // (N)
    float *pool, *pz;     // (G, H) attnpool(h'), attnpool(h') + z
    mlp_act z;            // out = z'
    float *xr;            // (G, 2H) [max_pool, mean_pool]
    int64_t *r_arg;       // (G, H)
    float *xu;            // (G, 3H) [r, z', g]
    mlp_act u;
} seernet_block_act;

/* h[l], e[l], g[l], z[l] are the states entering block l; index L is the trunk's output. */
typedef struct {
    mlp_act enc_n, enc_e, enc_g;
    float *score0, *alpha0;
    seernet_block_act blk[MODEL_MAX_BLOCKS];
    float *h[MODEL_MAX_BLOCKS + 1], *e[MODEL_MAX_BLOCKS + 1];
    float *g[MODEL_MAX_BLOCKS + 1], *z[MODEL_MAX_BLOCKS + 1];
} seernet_acts;

_Static_assert(sizeof(seernet_params) <= MODEL_TRUNK_BYTES, "SeerNet parameters: raise MODEL_TRUNK_BYTES");
_Static_assert(sizeof(seernet_acts) <= MODEL_ACTS_BYTES, "SeerNet activations: raise MODEL_ACTS_BYTES");

#define SP(m) ((const seernet_params *)(const void *)(m)->trunk)
#define SA(a) ((seernet_acts *)(void *)(a)->trunk)
#define SAC(a) ((const seernet_acts *)(const void *)(a)->trunk)
#define P(off) (params + (off))
#define D(off) (grads + (off))

static void seernet_init(model *m) {
    int H = m->H, aw = m->agg == AGG_SYNMM ? 2 * H : H;
    seernet_params *sp = (seernet_params *)(void *)m->trunk;
    param_table *t = &m->pt;
    m->D = H;
    sp->enc_n = params_mlp(t, "enc_node", m->Fn, H, H);
    sp->enc_e = params_mlp(t, "enc_edge", m->Fe, H, H);
    sp->enc_g = params_mlp(t, "enc_global", m->Fg, H, H);
    sp->attn0 = params_linear(t, "gnpb.attn", H, 1);
    for (int l = 0; l < m->L; l++) {
        char nm[48];
        seernet_block *b = &sp->blk[l];
#define NAME(s) (snprintf(nm, sizeof nm, "block%d.%s", l, s), nm)
        b->phi_e = params_mlp(t, NAME("phi_e"), 4 * H, H, H);
        b->phi_v = params_mlp(t, NAME("phi_v"), aw + 2 * H, H, H);
        b->attn = params_linear(t, NAME("attn"), H, 1);
        b->phi_z = params_mlp(t, NAME("phi_z"), H, H, H);
        b->readout = params_linear(t, NAME("readout"), 2 * H, H);
        b->phi_u = params_mlp(t, NAME("phi_u"), 3 * H, H, H);
#undef NAME
    }
}

static void seernet_layout(model_acts *a, const model *m, act_arena *ar) {
    int64_t N = a->cap_N, E = a->cap_E, G = a->cap_G;
    int H = m->H, aw = m->agg == AGG_SYNMM ? 2 * H : H;
    seernet_acts *s = SA(a);
#define F(rows, cols) act_f(ar, rows, cols)
    s->enc_n.hid = F(N, H), s->enc_n.out = F(N, H);
    s->enc_e.hid = F(E, H), s->enc_e.out = F(E, H);
    s->enc_g.hid = F(G, H), s->enc_g.out = F(G, H);
    s->score0 = F(N, 1), s->alpha0 = F(N, 1);
    s->h[0] = s->enc_n.out, s->e[0] = s->enc_e.out, s->g[0] = s->enc_g.out;
    s->z[0] = F(G, H);
    for (int l = 0; l < m->L; l++) {
        seernet_block_act *b = &s->blk[l];
        b->e.hid = F(E, H), b->e.out = F(E, H);
        b->ts = F(N, H), b->td = F(N, H), b->tg = F(G, H);
        s->e[l + 1] = F(E, H);
        b->agg = F(N, aw);
        b->agg_arg = m->agg == AGG_SYNMM ? act_i(ar, N, H) : NULL;
        b->tzg = F(G, H);
        b->v.hid = F(N, H), b->v.out = F(N, H);
        s->h[l + 1] = F(N, H);
        b->score = F(N, 1), b->alpha = F(N, 1);
        b->pool = F(G, H), b->pz = F(G, H);
        b->z.hid = F(G, H), b->z.out = F(G, H);
        s->z[l + 1] = b->z.out;
        b->xr = F(G, 2 * H);
        b->r_arg = act_i(ar, G, H);
        b->xu = F(G, 3 * H);
        b->u.hid = F(G, H), b->u.out = F(G, H);
        s->g[l + 1] = F(G, H);
    }
#undef F
    a->emb = s->g[m->L];
}

/* Backward of an attention score layer: the softmax over a segment ignores a shift of all its
 * scores, so the score bias has zero gradient in exact arithmetic; it gets none here rather than
 * rounding noise (which Adam would turn into full-size steps of a random walk). */
static void attn_bwd(const seer_backend *be, const float *params, float *grads, lin_p l, float *dx,
                     const float *dscore, const float *x, int64_t n) {
    be->linear_backward(be->ctx, dx, l.fin, D(l.w), l.fin, NULL, dscore, 1, x, l.fin, P(l.w), n, l.fin, 1);
}

/* Column block [col, col + fin) of a linear layer's weight: x W[:, col:col+fin]^T. */
static void blk_fwd(const seer_backend *be, const float *params, lin_p l, int col, int fin,
                    float *out, const float *x, int64_t n, const float *bias, int flags) {
    be->linear_forward(be->ctx, out, l.fout, x, fin, P(l.w) + col, l.fin, bias, n, fin, l.fout, flags);
}

static void blk_bwd(const seer_backend *be, const float *params, float *grads, lin_p l, int col,
                    int fin, float *dx, const float *dout, const float *x, int64_t n, float *dbias) {
    be->linear_backward(be->ctx, dx, fin, D(l.w) + col, l.fin, dbias, dout, l.fout, x, fin, P(l.w) + col, n,
                        fin, l.fout);
}

static void seernet_forward(const model *m, const seer_backend *be, const float *params,
                            const model_input *in, model_acts *act) {
    int64_t N = in->N, E = in->E, G = in->G;
    int H = m->H, aw = m->agg == AGG_SYNMM ? 2 * H : H;
    const seernet_params *sp = SP(m);
    seernet_acts *a = SA(act);
    layer_mlp_fwd(be, params, sp->enc_n, in->xn, m->Fn, N, a->enc_n);
    layer_mlp_fwd(be, params, sp->enc_e, in->xe, m->Fe, E, a->enc_e);
    layer_mlp_fwd(be, params, sp->enc_g, in->xg, m->Fg, G, a->enc_g);
    layer_lin_fwd(be, params, sp->attn0, a->score0, 1, a->h[0], H, N, 0);
    be->attn_pool_forward(be->ctx, a->z[0], a->alpha0, a->h[0], a->score0, in->node_ptr, G, H);
    for (int l = 0; l < m->L; l++) {
        const seernet_block *p = &sp->blk[l];
        seernet_block_act *b = &a->blk[l];
        const float *h = a->h[l], *e = a->e[l], *g = a->g[l], *z = a->z[l];
        // edge update, first layer by parts: e We^T + b + (h Ws^T)[src] + (h Wd^T)[dst] + (g Wg^T)[graph]
        lin_p e1 = p->phi_e.l1;
        blk_fwd(be, params, e1, 0, H, b->e.hid, e, E, P(e1.b), 0);
        blk_fwd(be, params, e1, H, H, b->ts, h, N, NULL, 0);
        blk_fwd(be, params, e1, 2 * H, H, b->td, h, N, NULL, 0);
        blk_fwd(be, params, e1, 3 * H, H, b->tg, g, G, NULL, 0);
        be->gather_forward(be->ctx, b->e.hid, H, b->ts, H, in->src, E, H, 1);
        be->gather_forward(be->ctx, b->e.hid, H, b->td, H, in->dst, E, H, 1);
        be->gather_forward(be->ctx, b->e.hid, H, b->tg, H, in->edge_graph, E, H, 1);
        be->relu_forward(be->ctx, b->e.hid, E * H);
        layer_lin_fwd(be, params, p->phi_e.l2, b->e.out, H, b->e.hid, H, E, 0);
        be->copy_rows(be->ctx, a->e[l + 1], H, e, H, E, H);
        be->add_rows(be->ctx, a->e[l + 1], H, b->e.out, H, E, H);
        // node aggregation of incoming messages
        if (m->agg == AGG_SYNMM) {
            be->seg_max_forward(be->ctx, b->agg, aw, b->agg_arg, b->e.out, H, in->in_ptr, in->in_idx, N, H);
            be->seg_mean_forward(be->ctx, b->agg + H, aw, b->e.out, H, in->in_ptr, in->in_idx, N, H);
        } else {
            be->seg_mean_forward(be->ctx, b->agg, aw, b->e.out, H, in->in_ptr, in->in_idx, N, H);
        }
        // node update, first layer by parts: agg Wa^T + b + h Wh^T + (z Wh^T + g Wg^T)[graph]
        lin_p v1 = p->phi_v.l1;
        blk_fwd(be, params, v1, 0, aw, b->v.hid, b->agg, N, P(v1.b), 0);
        blk_fwd(be, params, v1, aw, H, b->v.hid, h, N, NULL, LIN_ACC);
        blk_fwd(be, params, v1, aw, H, b->tzg, z, G, NULL, 0);
        blk_fwd(be, params, v1, aw + H, H, b->tzg, g, G, NULL, LIN_ACC);
        be->gather_forward(be->ctx, b->v.hid, H, b->tzg, H, in->node_graph, N, H, 1);
        be->relu_forward(be->ctx, b->v.hid, N * H);
        layer_lin_fwd(be, params, p->phi_v.l2, b->v.out, H, b->v.hid, H, N, 0);
        be->copy_rows(be->ctx, a->h[l + 1], H, h, H, N, H);
        be->add_rows(be->ctx, a->h[l + 1], H, b->v.out, H, N, H);
        const float *hn = a->h[l + 1];
        // global node (GNPB)
        layer_lin_fwd(be, params, p->attn, b->score, 1, hn, H, N, 0);
        be->attn_pool_forward(be->ctx, b->pool, b->alpha, hn, b->score, in->node_ptr, G, H);
        be->copy_rows(be->ctx, b->pz, H, b->pool, H, G, H);
        be->add_rows(be->ctx, b->pz, H, z, H, G, H);
        layer_mlp_fwd(be, params, p->phi_z, b->pz, H, G, b->z);
        // SynMM readout and global update
        be->seg_max_forward(be->ctx, b->xr, 2 * H, b->r_arg, hn, H, in->node_ptr, NULL, G, H);
        be->seg_mean_forward(be->ctx, b->xr + H, 2 * H, hn, H, in->node_ptr, NULL, G, H);
        layer_lin_fwd(be, params, p->readout, b->xu, 3 * H, b->xr, 2 * H, G, 0);
        be->copy_rows(be->ctx, b->xu + H, 3 * H, b->z.out, H, G, H);
        be->copy_rows(be->ctx, b->xu + 2 * H, 3 * H, g, H, G, H);
        layer_mlp_fwd(be, params, p->phi_u, b->xu, 3 * H, G, b->u);
        be->copy_rows(be->ctx, a->g[l + 1], H, g, H, G, H);
        be->add_rows(be->ctx, a->g[l + 1], H, b->u.out, H, G, H);
    }
}

static void seernet_backward(const model *m, const seer_backend *be, const float *params,
                             float *grads, const model_input *in, const model_acts *act,
                             model_acts *dact) {
    int64_t N = in->N, E = in->E, G = in->G;
    int H = m->H, aw = m->agg == AGG_SYNMM ? 2 * H : H;
    const seernet_params *sp = SP(m);
    const seernet_acts *a = SAC(act);
    seernet_acts *d = SA(dact);
    for (int l = m->L - 1; l >= 0; l--) {
        const seernet_block *p = &sp->blk[l];
        const seernet_block_act *b = &a->blk[l];
        seernet_block_act *db = &d->blk[l];
        const float *h = a->h[l], *g = a->g[l], *hn = a->h[l + 1];
        float *dh = d->h[l], *de = d->e[l], *dg = d->g[l], *dz = d->z[l];
        float *dhn = d->h[l + 1], *den = d->e[l + 1], *dgn = d->g[l + 1], *dzn = d->z[l + 1];
        // g' = g + phi_u([r, z', g])
        be->add_rows(be->ctx, dg, H, dgn, H, G, H);
        layer_mlp_bwd(be, params, grads, p->phi_u, b->xu, 3 * H, db->xu, 3 * H, G, b->u, db->u.hid, dgn);
        be->add_rows(be->ctx, dg, H, db->xu + 2 * H, 3 * H, G, H);
        be->add_rows(be->ctx, dzn, H, db->xu + H, 3 * H, G, H);
        layer_lin_bwd(be, params, grads, p->readout, db->xr, 2 * H, db->xu, 3 * H, b->xr, 2 * H, G);
        be->seg_max_backward(be->ctx, dhn, H, db->xr, 2 * H, b->r_arg, G, H);
        be->seg_mean_backward(be->ctx, dhn, H, db->xr + H, 2 * H, in->node_ptr, NULL, G, H);
        // z' = phi_z(attnpool(h') + z)
        layer_mlp_bwd(be, params, grads, p->phi_z, b->pz, H, db->pz, H, G, b->z, db->z.hid, dzn);
        be->add_rows(be->ctx, dz, H, db->pz, H, G, H);
        be->attn_pool_backward(be->ctx, dhn, db->score, db->pz, hn, b->pool, b->alpha, in->node_ptr, G, H);
        attn_bwd(be, params, grads, p->attn, dhn, db->score, hn, N);
        // h' = h + phi_v([agg, h + z, g]), first layer by parts
        be->add_rows(be->ctx, dh, H, dhn, H, N, H);
        layer_lin_bwd(be, params, grads, p->phi_v.l2, db->v.hid, H, dhn, H, b->v.hid, H, N);
        be->relu_backward(be->ctx, db->v.hid, b->v.hid, N * H);
        lin_p v1 = p->phi_v.l1;
        blk_bwd(be, params, grads, v1, 0, aw, db->agg, db->v.hid, b->agg, N, D(v1.b));
        blk_bwd(be, params, grads, v1, aw, H, dh, db->v.hid, h, N, NULL);
        be->seg_sum_forward(be->ctx, db->tzg, H, db->v.hid, H, in->node_ptr, NULL, G, H);
        blk_bwd(be, params, grads, v1, aw, H, dz, db->tzg, a->z[l], G, NULL);
        blk_bwd(be, params, grads, v1, aw + H, H, dg, db->tzg, g, G, NULL);
        float *dm = db->e.out;
        if (m->agg == AGG_SYNMM) {
            be->seg_max_backward(be->ctx, dm, H, db->agg, aw, b->agg_arg, N, H);
            be->seg_mean_backward(be->ctx, dm, H, db->agg + H, aw, in->in_ptr, in->in_idx, N, H);
        } else {
            be->seg_mean_backward(be->ctx, dm, H, db->agg, aw, in->in_ptr, in->in_idx, N, H);
        }
        // e' = e + m, m = phi_e([e, h_src, h_dst, g]), first layer by parts
        be->add_rows(be->ctx, de, H, den, H, E, H);
        be->add_rows(be->ctx, dm, H, den, H, E, H);
        layer_lin_bwd(be, params, grads, p->phi_e.l2, db->e.hid, H, dm, H, b->e.hid, H, E);
        be->relu_backward(be->ctx, db->e.hid, b->e.hid, E * H);
        lin_p e1 = p->phi_e.l1;
        blk_bwd(be, params, grads, e1, 0, H, de, db->e.hid, a->e[l], E, D(e1.b));
        be->seg_sum_forward(be->ctx, db->ts, H, db->e.hid, H, in->out_ptr, in->out_idx, N, H);
        be->seg_sum_forward(be->ctx, db->td, H, db->e.hid, H, in->in_ptr, in->in_idx, N, H);
        be->seg_sum_forward(be->ctx, db->tg, H, db->e.hid, H, in->edge_ptr, NULL, G, H);
        blk_bwd(be, params, grads, e1, H, H, dh, db->ts, h, N, NULL);
        blk_bwd(be, params, grads, e1, 2 * H, H, dh, db->td, h, N, NULL);
        blk_bwd(be, params, grads, e1, 3 * H, H, dg, db->tg, g, G, NULL);
    }
    // z0 = attnpool(h0)
    be->attn_pool_backward(be->ctx, d->h[0], d->score0, d->z[0], a->h[0], a->z[0], a->alpha0, in->node_ptr,
                           G, H);
    attn_bwd(be, params, grads, sp->attn0, d->h[0], d->score0, a->h[0], N);
    layer_mlp_bwd(be, params, grads, sp->enc_n, in->xn, m->Fn, NULL, 0, N, a->enc_n, d->enc_n.hid,
                  d->h[0]);
    layer_mlp_bwd(be, params, grads, sp->enc_e, in->xe, m->Fe, NULL, 0, E, a->enc_e, d->enc_e.hid,
                  d->e[0]);
    layer_mlp_bwd(be, params, grads, sp->enc_g, in->xg, m->Fg, NULL, 0, G, a->enc_g, d->enc_g.hid,
                  d->g[0]);
}

const model_ops model_seernet = {
    .name = "seernet",
    .flags = 0,
    .equations = "benchmarks/reference/seernet_ref.py (class SeerNet; the tensor names are its "
                 "state_dict keys)",
    .init = seernet_init,
    .layout = seernet_layout,
    .forward = seernet_forward,
    .backward = seernet_backward,
};
