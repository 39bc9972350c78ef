/* model: the predictor networks, built from backend ops, forward and backward. Three trunks
 * share the per-label heads (and so multi-task training, PCGrad and the export):
 *   SeerNet (PerfSeer, arXiv 2502.01206), arch = ARCH_SEERNET, below;
 *   PerfSAGE (arXiv 2301.10999), ARCH_PERFSAGE: x0 = [xn, E[op]] (a learned operator
 *     embedding, n_ops x emb); L GraphSAGE-mean layers x' = [relu(x Ws^T + bs), relu(mean_nbr(x)
 *     Wn^T + bn)] (width 2H; neighbours = predecessors and successors, full neighbourhoods);
 *     mean pooling per graph (G, 2H) into the heads;
 *   GCN (BRP-NAS's latency predictor), ARCH_GCN: a global node per graph that every node feeds;
 *     L layers x' = relu(mean_{u in {v} + pred(v)} (x_u) W^T + b) of width H over the nodes and
 *     the global nodes (whose input is zero); the global node's final state goes to the heads.
 * The SeerNet trunk:
 *
 * Size letters: G graphs, N nodes, E edges of a batch; H width; L blocks; M outputs.
 *   encoders     h0 = mlp_n(xn) (N,H), e0 = mlp_e(xe) (E,H), g0 = mlp_g(xg) (G,H)
 *   GNPB         z0 = attnpool(h0) (G,H), score = linear(h) (N,1), softmax per graph
 *   block l      m  = phi_e([e, h_src, h_dst, g])            (E,H)  e' = e + m
 *                a  = mean_in(m) | SynMM [max_in(m), mean_in(m)]
 *                h' = h + phi_v([a, h + z, g])                (N,H)
 *                z' = phi_z(attnpool(h') + z)                 (G,H)
 *                r  = W_r [max_pool(h'), mean_pool(h')]       (G,H)
 *                g' = g + phi_u([r, z', g])                   (G,H)
 *   heads        y[:, m] = mlp_head_m(g_L) (G,1), one head per label (SeerNet-Multi; M = 1 is
 *                the single-metric SeerNet)
 * Every phi is a one-hidden-layer ReLU MLP of width H. */
#ifndef SEER_SEERNET_H
#define SEER_SEERNET_H

#include "backend/backend.h"
#include "graph/batch.h"
#include "model/params.h"

#define SEERNET_MAX_BLOCKS 8
#define SEERNET_MAX_HEADS 64

enum { AGG_MEAN = 0, AGG_SYNMM = 1 };
enum { ARCH_SEERNET = 0, ARCH_PERFSAGE = 1, ARCH_GCN = 2 };

/* Everything that fixes a model's parameter table (saved in checkpoints and exports). */
typedef struct {
    int arch, H, L, Fn, Fe, Fg, M, agg, head_hidden, n_ops, emb;
} model_sizes;

/* "seernet" / "perfsage" / "gcn" <-> ARCH_*; parse returns -1 for anything else. */
const char *model_arch_name(int arch);
int model_arch_parse(const char *s);

typedef struct {
    mlp_p phi_e, phi_v, phi_z, phi_u;
    lin_p attn, readout;
} seernet_block;

typedef struct {
    int arch, H, L, Fn, Fe, Fg, M, agg, head_hidden, n_ops, emb;
    int D; // width of the graph embedding the heads read (H; PerfSAGE 2H)
    mlp_p enc_n, enc_e, enc_g;
    lin_p attn0;
    seernet_block blk[SEERNET_MAX_BLOCKS];
    mlp_p head[SEERNET_MAX_HEADS];
    // PerfSAGE: the operator embedding table (n_ops, emb) and the self / neighbour layers
    int64_t embed;
    lin_p sage_self[SEERNET_MAX_BLOCKS], sage_nbr[SEERNET_MAX_BLOCKS];
    // GCN layers
    lin_p gcn[SEERNET_MAX_BLOCKS];
    // Parameters [0, trunk_params) are the shared trunk; head m owns
    // [head_begin[m], head_begin[m + 1]) (the heads come last in the table).
    int64_t trunk_params, head_begin[SEERNET_MAX_HEADS + 1];
    param_table pt;
} seernet;

typedef struct {
    float *hid, *out;
} mlp_act;

/* The first layer of phi_e and phi_v acts on a concatenation; it is computed by parts
 * (DGL's "transform, then gather"): [e, h_src, h_dst, g] W^T = e We^T + (h Ws^T)[src]
 * + (h Wd^T)[dst] + (g Wg^T)[graph], so the node and graph terms cost N and G rows instead of E,
 * and no (E, 4H) concatenation is stored. phi_v likewise: [a, h + z, g] W^T =
 * a Wa^T + h Wh^T + (z Wh^T + g Wg^T)[graph]. */
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

/* Activations of one batch (and, with the same layout, their gradients). h[l], e[l], g[l], z[l]
 * are the states entering block l; index L is the trunk's output. */
typedef struct {
    int64_t cap_N, cap_E, cap_G;
    float *fbase;
    int64_t *ibase;
    size_t fcount, icount;
    mlp_act enc_n, enc_e, enc_g;
    float *head_hid; // (M, G, head_hidden)
    float *pred;     // (G, M)
    float *score0, *alpha0;
    seernet_block_act blk[SEERNET_MAX_BLOCKS];
    float *h[SEERNET_MAX_BLOCKS + 1], *e[SEERNET_MAX_BLOCKS + 1];
    float *g[SEERNET_MAX_BLOCKS + 1], *z[SEERNET_MAX_BLOCKS + 1];
    float *emb; // (G, D) the graph embedding the heads read (set by the forward pass)
    // PerfSAGE and GCN: layer inputs x[l] (x[L] the output), gathered neighbour rows msg[l]
    // and their per-node means agg[l]
    float *px[SEERNET_MAX_BLOCKS + 1], *pmsg[SEERNET_MAX_BLOCKS], *pagg[SEERNET_MAX_BLOCKS];
} seernet_acts;

/* Builds the parameter table for the given sizes (no memory for values). The sizes must be in
 * range (checked by the callers that read them from files). */
void seernet_init(seernet *m, const model_sizes *s);
model_sizes seernet_sizes(const seernet *m);
/* The sizes as stored in files (model.name, model.sizes: H, L, Fn, Fe, Fg, M, agg, head width,
 * and for PerfSAGE n_ops, emb), and back; from_stored checks every range before anything is
 * sized from them and returns -1 with a message naming origin. */
int model_sizes_to_stored(const model_sizes *s, int64_t out[10]);
int model_sizes_from_stored(const char *name, const int64_t *v, int64_t n, const char *origin,
                            model_sizes *s, seer_err *err);
void seernet_free(seernet *m);

/* Lays out activations for batches up to the given capacities in backend memory; returns -1
 * (and leaves a empty) when the backend cannot allocate them. */
int seernet_acts_init(seernet_acts *a, const seernet *m, const seer_backend *be, int64_t cap_N,
                      int64_t cap_E, int64_t cap_G);
/* The same layout in caller memory: the float and int64 counts it needs, and the binding to
 * buffers of those sizes (64-byte aligned; not zeroed, the forward pass writes before it reads). */
void seernet_acts_size(const seernet *m, int64_t cap_N, int64_t cap_E, int64_t cap_G,
                       size_t *fcount, size_t *icount);
void seernet_acts_bind(seernet_acts *a, const seernet *m, int64_t cap_N, int64_t cap_E,
                       int64_t cap_G, float *fbase, int64_t *ibase);
void seernet_acts_free(seernet_acts *a, const seer_backend *be);
void seernet_acts_zero(seernet_acts *a, const seer_backend *be);

/* Index arrays of a batch in backend memory (the CPU backend uses the batch's own arrays). */
typedef struct {
    int64_t G, N, E;
    const int64_t *node_ptr, *edge_ptr, *src, *dst, *node_graph, *edge_graph;
    const int64_t *in_ptr, *in_idx, *out_ptr, *out_idx;
    const float *xn, *xe, *xg;
    const extra_index *x; // PerfSAGE / GCN indexes (graph/batch.h)
} seernet_input;

seernet_input seernet_input_from_batch(const graph_batch *b);

/* Forward: fills a (predictions in a->pred, (G, M)). */
void seernet_forward(const seernet *m, const seer_backend *be, const float *params,
                     const seernet_input *in, seernet_acts *a);

/* Backward: d->pred must hold dLoss/dpred; accumulates parameter gradients into grads and uses
 * d (zeroed by the caller, except d->pred) for activation gradients. head = -1 runs every head;
 * head = m runs only head m (a per-task gradient for PCGrad: the other heads get nothing). */
void seernet_backward(const seernet *m, const seer_backend *be, const float *params, float *grads,
                      const seernet_input *in, const seernet_acts *a, seernet_acts *d, int head);

#endif
