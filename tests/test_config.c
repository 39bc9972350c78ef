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
    CHECK(config_set(&c, "model.agg=synmm", &err) == 0 && c.model_agg == CFG_AGG_SYNMM, "--set model.agg");

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

    // a key set twice, a line longer than the reader's buffer (a long comment's tail must not
    // become a key), a run folder outside output.dir, a folder as the config
    expect_error("[train]\nlr = 1e-3\nlr = 2e-3\n", "[train] lr is set twice (first at line 2)");
    {
        char text[600];
        memset(text, 'x', sizeof text);
        memcpy(text, "[train]\n; ", 10);
        snprintf(text + 400, sizeof text - 400, " max_steps = 3\n");
        expect_error(text, ":2: line longer than");
    }
    expect_error("[output]\nrun = ../../x\n", "[output] run = '../../x'");
    {
        seer_config d;
        config_defaults(&d);
        CHECK(config_load(&d, "/tmp", &err) != 0 && strstr(err.msg, "is a folder"), "a folder as the "
              "config: %s", err.msg);
        config_free(&d);
    }

    // every CFG_* enum names the position of its value in the key's allowed list
    struct { int key, value; const char *name; } enums[] = {
        {CFG_KEY_data_split, CFG_SPLIT_FRACTIONS, "fractions"}, {CFG_KEY_data_split, CFG_SPLIT_COUNTS, "counts"},
        {CFG_KEY_model_agg, CFG_AGG_MEAN, "mean"}, {CFG_KEY_model_agg, CFG_AGG_SYNMM, "synmm"},
        {CFG_KEY_model_target, CFG_TARGET_LOG, "log"}, {CFG_KEY_model_target, CFG_TARGET_ROOFLINE, "roofline"},
        {CFG_KEY_model_target, CFG_TARGET_ROOFLINE_W, "roofline_weights"},
        {CFG_KEY_model_target, CFG_TARGET_ROOFLINE_L, "roofline_light"},
        {CFG_KEY_model_target, CFG_TARGET_ROOFLINE_K, "roofline_kept"},
        {CFG_KEY_model_target, CFG_TARGET_ROOFLINE_KS, "roofline_kept_silu"},
        {CFG_KEY_model_target, CFG_TARGET_ROOFLINE_KA, "roofline_kept_acts"},
        {CFG_KEY_model_target, CFG_TARGET_ROOFLINE_P, "roofline_peak"},
        {CFG_KEY_model_target, CFG_TARGET_ROOFLINE_DW, "roofline_dw"},
        {CFG_KEY_model_readout, CFG_READOUT_POOLED, "pooled"}, {CFG_KEY_model_readout, CFG_READOUT_ADDITIVE, "additive"},
        {CFG_KEY_model_clamp, CFG_CLAMP_OFF, "off"}, {CFG_KEY_model_clamp, CFG_CLAMP_RANGE, "range"},
        {CFG_KEY_train_multi_task, CFG_MULTI_SUM, "sum"}, {CFG_KEY_train_multi_task, CFG_MULTI_PCGRAD, "pcgrad"},
        {CFG_KEY_train_multi_task, CFG_MULTI_SINGLE, "single"},
        {CFG_KEY_train_optimizer, CFG_OPT_ADAM, "adam"}, {CFG_KEY_train_optimizer, CFG_OPT_ADAMW, "adamw"},
        {CFG_KEY_train_schedule, CFG_SCHED_PLATEAU, "plateau"}, {CFG_KEY_train_schedule, CFG_SCHED_COSINE, "cosine"},
        {CFG_KEY_train_schedule, CFG_SCHED_NONE, "none"},
        {CFG_KEY_backend_device, CFG_DEVICE_AUTO, "auto"}, {CFG_KEY_backend_device, CFG_DEVICE_CPU, "cpu"},
        {CFG_KEY_backend_device, CFG_DEVICE_CUDA, "cuda"},
        {CFG_KEY_backend_precision, CFG_PREC_FP32, "fp32"}, {CFG_KEY_backend_precision, CFG_PREC_TF32, "tf32"},
        {CFG_KEY_backend_precision, CFG_PREC_BF16, "bf16"},
        {CFG_KEY_dist_backend, CFG_DIST_AUTO, "auto"}, {CFG_KEY_dist_backend, CFG_DIST_MPI, "mpi"},
        {CFG_KEY_dist_backend, CFG_DIST_NONE, "none"},
        {CFG_KEY_dist_batch, CFG_BATCH_GLOBAL, "global"}, {CFG_KEY_dist_batch, CFG_BATCH_PER_RANK, "per_rank"},
        {CFG_KEY_dist_collectives, CFG_COLL_AUTO, "auto"}, {CFG_KEY_dist_collectives, CFG_COLL_MPI, "mpi"},
        {CFG_KEY_dist_collectives, CFG_COLL_NCCL, "nccl"}};
    for (size_t i = 0; i < sizeof enums / sizeof *enums; i++) {
        const char *got = config_choice(enums[i].key, enums[i].value);
        CHECK(got && !strcmp(got, enums[i].name), "enum value %d of key %d names '%s', not '%s'",
              enums[i].value, enums[i].key, got ? got : "(none)", enums[i].name);
    }
    CHECK(config_choice(CFG_KEY_model_agg, 2) == NULL, "a value past the list has a name");
    CHECK(config_choice(CFG_KEY_model_target, CFG_TARGET_ROOFLINE_DW + 1) == NULL, "a target past the list has a name");
    // every target (the ninth among them) survives the config a checkpoint stores
    for (int v = CFG_TARGET_LOG; v <= CFG_TARGET_ROOFLINE_DW; v++) {
        char set[128];
        seer_config e, f;
        config_defaults(&e), config_defaults(&f);
        snprintf(set, sizeof set, "model.target=%s", config_choice(CFG_KEY_model_target, v));
        CHECK(config_set(&e, set, &err) == 0 && e.model_target == v, "%s: %s", set, err.msg);
        char *t = config_to_string(&e);
        CHECK(config_load_string(&f, t, "stored", &err) == 0 && f.model_target == v,
              "the stored config of %s does not read back: %s", set, err.msg);
        free(t), config_free(&e), config_free(&f);
    }
    // a checkpoint written before that fix stores "target = (null)": its norm.target names it
    {
        seer_config e, f;
        config_defaults(&e);
        CHECK(config_set(&e, "model.target=roofline_dw", &err) == 0, "%s", err.msg);
        char *t = config_to_string(&e), *nul = seer_malloc(strlen(t) + 16);
        char *at = strstr(t, "\ntarget = roofline_dw\n");
        CHECK(at != NULL, "no target line in the stored config");
        snprintf(nul, strlen(t) + 16, "%.*s\ntarget = (null)\n%s", (int)(at - t), t, at + strlen("\ntarget = roofline_dw\n"));
        seer_container ck;
        ctr_init(&ck, "SEERCKPT", 2);
        ctr_add_str(&ck, "config", nul);
        config_defaults(&f);
        CHECK(ckpt_config(&ck, "old.ckpt", &f, &err) != 0 && strstr(err.msg, "old.ckpt") &&
                  strstr(err.msg, "target = '(null)'"), "no norm.target: %s", err.msg);
        config_free(&f);
        double nt[2] = {CFG_TARGET_ROOFLINE_DW, 0};
        ctr_add_arr(&ck, "norm.target", KV_F64ARR, nt, 2);
        config_defaults(&f);
        CHECK(ckpt_config(&ck, "old.ckpt", &f, &err) == 0 && f.model_target == CFG_TARGET_ROOFLINE_DW,
              "target = (null) with norm.target %g: %s (target %d)", nt[0], err.msg, f.model_target);
        ctr_free(&ck), free(t), free(nul), config_free(&e), config_free(&f);
    }

    // an unknown model name is refused at its line, naming the registry's models
    config_defaults(&c);
    write_ini("[model]\nname = seernett\n");
    CHECK(config_load(&c, path, &err) == 0, "%s", err.msg);
    {
        trainer *t = seer_calloc(1, sizeof *t);
        CHECK(trainer_init(t, &c, &err) != 0, "unknown model accepted");
        snprintf(want, sizeof want, "%s:2: [model] name = 'seernett': must be one of seernet, perfsage", path);
        CHECK(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'", err.msg, want);
        printf("  %s\n", err.msg);
        free(t);
    }
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
