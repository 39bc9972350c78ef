/* model: the predictor interface. Every graph network is a trunk behind one table of functions
 * (model_ops), found by name in one registry (model.c); the per-label heads, the parameter table,
 * the activation arena, the stored sizes and the forward/backward entry points are shared here, so
 * the trainer, checkpoints, export and libseer never ask which model they hold.
 *
 * Adding a model: its file (the trunk's parameters, activations, forward and backward, and a
 * `const model_ops model_<name>` table), one line in model.c's registry, and its tests (gradients
 * against finite differences in tests/test_grad.c). The models:
 *   seernet   PerfSeer's SeerNet (seernet.c), SynMM and GNPB;
 *   perfsage  PerfSAGE's GraphSAGE trunk (perfsage.c);
 *   gcn       BRP-NAS's GCN (gcn.c);
 *   linear    the ridge baseline (ridge.c): fitted in closed form in float64, no trunk and no
 *             heads; it sets MODEL_CLOSED_FORM and the callers use ridge.h instead of the
 *             forward/backward below;
 *   cost      the roofline cost alone ([model] target = roofline, roofline_weights, roofline_light
 *             or roofline_kept; ridge.c):
 *             the ridge with every feature weight zero and the bias that undoes the target's
 *             standardisation, so a prediction is the fitted cost itself (MODEL_CLOSED_FORM |
 *             MODEL_COST_ONLY).
 *
 * Size letters: G graphs, N nodes, E edges of a batch; H width; L blocks; M outputs; D the width
 * of the graph embedding the heads read.
 *   heads  y[:, m] = mlp_head_m(emb) (G,1), one per label (SeerNet-Multi; M = 1 is single-metric)
 * Every head is a one-hidden-layer ReLU MLP of width head_hidden.
 *
 * readout = additive ([model] readout; any trunk): beside the pooled head, each label has a node
 * head, a ReLU MLP of width NODE_HEAD_HIDDEN on each node's own (standardised) features:
 *   y[g, m] = mlp_head_m(emb_g) + log sum_{v in g} exp(mlp_node_m(xn_v))
 * The second term is the log of a sum of positive per-node contributions: a graph with twice the
 * nodes of the same kind gets log 2 more, where a mean readout sees the same graph. Node features
 * are log1p values, so exp(linear) is a power law of a node's FLOPs and bytes. The node head's
 * parameters belong to its label's range (head_begin), so PCGrad treats them as the head's. */
#ifndef SEER_MODEL_H
#define SEER_MODEL_H

#include <stddef.h>

#include "backend/backend.h"
#include "graph/batch.h"
#include "model/params.h"

#define MODEL_MAX_BLOCKS 8
#define MODEL_MAX_HEADS 64
// Room for a trunk's own parameter offsets and activation pointers inside model / model_acts (a
// trunk states its need with a static assert; SeerNet with 8 blocks uses about 2 KB of each).
#define MODEL_TRUNK_BYTES 4096
#define MODEL_ACTS_BYTES 4096

enum { AGG_MEAN = 0, AGG_SYNMM = 1 };
enum { READOUT_POOLED = 0, READOUT_ADDITIVE = 1 };
#define NODE_HEAD_HIDDEN 32
#define MODEL_STORED_MAX 11 // values of model.sizes at most

/* What a model reads or how it is fitted (model_ops.flags). */
enum {
    MODEL_EXTRA_INDEX = 1 << 0, // reads the batch's extra_index (graph/batch.h)
    MODEL_OP_TYPES = 1 << 1,    // reads operator ids (node_op)
    MODEL_CLOSED_FORM = 1 << 2, // fitted in closed form on the host (ridge.h), not by gradients
    MODEL_COST_ONLY = 1 << 3,   // closed form without feature weights: the roofline cost alone
};

typedef struct model_ops model_ops;

/* Everything that fixes a model's parameter table (saved in checkpoints and exports). */
typedef struct {
    const model_ops *ops;
    int H, L, Fn, Fe, Fg, M, agg, head_hidden, n_ops, emb, readout;
} model_sizes;

typedef struct {
    const model_ops *ops;
    int H, L, Fn, Fe, Fg, M, agg, head_hidden, n_ops, emb, readout;
    int D; // width of the graph embedding the heads read (set by the trunk's init)
    mlp_p head[MODEL_MAX_HEADS];
    mlp_p node_head[MODEL_MAX_HEADS]; // readout = additive only
    // Parameters [0, trunk_params) are the shared trunk; head m owns
    // [head_begin[m], head_begin[m + 1]) (the heads come last in the table).
    int64_t trunk_params, head_begin[MODEL_MAX_HEADS + 1];
    param_table pt;
    _Alignas(16) unsigned char trunk[MODEL_TRUNK_BYTES]; // the trunk's parameter offsets
} model;

typedef struct {
    float *hid, *out;
} mlp_act;

/* Activations of one batch (and, with the same layout, their gradients). */
typedef struct {
    int64_t cap_N, cap_E, cap_G;
    float *fbase;
    int64_t *ibase;
    size_t fcount, icount;
    size_t fcap, icap; // what model_acts_init allocated (model_acts_fit lays out within it)
    float *emb;      // (G, D) the graph embedding the heads read (set by the trunk)
    float *head_hid; // (M, G, head_hidden)
    float *pred;     // (G, M)
    // readout = additive: per label the node head's hidden rows (M, N, NODE_HEAD_HIDDEN), its
    // outputs (M, N) and their softmax within each graph (M, N); NULL otherwise
    float *node_hid, *node_z, *node_alpha;
    _Alignas(16) unsigned char trunk[MODEL_ACTS_BYTES]; // the trunk's activation pointers
} model_acts;

/* Index arrays of a batch in backend memory (the CPU backend uses the batch's own arrays). */
typedef struct {
    int64_t G, N, E;
    const int64_t *node_ptr, *edge_ptr, *src, *dst, *node_graph, *edge_graph;
    const int64_t *in_ptr, *in_idx, *out_ptr, *out_idx;
    const float *xn, *xe, *xg;
    const extra_index *x; // MODEL_EXTRA_INDEX models only
} model_input;

/* Bump allocator over the activation arena: with base pointers NULL it only counts. Every float
 * block is rounded to 16 floats, so each starts 64-byte aligned. */
typedef struct {
    float *fb;
    int64_t *ib;
    size_t fo, io;
} act_arena;

float *act_f(act_arena *ar, int64_t rows, int64_t cols);
int64_t *act_i(act_arena *ar, int64_t rows, int64_t cols);

struct model_ops {
    const char *name;  // model.name in configs, checkpoints and exports
    unsigned flags;    // MODEL_*
    const char *equations; // where a reader finds the trunk's equations (the export sidecar)
    /* Checks the sizes beyond the common ranges (n_stored: values in model.sizes, 8, 10 or 11);
     * optional. */
    int (*check)(const model_sizes *s, int64_t n_stored, const char *origin, seer_err *err);
    /* Adds the trunk's parameters to m->pt (the heads follow) and sets m->D. */
    void (*init)(model *m);
    /* Lays out the trunk's activations (pointers in a->trunk) for a's capacities. */
    void (*layout)(model_acts *a, const model *m, act_arena *ar);
    /* Trunk forward: sets a->emb (G, D). */
    void (*forward)(const model *m, const seer_backend *be, const float *params,
                    const model_input *in, model_acts *a);
    /* Where the heads' backward writes dLoss/demb for this batch (optional: d->emb). */
    float *(*emb_grad)(const model *m, const model_input *in, model_acts *d);
    /* Trunk backward from d->emb: accumulates parameter gradients into grads. */
    void (*backward)(const model *m, const seer_backend *be, const float *params, float *grads,
                     const model_input *in, const model_acts *a, model_acts *d);
};

/* The registry: the model of that name, or NULL. model_names lists them ("a, b, c"). */
const model_ops *model_find(const char *name);
const char *model_names(void);

/* Builds the parameter table for the given sizes (no memory for values). The sizes must be in
 * range (model_sizes_from_stored checks sizes read from files). */
void model_init(model *m, const model_sizes *s);
model_sizes model_get_sizes(const model *m);
void model_free(model *m);

/* The sizes as stored in files (model.name, model.sizes: H, L, Fn, Fe, Fg, M, agg, head width,
 * n_ops, emb, then readout only when it is not pooled, so files of pooled models are unchanged),
 * and back; to_stored returns the count; from_stored checks every range before anything is sized
 * from them and returns -1 with a message naming origin. */
int model_sizes_to_stored(const model_sizes *s, int64_t out[MODEL_STORED_MAX]);
int model_sizes_from_stored(const char *name, const int64_t *v, int64_t n, const char *origin,
                            model_sizes *s, seer_err *err);

/* Lays out activations for batches up to the given capacities in backend memory; returns -1
 * (and leaves a empty) when the backend cannot allocate them. */
int model_acts_init(model_acts *a, const model *m, const seer_backend *be, int64_t cap_N,
                    int64_t cap_E, int64_t cap_G);
/* The same layout in caller memory: the float and int64 counts it needs, and the binding to
 * buffers of those sizes (64-byte aligned; not zeroed, the forward pass writes before it reads). */
void model_acts_size(const model *m, int64_t cap_N, int64_t cap_E, int64_t cap_G, size_t *fcount,
                     size_t *icount);
void model_acts_bind(model_acts *a, const model *m, int64_t cap_N, int64_t cap_E, int64_t cap_G,
                     float *fbase, int64_t *ibase);
void model_acts_free(model_acts *a, const seer_backend *be);
/* Zeroes the floats of the present layout (after model_acts_fit, only the batch's). */
void model_acts_zero(model_acts *a, const seer_backend *be);
/* Lays a (from model_acts_init) out again for one batch of N nodes, E edges and G graphs, within
 * the memory it has: the arrays packed for this batch instead of the largest, so that zeroing the
 * gradients of a step (model_acts_zero) touches what the step uses and no more. */
void model_acts_fit(model_acts *a, const model *m, int64_t N, int64_t E, int64_t G);


model_input model_input_from_batch(const graph_batch *b);

/* Forward: fills a (predictions in a->pred, (G, M)). */
void model_forward(const model *m, const seer_backend *be, const float *params,
                   const model_input *in, model_acts *a);

/* Backward: d->pred must hold dLoss/dpred; accumulates parameter gradients into grads and uses
 * d (zeroed by the caller, except d->pred) for activation gradients. head = -1 runs every head;
 * head = m runs only head m (a per-task gradient for PCGrad: the other heads get nothing). */
void model_backward(const model *m, const seer_backend *be, const float *params, float *grads,
                    const model_input *in, const model_acts *a, model_acts *d, int head);

/* Layers the trunks are built from (model.c): y = x W^T + b and its backward, a column block of
 * a weight, and a one-hidden-layer ReLU MLP. */
void layer_lin_fwd(const seer_backend *be, const float *params, lin_p l, float *out, int64_t ldo,
                   const float *x, int64_t ldx, int64_t n, int flags);
void layer_lin_bwd(const seer_backend *be, const float *params, float *grads, lin_p l, float *dx,
                   int64_t lddx, const float *dout, int64_t lddo, const float *x, int64_t ldx,
                   int64_t n);
void layer_mlp_fwd(const seer_backend *be, const float *params, mlp_p p, const float *x,
                   int64_t ldx, int64_t n, mlp_act a);
/* dout: gradient of the MLP output (contiguous); dhid: scratch for the hidden gradient;
 * dx (may be NULL) receives the input gradient. */
void layer_mlp_bwd(const seer_backend *be, const float *params, float *grads, mlp_p p,
                   const float *x, int64_t ldx, float *dx, int64_t lddx, int64_t n, mlp_act a,
                   float *dhid, const float *dout);
/* Mean over each node's in-neighbours in an edge set: msg = x[src] (E, w), agg = mean_in(msg)
 * (V, w). The backward routes dagg to dmsg and, when dx is not NULL, sums dmsg into dx by source
 * (the gather's backward on the transposed index, no atomics). */
void layer_nbr_mean_fwd(const seer_backend *be, const edge_set *es, const float *x, int64_t w,
                        float *msg, float *agg);
void layer_nbr_mean_bwd(const seer_backend *be, const edge_set *es, int64_t w, float *dmsg,
                        const float *dagg, float *dx);

#endif
