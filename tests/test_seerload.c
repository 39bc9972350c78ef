/* test_seerload: libseer refuses bad .seer files and bad graphs with a message (built with
 * AddressSanitizer and UBSan from libseer's own sources, so an out-of-bounds read fails the test).
 *
 *   test_seerload                 run every check
 *   test_seerload --seeds DIR     also write the valid models (fp32, fp16, int8) into DIR (the
 *                                 fuzzer's seed corpus, tests/data/fuzz_seer/)
 *
 * Models are built here with the container writer: a small SeerNet with seeded weights, and
 * variants with one thing wrong each (the tensor table, shapes, dtypes, sizes, schema lengths,
 * statistics, non-finite weights); then every truncation of a valid file, wrong magic and
 * versions, absurd counts, and random byte corruption. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/container.h"
#include "infer/seer_format.h"
#include "model/model.h"
#include "seer/seer.h"
#include "testutil.h"

enum { H = 4, L = 1, FN = 3, FE = 2, FG = 2, M = 2 };

/* What to break in a built model. */
typedef struct {
    int drop_tensor, extra_tensor, transpose, wrong_dtype, nan_weight, no_scales;
    int64_t sizes_override_idx, sizes_override_val;
    int short_schema, zero_std, nan_mu, other_label;
    const char *name, *dtype_str;
    const double *calib; // calib.batch values (n_calib of them), or NULL
    int n_calib;
    const double *aff; // calib.flops values (n_aff of them), or NULL
    int n_aff;
} breakage;

static char *names_n(int n, const char *stem, char ***out) {
    char **s = calloc((size_t)n, sizeof(char *));
    for (int i = 0; i < n; i++) {
        s[i] = malloc(32);
        snprintf(s[i], 32, "%s%d", stem, i);
    }
    *out = s;
    return NULL;
}

static void free_names(char **s, int n) {
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

/* The file image of a container (written to a temp file and read back); frees the container. */
static uint8_t *container_image(seer_container *c, size_t *len) {
    char path[] = "/tmp/seerload_XXXXXX";
    close(mkstemp(path));
    seer_err err;
    if (ctr_write(c, path, &err)) seer_die("%s", err.msg);
    uint8_t *img = (uint8_t *)seer_read_file(path, len, &err);
    remove(path);
    ctr_free(c);
    return img;
}

/* Builds a .seer image in memory. */
static uint8_t *build_model(int dtype, const breakage *b, size_t *len) {
    model net;
    model_init(&net, &(model_sizes){model_find("seernet"), H, L, FN, FE, FG, M, AGG_SYNMM, H, 0, 0, READOUT_POOLED});
    seer_rng rng;
    rng_seed(&rng, 7);
    float *w = calloc((size_t)net.pt.total, sizeof(float));
    params_init_uniform(&net.pt, w, &rng);
    if (b && b->nan_weight) w[3] = NAN;
    seer_container c;
    ctr_init(&c, SEER_MODEL_MAGIC, SEER_MODEL_VERSION);
    ctr_add_str(&c, "model.name", b && b->name ? b->name : "seernet");
    // 8 values; 11 (operator types, embedding width, readout) when an override reaches them
    int64_t sizes[MODEL_STORED_MAX] = {H, L, FN, FE, FG, M, AGG_SYNMM, H, 0, 0, READOUT_POOLED};
    if (b && b->sizes_override_idx >= 0) sizes[b->sizes_override_idx] = b->sizes_override_val;
    ctr_add_arr(&c, "model.sizes", KV_I64ARR, sizes, b && b->sizes_override_idx >= 8 ? 11 : 8);
    ctr_add_str(&c, "export.dtype", b && b->dtype_str ? b->dtype_str : export_dtype_name(dtype));
    char **nf, **ef, **gf, **ops, **lab, **units;
    names_n(FN - (b && b->short_schema), "n", &nf);
    names_n(FE, "e", &ef);
    names_n(FG, "g", &gf);
    names_n(5, "op", &ops);
    names_n(M, "lat", &lab);
    names_n(M, "u", &units);
    snprintf(lab[0], 32, "train_time_ms");
    if (b && b->other_label) snprintf(lab[1], 32, "infer_time_ms"); // valid, but another metric
    snprintf(units[0], 32, "ms");
    snprintf(units[1], 32, "%s", "");
    ctr_add_strs(&c, "schema.node_features", nf, FN - (b && b->short_schema));
    ctr_add_strs(&c, "schema.edge_features", ef, FE);
    ctr_add_strs(&c, "schema.global_features", gf, FG);
    ctr_add_strs(&c, "schema.op_types", ops, 5);
    ctr_add_strs(&c, "metrics.names", lab, M);
    ctr_add_strs(&c, "metrics.units", units, M);
    double mean[8] = {0.1, -0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}, sd[8] = {1, 2, 0.5, 1, 1, 1, 1, 1};
    if (b && b->zero_std) sd[1] = 0;
    double mu[M] = {1.0, b && b->nan_mu ? NAN : -1.0}, sg[M] = {0.5, 0.7};
    ctr_add_arr(&c, "norm.node_mean", KV_F64ARR, mean, FN);
    ctr_add_arr(&c, "norm.node_std", KV_F64ARR, sd, FN);
    ctr_add_arr(&c, "norm.edge_mean", KV_F64ARR, mean, FE);
    ctr_add_arr(&c, "norm.edge_std", KV_F64ARR, sd, FE);
    ctr_add_arr(&c, "norm.global_mean", KV_F64ARR, mean, FG);
    ctr_add_arr(&c, "norm.global_std", KV_F64ARR, sd, FG);
    ctr_add_arr(&c, "norm.label_mu", KV_F64ARR, mu, M);
    ctr_add_arr(&c, "norm.label_sigma", KV_F64ARR, sg, M);
    ctr_add_str(&c, "info.dataset", "test");
    if (b && b->calib) ctr_add_arr(&c, "calib.batch", KV_F64ARR, b->calib, b->n_calib);
    if (b && b->aff) ctr_add_arr(&c, "calib.flops", KV_F64ARR, b->aff, b->n_aff);
    uint8_t *conv = calloc((size_t)net.pt.total * 4 + 64, 1);
    float *scales = calloc((size_t)net.pt.total + 16, sizeof(float));
    for (int i = 0; i < net.pt.n; i++) {
        const param_info *pi = &net.pt.p[i];
        if (b && b->drop_tensor && i == 5) continue;
        int bias = strstr(pi->name, ".bias") != NULL;
        int64_t dims[2] = {pi->rows, pi->cols}, tdims[2] = {pi->cols, pi->rows};
        const int64_t *d = bias ? dims + 1 : (b && b->transpose && i == 0 ? tdims : dims);
        const float *src = w + pi->offset;
        int64_t n = pi->rows * pi->cols;
        uint8_t *dst = conv + pi->offset * 4;
        int dt = dtype;
        if (b && b->wrong_dtype && i == 4) dt = dtype == EXPORT_FP16 ? EXPORT_FP32 : EXPORT_FP16;
        if (dt == EXPORT_FP32 || (dt == EXPORT_INT8 && bias)) ctr_add_tensor(&c, pi->name, DT_F32, bias ? 1 : 2, d, src);
        else if (dt == EXPORT_FP16) {
            for (int64_t k = 0; k < n; k++) {
                uint16_t h = f32_to_f16(src[k]);
                memcpy(dst + 2 * k, &h, 2);
            }
            ctr_add_tensor(&c, pi->name, DT_F16, bias ? 1 : 2, d, dst);
        } else {
            quantize_rows_i8(src, pi->rows, pi->cols, (int8_t *)dst, scales + pi->offset);
            ctr_add_tensor(&c, pi->name, DT_I8, 2, d, dst);
            char sn[96];
            snprintf(sn, sizeof sn, "%s.scale", pi->name);
            int64_t short_dim = pi->rows - 1; // no_scales: a scale vector one short
            ctr_add_tensor(&c, sn, DT_F32, 1, b && b->no_scales && i == 0 ? &short_dim : dims,
                           scales + pi->offset);
        }
    }
    if (b && b->extra_tensor) {
        int64_t d = 4;
        ctr_add_tensor(&c, "stowaway", DT_F32, 1, &d, w);
    }
    uint8_t *img = container_image(&c, len);
    free(conv), free(scales), free(w);
    free_names(nf, FN - (b && b->short_schema)), free_names(ef, FE), free_names(gf, FG);
    free_names(ops, 5), free_names(lab, M), free_names(units, M);
    model_free(&net);
    return img;
}

/* An ensemble file (seerexport --ensemble's layout) of these member images; members = the count
 * it claims (n normally). */
static uint8_t *wrap_ensemble(uint8_t *const *imgs, const size_t *lens, int n, int64_t members,
                              size_t *len) {
    seer_container c;
    ctr_init(&c, SEER_MODEL_MAGIC, SEER_MODEL_VERSION);
    ctr_add_i64(&c, "ensemble.members", members);
    ctr_add_str(&c, "model.name", "ensemble");
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "ensemble.member.%d", i);
        ctr_add_tensor(&c, name, DT_I8, 1, (int64_t[]){(int64_t)lens[i]}, imgs[i]);
    }
    return container_image(&c, len);
}

/* A small valid graph for this model: 4 nodes, a self loop, a node without edges. */
static float gx_n[4 * FN], gx_e[5 * FE], gx_g[FG] = {0.5f, -1.0f};
static int32_t g_edges[5 * 2] = {0, 1, 1, 2, 0, 2, 2, 2, 1, 0};

static seer_graph small_graph(void) {
    for (int i = 0; i < 4 * FN; i++) gx_n[i] = (float)(i % 5) * 0.3f;
    for (int i = 0; i < 5 * FE; i++) gx_e[i] = (float)(i % 3) - 1.0f;
    return (seer_graph){.n_nodes = 4, .n_edges = 5, .n_node_features = FN, .n_edge_features = FE,
                        .n_global_features = FG, .node_x = gx_n, .edge_index = g_edges,
                        .edge_x = gx_e, .global_x = gx_g};
}

/* Loading must fail with a message containing want. */
static void expect_refused(const uint8_t *img, size_t len, const char *what, const char *want) {
    seer_model *m = (seer_model *)1;
    char err[512] = "";
    seer_status st = seer_load_memory(img, len, "bad.seer", &m, err, sizeof err);
    CHECK(st != SEER_OK, "%s: accepted", what);
    CHECK(m == NULL, "%s: out pointer not cleared", what);
    CHECK(err[0] && strstr(err, "bad.seer"), "%s: message does not name the file: '%s'", what, err);
    if (want) CHECK(strstr(err, want) != NULL, "%s: message '%s' lacks '%s'", what, err, want);
    if (st == SEER_OK) seer_free(m);
}

static void write_file(const char *dir, const char *name, const uint8_t *img, size_t len) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(img, 1, len, f) != len || fclose(f)) seer_die("%s: cannot write", p);
}

int main(int argc, char **argv) {
    const char *seeds = argc > 2 && !strcmp(argv[1], "--seeds") ? argv[2] : NULL;
    seer_graph g = small_graph();
    double y[M], y32[M];
    char err[512];

    // 1. valid models load and predict; fp16/int8 stay close to fp32
    for (int dt = 0; dt < 3; dt++) {
        size_t len;
        uint8_t *img = build_model(dt, NULL, &len);
        if (seeds) write_file(seeds, dt == 0 ? "small_fp32.seer" : dt == 1 ? "small_fp16.seer" : "small_int8.seer", img, len);
        seer_model *m;
        seer_status st = seer_load_memory(img, len, "ok.seer", &m, err, sizeof err);
        CHECK(st == SEER_OK, "valid %s model refused: %s", export_dtype_name(dt), err);
        if (st) continue;
        CHECK(seer_n_metrics(m) == M && !strcmp(seer_metric_unit(m, 0), "ms"), "metadata");
        CHECK(seer_predict(m, &g, dt ? y : y32, err, sizeof err) == SEER_OK, "predict: %s", err);
        if (dt) for (int k = 0; k < M; k++)
            CHECK(fabs(y[k] - y32[k]) <= (dt == 1 ? 1e-2 : 5e-2) * fabs(y32[k]), "%s metric %d: %g vs fp32 %g",
                  export_dtype_name(dt), k, y[k], y32[k]);
        CHECK(!strcmp(seer_info(m, "dataset"), "test") && seer_info(m, "missing") == NULL, "info");
        // bad graphs: each refused with a message, nothing written past out
        seer_graph b = g;
        int32_t bad_edges[10];
        memcpy(bad_edges, g_edges, sizeof bad_edges);
        bad_edges[3] = 4;
        b.edge_index = bad_edges;
        CHECK(seer_predict(m, &b, y, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "edge 1"), "edge out of range: %s", err);
        b = g, b.n_node_features = FN + 1;
        CHECK(seer_predict(m, &b, y, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "feature widths"), "widths: %s", err);
        float nanx[4 * FN];
        memcpy(nanx, gx_n, sizeof nanx);
        nanx[5] = NAN;
        b = g, b.node_x = nanx;
        CHECK(seer_predict(m, &b, y, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "not finite"), "NaN feature: %s", err);
        b = g, b.n_edges = -1;
        CHECK(seer_predict(m, &b, y, err, sizeof err) == SEER_ERR_INVALID, "negative edges");
        b = g, b.edge_x = NULL;
        CHECK(seer_predict(m, &b, y, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "NULL"), "NULL array: %s", err);
        int32_t ops[4] = {0, 1, 9, 2};
        b = g, b.node_op = ops;
        CHECK(seer_predict(m, &b, y, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "op id"), "op id: %s", err);
        double sp[SEER_MAX_METRICS] = {0}; // a single model: spread 1 without a forward pass, same checks
        CHECK(seer_member_spread(m, &b, sp, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "op id"),
              "member_spread op id: %s", err);
        CHECK(seer_member_spread(m, &g, sp, err, sizeof err) == SEER_OK && sp[0] == 1 && sp[seer_n_metrics(m) - 1] == 1,
              "member_spread single: %s %g", err, sp[0]);
        b = g, b.n_nodes = 0, b.n_edges = 0; // an empty graph is a graph: predicted, not refused
        CHECK(seer_predict(m, &b, y, err, sizeof err) == SEER_OK && isfinite(y[0]), "empty graph: %s", err);
        CHECK(seer_predict_batch(m, &g, -1, y, err, sizeof err) == SEER_ERR_INVALID, "negative count");
        seer_free(m);

        // 2. every truncation, wrong magic and versions, absurd counts
        if (dt == 0) {
            for (size_t cut = 0; cut < len; cut++) expect_refused(img, cut, "truncated", NULL);
            uint8_t *c = malloc(len);
            memcpy(c, img, len), memcpy(c, "SEERCKPT", 8);
            expect_refused(c, len, "checkpoint magic", "wrong magic");
            memcpy(c, img, len), c[8] = SEER_MODEL_VERSION + 1;
            expect_refused(c, len, "a future version", "is not supported");
            uint32_t no_flags = 0; // flags without CTR_CRC: an old file
            memcpy(c, img, len), memcpy(c + 12, &no_flags, sizeof no_flags);
            expect_refused(c, len, "no checksums", "no checksums");
            memcpy(c, img, len), c[8] = 0;
            expect_refused(c, len, "version 0", "version 0");
            memcpy(c, img, len), memset(c + 16, 0xff, 8);
            expect_refused(c, len, "kv count", "cannot fit");
            memcpy(c, img, len), memset(c + 24, 0x7f, 8);
            expect_refused(c, len, "tensor count", "cannot fit");
            // random corruption: loads or refuses, never reads out of bounds (ASan)
            seer_rng r;
            rng_seed(&r, 11);
            int loaded = 0;
            for (int it = 0; it < 3000; it++) {
                memcpy(c, img, len);
                int flips = 1 + (int)rng_below(&r, 4);
                for (int f = 0; f < flips; f++) c[rng_below(&r, len)] ^= (uint8_t)(1 + rng_below(&r, 255));
                seer_model *mm = NULL;
                if (seer_load_memory(c, len, "fuzz.seer", &mm, err, sizeof err) == SEER_OK) {
                    loaded++;
                    seer_predict(mm, &g, y, err, sizeof err);
                    seer_free(mm);
                } else CHECK(err[0], "corrupt file refused without a message");
            }
            // the checksums refuse every change that is read (a load means bytes in padding)
            printf("random corruption: 3000 variants, %d still loaded (changes in padding only), the rest refused\n", loaded);
            CHECK(loaded < 300, "%d of 3000 corrupted files loaded", loaded);
            free(c);
        }
        free(img);
    }

    // 3. one thing wrong each
    struct {
        const char *what, *want;
        breakage b;
        int dtype;
    } cases[] = {
        {"a tensor missing", "does not match the architecture", {.drop_tensor = 1, .sizes_override_idx = -1}, 0},
        {"an extra tensor", "does not match the architecture", {.extra_tensor = 1, .sizes_override_idx = -1}, 0},
        {"a transposed weight", "shape", {.transpose = 1, .sizes_override_idx = -1}, 0},
        {"an fp16 tensor in an fp32 file", "dtype", {.wrong_dtype = 1, .sizes_override_idx = -1}, 0},
        {"an fp32 tensor in an fp16 file", "dtype", {.wrong_dtype = 1, .sizes_override_idx = -1}, 1},
        {"int8 with a short scale vector", "scale", {.no_scales = 1, .sizes_override_idx = -1}, 2},
        {"a NaN weight", "non-finite", {.nan_weight = 1, .sizes_override_idx = -1}, 0},
        {"99 blocks", "out of range", {.sizes_override_idx = 1, .sizes_override_val = 99}, 0},
        {"width 0", "out of range", {.sizes_override_idx = 0, .sizes_override_val = 0}, 0},
        {"width 2^40", "out of range", {.sizes_override_idx = 0, .sizes_override_val = (int64_t)1 << 40}, 0},
        {"1000 metrics", "out of range", {.sizes_override_idx = 5, .sizes_override_val = 1000}, 0},
        {"readout 2", "out of range", {.sizes_override_idx = 10, .sizes_override_val = 2}, 0},
        {"an additive readout without node heads", "does not match the architecture",
         {.sizes_override_idx = 10, .sizes_override_val = READOUT_ADDITIVE}, 0},
        {"a node feature width the schema lacks", "schema.node_features", {.short_schema = 1, .sizes_override_idx = -1}, 0},
        {"a zero std", "statistics", {.zero_std = 1, .sizes_override_idx = -1}, 0},
        {"a NaN label mean", "label statistics", {.nan_mu = 1, .sizes_override_idx = -1}, 0},
        // calib.batch (seercalibrate): column, knots, the knots' x, then M rows of log factors
        {"calibration knots out of order", "knot 1 (0)",
         {.calib = (double[]){0, 2, 1, 0, 0, 0, 0, 0}, .n_calib = 8, .sizes_override_idx = -1}, 0},
        {"a calibration one value short", "calib.batch has 7 values",
         {.calib = (double[]){0, 2, 0, 1, 0, 0, 0}, .n_calib = 7, .sizes_override_idx = -1}, 0},
        {"a calibration on a missing column", "column 5",
         {.calib = (double[]){5, 2, 0, 1, 0, 0, 0, 0}, .n_calib = 8, .sizes_override_idx = -1}, 0},
        {"a calibration of one knot", "1 knots",
         {.calib = (double[]){0, 1, 0, 0, 0}, .n_calib = 5, .sizes_override_idx = -1}, 0},
        {"a calibration factor of e^100", "within",
         {.calib = (double[]){0, 2, 0, 1, 100, 0, 0, 0}, .n_calib = 8, .sizes_override_idx = -1}, 0},
        {"a calibration factor NaN", "within",
         {.calib = (double[]){0, 2, 0, 1, 0, NAN, 0, 0}, .n_calib = 8, .sizes_override_idx = -1}, 0},
        // calib.flops (seercalibrate --with-flops): column, then a, b, c per metric
        {"a flops calibration one value short", "calib.flops has 8 values",
         {.aff = (double[]){0, -1, 1, 0, 1, 0, 0, 1}, .n_aff = 8, .sizes_override_idx = -1}, 0},
        {"a flops calibration with b = 0", "are not a calibration's",
         {.aff = (double[]){0, -1, 1, 0, 1, 0, 0, 0, 0}, .n_aff = 9, .sizes_override_idx = -1}, 0},
        {"a flops calibration on a missing column", "column 9",
         {.aff = (double[]){9, -1, 1, 0, 1, 0, 0, 1, 0}, .n_aff = 9, .sizes_override_idx = -1}, 0},
        {"a flops calibration range upside down", "range 1 .. -1",
         {.aff = (double[]){0, 1, -1, 0, 1, 0, 0, 1, 0}, .n_aff = 9, .sizes_override_idx = -1}, 0},
        {"another model", "not one this build knows", {.name = "transformer", .sizes_override_idx = -1}, 0},
        {"dtype fp8", "fp8", {.dtype_str = "fp8", .sizes_override_idx = -1}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t len;
        uint8_t *img = build_model(cases[i].dtype, &cases[i].b, &len);
        expect_refused(img, len, cases[i].what, cases[i].want);
        free(img);
    }
    // a valid calibration by batch: metric 0 x2 at global feature 0 = 0 and x4 at 1, so x2^1.5 at
    // the graph's 0.5 (linear in the feature between knots), metric 1 unchanged
    {
        size_t l0, l1;
        uint8_t *plain = build_model(0, NULL, &l0);
        breakage cb = {.calib = (double[]){0, 2, 0, 1, log(2), log(4), 0, 0}, .n_calib = 8, .sizes_override_idx = -1};
        uint8_t *cal = build_model(0, &cb, &l1);
        seer_model *a = NULL, *c = NULL;
        seer_graph g = small_graph();
        double ya[M], yc[M];
        CHECK(seer_load_memory(plain, l0, "plain", &a, err, sizeof err) == SEER_OK, "%s", err);
        CHECK(seer_load_memory(cal, l1, "calibrated", &c, err, sizeof err) == SEER_OK, "%s", err);
        CHECK(seer_predict(a, &g, ya, err, sizeof err) == SEER_OK && seer_predict(c, &g, yc, err, sizeof err) == SEER_OK,
              "predict: %s", err);
        CHECK(fabs(yc[0] / ya[0] / pow(2, 1.5) - 1) < 1e-9 && fabs(yc[1] / ya[1] - 1) < 1e-12,
              "calibrated by batch: x%.9g and x%.9g, want x%.9g and x1", yc[0] / ya[0], yc[1] / ya[1], pow(2, 1.5));
        printf("calib.batch: metric 0 x%.6f between its knots (x2, x4), metric 1 unchanged\n", yc[0] / ya[0]);
        // calib.flops: metric 1 -> exp(0.3 + 0.5 log y + 0.2 x) with x the global feature 1 (-1)
        breakage fb = {.aff = (double[]){1, -2, 2, 0, 1, 0, 0.3, 0.5, 0.2}, .n_aff = 9, .sizes_override_idx = -1};
        size_t l2;
        uint8_t *aff = build_model(0, &fb, &l2);
        seer_model *f = NULL;
        double yf[M];
        CHECK(seer_load_memory(aff, l2, "flops", &f, err, sizeof err) == SEER_OK, "%s", err);
        CHECK(seer_predict(f, &g, yf, err, sizeof err) == SEER_OK, "predict: %s", err);
        double want = exp(0.3 + 0.5 * log(ya[1]) + 0.2 * g.global_x[1]);
        CHECK(fabs(yf[0] / ya[0] - 1) < 1e-12 && fabs(yf[1] / want - 1) < 1e-9,
              "calib.flops: %.9g, %.9g, want %.9g, %.9g", yf[0], yf[1], ya[0], want);
        printf("calib.flops: metric 1 %.6g -> %.6g (exp(0.3 + 0.5 log y + 0.2 x)), metric 0 unchanged\n", ya[1], yf[1]);
        seer_free(f), free(aff);
        seer_free(a), seer_free(c), free(plain), free(cal);
    }
    // 4. ensembles: the geometric mean of the members; members that disagree are refused
    {
        uint8_t *img[3], *ens;
        size_t len[3], elen;
        img[0] = build_model(0, NULL, &len[0]);
        img[1] = build_model(2, NULL, &len[1]); // int8: predicts a little otherwise
        img[2] = build_model(0, &(breakage){.other_label = 1, .sizes_override_idx = -1}, &len[2]);
        double ym[2][M];
        seer_model *m;
        for (int i = 0; i < 2; i++) {
            CHECK(seer_load_memory(img[i], len[i], "member.seer", &m, err, sizeof err) == SEER_OK, "member %d: %s", i, err);
            seer_predict(m, &g, ym[i], err, sizeof err);
            seer_free(m);
        }
        ens = wrap_ensemble(img, len, 2, 2, &elen);
        CHECK(seer_load_memory(ens, elen, "ens.seer", &m, err, sizeof err) == SEER_OK, "ensemble refused: %s", err);
        if (m) {
            CHECK(seer_predict(m, &g, y, err, sizeof err) == SEER_OK, "ensemble predict: %s", err);
            for (int k = 0; k < M; k++)
                CHECK(fabs(y[k] - sqrt(ym[0][k] * ym[1][k])) <= 1e-9 * y[k] && ym[0][k] != ym[1][k],
                      "ensemble metric %d: %g, members %g and %g", k, y[k], ym[0][k], ym[1][k]);
            // the ensemble checks a graph once for all its members: a bad one is still refused
            if (g.n_edges > 0) {
                seer_graph bad_g = g;
                int32_t *ei = malloc(sizeof(int32_t) * 2 * (size_t)g.n_edges);
                memcpy(ei, g.edge_index, sizeof(int32_t) * 2 * (size_t)g.n_edges);
                ei[1] = (int32_t)g.n_nodes; // names a node beyond the graph
                bad_g.edge_index = ei;
                CHECK(seer_predict(m, &bad_g, y, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "outside"),
                      "ensemble predicted a graph with an edge outside it: %s", err);
                bad_g.node_x = NULL;
                bad_g.edge_index = g.edge_index;
                CHECK(seer_predict(m, &bad_g, y, err, sizeof err) == SEER_ERR_INVALID && strstr(err, "NULL"),
                      "ensemble predicted a graph without node features: %s", err);
                free(ei);
            }
            CHECK(!strcmp(seer_info(m, "model"), "ensemble") && !strcmp(seer_info(m, "dataset"), "test") &&
                      seer_n_metrics(m) == M && !strcmp(seer_metric_name(m, 0), "train_time_ms"),
                  "ensemble metadata");
            // predictions and spreads in one pass: the same predictions, each metric's largest over
            // smallest member; seer_member_spread agrees; no file threshold: SEER_SPREAD_WARN
            {
                seer_graph two[2] = {g, g};
                double y2[2 * M], sp[2 * M], one_sp[M];
                CHECK(seer_predict_spread(m, two, 2, y2, sp, err, sizeof err) == SEER_OK, "predict_spread: %s", err);
                CHECK(seer_member_spread(m, &g, one_sp, err, sizeof err) == SEER_OK, "member_spread: %s", err);
                for (int k = 0; k < M; k++) {
                    double want = fmax(ym[0][k], ym[1][k]) / fmin(ym[0][k], ym[1][k]);
                    CHECK(y2[k] == y[k] && y2[M + k] == y[k] && fabs(sp[k] / want - 1) < 1e-9 &&
                              sp[M + k] == sp[k] && one_sp[k] == sp[k] && want > 1,
                          "metric %d: predict_spread %g (predict %g), spread %g / %g / %g, members' %g", k,
                          y2[k], y[k], sp[k], sp[M + k], one_sp[k], want);
                    CHECK(seer_spread_warn(m, k) == SEER_SPREAD_WARN, "spread_warn %d: %g", k, seer_spread_warn(m, k));
                }
                CHECK(isnan(seer_spread_warn(m, M)) && isnan(seer_spread_warn(m, -1)), "spread_warn out of range");
                CHECK(seer_predict_spread(m, two, 2, y2, NULL, err, sizeof err) == SEER_OK && y2[0] == y[0],
                      "predict_spread without spreads: %s", err);
            }

            seer_model *one;
            seer_load_memory(img[0], len[0], "member.seer", &one, err, sizeof err);
            CHECK(seer_n_params(m) == 2 * seer_n_params(one), "ensemble parameters %lld", (long long)seer_n_params(m));
            double one_y[M], one_sp[M] = {0};
            CHECK(seer_predict_spread(one, &g, 1, one_y, one_sp, err, sizeof err) == SEER_OK && one_sp[0] == 1 &&
                      one_sp[M - 1] == 1 && seer_spread_warn(one, 0) == SEER_SPREAD_WARN,
                  "a single model's spread: %g (%s)", one_sp[0], err);
            seer_free(one);
            seer_free(m);
        }
        free(ens);

        ens = wrap_ensemble(img, len, 1, 1, &elen);
        expect_refused(ens, elen, "an ensemble of one", "2 to 16 members");
        free(ens);
        ens = wrap_ensemble(img, len, 2, 3, &elen);
        expect_refused(ens, elen, "a member count beyond the tensors", "tensors for 3");
        free(ens);
        ens = wrap_ensemble(img, len, 3, 3, &elen);
        expect_refused(ens, elen, "a member with other metrics", "other metrics");
        free(ens);
        uint8_t *inner = wrap_ensemble(img, len, 2, 2, &elen), *pair[2] = {img[0], inner};
        size_t plen[2] = {len[0], elen};
        ens = wrap_ensemble(pair, plen, 2, 2, &elen);
        expect_refused(ens, elen, "a member that is an ensemble", "an ensemble itself");
        free(ens), free(inner);
        uint8_t *bad = malloc(len[1]);
        memcpy(bad, img[1], len[1]), memcpy(bad, "SEERCKPT", 8);
        uint8_t *bpair[2] = {img[0], bad};
        ens = wrap_ensemble(bpair, len, 2, 2, &elen);
        expect_refused(ens, elen, "a member that is not a .seer file", "member 1");
        free(ens), free(bad);
        for (int i = 0; i < 3; i++) free(img[i]);
    }
    CHECK(seer_load("/nonexistent/x.seer", &(seer_model *){NULL}, err, sizeof err) == SEER_ERR_IO &&
              strstr(err, "/nonexistent/x.seer"), "missing file: %s", err);
    return test_finish("test_seerload");
}
