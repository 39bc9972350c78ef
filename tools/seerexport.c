/* seerexport: a trained checkpoint -> the compact .seer predictor (and safetensors + JSON).
 *   seerexport CHECKPOINT|RUN_DIR -o model.seer [--dtype fp32|fp16|int8]
 *              [--safetensors model.safetensors]
 *   seerexport --ensemble A.seer B.seer [...] [--weights WA,WB,...] [--spread-warn V,...]
 *              -o ensemble.seer
 *   seerexport --count-pairs DATA.h5 MODEL.seer -o OUT.seer
 *   seerexport --specialist TEXT MODEL.seer -o OUT.seer
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/container.h"
#include "export/export.h"
#include "infer/seer_format.h"
#include "seer/seer.h"

static void usage(FILE *f) {
    fputs("usage: seerexport CHECKPOINT|RUN_DIR -o MODEL.seer [--dtype fp32|fp16|int8]\n"
          "                  [--safetensors MODEL.safetensors]\n\n"
          "Writes what inference needs from a seertrain checkpoint (a run folder means its\n"
          "best.ckpt): the weights, the normalisation statistics, the feature schema and op table,\n"
          "the metric names and units, the architecture and the training provenance (dataset,\n"
          "device, date, validation figures). libseer, seerpredict and the Python binding load it.\n\n"
          "  -o PATH             the .seer file (written through a temporary file)\n"
          "  --dtype T           weight storage: fp32 (default), fp16 (IEEE half) or int8\n"
          "                      (per output channel, with fp32 scales; biases stay fp32)\n"
          "  --safetensors PATH  also (or only, without -o) write the fp32 weights as safetensors\n"
          "                      with a JSON sidecar (schema, normalisation, architecture) beside it\n\n"
          "  --ensemble A.seer B.seer ... -o OUT.seer\n"
          "                      one predictor of 2 to 16 exported models trained on the same labels\n"
          "                      and dataset schema (other seeds or architectures): libseer predicts\n"
          "                      the geometric mean of theirs, which varies less from one training\n"
          "                      run to the next (benchmarks/transfer.md); range and provenance are\n"
          "                      the first model's. An ensemble given here contributes its members.\n"
          "  --weights WA,WB,... with --ensemble: one positive weight per file given, the weights\n"
          "                      of the geometric mean (normalised to sum 1; an ensemble given\n"
          "                      shares its weight among its members as its own weights do), e.g.\n"
          "                      a network's members and the roofline cost alone (model cost)\n"
          "                      blended half and half. Without it every member weighs alike.\n"
          "  --spread-warn V[,V...] with --ensemble: where the largest over the smallest member\n"
          "                      prediction of a metric exceeds its V, seerpredict warns that the\n"
          "                      members disagree (one V per metric, or one for all; each above 1;\n"
          "                      default 1.5), e.g. each metric's 99th percentile of the spread on\n"
          "                      held-out graphs (seerpredict ENSEMBLE DATA.h5 --spreads OUT.csv).\n"
          "                      Given one ensemble alone, rewrites it with these thresholds: the\n"
          "                      same members, weights and predictions.\n\n"
          "  --count-pairs DATA.h5 MODEL.seer -o OUT.seer\n"
          "                      a model exported before libseer 0.13 (an ensemble: each member),\n"
          "                      with the edges of the operator pairs libseer watches (a\n"
          "                      BatchNormalization reading a ReLU or another BatchNormalization:\n"
          "                      a reparameterisable block's identity branch) counted on DATA.h5\n"
          "                      (a.h5,b.h5 for several), the dataset it was trained on: every\n"
          "                      graph of the families it trained on (a pair without an edge\n"
          "                      there had none in training). seerpredict then warns on a\n"
          "                      network with a pair the training data never had. Refused when\n"
          "                      DATA.h5 cannot hold the training split the model recorded (fewer\n"
          "                      graphs, a narrower node or edge count, fewer nodes of an operator).\n"
          "                      Exports of newer checkpoints record the pairs by themselves.\n\n"
          "  --specialist TEXT MODEL.seer -o OUT.seer\n"
          "                      marks a predictor as a specialist of its device: TEXT says what it\n"
          "                      learned beyond the device's main predictor (e.g. \"reparameterisable\n"
          "                      blocks in their training form\"). seerpredict --device answers with\n"
          "                      the main predictor, and with the specialist for a network in which\n"
          "                      the main one reports an operator or a watched operator pair never\n"
          "                      trained on that the specialist does not; it says which answered.\n"
          "                      TEXT \"\" unmarks it.\n",
          f);
}

/* --ensemble: the members' files, whole, as byte tensors of one container; loaded back through
 * libseer (which checks that they agree) before it takes the output's name. An input that is an
 * ensemble itself contributes its members (each then weighs as much as any other member). */
static int write_ensemble(char **paths, int n, const double *weights, const double *spread,
                          int n_spread, const char *out) {
    if (n < 1 || n > 16 || (n == 1 && !n_spread)) {
        fprintf(stderr, "seerexport: error: --ensemble takes 2 to 16 .seer files (got %d; one "
                        "ensemble alone with --spread-warn)\n", n);
        return 2;
    }
    seer_container c, *in = calloc((size_t)n, sizeof *in);
    seer_err err;
    char **bufs = calloc((size_t)n, sizeof *bufs), desc[4096], tmp[1200], msg[1024];
    size_t used = 0;
    int rc = 1, k = 0, M = 0;    // k: members so far; M: metrics
    double mw[16];               // the members' weights (with --weights)
    const ctr_kv *keep_w = NULL; // one ensemble alone: its weights, as they are
    ctr_init(&c, SEER_MODEL_MAGIC, SEER_MODEL_VERSION_PLAIN); // raised to its newest member's
    ctr_add_str(&c, "model.name", "ensemble");
    for (int i = 0; i < n; i++) {
        size_t len;
        seer_model *m;
        if (!(bufs[i] = seer_read_file(paths[i], &len, &err))) {
            fprintf(stderr, "seerexport: error: %s\n", err.msg);
            goto done;
        }
        if (seer_load_memory(bufs[i], len, paths[i], &m, msg, sizeof msg)) {
            fprintf(stderr, "seerexport: error: %s\n", msg);
            goto done;
        }
        int nested = !strcmp(seer_info(m, "model"), "ensemble");
        M = seer_n_metrics(m);
        if (n == 1 && !nested) {
            fprintf(stderr, "seerexport: error: --ensemble %s: one file is rewritten only when it is "
                            "an ensemble (give 2 to 16 models to join)\n", paths[0]);
            seer_free(m);
            goto done;
        }
        if (used < sizeof desc)
            used += (size_t)snprintf(desc + used, sizeof desc - used, "%s %s (%s)",
                                     i ? "," : "", nested ? "the members of" : seer_info(m, "model"),
                                     paths[i]);
        seer_free(m);
        // the member images: this file, or the members of an ensemble
        int64_t count = 1;
        if (nested) {
            const ctr_kv *kv;
            if (ctr_read_mem(&in[i], bufs[i], len, paths[i], SEER_MODEL_MAGIC, SEER_MODEL_VERSION, &err) ||
                !(kv = ctr_get(&in[i], "ensemble.members", KV_I64, paths[i], &err))) {
                fprintf(stderr, "seerexport: error: %s\n", err.msg);
                goto done;
            }
            count = *(const int64_t *)kv->data;
            if (n == 1) { // rewritten: its description and weights stay as they are
                const ctr_kv *d = ctr_find(&in[i], "info.ensemble");
                if (d && d->type == KV_STR) snprintf(desc, sizeof desc, "%s", (const char *)d->data);
                keep_w = ctr_find(&in[i], "ensemble.weights");
            }
        }
        // this file's weight, shared among its members as its own weights do (else alike)
        const ctr_kv *iw = nested ? ctr_find(&in[i], "ensemble.weights") : NULL;
        double isum = 0;
        for (int64_t j = 0; iw && iw->type == KV_F64ARR && iw->n == count && j < count; j++)
            isum += ((const double *)iw->data)[j];
        for (int64_t j = 0; j < count; j++, k++) {
            if (k >= 16) {
                fprintf(stderr, "seerexport: error: --ensemble: more than 16 members with those of %s\n",
                        paths[i]);
                goto done;
            }
            const void *img = bufs[i];
            int64_t ilen = (int64_t)len;
            char name[64];
            if (nested) {
                snprintf(name, sizeof name, "ensemble.member.%lld", (long long)j);
                const ctr_tensor *t = ctr_tensor_find(&in[i], name);
                if (!t) {
                    fprintf(stderr, "seerexport: error: %s: no tensor %s\n", paths[i], name);
                    goto done;
                }
                img = t->data, ilen = (int64_t)t->nbytes;
            }
            snprintf(name, sizeof name, "ensemble.member.%d", k);
            ctr_add_tensor(&c, name, DT_I8, 1, (int64_t[]){ilen}, img);
            if (weights)
                mw[k] = weights[i] * (isum > 0 ? ((const double *)iw->data)[j] / isum : 1.0 / (double)count);
            uint32_t v = ctr_image_version(img, (size_t)ilen); // a calibrated member (calib.batch)
            if (v > c.version) c.version = v;                 // makes the ensemble as new as it
        }
    }
    ctr_add_i64(&c, "ensemble.members", k);
    ctr_add_str(&c, "info.ensemble", desc);
    if (weights || keep_w) { // libseer before version 4 would weigh them alike: it must refuse the file
        if (keep_w) ctr_add_arr(&c, "ensemble.weights", keep_w->type, keep_w->data, keep_w->n);
        else ctr_add_arr(&c, "ensemble.weights", KV_F64ARR, mw, k);
        if (c.version < SEER_MODEL_VERSION_WEIGHTS) c.version = SEER_MODEL_VERSION_WEIGHTS;
    }
    if (n_spread) { // libseer before 0.8 ignores it and warns above SEER_SPREAD_WARN
        if (n_spread != 1 && n_spread != M) {
            fprintf(stderr, "seerexport: error: --spread-warn gives %d values for %d metrics: one "
                            "per metric, or one for all\n", n_spread, M);
            goto done;
        }
        double sw[SEER_MAX_METRICS];
        for (int j = 0; j < M; j++) sw[j] = spread[n_spread == 1 ? 0 : j];
        ctr_add_arr(&c, "ensemble.spread_warn", KV_F64ARR, sw, M);
    }
    snprintf(tmp, sizeof tmp, "%s.check", out);
    seer_model *m;
    if (ctr_write(&c, tmp, &err)) {
        fprintf(stderr, "seerexport: error: %s\n", err.msg);
        goto done;
    }
    if (seer_load(tmp, &m, msg, sizeof msg)) { // the members disagree: say where, keep no file
        remove(tmp);
        const char *at = strstr(msg, ".check (member "), *rest = at ? strstr(at, "): ") : NULL;
        int k = at ? atoi(at + strlen(".check (member ")) : -1;
        if (rest && k >= 0 && k < n)
            fprintf(stderr, "seerexport: error: --ensemble: %s: %s\n", paths[k], rest + 3);
        else
            fprintf(stderr, "seerexport: error: --ensemble: %s\n", msg);
        goto done;
    }
    int64_t params = seer_n_params(m);
    seer_free(m);
    if (rename(tmp, out)) {
        remove(tmp);
        fprintf(stderr, "seerexport: error: %s: cannot write it\n", out);
        goto done;
    }
    struct stat sb;
    printf("wrote %s: %.1f KiB, an ensemble of %d models, %lld parameters in all\n", out,
           stat(out, &sb) ? 0.0 : (double)sb.st_size / 1024.0, k, (long long)params);
    rc = 0;
done:
    ctr_free(&c);
    for (int i = 0; i < n; i++) {
        if (in[i].file) ctr_free(&in[i]);
        free(bufs[i]);
    }
    free(bufs), free(in);
    return rc;
}

/* A rewritten model at tmp, loaded back through libseer, only then renamed to out. */
static int install_checked(const char *tmp, const char *out, const char *what) {
    char msg[1024];
    seer_model *m;
    if (seer_load(tmp, &m, msg, sizeof msg)) {
        remove(tmp);
        fprintf(stderr, "seerexport: error: %s: the model %s does not load: %s\n", out, what, msg);
        return 1;
    }
    seer_free(m);
    if (rename(tmp, out)) {
        remove(tmp);
        fprintf(stderr, "seerexport: error: %s: cannot write it\n", out);
        return 1;
    }
    return 0;
}

/* --count-pairs: written beside out, checked, renamed into place. */
static int count_pairs(const char *data, const char *model, const char *out) {
    char tmp[1200], report[4096];
    seer_err err;
    snprintf(tmp, sizeof tmp, "%s.check", out);
    if (export_count_pairs(model, data, tmp, report, sizeof report, &err)) {
        remove(tmp);
        fprintf(stderr, "seerexport: error: %s\n", err.msg);
        return 1;
    }
    if (install_checked(tmp, out, "with its pairs")) return 1;
    printf("%swrote %s\n", report, out);
    return 0;
}

/* --specialist TEXT: the model with info.specialist = TEXT (replaced where it had one; "" removes it). */
static int mark_specialist(const char *text, const char *model, const char *out) {
    seer_container c, o;
    seer_err err;
    char tmp[1200];
    if (ctr_read(&c, model, SEER_MODEL_MAGIC, SEER_MODEL_VERSION, &err)) {
        fprintf(stderr, "seerexport: error: %s\n", err.msg);
        return 1;
    }
    ctr_copy(&c, "info.specialist", "", &o);
    if (*text) ctr_add_str(&o, "info.specialist", text);
    snprintf(tmp, sizeof tmp, "%s.check", out);
    int rc = ctr_write(&o, tmp, &err);
    ctr_free(&o), ctr_free(&c);
    if (rc) {
        remove(tmp);
        fprintf(stderr, "seerexport: error: %s\n", err.msg);
        return 1;
    }
    if (install_checked(tmp, out, "marked")) return 1;
    printf("wrote %s: %s\n", out, *text ? "a specialist of its device (seerpredict --device routes to it)" :
                                         "no longer a specialist");
    return 0;
}

int main(int argc, char **argv) {
    const char *ckpt = NULL, *out = NULL, *st = NULL;
    int dtype = EXPORT_FP32, ensemble = 0, n_members = 0, n_weights = 0;
    char **members = calloc((size_t)argc, sizeof *members);
    double weights[16], spread[SEER_MAX_METRICS];
    int n_spread = 0;
    const char *pairs_data = NULL, *special = NULL; // --count-pairs, --specialist
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--ensemble")) {
            ensemble = 1;
            continue;
        }
        if (ensemble && a[0] != '-') {
            members[n_members++] = argv[i];
            continue;
        }
        if ((!strcmp(a, "-o") || !strcmp(a, "--dtype") || !strcmp(a, "--safetensors") ||
             !strcmp(a, "--weights") || !strcmp(a, "--spread-warn") || !strcmp(a, "--count-pairs") ||
             !strcmp(a, "--specialist")) &&
            i + 1 >= argc) {
            fprintf(stderr, "seerexport: error: %s needs a value (see --help)\n", a);
            return 2;
        }
        if (!strcmp(a, "-o")) out = argv[++i];
        else if (!strcmp(a, "--safetensors")) st = argv[++i];
        else if (!strcmp(a, "--count-pairs")) pairs_data = argv[++i];
        else if (!strcmp(a, "--specialist")) special = argv[++i];
        else if (!strcmp(a, "--weights")) {
            const char *p = argv[++i];
            char *end;
            for (n_weights = 0; *p; p = *end == ',' ? end + 1 : end) {
                double w = strtod(p, &end);
                if (end == p || (*end && *end != ',') || !(w > 0) || w > 1e6 || n_weights == 16) {
                    fprintf(stderr, "seerexport: error: --weights %s: give up to 16 positive numbers "
                                    "separated by commas, one per file of --ensemble\n", argv[i]);
                    free(members);
                    return 2;
                }
                weights[n_weights++] = w;
            }
        }
        else if (!strcmp(a, "--spread-warn")) {
            const char *p = argv[++i];
            char *end;
            for (n_spread = 0; *p; p = *end == ',' ? end + 1 : end) {
                double v = strtod(p, &end);
                if (end == p || (*end && *end != ',') || !(v > 1) || isnan(v) ||
                    n_spread == SEER_MAX_METRICS) {
                    fprintf(stderr, "seerexport: error: --spread-warn %s: give one number above 1 "
                                    "per metric (or one for all), separated by commas, e.g. 1.8,2.1,1.3\n",
                            argv[i]);
                    free(members);
                    return 2;
                }
                spread[n_spread++] = v;
            }
        }
        else if (!strcmp(a, "--dtype")) {
            if ((dtype = export_dtype_parse(argv[++i])) < 0) {
                fprintf(stderr, "seerexport: error: --dtype %s: use fp32, fp16 or int8\n", argv[i]);
                return 2;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "seerexport: error: unknown option %s (see --help)\n", a);
            return 2;
        } else if (!ckpt) ckpt = a;
        else {
            fprintf(stderr, "seerexport: error: one checkpoint only (got %s and %s)\n", ckpt, a);
            return 2;
        }
    }
    if ((n_weights || n_spread) && !ensemble) {
        fprintf(stderr, "seerexport: error: --weights and --spread-warn are options of --ensemble (see "
                        "--help)\n");
        free(members);
        return 2;
    }
    if (ensemble) {
        if (!out || st || ckpt || dtype != EXPORT_FP32) { // members keep their own storage
            fprintf(stderr, "seerexport: error: --ensemble takes .seer files and -o OUT.seer only "
                            "(the members keep their dtype; see --help)\n");
            return 2;
        }
        if (n_weights && n_weights != n_members) {
            fprintf(stderr, "seerexport: error: --weights gives %d weights for %d files: one per file\n",
                    n_weights, n_members);
            free(members);
            return 2;
        }
        int rc = write_ensemble(members, n_members, n_weights ? weights : NULL, spread, n_spread, out);
        free(members);
        return rc;
    }
    free(members);
    if (special) {
        if (!ckpt || !out || st || pairs_data || dtype != EXPORT_FP32 || strlen(special) > 400) {
            fprintf(stderr, "seerexport: error: --specialist TEXT takes one .seer file and -o OUT.seer only, "
                            "TEXT up to 400 characters (see --help)\n");
            return 2;
        }
        return mark_specialist(special, ckpt, out);
    }
    if (pairs_data) {
        if (!ckpt || !out || st || dtype != EXPORT_FP32) {
            fprintf(stderr, "seerexport: error: --count-pairs DATA.h5 takes one .seer file and -o OUT.seer "
                            "only (see --help)\n");
            return 2;
        }
        return count_pairs(pairs_data, ckpt, out);
    }
    if (!ckpt || (!out && !st)) {
        usage(stderr);
        return 2;
    }
    char path[1100];
    struct stat sb;
    if (stat(ckpt, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(path, sizeof path, "%s/best.ckpt", ckpt);
        ckpt = path;
    }
    seer_err err;
    export_info info;
    if (out) {
        if (export_seer(ckpt, out, dtype, &info, &err)) {
            fprintf(stderr, "seerexport: error: %s\n", err.msg);
            return 1;
        }
        printf("wrote %s: %.1f KiB, %lld parameters, %s weights (from %s)\n", out,
               (double)info.bytes / 1024.0, (long long)info.params, export_dtype_name(dtype), ckpt);
        if (info.note[0]) printf("note: %s\n", info.note);
    }
    if (st) {
        if (export_safetensors(ckpt, st, &info, &err)) {
            fprintf(stderr, "seerexport: error: %s\n", err.msg);
            return 1;
        }
        printf("wrote %s: %.1f KiB, %lld parameters, fp32; sidecar %s\n", st,
               (double)info.bytes / 1024.0, (long long)info.params, info.sidecar);
    }
    return 0;
}
