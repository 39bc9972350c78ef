/* model: BRP-NAS's GCN latency predictor, the trunk behind model.h.
 *   a global node per graph that every node feeds (graph/batch.h: extra_index.gcn, over N + G
 *   nodes, the global node of graph g being node N + g, with self loops);
 *   L layers x' = relu(mean_{u in {v} + pred(v)} (x_u) W^T + b) of width H over the nodes and the
 *   global nodes (whose input is zero);
 *   embedding: the global nodes' final states (G, H) (D = H). BRP-NAS: 4 x 600. */
#include "model.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    lin_p layer[MODEL_MAX_BLOCKS];
} gcn_params;

typedef struct {
    float *px[MODEL_MAX_BLOCKS + 1], *msg[MODEL_MAX_BLOCKS], *agg[MODEL_MAX_BLOCKS];
} gcn_acts;

_Static_assert(sizeof(gcn_params) <= MODEL_TRUNK_BYTES, "GCN parameters: raise MODEL_TRUNK_BYTES");
_Static_assert(sizeof(gcn_acts) <= MODEL_ACTS_BYTES, "GCN activations: raise MODEL_ACTS_BYTES");

#define SP(m) ((const gcn_params *)(const void *)(m)->trunk)
#define SA(a) ((gcn_acts *)(void *)(a)->trunk)

static void gcn_init(model *m) {
    gcn_params *sp = (gcn_params *)(void *)m->trunk;
    m->D = m->H;
    for (int l = 0; l < m->L; l++) {
        char nm[32];
        snprintf(nm, sizeof nm, "gcn%d", l);
        sp->layer[l] = params_linear(&m->pt, nm, l ? m->H : m->Fn, m->H);
    }
}

/* Over N + G nodes and E + 2N + G edges. The embedding is rows of px[L] (set by the forward
 * pass, whose N it depends on). */
static void gcn_layout(model_acts *a, const model *m, act_arena *ar) {
    int64_t N = a->cap_N, E = a->cap_E, G = a->cap_G, H = m->H;
    int64_t V = N + G, EE = E + 2 * N + G;
    gcn_acts *s = SA(a);
    for (int l = 0; l < m->L; l++) {
        int64_t in = l ? H : m->Fn;
        if (l == 0) s->px[0] = act_f(ar, V, in);
        s->msg[l] = act_f(ar, EE, in), s->agg[l] = act_f(ar, V, in);
        s->px[l + 1] = act_f(ar, V, H);
    }
    a->emb = NULL;
}

static void gcn_forward(const model *m, const seer_backend *be, const float *params,
                        const model_input *in, model_acts *act) {
    const gcn_params *sp = SP(m);
    gcn_acts *a = SA(act);
    const edge_set *es = &in->x->gcn;
    int64_t N = in->N, V = es->V, Fn = m->Fn, H = m->H;
    be->copy_rows(be->ctx, a->px[0], Fn, in->xn, Fn, N, (int)Fn);
    be->zero(be->ctx, a->px[0] + N * Fn, sizeof(float) * (size_t)(in->G * Fn)); // global nodes: zero input
    for (int l = 0; l < m->L; l++) {
        int64_t w = l ? H : Fn;
        layer_nbr_mean_fwd(be, es, a->px[l], w, a->msg[l], a->agg[l]);
        layer_lin_fwd(be, params, sp->layer[l], a->px[l + 1], H, a->agg[l], w, V, LIN_RELU);
    }
    act->emb = a->px[m->L] + N * H; // the global nodes' rows
}

static float *gcn_emb_grad(const model *m, const model_input *in, model_acts *d) {
    return SA(d)->px[m->L] + in->N * m->H;
}

static void gcn_backward(const model *m, const seer_backend *be, const float *params,
                         float *grads, const model_input *in, const model_acts *act,
                         model_acts *dact) {
    const gcn_params *sp = SP(m);
    const gcn_acts *a = (const gcn_acts *)(const void *)act->trunk;
    gcn_acts *d = SA(dact);
    const edge_set *es = &in->x->gcn;
    int64_t V = es->V, Fn = m->Fn, H = m->H;
    for (int l = m->L - 1; l >= 0; l--) {
        int64_t w = l ? H : Fn;
        be->relu_backward(be->ctx, d->px[l + 1], a->px[l + 1], V * H);
        layer_lin_bwd(be, params, grads, sp->layer[l], d->agg[l], w, d->px[l + 1], H, a->agg[l], w, V);
        // the input features get no gradient: layer 0's gather needs no backward
        layer_nbr_mean_bwd(be, es, w, d->msg[l], d->agg[l], l > 0 ? d->px[l] : NULL);
    }
}

const model_ops model_gcn = {
    .name = "gcn",
    .flags = MODEL_EXTRA_INDEX,
    .equations = "src/model/gcn.c (equations of the GCN trunk)",
    .init = gcn_init,
    .layout = gcn_layout,
    .forward = gcn_forward,
    .emb_grad = gcn_emb_grad,
    .backward = gcn_backward,
};
