/* ckpt_equal A B [--rtol R]: exits 0 when two checkpoints hold the same tensors (parameters and
 * optimizer moments) and the same step; prints the first differences otherwise. Bitwise by
 * default; with --rtol each tensor must satisfy ||a - b|| <= R ||a|| (runs that differ only by
 * floating-point reassociation, e.g. on another number of ranks). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "testutil.h"

/* ||a - b|| / ||a|| (Euclidean) over a float32 tensor. */
static double rel_diff(const ctr_tensor *a, const ctr_tensor *b) {
    const float *x = a->data, *y = b->data;
    double norm = 0, diff = 0;
    for (uint64_t i = 0; i < a->nbytes / 4; i++) {
        double d = (double)x[i] - (double)y[i];
        norm += (double)x[i] * x[i], diff += d * d;
        if (isnan(x[i]) != isnan(y[i])) return INFINITY;
    }
    return norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

int main(int argc, char **argv) {
    double rtol = -1;
    if (argc == 5 && !strcmp(argv[3], "--rtol")) rtol = atof(argv[4]);
    else if (argc != 3) {
        fprintf(stderr, "usage: ckpt_equal A.ckpt B.ckpt [--rtol R]\n");
        return 2;
    }
    seer_container a, b;
    seer_err err;
    if (ctr_read(&a, argv[1], CKPT_MAGIC, CKPT_VERSION, &err) ||
        ctr_read(&b, argv[2], CKPT_MAGIC, CKPT_VERSION, &err))
        seer_die("%s", err.msg);
    CHECK(a.n_t == b.n_t, "tensor counts %d vs %d", a.n_t, b.n_t);
    int64_t differ = 0;
    double worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < a.n_t; i++) {
        const ctr_tensor *tb = ctr_tensor_find(&b, a.t[i].name);
        CHECK(tb != NULL, "%s missing in B", a.t[i].name);
        if (!tb) continue;
        CHECK(tb->nbytes == a.t[i].nbytes, "%s: sizes differ", a.t[i].name);
        if (tb->nbytes != a.t[i].nbytes) continue;
        if (rtol < 0) {
            if (memcmp(tb->data, a.t[i].data, tb->nbytes)) {
                differ++;
                CHECK(0, "%s differs", a.t[i].name);
            }
            continue;
        }
        CHECK(a.t[i].dtype == DT_F32, "%s: --rtol compares float32 tensors only", a.t[i].name);
        double r = rel_diff(&a.t[i], tb);
        if (r > worst) worst = r, worst_name = a.t[i].name;
        if (r > rtol) {
            differ++;
            CHECK(0, "%s: ||a - b|| / ||a|| = %.3g (rtol %g)", a.t[i].name, r, rtol);
        }
    }
    // the training split's coverage (data/coverage.h) is the data's, not the arithmetic's: the same
    // bit for bit on any number of ranks (their shards' counts summed, their ranges joined)
    int n_cov = 0;
    for (int i = 0; i < a.n_kv; i++) {
        if (strncmp(a.kv[i].key, "coverage.", 9) || a.kv[i].type != KV_F64ARR) continue;
        const ctr_kv *kb = ctr_find(&b, a.kv[i].key);
        n_cov++;
        CHECK(kb && kb->type == KV_F64ARR && kb->n == a.kv[i].n &&
                  !memcmp(kb->data, a.kv[i].data, sizeof(double) * (size_t)a.kv[i].n),
              "%s differs", a.kv[i].key);
    }
    const ctr_kv *sa = ctr_get(&a, "train.step", KV_I64, argv[1], &err);
    const ctr_kv *sb = ctr_get(&b, "train.step", KV_I64, argv[2], &err);
    CHECK(sa && sb && !memcmp(sa->data, sb->data, 8), "steps differ");
    if (rtol < 0) printf("%d tensors compared, %lld differ; %d coverage arrays\n", a.n_t, (long long)differ, n_cov);
    else printf("%d tensors compared, %lld beyond rtol %g; worst %.3g (%s); %d coverage arrays\n", a.n_t,
                (long long)differ, rtol, worst, worst_name, n_cov);
    ctr_free(&a), ctr_free(&b);
    return test_finish("ckpt_equal");
}
