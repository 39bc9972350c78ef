/* onnx: costs and PerfGraph features of a shape-inferred model (see perfgraph_build.h). */
#include "perfgraph_build.h"

#include "onnx/onnx_ops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static const char *const NODE_F[PGB_NODE_F] = {
    "kernel_h", "kernel_w", "stride_h", "stride_w", "pad_h", "pad_w", "dilation", "log_groups",
    "has_bias", "log_in_channels", "log_in_h", "log_in_w", "log_out_channels", "log_out_h",
    "log_out_w", "log_batch", "log_flops", "log_mem_bytes", "log_weight_bytes", "log_intensity",
    "flops_share", "mem_share", "weight_share"};
static const char *const EDGE_F[PGB_EDGE_F] = {"log_bytes", "log_n", "log_c", "log_h", "log_w"};
static const char *const GLOBAL_F[PGB_GLOBAL_F] = {
    "log_nodes", "log_edges", "density", "log_flops_total", "log_flops_mean", "log_flops_median",
    "log_flops_max", "log_mem_total", "log_mem_mean", "log_mem_median", "log_mem_max",
    "log_weight_total", "log_weight_mean", "log_weight_median", "log_weight_max",
    "log_tensor_bytes_mean", "log_intensity", "log_batch", "log_mem_light", "log_mem_kept",
    "log_mem_kept_silu", "log_mem_kept_acts", "log_flops_dw"};

const char *const *pgb_node_feature_names(void) { return NODE_F; }
const char *const *pgb_edge_feature_names(void) { return EDGE_F; }
const char *const *pgb_global_feature_names(void) { return GLOBAL_F; }

static const ox_op_def *def_of(const ox_node *n) { return ox_op(n->op); }

static double tbytes(const ox_tensor *t) { return (double)ox_numel(t) * ox_dtype_size(t->dtype); }

/* A depthwise convolution: a convolution of more than one group whose weight reads one channel per
 * group (MobileNet's, EfficientNet's, ConvNeXt's 7x7). Its FLOPs are log_flops_dw's. */
static int depthwise(const ox_graph *g, const ox_node *n) {
    if (def_of(n)->cost != COST_CONV || n->n_in < 2 || n->in[1] < 0) return 0;
    const ox_tensor *w = &g->t[n->in[1]];
    return ox_attr_int_at(n, "group", 0, 1) > 1 && w->rank >= 3 && w->dims[1] == 1;
}

/* FLOPs and multiply-adds of one node, by its row's cost kind (perfgraph_build.h). */
static void node_flops(const ox_graph *g, const ox_node *n, double *flops, double *macs) {
    const ox_tensor *x = n->n_in && n->in[0] >= 0 ? &g->t[n->in[0]] : NULL;
    const ox_tensor *o = n->n_out && n->out[0] >= 0 ? &g->t[n->out[0]] : NULL;
    double out = o ? (double)ox_numel(o) : 0, in = x ? (double)ox_numel(x) : 0, m = 0;
    int bias = n->n_in > 2 && n->in[2] >= 0;
    const ox_op_def *d = def_of(n);
    *flops = 0, *macs = 0;
    if (!x || !o) return;
    switch (d->cost) {
    case COST_CONV: {
        const ox_tensor *w = &g->t[n->in[1]];
        double kprod = 1;
        for (int i = 2; i < w->rank; i++) kprod *= (double)w->dims[i];
        // Conv: every output takes (Cin/g) k multiply-adds; ConvTranspose: every input element
        // scatters into (Cout/g) k outputs: both are w->dims[1] * k per element
        m = (n->op == OP_Conv ? out : in) * (double)w->dims[1] * kprod;
        *flops = 2 * m + (bias ? out : 0);
        break;
    }
    case COST_GEMM: {
        int ta = (int)ox_attr_int_at(n, "transA", 0, 0);
        m = out * (double)(ta ? x->dims[0] : x->dims[1]);
        *flops = 2 * m + (bias ? out : 0);
        break;
    }
    case COST_MATMUL:
        m = out * (double)x->dims[x->rank - 1];
        *flops = 2 * m;
        break;
    case COST_EINSUM: {
        int64_t dims[OX_MAX_RANK];
        int r;
        char why[8];
        if (ox_einsum(g, n, dims, &r, &m, why, sizeof why)) m = 0; // inferred already: cannot fail
        *flops = n->n_in > 1 ? 2 * m : in;
        break;
    }
    case COST_RNN: { // X is (seq, batch, input) or (batch, seq, input): seq * batch = in / input
        const ox_tensor *w = &g->t[n->in[1]], *r = &g->t[n->in[2]];
        m = in / (double)x->dims[2] * (double)(ox_numel(w) + ox_numel(r));
        *flops = 2 * m + d->k * out;
        break;
    }
    case COST_PER_OUT: *flops = d->k * out; break;
    case COST_PER_IN: *flops = d->k * in; break;
    case COST_POOL: *flops = out * ox_attr_ints_product(n, "kernel_shape"); break;
    case COST_RESIZE: {
        int nearest = !ox_attr_str_is(n, "mode", NULL) || ox_attr_str_is(n, "mode", "nearest");
        *flops = (nearest ? 1 : 4) * out;
        break;
    }
    default: break;
    }
    *macs = m;
}

static void shape4(const ox_tensor *t, double s[4]) {
    s[0] = s[1] = s[2] = s[3] = 1;
    for (int i = 0; i < t->rank; i++) s[i < 3 ? i : 3] *= (double)t->dims[i];
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void stats4(const double *v, int64_t n, float *out) {
    if (n == 0) {
        out[0] = out[1] = out[2] = out[3] = 0;
        return;
    }
    double *s = seer_malloc(sizeof(double) * (size_t)n), sum = 0;
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    for (int64_t i = 0; i < n; i++) sum += s[i];
    double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    out[0] = (float)log1p(sum), out[1] = (float)log1p(sum / (double)n);
    out[2] = (float)log1p(med), out[3] = (float)log1p(s[n - 1]);
    free(s);
}

static int resolve(const ox_graph *g, int v) {
    while (v >= 0 && g->n[v].fused_into >= 0) v = g->n[v].fused_into;
    return v;
}

/* Per-node costs of the kept nodes; initializers counted once for the model totals. */
static void node_costs(ox_graph *g, const int *keep, pgb_graph *out) {
    char *counted = seer_calloc((size_t)g->n_t + 1, 1);
    for (int v = 0; v < g->n_n; v++) {
        ox_node *n = &g->n[v];
        n->flops = n->bytes_in = n->bytes_out = n->weight_bytes = n->params = 0;
        if (!keep[v]) continue;
        double macs = 0;
        node_flops(g, n, &n->flops, &macs);
        out->macs += macs;
        for (int i = 0; i < n->n_in; i++) {
            if (n->in[i] < 0) continue;
            const ox_tensor *t = &g->t[n->in[i]];
            n->bytes_in += tbytes(t);
            if (t->is_init && ox_dtype_is_float(t->dtype)) {
                n->weight_bytes += tbytes(t);
                // BN running statistics and Clip's bounds are not learned parameters
                int buffer = i < 32 && (def_of(n)->buffers >> i & 1u);
                if (!counted[n->in[i]]) {
                    counted[n->in[i]] = 1;
                    out->weight_bytes += tbytes(t);
                    if (!buffer) out->params += (double)ox_numel(t);
                }
            }
        }
        for (int i = 0; i < n->n_out; i++)
            if (n->out[i] >= 0) n->bytes_out += tbytes(&g->t[n->out[i]]);
    }
    free(counted);
}

/* The one node that reads tensor t among the kept ones (cons: up to two readers per tensor). */
static int only_reader(const int *cons, const int *consumers, int t, int op, const ox_graph *g) {
    int v = t >= 0 && consumers[t] == 1 ? cons[2 * t] : -1;
    return v >= 0 && g->n[v].op == op ? v : -1;
}

static int is_const(const ox_graph *g, const int *keep, int t) {
    return t >= 0 && (g->t[t].is_init || (g->t[t].producer >= 0 && !keep[g->t[t].producer]));
}

/* A ReduceMean over the last axis that keeps it (LayerNorm's mean and variance). */
static int last_axis_mean(const ox_graph *g, const ox_node *n) {
    if (n->op != OP_ReduceMean || n->n_in != 1 || n->in[0] < 0) return 0;
    int64_t rank = g->t[n->in[0]].rank, a = ox_attr_int_at(n, "axes", 0, INT64_MIN);
    return (a == -1 || a == rank - 1) && ox_attr_int_at(n, "axes", 1, INT64_MIN) == INT64_MIN &&
           ox_attr_int_at(n, "keepdims", 0, 1) == 1;
}

/* LayerNorm as exporters write it below opset 17 (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt,
 * Div, then Mul by the scale and Add of the bias) becomes the one LayerNormalization operator an
 * opset-17 export has, with its costs: the same network must not look different by opset (the
 * design space's transformers were exported at opset 17). Always on; the ONNX nodes stay. */
static void canon_layernorm(ox_graph *g, const int *keep, const int *consumers, const int *cons) {
    for (int k = 0; k < g->n_n; k++) {
        int r1 = g->order[k];
        ox_node *root = &g->n[r1];
        if (!keep[r1] || root->fused_into >= 0 || !last_axis_mean(g, root)) continue;
        int x = root->in[0], mean = root->out[0];
        int sub = only_reader(cons, consumers, mean, OP_Sub, g);
        if (sub < 0 || g->n[sub].in[0] != x || g->n[sub].in[1] != mean) continue;
        int d = g->n[sub].out[0];
        if (consumers[d] != 2) continue;
        int pw = cons[2 * d], dv = cons[2 * d + 1];
        if (g->n[pw].op != OP_Pow) pw = cons[2 * d + 1], dv = cons[2 * d];
        if (g->n[pw].op != OP_Pow || g->n[pw].in[0] != d || !is_const(g, keep, g->n[pw].in[1])) continue;
        if (g->n[dv].op != OP_Div || g->n[dv].in[0] != d) continue;
        int r2 = only_reader(cons, consumers, g->n[pw].out[0], OP_ReduceMean, g);
        if (r2 < 0 || !last_axis_mean(g, &g->n[r2])) continue;
        int eps = only_reader(cons, consumers, g->n[r2].out[0], OP_Add, g);
        if (eps < 0 || !is_const(g, keep, g->n[eps].in[g->n[eps].in[0] == g->n[r2].out[0]])) continue;
        int sq = only_reader(cons, consumers, g->n[eps].out[0], OP_Sqrt, g);
        if (sq < 0 || g->n[dv].in[1] != g->n[sq].out[0] || consumers[g->n[sq].out[0]] != 1) continue;
        int members[9] = {sub, pw, r2, eps, sq, dv}, nm = 6, last = dv;
        double wbytes = 0;
        for (int step = 0; step < 2; step++) { // the scale (Mul), then the bias (Add)
            int nx = only_reader(cons, consumers, g->n[last].out[0], step ? OP_Add : OP_Mul, g);
            if (nx < 0) break;
            int other = g->n[nx].in[g->n[nx].in[0] == g->n[last].out[0]];
            if (!g->t[other].is_init || !ox_dtype_is_float(g->t[other].dtype)) break;
            wbytes += tbytes(&g->t[other]);
            members[nm++] = last = nx;
        }
        for (int i = 0; i < nm; i++) g->n[members[i]].fused_into = r1;
        root->op = OP_LayerNormalization; // its costs: an opset-17 LayerNormalization's
        const ox_tensor *o = &g->t[g->n[last].out[0]];
        root->flops = ox_op(OP_LayerNormalization)->k * (double)ox_numel(o);
        root->bytes_in = tbytes(&g->t[x]) + wbytes, root->bytes_out = tbytes(o);
        root->weight_bytes = wbytes;
    }
}

/* Hardswish as exporters write it below opset 14, x * HardSigmoid(x) with alpha 1/6 and beta 1/2,
 * becomes the one HardSwish operator an opset-14 export has, with its costs (1 FLOP per element,
 * reading x once): the design space's networks were exported with HardSwish, timm's and
 * torchvision's at opset 13 come as the pair, which a runtime (PyTorch's nn.Hardswish) runs as one
 * kernel. The Mul's read of x is the operator's own, so x counts one reader less (--fuse then folds
 * the HardSwish into the convolution before it, as it does an opset-14 one). A HardSigmoid gating
 * another tensor (squeeze-excitation's) stays as it is. Always on; the ONNX nodes stay. */
static void canon_hardswish(ox_graph *g, const int *keep, int *consumers, const int *cons) {
    for (int k = 0; k < g->n_n; k++) {
        int v = g->order[k];
        ox_node *hs = &g->n[v];
        if (!keep[v] || hs->fused_into >= 0 || hs->op != OP_HardSigmoid || hs->n_in != 1 || hs->in[0] < 0 ||
            hs->n_out < 1 || hs->out[0] < 0)
            continue;
        if (fabs(ox_attr_float(hs, "alpha", 0.2) - 1.0 / 6) > 1e-4 || fabs(ox_attr_float(hs, "beta", 0.5) - 0.5) > 1e-6)
            continue;
        int x = hs->in[0], m = only_reader(cons, consumers, hs->out[0], OP_Mul, g);
        if (m < 0 || g->n[m].n_in != 2 || g->n[m].in[g->n[m].in[0] == hs->out[0]] != x || g->n[m].in[0] == g->n[m].in[1])
            continue;
        g->n[m].fused_into = v;
        consumers[x]--;
        hs->op = OP_HardSwish;
        const ox_tensor *o = &g->t[g->n[m].out[0]];
        hs->flops = ox_op(OP_HardSwish)->k * (double)ox_numel(o);
        hs->bytes_in = tbytes(&g->t[x]), hs->bytes_out = tbytes(o), hs->weight_bytes = 0;
    }
}

/* Operators as exporters of another opset write them, made the one operator a later opset has. */
static void canonicalize(ox_graph *g, const int *keep, int *consumers) {
    // up to two kept readers of each tensor (only_reader asks for tensors with one)
    int *cons = seer_malloc(sizeof(int) * 2 * (size_t)(g->n_t + 1));
    for (int t = 0; t < 2 * (g->n_t + 1); t++) cons[t] = -1;
    for (int v = 0; v < g->n_n; v++)
        for (int i = 0; keep[v] && i < g->n[v].n_in; i++) {
            int t = g->n[v].in[i];
            if (t >= 0) cons[2 * t + (cons[2 * t] >= 0)] = v;
        }
    canon_layernorm(g, keep, consumers, cons);
    canon_hardswish(g, keep, consumers, cons);
    free(cons);
}

/* --fuse: BN and activations into the preceding Conv/ConvTranspose/Gemm that feeds only them. */
static void fuse_nodes(ox_graph *g, const int *keep, const int *consumers, pgb_graph *out) {
    for (int k = 0; k < g->n_n; k++) {
        int v = g->order[k];
        ox_node *n = &g->n[v];
        if (!keep[v] || n->n_in < 1 || n->in[0] < 0) continue;
        if (!(def_of(n)->flags & OPF_FUSABLE)) continue;
        int src = g->t[n->in[0]].producer, root = resolve(g, src);
        if (root < 0 || !keep[src] || consumers[n->in[0]] != 1) continue;
        ox_node *r = &g->n[root];
        if (!(def_of(r)->flags & OPF_FUSE_ROOT)) continue;
        n->fused_into = root;
        r->flops += n->flops, r->weight_bytes += n->weight_bytes;
        // the intermediate tensor never reaches memory: the root reads its own inputs and
        // writes the fused output
        r->bytes_in += n->bytes_in - tbytes(&g->t[n->in[0]]);
        r->bytes_out = n->bytes_out;
        out->n_fused++;
    }
}

/* Edges: a tensor from one operator to another (through fused nodes), in operator order and, per
 * operator, in the order of its member nodes (mem_ptr/mem: the kept nodes behind each operator,
 * ascending). Returns each edge's bytes (E). */
static double *build_edges(const ox_graph *g, const int *keep, const int *vid, const int *mem_ptr,
                           const int *mem, pgb_graph *out) {
    int64_t cap = 64;
    out->edge = seer_malloc(sizeof(int32_t) * 2 * (size_t)cap);
    out->xe = seer_malloc(sizeof(float) * PGB_EDGE_F * (size_t)cap);
    double *eb = seer_malloc(sizeof(double) * (size_t)cap);
    int *et = seer_malloc(sizeof(int) * (size_t)cap); // each edge's tensor
    for (int64_t i = 0; i < out->V; i++) {
        int root = out->node_of[i];
        int64_t first = out->E;
        for (int j = mem_ptr[i]; j < mem_ptr[i + 1]; j++) {
            const ox_node *n = &g->n[mem[j]];
            for (int k = 0; k < n->n_in; k++) {
                if (n->in[k] < 0) continue;
                const ox_tensor *t = &g->t[n->in[k]];
                int src = t->producer >= 0 && keep[t->producer] ? resolve(g, t->producer) : -1;
                if (src < 0 || src == root) continue;
                // a tensor the root already reads is one edge (LayerNorm's input feeds two of its nodes)
                int seen = 0;
                for (int64_t e = first; mem[j] != root && e < out->E && !seen; e++) seen = et[e] == n->in[k];
                if (seen) continue;
                if (out->E == cap) {
                    cap *= 2;
                    out->edge = seer_realloc(out->edge, sizeof(int32_t) * 2 * (size_t)cap);
                    out->xe = seer_realloc(out->xe, sizeof(float) * PGB_EDGE_F * (size_t)cap);
                    eb = seer_realloc(eb, sizeof(double) * (size_t)cap);
                    et = seer_realloc(et, sizeof(int) * (size_t)cap);
                }
                et[out->E] = n->in[k];
                double sh[4];
                shape4(t, sh);
                out->edge[2 * out->E] = vid[src], out->edge[2 * out->E + 1] = (int32_t)i;
                float *xe = out->xe + out->E * PGB_EDGE_F;
                eb[out->E] = tbytes(t);
                xe[0] = (float)log1p(eb[out->E]);
                for (int d = 0; d < 4; d++) xe[1 + d] = (float)log1p(sh[d]);
                out->E++;
            }
        }
    }
    free(et);
    return eb;
}

/* Node features of operator i (fl, mem, wb: every operator's FLOPs, bytes and weight bytes;
 * last: the ONNX node whose output is the operator's). */
static void node_features(const ox_graph *g, const pgb_graph *out, int64_t i, const ox_node *last,
                          const double *fl, const double *mem, const double *wb, double twb,
                          float *f) {
    const ox_node *n = &g->n[out->node_of[i]];
    double batch = (double)(g->batch > 0 ? g->batch : 1);
    unsigned fl_ = def_of(n)->flags;
    int conv = (fl_ & OPF_WINDOW) && (fl_ & OPF_BIAS); // a window op with weights
    if (fl_ & OPF_WINDOW) {
        const ox_tensor *w = conv ? &g->t[n->in[1]] : NULL;
        f[0] = (float)ox_attr_int_at(n, "kernel_shape", 0, w && w->rank > 2 ? w->dims[2] : 1);
        f[1] = (float)ox_attr_int_at(n, "kernel_shape", 1, w && w->rank > 3 ? w->dims[3] : f[0]);
        f[2] = (float)ox_attr_int_at(n, "strides", 0, 1);
        f[3] = (float)ox_attr_int_at(n, "strides", 1, f[2]);
        f[4] = (float)ox_attr_int_at(n, "pads", 0, 0);
        f[5] = (float)ox_attr_int_at(n, "pads", 1, f[4]);
        f[6] = (float)ox_attr_int_at(n, "dilations", 0, 1);
        f[7] = (float)log1p((double)ox_attr_int_at(n, "group", 0, 1));
    }
    f[8] = (float)((fl_ & OPF_BIAS) && n->n_in > 2 && n->in[2] >= 0);
    double si[4] = {1, 1, 1, 1}, so[4] = {1, 1, 1, 1};
    if (n->n_in && n->in[0] >= 0) shape4(&g->t[n->in[0]], si);
    if (last->n_out && last->out[0] >= 0) shape4(&g->t[last->out[0]], so);
    f[9] = (float)log1p(si[1]), f[10] = (float)log1p(si[2]), f[11] = (float)log1p(si[3]);
    f[12] = (float)log1p(so[1]), f[13] = (float)log1p(so[2]), f[14] = (float)log1p(so[3]);
    f[15] = (float)log1p(batch);
    f[16] = (float)log1p(fl[i]), f[17] = (float)log1p(mem[i]), f[18] = (float)log1p(wb[i]);
    f[19] = (float)log1p(mem[i] > 0 ? fl[i] / mem[i] : 0);
    f[20] = (float)(out->flops > 0 ? fl[i] / out->flops : 0);
    f[21] = (float)(out->bytes > 0 ? mem[i] / out->bytes : 0);
    f[22] = (float)(twb > 0 ? wb[i] / twb : 0);
}

/* Which operators compute from the graph's inputs (1) and which from weights and constants alone
 * (0: a weight transposed, reshaped or standardised at run time, as torch.onnx writes a linear
 * layer on tokens without constant folding: a weight to autograd, not an activation it keeps):
 * an operator depends on the inputs when any of its root node's inputs does, in topological
 * order. */
static char *input_dependent(const ox_graph *g, const pgb_graph *out) {
    char *dep_t = seer_calloc((size_t)g->n_t + 1, 1), *dep = seer_calloc((size_t)out->V + 1, 1);
    for (int t = 0; t < g->n_t; t++) dep_t[t] = (char)g->t[t].is_input;
    for (int k = 0; k < g->n_n; k++) {
        const ox_node *n = &g->n[g->order[k]];
        char d = 0;
        for (int i = 0; i < n->n_in; i++) d |= n->in[i] >= 0 && dep_t[n->in[i]];
        for (int o = 0; o < n->n_out; o++)
            if (n->out[o] >= 0) dep_t[n->out[o]] = d;
    }
    for (int64_t i = 0; i < out->V; i++) {
        const ox_node *n = &g->n[out->node_of[i]];
        for (int o = 0; o < n->n_out; o++) dep[i] |= n->out[o] >= 0 && dep_t[n->out[o]];
    }
    free(dep_t);
    return dep;
}

/* log_mem_kept, log_mem_kept_silu and log_mem_kept_acts (perfgraph_build.h): the bytes of the
 * tensors a training step keeps for the backward pass, each once (an operator's output is the
 * largest edge leaving it: graph inputs and outputs are not counted), from the operators'
 * OPF_KEEPS_* flags, into kept[0]; kept[1] the same with each SiLU (a Sigmoid whose one reader is
 * a Mul that also reads the Sigmoid's input) keeping its input alone; kept[2] kept[1]'s tensors
 * less those computed from weights alone (dep: input_dependent). eb: each edge's bytes, wb: each
 * operator's weight bytes; edges are in destination order (build_edges). */
static void kept_bytes(const pgb_graph *out, const double *eb, const double *wb, const char *dep, double kept[3]) {
    int64_t V = out->V, E = out->E;
    double *written = seer_calloc((size_t)V + 1, sizeof(double));
    int *in_deg = seer_calloc((size_t)V + 1, sizeof(int)), *out_deg = seer_calloc((size_t)V + 1, sizeof(int));
    int *first_in = seer_malloc(sizeof(int) * (size_t)(V + 1)), *in_src = seer_malloc(sizeof(int) * (size_t)(V + 1));
    int *out_to = seer_malloc(sizeof(int) * (size_t)(V + 1));
    char *keep = seer_calloc((size_t)V + 1, 1), *keep_s = seer_calloc((size_t)V + 1, 1);
    char *gelu_add = seer_calloc((size_t)V + 1, 1), *silu = seer_calloc((size_t)V + 1, 1);
    for (int64_t e = E - 1; e >= 0; e--) {
        int32_t s = out->edge[2 * e], d = out->edge[2 * e + 1];
        written[s] = fmax(written[s], eb[e]);
        in_deg[d]++, out_deg[s]++, first_in[d] = (int)e, in_src[d] = s, out_to[s] = d;
        gelu_add[d] |= out->op[d] == OP_Add && out->op[s] == OP_Erf; // GELU's 1 + erf(x / sqrt 2)
    }
    for (int64_t v = 0; v < V; v++) { // SiLU as torch.onnx writes it: x * sigmoid(x)
        if (out->op[v] != OP_Sigmoid || in_deg[v] != 1 || out_deg[v] != 1 || out->op[out_to[v]] != OP_Mul) continue;
        int m = out_to[v];
        for (int64_t e = first_in[m]; e < first_in[m] + in_deg[m]; e++) silu[v] |= out->edge[2 * e] == in_src[v];
    }
    for (int64_t i = 0; i < V; i++) keep[i] = keep_s[i] = (ox_op(out->op[i])->flags & OPF_KEEPS_OUT) != 0;
    for (int64_t e = 0; e < E; e++) {
        int32_t s = out->edge[2 * e], d = out->edge[2 * e + 1];
        if (!(ox_op(out->op[d])->flags & OPF_KEEPS_IN)) continue;
        // a product with a constant (a scalar: not a weight) keeps nothing, and GELU's last
        // product (x times the Add reading the Erf) keeps x only: PyTorch's GELU keeps x
        if (out->op[d] == OP_Mul && ((in_deg[d] < 2 && wb[d] <= 64) || gelu_add[s])) continue;
        keep[s] = 1, keep_s[s] |= !silu[s]; // a SiLU's product keeps x, not the sigmoid
    }
    kept[0] = kept[1] = kept[2] = 0;
    for (int64_t i = 0; i < V; i++) {
        double idx = out->op[i] == OP_MaxPool ? 2 * written[i] : 0; // MaxPool's int64 indices
        kept[0] += (keep[i] ? written[i] : 0) + idx;
        kept[1] += (keep_s[i] && !silu[i] ? written[i] : 0) + idx;
        kept[2] += (keep_s[i] && !silu[i] && dep[i] ? written[i] : 0) + idx;
    }
    free(written), free(in_deg), free(out_deg), free(first_in), free(in_src), free(out_to);
    free(keep), free(keep_s), free(gelu_add), free(silu);
}

void pgb_build(ox_graph *g, int fuse, pgb_graph *out) {
    memset(out, 0, sizeof *out);
    int nn = g->n_n;
    out->n_onnx_nodes = nn;
    out->n_unknown = g->unknown_ops;
    int *keep = seer_calloc((size_t)nn + 1, sizeof(int)), *consumers = seer_calloc((size_t)g->n_t + 1, sizeof(int));
    for (int v = 0; v < nn; v++) {
        ox_node *n = &g->n[v];
        keep[v] = !n->folded && !(def_of(n)->flags & OPF_CONST);
        out->n_folded += !keep[v];
        n->fused_into = -1;
        for (int i = 0; keep[v] && i < n->n_in; i++)
            if (n->in[i] >= 0) consumers[n->in[i]]++;
    }
    node_costs(g, keep, out);
    canonicalize(g, keep, consumers);
    if (fuse) fuse_nodes(g, keep, consumers, out);
    // operators: kept, not fused away
    int *vid = seer_malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    for (int v = 0; v < nn; v++) vid[v] = -1;
    out->node_of = seer_malloc(sizeof(int) * (size_t)(nn ? nn : 1));
    for (int k = 0; k < nn; k++) {
        int v = g->order[k];
        if (keep[v] && g->n[v].fused_into < 0) vid[v] = (int)out->V, out->node_of[out->V++] = v;
    }
    int64_t V = out->V;
    // the kept nodes behind each operator (its root and the nodes fused into it), ascending: one
    // pass, so building stays linear in the node count
    int *mem_ptr = seer_calloc((size_t)V + 2, sizeof(int)), *mem = seer_malloc(sizeof(int) * (size_t)(nn + 1));
    for (int v = 0; v < nn; v++)
        if (keep[v] && vid[resolve(g, v)] >= 0) mem_ptr[vid[resolve(g, v)] + 1]++;
    for (int64_t i = 0; i < V; i++) mem_ptr[i + 1] += mem_ptr[i];
    int *fill = seer_calloc((size_t)V + 1, sizeof(int));
    for (int v = 0; v < nn; v++)
        if (keep[v] && vid[resolve(g, v)] >= 0) {
            int i = vid[resolve(g, v)];
            mem[mem_ptr[i] + fill[i]++] = v;
        }
    double *fl = seer_malloc(sizeof(double) * (size_t)(V + 1)), *mm = seer_malloc(sizeof(double) * (size_t)(V + 1));
    double *wb = seer_malloc(sizeof(double) * (size_t)(V + 1)), twb = 0, light = 0, dw = 0;
    for (int64_t i = 0; i < V; i++) {
        const ox_node *n = &g->n[out->node_of[i]];
        fl[i] = n->flops, mm[i] = n->bytes_in + n->bytes_out, wb[i] = n->weight_bytes;
        out->flops += fl[i], out->bytes += mm[i];
        // the activations a light operator moves (its constant operands are weights)
        if (def_of(n)->flags & OPF_LIGHT) light += mm[i] - wb[i];
        if (depthwise(g, n)) dw += fl[i];
    }
    for (int64_t k = 0; k < V; k++) twb += wb[k];
    double *eb = build_edges(g, keep, vid, mem_ptr, mem, out);
    out->xn = seer_calloc((size_t)(V * PGB_NODE_F) + 1, sizeof(float));
    out->op = seer_malloc(sizeof(int32_t) * (size_t)(V + 1));
    for (int64_t i = 0; i < V; i++) {
        out->op[i] = g->n[out->node_of[i]].op;
        // a fused root's output is its last fused node's (the highest index among them)
        const ox_node *last = &g->n[out->node_of[i]];
        for (int j = mem_ptr[i]; j < mem_ptr[i + 1]; j++)
            if (g->n[mem[j]].fused_into >= 0) last = &g->n[mem[j]];
        node_features(g, out, i, last, fl, mm, wb, twb, out->xn + i * PGB_NODE_F);
        const ox_node *n = &g->n[out->node_of[i]];
        out->n_deep_window += (def_of(n)->flags & OPF_WINDOW) && n->n_in && n->in[0] >= 0 && g->t[n->in[0]].rank > 4;
    }
    // global features
    float *x = out->xg;
    double Vd = (double)V, Ed = (double)out->E, tb = 0;
    for (int64_t e = 0; e < out->E; e++) tb += eb[e];
    x[0] = (float)log1p(Vd), x[1] = (float)log1p(Ed), x[2] = (float)(V > 1 ? Ed / (Vd * (Vd - 1)) : 0);
    stats4(fl, V, x + 3), stats4(mm, V, x + 7), stats4(wb, V, x + 11);
    x[15] = (float)log1p(out->E ? tb / Ed : 0);
    x[16] = (float)log1p(out->bytes > 0 ? out->flops / out->bytes : 0);
    x[17] = (float)log1p((double)(g->batch > 0 ? g->batch : 1));
    x[18] = (float)log1p(light > 0 ? light : 0);
    double kept[3];
    char *dep = input_dependent(g, out);
    kept_bytes(out, eb, wb, dep, kept);
    x[19] = (float)log1p(kept[0]), x[20] = (float)log1p(kept[1]), x[21] = (float)log1p(kept[2]);
    x[22] = (float)log1p(dw);
    free(dep);
    free(fl), free(mm), free(wb), free(eb), free(vid), free(keep), free(consumers);
    free(mem_ptr), free(mem), free(fill);
}

void pgb_free(pgb_graph *p) {
    free(p->xn), free(p->op), free(p->edge), free(p->xe), free(p->node_of);
    memset(p, 0, sizeof *p);
}
