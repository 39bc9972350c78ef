/* Config: every kind of error names the file and line (or the --set), the resolved config reads
 * back to the same values, and a missing dataset is reported at the line that names it. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "testutil.h"
#include "train/train.h"

static char path[256];

static void write_ini(const char *text) {
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void expect_error(const char *text, const char *want) {
    seer_config c;
    seer_err err;
    config_defaults(&c);
    write_ini(text);
    err.msg[0] = 0;
    int rc = config_load(&c, path, &err);
    if (rc == 0) rc = config_validate(&c, &err);
    CHECK(rc != 0, "accepted: %s", text);
    CHECK(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    printf("  %s\n", err.msg);
    config_free(&c);
}

int main(void) {
    snprintf(path, sizeof path, "/tmp/seer_test_config_%d.ini", (int)getpid());
    char want[400];
    snprintf(want, sizeof want, "%s:3: unknown key 'learning_rate' in [train]", path);
    expect_error("[train]\nepochs = 3\nlearning_rate = 0.1\n", want);
    snprintf(want, sizeof want, "%s:3: unknown section [trian]", path);
    expect_error("; comment\n[trian]\nlr = 1\n", want);
    snprintf(want, sizeof want, "%s:4: [train] epochs = 'ten': not an integer", path);
    expect_error("[data]\nlimit = 5\n[train]\nepochs = ten\n", want);
    snprintf(want, sizeof want, "%s:2: [train] lr = '1e-3x': not a finite number", path);
    expect_error("[train]\nlr = 1e-3x\n", want);
    snprintf(want, sizeof want, "%s:2: [model] agg = 'sum': must be one of mean|synmm", path);
    expect_error("[model]\nagg = sum\n", want);
    snprintf(want, sizeof want, "%s:3: syntax error", path);
    expect_error("[model]\nhidden = 8\nthis line is not ini\n", want);
    snprintf(want, sizeof want, "%s:2: [data] train_frac = 1.5: must be in (0, 1)", path);
    expect_error("[data]\ntrain_frac = 1.5\n", want);
    snprintf(want, sizeof want, "%s:3: [model] blocks = 0", path);
    expect_error("[model]\nhidden = 8\nblocks = 0\n", want);

    seer_config c;
    seer_err err;
    config_defaults(&c);
    CHECK(config_set(&c, "train.lr=abc", &err) != 0 && strstr(err.msg, "--set train.lr"), "%s", err.msg);
    CHECK(config_set(&c, "train.nope=1", &err) != 0 && strstr(err.msg, "unknown key [train] nope"), "%s", err.msg);
    CHECK(config_set(&c, "lr=1", &err) != 0 && strstr(err.msg, "expected section.key=value"), "%s", err.msg);
    CHECK(config_set(&c, "train.lr=3e-4", &err) == 0 && c.train_lr == 3e-4, "--set train.lr");
    CHECK(config_set(&c, "model.agg=synmm", &err) == 0 && !strcmp(c.model_agg, "synmm"), "--set model.agg");

    // the resolved config reads back to the same values
    char *text = config_to_string(&c);
    seer_config d;
    config_defaults(&d);
    CHECK(config_load_string(&d, text, "echo", &err) == 0, "echo does not parse: %s", err.msg);
    char *again = config_to_string(&d);
    CHECK(!strcmp(text, again), "echo round trip differs:\n%s\n---\n%s", text, again);
    free(text), free(again);
    config_free(&d);
    config_free(&c);

    // a missing dataset is reported at the line of [data] path
    config_defaults(&c);
    write_ini("[data]\n\npath = /nonexistent/nb.h5\n");
    CHECK(config_load(&c, path, &err) == 0, "%s", err.msg);
    trainer *t = seer_calloc(1, sizeof *t);
    CHECK(trainer_init(t, &c, &err) != 0, "missing dataset accepted");
    snprintf(want, sizeof want, "%s:3: [data] path = /nonexistent/nb.h5", path);
    CHECK(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
    printf("  %s\n", err.msg);
    free(t);
    config_free(&c);
    unlink(path);
    return test_finish("test_config");
}
