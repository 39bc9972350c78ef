/* SeerNet-Multi: a batch in which one task has no measured label leaves that head (parameters
 * and Adam moments) bit for bit untouched, while the trunk and the other head move; for
 * multi_task = sum and pcgrad. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <unistd.h>

#include "testgraphs.h"
#include "testutil.h"
#include "train/train.h"

static void check_mode(const char *path, const char *mode) {
    seer_config cfg;
    seer_err err;
    config_defaults(&cfg);
    char set[700];
    const char *sets[] = {"model.hidden=8", "train.batch_size=4", "train.threads=1",
                          "data.labels=all", "data.train_frac=0.6", "data.val_frac=0.2"};
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++)
        CHECK(config_set(&cfg, sets[i], &err) == 0, "%s", err.msg);
    snprintf(set, sizeof set, "data.path=%s", path);
    CHECK(config_set(&cfg, set, &err) == 0, "%s", err.msg);
    snprintf(set, sizeof set, "train.multi_task=%s", mode);
    CHECK(config_set(&cfg, set, &err) == 0, "%s", err.msg);
    trainer *t = seer_calloc(1, sizeof *t);
    if (trainer_init(t, &cfg, &err)) seer_die("%s", err.msg);
    CHECK(t->M == 2 && t->pcgrad == !strcmp(mode, "pcgrad"), "setup");
    // a batch of training graphs whose label 1 is NaN (even graph ids, see main)
    int64_t ids[4], n = 0;
    for (int64_t i = 0; i < t->n_ids[SPLIT_TRAIN] && n < 4; i++)
        if (t->ids[SPLIT_TRAIN][i] % 2 == 0) ids[n++] = t->ids[SPLIT_TRAIN][i];
    CHECK(n == 4, "not enough even training graphs");
    size_t pb = sizeof(float) * (size_t)t->P;
    float *before = seer_malloc(pb * 2), *after = seer_malloc(pb * 2);
    // a first step with both labels, so the Adam moments of head 1 are not zero
    int64_t mixed[2] = {ids[0], ids[0] + 1 < t->ds.G ? ids[0] + 1 : ids[0]};
    trainer_step(t, mixed, 2);
    memcpy(before, t->params, pb), memcpy(before + t->P, t->adam_m, pb);
    trainer_step(t, ids, n);
    memcpy(after, t->params, pb), memcpy(after + t->P, t->adam_m, pb);
    const model *m = &t->net;
    int64_t h0 = m->head_begin[0], h1 = m->head_begin[1], h2 = m->head_begin[2];
    size_t hb = sizeof(float) * (size_t)(h2 - h1);
    CHECK(!memcmp(before + h1, after + h1, hb), "%s: head 1 parameters moved", mode);
    CHECK(!memcmp(before + t->P + h1, after + t->P + h1, hb), "%s: head 1 Adam moments moved", mode);
    CHECK(memcmp(before + h0, after + h0, sizeof(float) * (size_t)(h1 - h0)), "%s: head 0 did not move", mode);
    CHECK(memcmp(before, after, sizeof(float) * (size_t)m->trunk_params), "%s: trunk did not move", mode);
    printf("  %s: head 1 untouched, head 0 and the trunk updated\n", mode);
    free(before), free(after);
    trainer_free(t);
    free(t);
    config_free(&cfg);
}

int main(void) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/seer_test_multitask_%d.h5", (int)getpid());
    pg_dataset ds;
    tg_build(&ds, 40, 4, 3, 2, 2, 17);
    for (int64_t g = 0; g < ds.G; g++)
        ds.label_y[g * 2 + 1] = g % 2 == 0 ? NAN : 1.0f + (float)g;
    seer_err err;
    if (pg_write(path, &ds, &err)) seer_die("%s", err.msg);
    pg_free(&ds);
    check_mode(path, "sum");
    check_mode(path, "pcgrad");
    unlink(path);
    return test_finish("test_multitask");
}
