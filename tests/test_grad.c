/* Gradient checks: every CPU op's backward against central finite differences, the forward of
 * the sparse ops against plain float64 loops, the edge cases (empty rows, ties, single-node and
 * empty graphs, self loops, a huge-degree node), and the whole SeerNet (mean and SynMM) against
 * finite differences of the masked MSE loss.
 *
 * Tolerances: ops |analytic - fd| <= 1e-2 * max(|a|, |fd|) + 1e-3 with eps = 1e-3 on inputs of
 * size ~1 in float32 (the forward is float32, the loss is summed in float64). Whole model
 * (eps = 2e-4, PyTorch-default init, loss ~1): per parameter the same rule, at most 1% of the
 * parameters may miss it (ReLU kinks or max switches crossed by the step), and the relative error
 * of the whole gradient vector must be below 1e-2; per parameter tensor whose gradient norm is
 * above 3e-3 (the float32 noise floor) the relative error must be below 15%. Small gradients are
 * checked to 1e-4 against the float64 PyTorch reference (test_reference). */
#include <string.h>

#include "backend/backend.h"
#include "graph/batch.h"
#include "model/model.h"
#include "testgraphs.h"
#include "testutil.h"
#include "backend/loss.h"
#include "eval/metrics.h"

static const seer_backend *be;
static seer_rng rng;

static void fill(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)rng_normal(&rng);
}

static double dotw(const float *x, const float *w, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += (double)x[i] * (double)w[i];
    return s;
}

/* Compares analytic gradient a against finite differences of f over the buffer x. */
typedef double (*loss_fn)(void *ctx);
static double *fd_out = NULL; // when set, fd_check stores the finite differences here
static int fd_check(const char *what, float *x, int64_t n, const float *a, loss_fn f, void *ctx,
                    double eps, double rtol, double atol, double max_bad_frac) {
    int64_t bad = 0;
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        float keep = x[i];
        x[i] = keep + (float)eps;
        double lp = f(ctx);
        x[i] = keep - (float)eps;
        double lm = f(ctx);
        x[i] = keep;
        double fd = (lp - lm) / (2 * eps);
        if (fd_out) fd_out[i] = fd;
        num += (fd - a[i]) * (fd - a[i]), den += fd * fd;
        if (!close_enough(a[i], fd, rtol, atol)) {
            if (bad < 5 && (max_bad_frac == 0 || getenv("SEER_GRAD_DEBUG")))
                fprintf(stderr, "  %s[%lld]: analytic %.6g, finite difference %.6g\n", what,
                        (long long)i, (double)a[i], fd);
            bad++;
        }
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    printf("  %-26s %6lld values, %4lld outside tolerance, relative error %.2e\n", what,
           (long long)n, (long long)bad, rel);
    CHECK(bad <= (int64_t)(max_bad_frac * (double)n), "%s: %lld of %lld gradients off", what,
          (long long)bad, (long long)n);
    CHECK(rel < 1e-2 || den == 0, "%s: relative gradient error %.3g", what, rel);
    return bad;
}

/* ---- one context for all op checks: a batch of the edge-case graphs ---- */
typedef struct {
    graph_batch b;
    int w;
    float *in, *out, *wout, *score, *alpha, *aux;
    int64_t *arg;
    int op;
} op_ctx;

enum { OP_SEG_MEAN_IN, OP_SEG_MAX_IN, OP_SEG_MAX_POOL, OP_ATTN, OP_GATHER_SRC, OP_GATHER_GRAPH };

static int64_t op_rows_in(op_ctx *c) {
    return c->op == OP_SEG_MEAN_IN || c->op == OP_SEG_MAX_IN ? c->b.E
           : c->op == OP_GATHER_GRAPH                        ? c->b.G
                                                             : c->b.N;
}
static int64_t op_rows_out(op_ctx *c) {
    return c->op == OP_SEG_MEAN_IN || c->op == OP_SEG_MAX_IN ? c->b.N
           : c->op == OP_GATHER_SRC                          ? c->b.E
           : c->op == OP_GATHER_GRAPH                        ? c->b.N
                                                             : c->b.G;
}

static void op_forward(op_ctx *c) {
    graph_batch *b = &c->b;
    int w = c->w;
    switch (c->op) {
    case OP_SEG_MEAN_IN: be->seg_mean_forward(be->ctx, c->out, w, c->in, w, b->in_ptr, b->in_idx, b->N, w); break;
    case OP_SEG_MAX_IN: be->seg_max_forward(be->ctx, c->out, w, c->arg, c->in, w, b->in_ptr, b->in_idx, b->N, w); break;
    case OP_SEG_MAX_POOL: be->seg_max_forward(be->ctx, c->out, w, c->arg, c->in, w, b->node_ptr, NULL, b->G, w); break;
    case OP_ATTN: be->attn_pool_forward(be->ctx, c->out, c->alpha, c->in, c->score, b->node_ptr, b->G, w); break;
    case OP_GATHER_SRC: be->gather_forward(be->ctx, c->out, w, c->in, w, b->src, b->E, w, 0); break;
    case OP_GATHER_GRAPH: be->gather_forward(be->ctx, c->out, w, c->in, w, b->node_graph, b->N, w, 0); break;
    }
}

static double op_loss(void *ctx) {
    op_ctx *c = ctx;
    op_forward(c);
    return dotw(c->out, c->wout, op_rows_out(c) * c->w);
}

static void op_backward(op_ctx *c, float *din, float *dscore) {
    graph_batch *b = &c->b;
    int w = c->w;
    switch (c->op) {
    case OP_SEG_MEAN_IN: be->seg_mean_backward(be->ctx, din, w, c->wout, w, b->in_ptr, b->in_idx, b->N, w); break;
    case OP_SEG_MAX_IN:
    case OP_SEG_MAX_POOL: be->seg_max_backward(be->ctx, din, w, c->wout, w, c->arg, op_rows_out(c), w); break;
    case OP_ATTN: be->attn_pool_backward(be->ctx, din, dscore, c->wout, c->in, c->out, c->alpha, b->node_ptr, b->G, w); break;
    case OP_GATHER_SRC: be->seg_sum_forward(be->ctx, din, w, c->wout, w, b->out_ptr, b->out_idx, b->N, w); break;
    case OP_GATHER_GRAPH: be->seg_sum_forward(be->ctx, din, w, c->wout, w, b->node_ptr, NULL, b->G, w); break;
    }
}

/* seg_lse with a stride of 2: adds to column 0 (which holds 0.25), leaves column 1 alone. */
static double lse_loss(void *ctx) {
    op_ctx *c = ctx;
    for (int64_t g = 0; g < c->b.G; g++) c->out[2 * g] = 0.25f, c->out[2 * g + 1] = -7.0f;
    be->seg_lse_forward(be->ctx, c->out, 2, c->alpha, c->in, c->b.node_ptr, c->b.G);
    double l = 0;
    for (int64_t g = 0; g < c->b.G; g++) l += (double)c->out[2 * g] * c->wout[g];
    return l;
}

static void check_lse(op_ctx *c, float *din) {
    graph_batch *b = &c->b;
    fill(c->in, b->N);
    fill(c->wout, b->G);
    lse_loss(c);
    for (int64_t g = 0; g < b->G; g++) {
        double mx = -INFINITY, z = 0;
        for (int64_t k = b->node_ptr[g]; k < b->node_ptr[g + 1]; k++) mx = fmax(mx, c->in[k]);
        for (int64_t k = b->node_ptr[g]; k < b->node_ptr[g + 1]; k++) z += exp(c->in[k] - mx);
        double want = 0.25 + mx + log(z);
        CHECK(close_enough(c->out[2 * g], want, 1e-6, 1e-6), "seg_lse graph %lld: %g vs %g",
              (long long)g, (double)c->out[2 * g], want);
        CHECK(c->out[2 * g + 1] == -7.0f, "seg_lse wrote outside its column");
    }
    // a large shift must not overflow (max first)
    for (int64_t k = 0; k < b->N; k++) c->in[k] += 200.0f;
    lse_loss(c);
    for (int64_t g = 0; g < b->G; g++) CHECK(isfinite(c->out[2 * g]), "seg_lse overflows at +200");
    for (int64_t k = 0; k < b->N; k++) c->in[k] -= 200.0f;
    lse_loss(c);
    memset(din, 0, sizeof(float) * (size_t)b->N);
    float *dout = seer_calloc((size_t)(2 * b->G), 4);
    for (int64_t g = 0; g < b->G; g++) dout[2 * g] = c->wout[g], dout[2 * g + 1] = 1e9f;
    be->seg_lse_backward(be->ctx, din, dout, 2, c->alpha, b->node_ptr, b->G);
    fd_check("seg_lse(pool)", c->in, b->N, din, lse_loss, c, 1e-3, 1e-2, 1e-3, 0);
    free(dout);
}

static void check_ops(void) {
    pg_dataset ds;
    tg_build(&ds, 6, 3, 2, 2, 1, 7);
    op_ctx c = {.w = 3};
    batch_init(&c.b, ds.G, ds.N, ds.E, ds.Fn, ds.Fe, ds.Fg, 1, ds.n_ops);
    int64_t *ids = seer_malloc(sizeof(int64_t) * (size_t)ds.G);
    for (int64_t g = 0; g < ds.G; g++) ids[g] = g;
    batch_build(&c.b, &ds, NULL, ids, ds.G);
    int64_t big = (ds.E > ds.N ? ds.E : ds.N) * c.w;
    c.in = seer_calloc((size_t)big, 4), c.out = seer_calloc((size_t)big, 4);
    c.wout = seer_calloc((size_t)big, 4), c.aux = seer_calloc((size_t)big, 4);
    c.score = seer_calloc((size_t)ds.N, 4), c.alpha = seer_calloc((size_t)ds.N, 4);
    c.arg = seer_calloc((size_t)big, 8);
    float *din = seer_calloc((size_t)big, 4), *dscore = seer_calloc((size_t)ds.N, 4);
    const char *names[] = {"seg_mean(by dst)", "seg_max(by dst)", "seg_max(pool)", "attn_pool",
                           "gather(src)", "gather(graph)"};
    for (int op = 0; op <= OP_GATHER_GRAPH; op++) {
        c.op = op;
        int64_t nin = op_rows_in(&c) * c.w, nout = op_rows_out(&c) * c.w;
        fill(c.in, nin);
        fill(c.wout, nout);
        fill(c.score, ds.N);
        // poison the output so unwritten elements show
        for (int64_t i = 0; i < nout; i++) c.out[i] = NAN;
        op_forward(&c);
        for (int64_t i = 0; i < nout; i++) CHECK(isfinite(c.out[i]), "%s: output %lld not written", names[op], (long long)i);
        memset(din, 0, sizeof(float) * (size_t)nin);
        memset(dscore, 0, sizeof(float) * (size_t)ds.N);
        op_backward(&c, din, dscore);
        fd_check(names[op], c.in, nin, din, op_loss, &c, 1e-3, 1e-2, 1e-3, 0);
        if (op == OP_ATTN) fd_check("attn_pool(score)", c.score, ds.N, dscore, op_loss, &c, 1e-3, 1e-2, 1e-3, 0);
    }
    check_lse(&c, din);
    // float64 reference of seg_mean / seg_max by destination, including empty rows (value 0)
    c.op = OP_SEG_MAX_IN;
    fill(c.in, c.b.E * c.w);
    op_forward(&c);
    memcpy(c.aux, c.out, sizeof(float) * (size_t)(c.b.N * c.w));
    c.op = OP_SEG_MEAN_IN;
    op_forward(&c);
    for (int64_t v = 0; v < c.b.N; v++)
        for (int j = 0; j < c.w; j++) {
            double mx = -INFINITY, sum = 0;
            int64_t deg = 0, arg = -1;
            for (int64_t e = 0; e < c.b.E; e++)
                if (c.b.dst[e] == v) {
                    double x = c.in[e * c.w + j];
                    if (x > mx) mx = x, arg = e;
                    sum += x, deg++;
                }
            double want_max = deg ? mx : 0.0, want_mean = deg ? sum / (double)deg : 0.0;
            CHECK(close_enough(c.aux[v * c.w + j], want_max, 0, 0), "seg_max node %lld: %g vs %g",
                  (long long)v, (double)c.aux[v * c.w + j], want_max);
            CHECK(close_enough(c.out[v * c.w + j], want_mean, 1e-6, 1e-6), "seg_mean node %lld",
                  (long long)v);
            (void)arg;
        }
    // ties: give every edge the same value; the argmax must be the lowest edge id of each row
    c.op = OP_SEG_MAX_IN;
    for (int64_t i = 0; i < c.b.E * c.w; i++) c.in[i] = 1.5f;
    op_forward(&c);
    for (int64_t v = 0; v < c.b.N; v++) {
        int64_t lowest = -1;
        for (int64_t e = 0; e < c.b.E && lowest < 0; e++)
            if (c.b.dst[e] == v) lowest = e;
        for (int j = 0; j < c.w; j++)
            CHECK(c.arg[v * c.w + j] == lowest, "tie at node %lld: argmax %lld, lowest edge %lld",
                  (long long)v, (long long)c.arg[v * c.w + j], (long long)lowest);
    }
    // NaN policy: a NaN in a segment propagates
    c.in[0] = NAN;
    op_forward(&c);
    CHECK(isnan(c.out[c.b.dst[0] * c.w]), "seg_max: NaN must propagate");
    // linear (+ReLU): input, weight and bias gradients
    {
        int64_t n = 7;
        int fin = 5, fout = 4;
        float *x = seer_malloc(4 * 35), *W = seer_malloc(4 * 20), *bb = seer_malloc(4 * 4);
        float *y = seer_malloc(4 * 28), *wy = seer_malloc(4 * 28), *dx = seer_calloc(35, 4);
        float *dW = seer_calloc(20, 4), *db = seer_calloc(4, 4), *dy = seer_malloc(4 * 28);
        fill(x, 35), fill(W, 20), fill(bb, 4), fill(wy, 28);
        for (int relu = 0; relu < 2; relu++) {
            be->linear_forward(be->ctx, y, fout, x, fin, W, fin, bb, n, fin, fout, relu ? LIN_RELU : 0);
            memcpy(dy, wy, sizeof(float) * 28);
            if (relu) be->relu_backward(be->ctx, dy, y, 28);
            memset(dx, 0, 4 * 35), memset(dW, 0, 4 * 20), memset(db, 0, 4 * 4);
            be->linear_backward(be->ctx, dx, fin, dW, fin, db, dy, fout, x, fin, W, n, fin, fout);
            for (int which = 0; which < 3; which++) {
                float *buf = which == 0 ? x : which == 1 ? W : bb;
                float *ana = which == 0 ? dx : which == 1 ? dW : db;
                int64_t cnt = which == 0 ? 35 : which == 1 ? 20 : 4;
                for (int64_t i = 0; i < cnt; i++) {
                    float keep = buf[i];
                    buf[i] = keep + 1e-3f;
                    be->linear_forward(be->ctx, y, fout, x, fin, W, fin, bb, n, fin, fout, relu ? LIN_RELU : 0);
                    double lp = dotw(y, wy, 28);
                    buf[i] = keep - 1e-3f;
                    be->linear_forward(be->ctx, y, fout, x, fin, W, fin, bb, n, fin, fout, relu ? LIN_RELU : 0);
                    double lm = dotw(y, wy, 28);
                    buf[i] = keep;
                    double fd = (lp - lm) / 2e-3;
                    CHECK(close_enough(ana[i], fd, 1e-2, 1e-3), "linear(relu=%d) %s[%lld]: %g vs %g",
                          relu, which == 0 ? "dx" : which == 1 ? "dW" : "db", (long long)i,
                          (double)ana[i], fd);
                }
            }
        }
        free(x), free(W), free(bb), free(y), free(wy), free(dx), free(dW), free(db), free(dy);
    }
    free(din), free(dscore), free(ids);
    free(c.in), free(c.out), free(c.wout), free(c.aux), free(c.score), free(c.alpha), free(c.arg);
    batch_free(&c.b);
    pg_free(&ds);
}

/* ---- whole model ---- */
typedef struct {
    model m;
    model_acts a, d;
    graph_batch b;
    float *params, *grads;
} model_ctx;

static double model_loss(void *ctx) {
    model_ctx *c = ctx;
    model_input in = model_input_from_batch(&c->b);
    model_forward(&c->m, be, c->params, &in, &c->a);
    return loss_mse_masked(c->a.pred, c->b.y, c->b.G, c->m.M, NULL, NULL, NULL);
}

/* seed: the test graphs' seed offset (one per model, fixed so the graphs stay the same). */
static void check_model(const char *name, int seed, int agg, int L, int readout) {
    pg_dataset ds;
    tg_build(&ds, 5, 4, 3, 2, 2, 11 + (uint64_t)agg + 7 * (uint64_t)seed);
    model_ctx c;
    const model_ops *ops = model_find(name);
    CHECK(ops != NULL, "model %s is not registered", name);
    if (!ops) return;
    model_init(&c.m, &(model_sizes){ops, 6, L, ds.Fn, ds.Fe, ds.Fg, ds.M, agg, 5,
                                    (ops->flags & MODEL_OP_TYPES) ? ds.n_ops : 0, 3, readout});
    batch_init(&c.b, ds.G, ds.N, ds.E, ds.Fn, ds.Fe, ds.Fg, ds.M, ds.n_ops);
    int64_t ids[64];
    for (int64_t g = 0; g < ds.G; g++) ids[g] = g;
    float *targets = seer_malloc(sizeof(float) * (size_t)(ds.G * ds.M));
    for (int64_t i = 0; i < ds.G * ds.M; i++) targets[i] = isnan(ds.label_y[i]) ? NAN : (float)rng_normal(&rng);
    batch_build(&c.b, &ds, targets, ids, ds.G);
    model_acts_init(&c.a, &c.m, be, c.b.N, c.b.E, c.b.G);
    model_acts_init(&c.d, &c.m, be, c.b.N, c.b.E, c.b.G);
    int64_t P = c.m.pt.total;
    c.params = seer_malloc(sizeof(float) * (size_t)P);
    c.grads = seer_calloc((size_t)P, sizeof(float));
    params_init_uniform(&c.m.pt, c.params, &rng);
    const char *ro = readout == READOUT_ADDITIVE ? ", additive" : "";
    if (readout == READOUT_ADDITIVE) {
        // the log-sum-exp starts near log(nodes): targets around the initial predictions keep the
        // loss near 1, so float32 rounding of the loss stays below the tolerance
        model_input in0 = model_input_from_batch(&c.b);
        model_forward(&c.m, be, c.params, &in0, &c.a);
        for (int64_t i = 0; i < ds.G * ds.M; i++) c.b.y[i] += c.a.pred[i];
    }
    printf("model %s agg=%s L=%d%s: %lld parameters, loss %.4f\n", name, agg ? "synmm" : "mean", L,
           ro, (long long)P, model_loss(&c));
    free(targets);
    model_input in = model_input_from_batch(&c.b);
    model_loss(&c);
    model_acts_zero(&c.d, be);
    loss_mse_masked(c.a.pred, c.b.y, c.b.G, c.m.M, c.d.pred, NULL, NULL);
    model_backward(&c.m, be, c.params, c.grads, &in, &c.a, &c.d, -1);
    char what[64];
    snprintf(what, sizeof what, "%s(agg=%s, L=%d%s)", name, agg ? "synmm" : "mean", L, ro);
    // 2e-4: small enough that few ReLU kinks or max switches are crossed, large enough that
    // float32 rounding (loss ~1) stays below the absolute tolerance.
    double eps = getenv("SEER_GRAD_EPS") ? atof(getenv("SEER_GRAD_EPS")) : 2e-4;
    fd_out = seer_malloc(sizeof(double) * (size_t)P);
    fd_check(what, c.params, P, c.grads, model_loss, &c, eps, 1e-2, 1e-3, 0.01);
    // Per tensor: the relative error of each parameter tensor's gradient, so that a wrong term
    // in a small gradient is not hidden by the absolute tolerance of the per-value rule.
    double worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < c.m.pt.n; i++) {
        const param_info *pi = &c.m.pt.p[i];
        double num = 0, den = 0;
        for (int64_t k = pi->offset; k < pi->offset + pi->rows * pi->cols; k++)
            num += (fd_out[k] - c.grads[k]) * (fd_out[k] - c.grads[k]), den += fd_out[k] * fd_out[k];
        // Below a tensor gradient norm of 3e-3 float32 finite differences are mostly rounding
        // noise (about 3e-5 here); those tensors are checked against the float64 PyTorch
        // reference in test_reference instead.
        if (den < 1e-5) continue;
        double rel = sqrt(num / den);
        if (getenv("SEER_GRAD_DEBUG")) {
            double an = 0;
            for (int64_t k = pi->offset; k < pi->offset + pi->rows * pi->cols; k++) an += (double)c.grads[k] * c.grads[k];
            printf("    %-24s |fd| %.3e |analytic| %.3e rel %.2e\n", pi->name, sqrt(den), sqrt(an), rel);
        }
        if (rel > worst) worst = rel, worst_name = pi->name;
    }
    printf("  worst tensor %-24s relative error %.2e\n", worst_name, worst);
    CHECK(worst < 0.15, "%s: tensor %s gradient relative error %.3g", what, worst_name, worst);
    free(fd_out);
    fd_out = NULL;
    model_acts_free(&c.a, be), model_acts_free(&c.d, be);
    batch_free(&c.b);
    model_free(&c.m);
    free(c.params), free(c.grads);
    pg_free(&ds);
}

/* The additive readout against a float64 reference: with the trunk and pooled heads copied by
 * name into a pooled model, the additive model's prediction minus the pooled one's must be, for
 * every graph and label, log sum_v exp(mlp_node(xn_v)) computed here with plain loops. */
static void check_additive_reference(const char *name) {
    pg_dataset ds;
    tg_build(&ds, 5, 4, 3, 2, 2, 91);
    const model_ops *ops = model_find(name);
    int n_ops = (ops->flags & MODEL_OP_TYPES) ? ds.n_ops : 0;
    model ma, mp;
    model_init(&ma, &(model_sizes){ops, 6, 2, ds.Fn, ds.Fe, ds.Fg, ds.M, AGG_MEAN, 5, n_ops, 3,
                                   READOUT_ADDITIVE});
    model_init(&mp, &(model_sizes){ops, 6, 2, ds.Fn, ds.Fe, ds.Fg, ds.M, AGG_MEAN, 5, n_ops, 3,
                                   READOUT_POOLED});
    float *pa = seer_malloc(sizeof(float) * (size_t)ma.pt.total);
    float *pp = seer_malloc(sizeof(float) * (size_t)mp.pt.total);
    params_init_uniform(&ma.pt, pa, &rng);
    int copied = 0;
    for (int i = 0; i < mp.pt.n; i++)
        for (int j = 0; j < ma.pt.n; j++)
            if (!strcmp(mp.pt.p[i].name, ma.pt.p[j].name)) {
                memcpy(pp + mp.pt.p[i].offset, pa + ma.pt.p[j].offset,
                       sizeof(float) * (size_t)(mp.pt.p[i].rows * mp.pt.p[i].cols));
                copied++;
            }
    CHECK(copied == mp.pt.n && ma.pt.n == mp.pt.n + 4 * ds.M, "%s: %d of %d tensors shared, %d vs %d",
          name, copied, mp.pt.n, ma.pt.n, mp.pt.n);
    graph_batch b;
    batch_init(&b, ds.G, ds.N, ds.E, ds.Fn, ds.Fe, ds.Fg, ds.M, ds.n_ops);
    int64_t ids[64];
    for (int64_t g = 0; g < ds.G; g++) ids[g] = g;
    batch_build(&b, &ds, NULL, ids, ds.G);
    model_acts aa, ap;
    model_acts_init(&aa, &ma, be, b.N, b.E, b.G);
    model_acts_init(&ap, &mp, be, b.N, b.E, b.G);
    model_input in = model_input_from_batch(&b);
    model_forward(&ma, be, pa, &in, &aa);
    model_forward(&mp, be, pp, &in, &ap);
    double worst = 0;
    for (int h = 0; h < ds.M; h++) {
        const mlp_p *nh = &ma.node_head[h];
        for (int64_t g = 0; g < b.G; g++) {
            double mx = -INFINITY, z[64];
            int64_t n0 = b.node_ptr[g], n = b.node_ptr[g + 1] - n0;
            CHECK(n <= 64, "test graph %lld has %lld nodes (64 at most here)", (long long)g, (long long)n);
            if (n > 64) continue;
            for (int64_t v = 0; v < n; v++) {
                const float *x = b.xn + (n0 + v) * ds.Fn;
                double out = pa[nh->l2.b];
                for (int k = 0; k < NODE_HEAD_HIDDEN; k++) {
                    double a = pa[nh->l1.b + k];
                    for (int f = 0; f < ds.Fn; f++) a += (double)pa[nh->l1.w + k * ds.Fn + f] * x[f];
                    out += (double)pa[nh->l2.w + k] * (a > 0 ? a : 0);
                }
                z[v] = out, mx = fmax(mx, out);
            }
            double sum = 0; // an empty graph (the test set has one) gets nothing added
            for (int64_t v = 0; v < n; v++) sum += exp(z[v] - mx);
            double want = n ? mx + log(sum) : 0.0, got = (double)aa.pred[g * ds.M + h] - ap.pred[g * ds.M + h];
            worst = fmax(worst, fabs(got - want));
        }
    }
    printf("additive readout (%s) against the float64 reference: worst difference %.2e\n", name, worst);
    CHECK(worst < 1e-5, "%s: additive readout off the reference by %.3g", name, worst);
    model_acts_free(&aa, be), model_acts_free(&ap, be);
    batch_free(&b);
    model_free(&ma), model_free(&mp);
    free(pa), free(pp);
    pg_free(&ds);
}

int main(void) {
    be = backend_cpu();
    backend_cpu_set_threads(1);
    rng_seed(&rng, 42);
    check_ops();
    check_model("seernet", 0, AGG_MEAN, 1, READOUT_POOLED);
    check_model("seernet", 0, AGG_MEAN, 2, READOUT_POOLED);
    check_model("seernet", 0, AGG_SYNMM, 1, READOUT_POOLED);
    check_model("seernet", 0, AGG_SYNMM, 2, READOUT_POOLED);
    check_model("perfsage", 1, AGG_MEAN, 1, READOUT_POOLED);
    check_model("perfsage", 1, AGG_MEAN, 2, READOUT_POOLED);
    check_model("gcn", 2, AGG_MEAN, 1, READOUT_POOLED);
    check_model("gcn", 2, AGG_MEAN, 3, READOUT_POOLED);
    // the additive readout beside each trunk (model.h): node heads and the log-sum-exp
    check_model("seernet", 0, AGG_SYNMM, 1, READOUT_ADDITIVE);
    check_model("perfsage", 1, AGG_MEAN, 2, READOUT_ADDITIVE);
    check_model("gcn", 2, AGG_MEAN, 1, READOUT_ADDITIVE);
    check_additive_reference("perfsage");
    check_additive_reference("seernet");
    // the pre-AVX OpenBLAS kernel sets backend_cpu_blas_kernels replaces (on a processor with AVX2)
    CHECK(backend_blas_core_pre_avx("Prescott") && backend_blas_core_pre_avx("Nehalem") &&
              !backend_blas_core_pre_avx("SkylakeX") && !backend_blas_core_pre_avx("Haswell") &&
              !backend_blas_core_pre_avx("Zen") && !backend_blas_core_pre_avx(NULL),
          "backend_blas_core_pre_avx: the pre-AVX kernel sets misread");
    return test_finish("test_grad");
}
