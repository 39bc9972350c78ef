/* model: PerfSAGE (arXiv 2301.10999), the trunk behind model.h.
 *   x0 = [xn, E[op]]    a learned operator embedding E (n_ops, emb) beside the node features
 *   L GraphSAGE-mean layers  x' = [relu(x Ws^T + bs), relu(mean_nbr(x) Wn^T + bn)]  (N, 2H);
 *                       neighbours = predecessors and successors, full neighbourhoods
 *   embedding           mean pooling per graph (G, 2H) (D = 2H)
 * PerfSAGE's public code: 2 layers of 128 + 128. */
#include "model.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    int64_t embed; // (n_ops, emb)
    lin_p self[MODEL_MAX_BLOCKS], nbr[MODEL_MAX_BLOCKS];
} sage_params;

/* px[l] the input of layer l (px[L] the output), msg[l] the gathered neighbour rows, agg[l]
 * their per-node means. */
typedef struct {
    float *px[MODEL_MAX_BLOCKS + 1], *msg[MODEL_MAX_BLOCKS], *agg[MODEL_MAX_BLOCKS];
} sage_acts;

_Static_assert(sizeof(sage_params) <= MODEL_TRUNK_BYTES, "PerfSAGE parameters: raise MODEL_TRUNK_BYTES");
_Static_assert(sizeof(sage_acts) <= MODEL_ACTS_BYTES, "PerfSAGE activations: raise MODEL_ACTS_BYTES");

#define SP(m) ((const sage_params *)(const void *)(m)->trunk)
#define SA(a) ((sage_acts *)(void *)(a)->trunk)

static int sage_check(const model_sizes *s, int64_t n_stored, const char *origin, seer_err *err) {
    if (n_stored < 10 || s->n_ops < 1 || s->emb < 1)
        return seer_fail(err, "%s: model.sizes: perfsage needs 10 or 11 values with operator types and "
                              "an embedding width of at least 1", origin);
    return 0;
}

static void sage_init(model *m) {
    SEER_ASSERT(m->n_ops >= 1 && m->emb >= 1);
    sage_params *sp = (sage_params *)(void *)m->trunk;
    param_table *t = &m->pt;
    int H = m->H;
    m->D = 2 * H;
    sp->embed = params_add(t, "op_embed.weight", m->n_ops, m->emb);
    for (int l = 0; l < m->L; l++) {
        char nm[32];
        int in = l ? 2 * H : m->Fn + m->emb;
        snprintf(nm, sizeof nm, "sage%d.self", l);
        sp->self[l] = params_linear(t, nm, in, H);
        snprintf(nm, sizeof nm, "sage%d.neigh", l);
        sp->nbr[l] = params_linear(t, nm, in, H);
    }
}

/* Over N nodes and 2E directed neighbour pairs (graph/batch.h: extra_index.sym). */
static void sage_layout(model_acts *a, const model *m, act_arena *ar) {
    int64_t N = a->cap_N, E = a->cap_E, G = a->cap_G, out_w = 2 * m->H;
    sage_acts *s = SA(a);
    for (int l = 0; l < m->L; l++) {
        int64_t in = l ? out_w : m->Fn + m->emb;
        if (l == 0) s->px[0] = act_f(ar, N, in);
        s->msg[l] = act_f(ar, 2 * E, in), s->agg[l] = act_f(ar, N, in);
        s->px[l + 1] = act_f(ar, N, out_w);
    }
    a->emb = act_f(ar, G, m->D);
}

static void sage_forward(const model *m, const seer_backend *be, const float *params,
                         const model_input *in, model_acts *act) {
    const sage_params *sp = SP(m);
    sage_acts *a = SA(act);
    const edge_set *es = &in->x->sym;
    int H = m->H, Fn = m->Fn;
    int64_t V = es->V, in0 = Fn + m->emb, out_w = 2 * H;
    be->copy_rows(be->ctx, a->px[0], in0, in->xn, Fn, in->N, Fn);
    be->gather_forward(be->ctx, a->px[0] + Fn, in0, params + sp->embed, m->emb, in->x->op, in->N, m->emb, 0);
    for (int l = 0; l < m->L; l++) {
        int64_t w = l ? out_w : in0;
        layer_nbr_mean_fwd(be, es, a->px[l], w, a->msg[l], a->agg[l]);
        layer_lin_fwd(be, params, sp->self[l], a->px[l + 1], out_w, a->px[l], w, V, LIN_RELU);
        layer_lin_fwd(be, params, sp->nbr[l], a->px[l + 1] + H, out_w, a->agg[l], w, V, LIN_RELU);
    }
    be->seg_mean_forward(be->ctx, act->emb, out_w, a->px[m->L], out_w, in->node_ptr, NULL, in->G, (int)out_w);
}

static void sage_backward(const model *m, const seer_backend *be, const float *params,
                          float *grads, const model_input *in, const model_acts *act,
                          model_acts *dact) {
    const sage_params *sp = SP(m);
    const sage_acts *a = (const sage_acts *)(const void *)act->trunk;
    sage_acts *d = SA(dact);
    const edge_set *es = &in->x->sym;
    int H = m->H, Fn = m->Fn;
    int64_t V = es->V, in0 = Fn + m->emb, out_w = 2 * H;
    be->seg_mean_backward(be->ctx, d->px[m->L], out_w, dact->emb, out_w, in->node_ptr, NULL, in->G, (int)out_w);
    for (int l = m->L - 1; l >= 0; l--) {
        int64_t w = l ? out_w : in0;
        be->relu_backward(be->ctx, d->px[l + 1], a->px[l + 1], V * out_w);
        layer_lin_bwd(be, params, grads, sp->self[l], d->px[l], w, d->px[l + 1], out_w, a->px[l], w, V);
        layer_lin_bwd(be, params, grads, sp->nbr[l], d->agg[l], w, d->px[l + 1] + H, out_w,
                      a->agg[l], w, V);
        layer_nbr_mean_bwd(be, es, w, d->msg[l], d->agg[l], d->px[l]);
    }
    // the embedding rows: nodes grouped by operator
    be->seg_sum_forward(be->ctx, grads + sp->embed, m->emb, d->px[0] + Fn, in0, in->x->op_ptr,
                        in->x->op_idx, m->n_ops, m->emb);
}

const model_ops model_perfsage = {
    .name = "perfsage",
    .flags = MODEL_EXTRA_INDEX | MODEL_OP_TYPES,
    .equations = "src/model/perfsage.c (equations of the PerfSAGE trunk)",
    .check = sage_check,
    .init = sage_init,
    .layout = sage_layout,
    .forward = sage_forward,
    .backward = sage_backward,
};
