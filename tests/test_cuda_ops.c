/* Every CUDA op against its CPU twin (src/backend/cpu_ops.c) on fresh random segment layouts with
 * empty segments, ties, a NaN, one huge segment and strided rows; outputs are poisoned with NaN
 * (or filled with the same random values where an op accumulates) before each run, so an element
 * the GPU leaves unwritten shows. Dense products are checked in fp32, TF32 and bf16 with
 * tolerances per precision; everything else in fp32 arithmetic (1e-5 relative).
 * Without a GPU it prints SKIP and exits 77 (ctest: skipped; a failure under SEER_REQUIRE_GPU=1). */
#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "cuda_backend.h"
#include "graph/batch.h"
#include "optim/optim.h"
#include "testgraphs.h"
#include "testutil.h"
#include "train/batch_source.h"

static const seer_backend *C, *G;
static seer_rng rng;

static float *fresh(int64_t n, int poison) {
    float *x = seer_malloc(sizeof(float) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) x[i] = poison ? NAN : (float)rng_normal(&rng);
    return x;
}
static void *dev(const void *h, size_t bytes) {
    void *d = G->alloc(G->ctx, bytes);
    G->upload(G->ctx, d, h, bytes);
    return d;
}
static void *host_of(const void *d, size_t bytes) {
    void *h = seer_malloc(bytes ? bytes : 1);
    G->download(G->ctx, h, d, bytes);
    return h;
}

/* max |a - b| over max |a|, NaN where it must be; prints the worst. */
static void same(const char *what, const float *a, const float *b, int64_t n, double rtol) {
    double most = 0, diff = 0;
    int64_t bad_nan = 0, worst = -1;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) {
            bad_nan += isnan(a[i]) != isnan(b[i]);
            continue;
        }
        most = fmax(most, fabs(a[i]));
        double d = fabs((double)a[i] - b[i]);
        if (d > diff) diff = d, worst = i;
    }
    double rel = most > 0 ? diff / most : diff;
    CHECK(bad_nan == 0, "%s: %lld elements NaN on one side only (unwritten or wrong NaN handling)",
          what, (long long)bad_nan);
    CHECK(rel <= rtol, "%s: max error %.3g of the largest value (tolerance %g), worst at %lld: "
          "cpu %g gpu %g", what, rel, rtol, (long long)worst, worst >= 0 ? a[worst] : 0.0,
          worst >= 0 ? b[worst] : 0.0);
    printf("  %-44s max rel error %.2e\n", what, rel);
}

/* A CSR layout over n rows: S segments, about 1 in 5 empty, degrees 1..6, segment 7 huge; perm a
 * random permutation (each row in one segment). */
typedef struct {
    int64_t S, n;
    int64_t *ptr, *perm;
} layout;

static layout make_layout(int64_t S, int64_t huge) {
    layout L = {S, 0, seer_malloc(sizeof(int64_t) * (size_t)(S + 1)), NULL};
    L.ptr[0] = 0;
    for (int64_t s = 0; s < S; s++) {
        int64_t deg = rng_below(&rng, 5) == 0 ? 0 : 1 + (int64_t)rng_below(&rng, 6);
        if (s == 7) deg = huge;
        L.ptr[s + 1] = L.ptr[s] + deg;
    }
    L.n = L.ptr[S];
    L.perm = seer_malloc(sizeof(int64_t) * (size_t)(L.n ? L.n : 1));
    for (int64_t i = 0; i < L.n; i++) L.perm[i] = i;
    rng_shuffle_i64(&rng, L.perm, L.n);
    return L;
}

/* Ties: in some segments, every column of the second row copies the first; one NaN. */
static void add_ties(float *x, int64_t ld, int w, const layout *L) {
    for (int64_t s = 0; s < L->S; s += 3)
        if (L->ptr[s + 1] - L->ptr[s] >= 2)
            memcpy(x + L->perm[L->ptr[s] + 1] * ld, x + L->perm[L->ptr[s]] * ld, sizeof(float) * (size_t)w);
    if (L->n > 10) x[L->perm[L->ptr[7] + 3] * ld + 1] = NAN;
}

static void test_dense(int prec, const char *name, double rtol) {
    cuda_backend_set_precision(prec);
    int64_t n = 3001;
    int fin = 45, fout = 70;
    int64_t ldi = fin + 3, ldo = fout + 5, ldw = fin + 2;
    float *in = fresh(n * ldi, 0), *w = fresh(fout * ldw, 0), *b = fresh(fout, 0);
    float *din_i = fresh(n * ldi, 0), *dw_i = fresh(fout * ldw, 0), *db_i = fresh(fout, 0);
    float *dout = fresh(n * ldo, 0);
    float *d_in = dev(in, 4 * n * ldi), *d_w = dev(w, 4 * fout * ldw), *d_b = dev(b, 4 * fout);
    float *d_dout = dev(dout, 4 * n * ldo);
    for (int flags = 0; flags < 4; flags++)
        for (int with_b = 0; with_b < 2; with_b++) {
            float *out = fresh(n * ldo, !(flags & LIN_ACC));
            float *d_out = dev(out, 4 * n * ldo);
            C->linear_forward(C->ctx, out, ldo, in, ldi, w, ldw, with_b ? b : NULL, n, fin, fout, flags);
            G->linear_forward(G->ctx, d_out, ldo, d_in, ldi, d_w, ldw, with_b ? d_b : NULL, n, fin, fout, flags);
            float *got = host_of(d_out, 4 * n * ldo);
            // compare only the written columns (the gaps of the stride are the poison itself)
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = fout; j < ldo; j++) out[i * ldo + j] = got[i * ldo + j] = 0;
            char what[96];
            snprintf(what, sizeof what, "linear_forward %s relu=%d acc=%d bias=%d", name,
                     flags & LIN_RELU ? 1 : 0, flags & LIN_ACC ? 1 : 0, with_b);
            same(what, out, got, n * ldo, rtol);
            G->release(G->ctx, d_out), free(out), free(got);
        }
    float *d_din = dev(din_i, 4 * n * ldi), *d_dw = dev(dw_i, 4 * fout * ldw), *d_db = dev(db_i, 4 * fout);
    C->linear_backward(C->ctx, din_i, ldi, dw_i, ldw, db_i, dout, ldo, in, ldi, w, n, fin, fout);
    G->linear_backward(G->ctx, d_din, ldi, d_dw, ldw, d_db, d_dout, ldo, d_in, ldi, d_w, n, fin, fout);
    float *g1 = host_of(d_din, 4 * n * ldi), *g2 = host_of(d_dw, 4 * fout * ldw), *g3 = host_of(d_db, 4 * fout);
    char what[96];
    snprintf(what, sizeof what, "linear_backward %s din", name);
    same(what, din_i, g1, n * ldi, rtol);
    snprintf(what, sizeof what, "linear_backward %s dW", name);
    same(what, dw_i, g2, fout * ldw, rtol);
    snprintf(what, sizeof what, "linear_backward %s db", name);
    same(what, db_i, g3, fout, 1e-5); // the bias sum is fp32 whatever the precision
    free(g1), free(g2), free(g3);
    G->release(G->ctx, d_in), G->release(G->ctx, d_w), G->release(G->ctx, d_b), G->release(G->ctx, d_dout);
    G->release(G->ctx, d_din), G->release(G->ctx, d_dw), G->release(G->ctx, d_db);
    free(in), free(w), free(b), free(din_i), free(dw_i), free(db_i), free(dout);
}

static void test_sparse(int w, int64_t huge) {
    layout L = make_layout(2000, huge);
    int64_t ld = w + 3, n = L.n, S = L.S;
    float *in = fresh(n * ld, 0);
    add_ties(in, ld, w, &L);
    float *d_in = dev(in, 4 * n * ld);
    int64_t *d_ptr = dev(L.ptr, 8 * (S + 1)), *d_perm = dev(L.perm, 8 * n);
    char what[96];
#define RUN_OUT(label, rows, poison, cpu_call, gpu_call)                                           \
    do {                                                                                           \
        float *out = fresh((rows) * ld, poison);                                                   \
        float *d_out = dev(out, 4 * (rows) * ld);                                                  \
        cpu_call;                                                                                  \
        gpu_call;                                                                                  \
        float *got = host_of(d_out, 4 * (rows) * ld);                                              \
        for (int64_t i = 0; i < (rows); i++)                                                       \
            for (int64_t j = w; j < ld; j++) out[i * ld + j] = got[i * ld + j] = 0;                \
        snprintf(what, sizeof what, "%s w=%d huge=%lld", label, w, (long long)huge);               \
        same(what, out, got, (rows) * ld, 1e-5);                                                   \
        G->release(G->ctx, d_out), free(out), free(got);                                                   \
    } while (0)
    for (int perm = 0; perm < 2; perm++) {
        const int64_t *p = perm ? L.perm : NULL, *dp = perm ? d_perm : NULL;
        RUN_OUT(perm ? "seg_sum_forward perm" : "seg_sum_forward", S, 0,
                C->seg_sum_forward(C->ctx, out, ld, in, ld, L.ptr, p, S, w),
                G->seg_sum_forward(G->ctx, d_out, ld, d_in, ld, d_ptr, dp, S, w));
        RUN_OUT(perm ? "seg_mean_forward perm" : "seg_mean_forward", S, 1,
                C->seg_mean_forward(C->ctx, out, ld, in, ld, L.ptr, p, S, w),
                G->seg_mean_forward(G->ctx, d_out, ld, d_in, ld, d_ptr, dp, S, w));
        float *g = fresh(S * ld, 0), *d_g = dev(g, 4 * S * ld);
        RUN_OUT(perm ? "seg_mean_backward perm" : "seg_mean_backward", n, 0,
                C->seg_mean_backward(C->ctx, out, ld, g, ld, L.ptr, p, S, w),
                G->seg_mean_backward(G->ctx, d_out, ld, d_g, ld, d_ptr, dp, S, w));
        // max: values, the argmax exactly (ties to the lowest position), then its backward
        int64_t *arg = seer_malloc(8 * (size_t)(S * w)), *d_arg = G->alloc(G->ctx, 8 * (size_t)(S * w));
        RUN_OUT(perm ? "seg_max_forward perm" : "seg_max_forward", S, 1,
                C->seg_max_forward(C->ctx, out, ld, arg, in, ld, L.ptr, p, S, w),
                G->seg_max_forward(G->ctx, d_out, ld, d_arg, d_in, ld, d_ptr, dp, S, w));
        int64_t *garg = host_of(d_arg, 8 * (size_t)(S * w)), wrong = 0;
        for (int64_t i = 0; i < S * w; i++) wrong += arg[i] != garg[i];
        CHECK(wrong == 0, "seg_max_forward: %lld argmax entries differ", (long long)wrong);
        RUN_OUT(perm ? "seg_max_backward perm" : "seg_max_backward", n, 0,
                C->seg_max_backward(C->ctx, out, ld, g, ld, arg, S, w),
                G->seg_max_backward(G->ctx, d_out, ld, d_g, ld, d_arg, S, w));
        free(arg), free(garg), G->release(G->ctx, d_arg), free(g), G->release(G->ctx, d_g);
    }
    // gathers: rows of in by an index with repeats
    int64_t m = 5000, *idx = seer_malloc(8 * (size_t)m);
    for (int64_t i = 0; i < m; i++) idx[i] = (int64_t)rng_below(&rng, (uint64_t)n);
    int64_t *d_idx = dev(idx, 8 * m);
    RUN_OUT("gather_forward", m, 1, C->gather_forward(C->ctx, out, ld, in, ld, idx, m, w, 0),
            G->gather_forward(G->ctx, d_out, ld, d_in, ld, d_idx, m, w, 0));
    RUN_OUT("gather_forward accumulate", m, 0, C->gather_forward(C->ctx, out, ld, in, ld, idx, m, w, 1),
            G->gather_forward(G->ctx, d_out, ld, d_in, ld, d_idx, m, w, 1));
    RUN_OUT("add_rows", n, 0, C->add_rows(C->ctx, out, ld, in, ld, n, w), G->add_rows(G->ctx, d_out, ld, d_in, ld, n, w));
    RUN_OUT("copy_rows", n, 1, C->copy_rows(C->ctx, out, ld, in, ld, n, w), G->copy_rows(G->ctx, d_out, ld, d_in, ld, n, w));
    free(idx), G->release(G->ctx, d_idx);

    // attention pooling over contiguous segments (in contiguous, width w)
    float *x = fresh(n * w, 0), *score = fresh(n, 0), *dout = fresh(S * w, 0);
    for (int64_t k = 0; k < n; k++) score[k] *= 3.0f;
    float *d_x = dev(x, 4 * n * w), *d_score = dev(score, 4 * n), *d_dout = dev(dout, 4 * S * w);
    float *out = fresh(S * w, 1), *alpha = fresh(n, 1);
    float *d_out = dev(out, 4 * S * w), *d_alpha = dev(alpha, 4 * n);
    C->attn_pool_forward(C->ctx, out, alpha, x, score, L.ptr, S, w);
    G->attn_pool_forward(G->ctx, d_out, d_alpha, d_x, d_score, d_ptr, S, w);
    float *gout = host_of(d_out, 4 * S * w), *galpha = host_of(d_alpha, 4 * n);
    snprintf(what, sizeof what, "attn_pool_forward out w=%d", w);
    same(what, out, gout, S * w, 1e-5);
    snprintf(what, sizeof what, "attn_pool_forward alpha w=%d", w);
    same(what, alpha, galpha, n, 1e-5);
    float *din = fresh(n * w, 0), *dscore = fresh(n, 0);
    float *d_din = dev(din, 4 * n * w), *d_dscore = dev(dscore, 4 * n);
    C->attn_pool_backward(C->ctx, din, dscore, dout, x, out, alpha, L.ptr, S, w);
    G->attn_pool_backward(G->ctx, d_din, d_dscore, d_dout, d_x, d_out, d_alpha, d_ptr, S, w);
    float *gdin = host_of(d_din, 4 * n * w), *gds = host_of(d_dscore, 4 * n);
    snprintf(what, sizeof what, "attn_pool_backward din w=%d", w);
    same(what, din, gdin, n * w, 1e-5);
    snprintf(what, sizeof what, "attn_pool_backward dscore w=%d", w);
    same(what, dscore, gds, n, 1e-5);
    free(x), free(score), free(dout), free(out), free(alpha), free(gout), free(galpha);
    free(din), free(dscore), free(gdin), free(gds);
    G->release(G->ctx, d_x), G->release(G->ctx, d_score), G->release(G->ctx, d_dout), G->release(G->ctx, d_out);
    G->release(G->ctx, d_alpha), G->release(G->ctx, d_din), G->release(G->ctx, d_dscore);

    // log-sum-exp over the segments into column 1 of a (S, 3) block, and its backward
    {
        float *z = fresh(n, 0), *o = fresh(S * 3, 0), *a = fresh(n, 1), *g = fresh(S * 3, 0);
        float *dz = fresh(n, 0);
        for (int64_t k = 0; k < n; k++) z[k] *= 20.0f;
        float *d_z = dev(z, 4 * n), *d_o = dev(o, 4 * S * 3), *d_a = dev(a, 4 * n);
        float *d_g = dev(g, 4 * S * 3), *d_dz = dev(dz, 4 * n);
        C->seg_lse_forward(C->ctx, o + 1, 3, a, z, L.ptr, S);
        G->seg_lse_forward(G->ctx, d_o + 1, 3, d_a, d_z, d_ptr, S);
        float *go = host_of(d_o, 4 * S * 3), *ga = host_of(d_a, 4 * n);
        same("seg_lse_forward out", o, go, S * 3, 1e-5);
        same("seg_lse_forward alpha", a, ga, n, 1e-5);
        C->seg_lse_backward(C->ctx, dz, g + 1, 3, a, L.ptr, S);
        G->seg_lse_backward(G->ctx, d_dz, d_g + 1, 3, d_a, d_ptr, S);
        float *gdz = host_of(d_dz, 4 * n);
        same("seg_lse_backward", dz, gdz, n, 1e-5);
        free(z), free(o), free(a), free(g), free(dz), free(go), free(ga), free(gdz);
        G->release(G->ctx, d_z), G->release(G->ctx, d_o), G->release(G->ctx, d_a);
        G->release(G->ctx, d_g), G->release(G->ctx, d_dz);
    }

    // ReLU
    float *y = fresh(n * w, 0), *dx = fresh(n * w, 0);
    float *d_y = dev(y, 4 * n * w), *d_dx = dev(dx, 4 * n * w);
    C->relu_backward(C->ctx, dx, y, n * w), G->relu_backward(G->ctx, d_dx, d_y, n * w);
    C->relu_forward(C->ctx, y, n * w), G->relu_forward(G->ctx, d_y, n * w);
    float *gy = host_of(d_y, 4 * n * w), *gdx = host_of(d_dx, 4 * n * w);
    same("relu_forward", y, gy, n * w, 0);
    same("relu_backward", dx, gdx, n * w, 0);
    free(y), free(dx), free(gy), free(gdx), G->release(G->ctx, d_y), G->release(G->ctx, d_dx);
    G->release(G->ctx, d_in), G->release(G->ctx, d_ptr), G->release(G->ctx, d_perm);
    free(in), free(L.ptr), free(L.perm);
#undef RUN_OUT
}

static void test_optim(void) {
    int64_t P = 100003;
    float *p = fresh(P, 0), *g = fresh(P, 0), *m = fresh(P, 0), *v = fresh(P, 0);
    for (int64_t i = 0; i < P; i++) v[i] = v[i] * v[i];
    float *d_p = dev(p, 4 * P), *d_g = dev(g, 4 * P), *d_m = dev(m, 4 * P), *d_v = dev(v, 4 * P);
    for (int kind = 0; kind < 2; kind++)
        for (int64_t t = 1; t <= 3; t++) {
            C->adam_update(C->ctx, p, g, m, v, P, kind, 1e-3, 0.9, 0.999, 1e-8, 1e-2, t);
            G->adam_update(G->ctx, d_p, d_g, d_m, d_v, P, kind, 1e-3, 0.9, 0.999, 1e-8, 1e-2, t);
        }
    float *gp = host_of(d_p, 4 * P), *gm = host_of(d_m, 4 * P), *gv = host_of(d_v, 4 * P);
    same("adam_update (adam, adamw; 3 steps each) p", p, gp, P, 1e-6);
    same("adam_update m", m, gm, P, 1e-6);
    same("adam_update v", v, gv, P, 1e-6);
    double nc = C->grad_norm(C->ctx, g, P), ng = G->grad_norm(G->ctx, d_g, P);
    CHECK(close_enough(nc, ng, 1e-12, 0), "grad_norm: cpu %.17g gpu %.17g", nc, ng);
    printf("  %-44s cpu %.12g gpu %.12g\n", "grad_norm", nc, ng);
    C->grad_scale(C->ctx, g, P, 0.37f), G->grad_scale(G->ctx, d_g, P, 0.37f);
    float *gg = host_of(d_g, 4 * P);
    same("grad_scale", g, gg, P, 0);
    // PCGrad over 4 tasks (rows of stride P), trunk of P - 7 parameters
    int T = 4;
    int64_t tr = P - 7;
    float *Gt = fresh(T * P, 0);
    for (int64_t i = 0; i < tr; i++) Gt[P + i] = -0.5f * Gt[i] + 0.1f * Gt[P + i]; // conflicts
    float *d_G = dev(Gt, 4 * T * P), *out = fresh(tr, 1), *d_out = dev(out, 4 * tr);
    double *Gd = seer_malloc(8 * (size_t)(T * tr)), *o64 = seer_malloc(8 * (size_t)tr), K[16], K2[16];
    double *d_Gd = G->alloc(G->ctx, 8 * (size_t)(T * tr)), *d_o64 = G->alloc(G->ctx, 8 * (size_t)tr);
    seer_rng r1, r2;
    rng_seed(&r1, 5), rng_seed(&r2, 5);
    C->pcgrad_combine(C->ctx, Gt, P, T, tr, &r1, Gd, K, out, o64);
    G->pcgrad_combine(G->ctx, d_G, P, T, tr, &r2, d_Gd, K2, d_out, d_o64);
    float *gout = host_of(d_out, 4 * tr);
    same("pcgrad_combine (4 tasks, conflicting)", out, gout, tr, 1e-6);
    for (int i = 0; i < T * T; i++)
        CHECK(close_enough(K[i], K2[i], 1e-10, 1e-9), "pcgrad Gram[%d]: %g vs %g", i, K[i], K2[i]);
    free(p), free(g), free(m), free(v), free(gp), free(gm), free(gv), free(gg), free(Gt), free(out);
    free(Gd), free(o64), free(gout);
    G->release(G->ctx, d_p), G->release(G->ctx, d_g), G->release(G->ctx, d_m), G->release(G->ctx, d_v), G->release(G->ctx, d_G);
    G->release(G->ctx, d_out), G->release(G->ctx, d_Gd), G->release(G->ctx, d_o64);
}

/* The masked MSE: per-label sums and the output gradient (all labels, and one task's column). */
static void test_loss(void) {
    int64_t n = 5003;
    int M = 5;
    float *pred = fresh(n * M, 0), *tgt = fresh(n * M, 0);
    for (int64_t i = 0; i < n * M; i += 7) tgt[i] = NAN;
    for (int64_t i = 0; i < n; i++) tgt[i * M + 4] = NAN; // a label measured nowhere
    float *d_pred = dev(pred, 4 * n * M), *d_tgt = dev(tgt, 4 * n * M);
    double sc[10], sg[10];
    C->loss_sums(C->ctx, pred, tgt, n, M, sc);
    G->loss_sums(G->ctx, d_pred, d_tgt, n, M, sg);
    for (int k = 0; k < 2 * M; k++)
        CHECK(close_enough(sc[k], sg[k], 1e-12, 0), "loss_sums[%d]: cpu %.17g gpu %.17g", k, sc[k], sg[k]);
    printf("  %-44s counts %g..., squares %.12g vs %.12g\n", "loss_sums", sg[0], sc[1], sg[1]);
    for (int task = -1; task < M; task += 3) {
        float *dp = fresh(n * M, 1), *d_dp = dev(dp, 4 * n * M);
        C->loss_grad(C->ctx, dp, pred, tgt, n, M, sc, task);
        G->loss_grad(G->ctx, d_dp, d_pred, d_tgt, n, M, sc, task);
        float *got = host_of(d_dp, 4 * n * M);
        char what[64];
        snprintf(what, sizeof what, "loss_grad task=%d", task);
        same(what, dp, got, n * M, 1e-6);
        free(dp), free(got), G->release(G->ctx, d_dp);
    }
    free(pred), free(tgt), G->release(G->ctx, d_pred), G->release(G->ctx, d_tgt);
}

/* Resident data: batches assembled on the GPU equal batch_build's on the CPU, array for array. */
static void test_assemble(void) {
    pg_dataset ds;
    tg_build(&ds, 55, 4, 3, 2, 2, 11); // the edge-case graphs of testgraphs.h and 55 random ones
    cuda_shard sh;
    int M = 2;
    float *targets = fresh(ds.G * M, 0);
    targets[3] = NAN;
    cuda_shard_src src;
    cuda_shard_src_make(&src, &ds, targets, M);
    size_t bytes = cuda_shard_upload(&sh, &src);
    cuda_shard_src_free(&src);
    graph_batch b;
    batch_init(&b, ds.G, ds.N, ds.E, ds.Fn, ds.Fe, ds.Fg, M, ds.n_ops);
    b.want_extra = 0;
    int64_t *ids = seer_malloc(sizeof(int64_t) * (size_t)ds.G);
    for (int rep = 0; rep < 5; rep++) {
        for (int64_t g = 0; g < ds.G; g++) ids[g] = g;
        rng_shuffle_i64(&rng, ids, ds.G);
        int64_t n = rep == 0 ? ds.G : 1 + (int64_t)rng_below(&rng, (uint64_t)ds.G);
        batch_build(&b, &ds, targets, ids, n);
        int64_t N = b.N, E = b.E, nG = b.G;
        cuda_batch_out o;
        int64_t **fi[] = {&o.node_ptr, &o.edge_ptr, &o.src, &o.dst, &o.node_graph, &o.edge_graph,
                          &o.in_ptr, &o.in_idx, &o.out_ptr, &o.out_idx};
        const int64_t *want[] = {b.node_ptr, b.edge_ptr, b.src, b.dst, b.node_graph, b.edge_graph,
                                 b.in_ptr, b.in_idx, b.out_ptr, b.out_idx};
        int64_t len[] = {nG + 1, nG + 1, E, E, N, E, N + 1, E, N + 1, E};
        const char *name[] = {"node_ptr", "edge_ptr", "src", "dst", "node_graph", "edge_graph",
                              "in_ptr", "in_idx", "out_ptr", "out_idx"};
        for (int k = 0; k < 10; k++) {
            int64_t *poison = seer_malloc(8 * (size_t)(len[k] + 1));
            for (int64_t i = 0; i <= len[k]; i++) poison[i] = -777;
            *fi[k] = dev(poison, 8 * (size_t)(len[k] + 1));
            free(poison);
        }
        float *pn = fresh(N * ds.Fn, 1), *pe = fresh(E * ds.Fe, 1), *pg = fresh(nG * ds.Fg, 1);
        o.xn = dev(pn, 4 * (size_t)(N * ds.Fn + 1)), o.xe = dev(pe, 4 * (size_t)(E * ds.Fe + 1));
        o.xg = dev(pg, 4 * (size_t)(nG * ds.Fg + 1));
        float *py = fresh(nG * M, 1);
        o.y = dev(py, 4 * (size_t)(nG * M + 1));
        int64_t gN, gE;
        cuda_batch_assemble(&sh, ds.node_ptr, ds.edge_ptr, ids, n, &o, &gN, &gE);
        CHECK(gN == N && gE == E, "assembled sizes %lld/%lld, batch_build %lld/%lld", (long long)gN,
              (long long)gE, (long long)N, (long long)E);
        int64_t differ = 0;
        for (int k = 0; k < 10; k++) {
            int64_t *got = host_of(*fi[k], 8 * (size_t)len[k]);
            for (int64_t i = 0; i < len[k]; i++)
                if (got[i] != want[k][i]) {
                    if (!differ++) CHECK(0, "%s[%lld]: gpu %lld cpu %lld", name[k], (long long)i,
                                         (long long)got[i], (long long)want[k][i]);
                }
            free(got), G->release(G->ctx, *fi[k]);
        }
        float *gx = host_of(o.xn, 4 * (size_t)(N * ds.Fn)), *ge = host_of(o.xe, 4 * (size_t)(E * ds.Fe));
        float *gg = host_of(o.xg, 4 * (size_t)(nG * ds.Fg));
        differ += memcmp(gx, b.xn, 4 * (size_t)(N * ds.Fn)) != 0;
        differ += memcmp(ge, b.xe, 4 * (size_t)(E * ds.Fe)) != 0;
        differ += memcmp(gg, b.xg, 4 * (size_t)(nG * ds.Fg)) != 0;
        float *gy = host_of(o.y, 4 * (size_t)(nG * M));
        differ += memcmp(gy, b.y, 4 * (size_t)(nG * M)) != 0; // NaN included, bit for bit
        free(gy), free(py), G->release(G->ctx, o.y);
        CHECK(differ == 0, "batch of %lld graphs: %lld arrays or elements differ", (long long)n, (long long)differ);
        printf("  %-44s %lld graphs, %lld nodes, %lld edges: %s\n", "cuda_batch_assemble", (long long)n,
               (long long)N, (long long)E, differ ? "DIFFERS" : "equal to batch_build");
        free(gx), free(ge), free(gg), free(pn), free(pe), free(pg);
        G->release(G->ctx, o.xn), G->release(G->ctx, o.xe), G->release(G->ctx, o.xg);
    }
    printf("  resident shard: %zu bytes\n", bytes);
    free(ids), free(targets);
    batch_free(&b);
    cuda_shard_free(&sh);
    pg_free(&ds);
}

int main(void) {
    if (cuda_device_count() == 0)
        return test_skip("test_cuda_ops", "no CUDA device on this machine; the GPU checks run in "
                                          "scripts/device-check.sh");
    seer_err err;
    if (cuda_backend_init(0, PREC_FP32, &err)) seer_die("%s", err.msg);
    printf("test_cuda_ops on %s\n", cuda_device_name());
    C = backend_cpu(), G = backend_cuda();
    backend_cpu_set_threads(4);
    rng_seed(&rng, 2026);
    test_dense(PREC_FP32, "fp32", 1e-5);
    test_dense(PREC_TF32, "tf32", 2e-3);
    test_dense(PREC_BF16, "bf16", 2e-2);
    cuda_backend_set_precision(PREC_FP32);
    for (int rep = 0; rep < 3; rep++) { // fresh layouts each time
        test_sparse(37, 20000);
        test_sparse(64, 3);
    }
    test_optim();
    test_loss();
    test_assemble();
    cuda_backend_sync();
    cuda_backend_shutdown();
    return test_finish("test_cuda_ops");
}
