/* ckpt_equal A B: exits 0 when two checkpoints hold bitwise-identical tensors (parameters and
 * optimizer moments) and the same step; prints the first differences otherwise. */
#include <string.h>

#include "common/container.h"
#include "testutil.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: ckpt_equal A.ckpt B.ckpt\n");
        return 2;
    }
    seer_container a, b;
    seer_err err;
    if (ctr_read(&a, argv[1], "SEERCKPT", 1, &err) || ctr_read(&b, argv[2], "SEERCKPT", 1, &err))
        seer_die("%s", err.msg);
    CHECK(a.n_t == b.n_t, "tensor counts %d vs %d", a.n_t, b.n_t);
    int64_t differ = 0;
    for (int i = 0; i < a.n_t; i++) {
        const ctr_tensor *tb = ctr_tensor_find(&b, a.t[i].name);
        CHECK(tb != NULL, "%s missing in B", a.t[i].name);
        if (!tb) continue;
        CHECK(tb->nbytes == a.t[i].nbytes, "%s: sizes differ", a.t[i].name);
        if (tb->nbytes == a.t[i].nbytes && memcmp(tb->data, a.t[i].data, tb->nbytes)) {
            differ++;
            CHECK(0, "%s differs", a.t[i].name);
        }
    }
    const ctr_kv *sa = ctr_get(&a, "train.step", KV_I64, argv[1], &err);
    const ctr_kv *sb = ctr_get(&b, "train.step", KV_I64, argv[2], &err);
    CHECK(sa && sb && !memcmp(sa->data, sb->data, 8), "steps differ");
    printf("%d tensors compared, %lld differ\n", a.n_t, (long long)differ);
    ctr_free(&a), ctr_free(&b);
    return test_finish("ckpt_equal");
}
