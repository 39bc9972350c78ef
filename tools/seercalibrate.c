/* seercalibrate: a .seer model rescaled to a handful of networks measured on the target.
 *   seercalibrate MODEL.seer MEASURED.h5 -o CALIBRATED.seer
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "eval/score.h"
#include "infer/seer_format.h"

static void usage(FILE *f) {
    fputs("usage: seercalibrate MODEL.seer MEASURED.h5 -o CALIBRATED.seer [--device FROM=TO]\n\n"
          "Across search spaces most of a predictor's error is one scale factor per metric (the\n"
          "ranking holds, the level is off: benchmarks/transfer.md). MEASURED.h5 holds a few\n"
          "networks of the new space measured on the target (a PerfGraph file: seerconvert\n"
          "--manifest with label columns named like the model's metrics; ten networks already\n"
          "help). Each metric is multiplied by the median of measured / predicted over the graphs\n"
          "that carry its label; metrics the file does not measure are left alone. The factors\n"
          "and the file are recorded in the output (seer_info(model, \"calibration\")); the\n"
          "training range it reports is unchanged, so unlike networks still carry the warning.\n"
          "An ensemble (seerexport --ensemble) is calibrated as a whole: its members each take\n"
          "the same factors, which scale their geometric mean by exactly those.\n\n"
          "  --device FROM=TO  a device the model was not trained on: the metrics of device FROM\n"
          "                    (<FROM>_<metric>_<unit>) are calibrated against the file's labels\n"
          "                    <TO>_<metric>_<unit> and renamed so, and the output predicts for TO\n"
          "                    (seerpredict --device TO); every one of them must be measured there.\n"
          "                    E.g. --device cpu_xeon=cpu_epyc: the Xeon predictor, rescaled to an\n"
          "                    EPYC by ten networks timed on it (benchmarks/cross_device.md).\n",
          f);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A copy of c's keys (all but skip) and tensors into o, a new container of the same kind. */
static void copy_container(const seer_container *c, const char *skip, seer_container *o) {
    ctr_init(o, c->magic, c->version);
    for (int i = 0; i < c->n_kv; i++) {
        const ctr_kv *kv = &c->kv[i];
        if (!strcmp(kv->key, skip)) continue;
        switch (kv->type) {
        case KV_STR: ctr_add_str(o, kv->key, kv->data); break;
        case KV_I64: ctr_add_i64(o, kv->key, *(const int64_t *)kv->data); break;
        case KV_F64: ctr_add_f64(o, kv->key, *(const double *)kv->data); break;
        case KV_STRARR: ctr_add_strs(o, kv->key, kv->data, kv->n); break;
        default: ctr_add_arr(o, kv->key, kv->type, kv->data, kv->n); break;
        }
    }
    for (int i = 0; i < c->n_t; i++)
        ctr_add_tensor(o, c->t[i].name, c->t[i].dtype, c->t[i].ndim, c->t[i].dims, c->t[i].data);
}

/* --device FROM=TO: metric k's name on the target (renamed when its device is FROM) into out. */
static void target_name(const char *name, const char *from, const char *to, char *out, size_t len) {
    char d[128];
    score_metric_device(name, d, sizeof d);
    if (from && !strcmp(d, from)) snprintf(out, len, "%s%s", to, name + strlen(from));
    else snprintf(out, len, "%s", name);
}

/* What a calibration does to one model's container: y x factor[k] for each metric, recorded. */
typedef struct {
    int M;
    const double *factor;
    char (*names)[128]; // each metric's name on the target
    int rename;         // --device: the metrics take those names
    const char *info;   // info.calibration
} calib;

/* o = c calibrated (one model, not an ensemble). */
static void calibrate(const seer_container *c, const calib *cb, const char *origin, seer_container *o) {
    seer_err err;
    copy_container(c, "info.calibration", o);
    ctr_add_str(o, "info.calibration", cb->info);
    const ctr_kv *mu = ctr_get(o, "norm.label_mu", KV_F64ARR, origin, &err);
    if (!mu || mu->n != cb->M)
        seer_die("%s", mu ? "norm.label_mu does not have one value per metric" : err.msg);
    // y = exp(t sigma + mu + log cost): a factor on y is log(factor) on mu
    for (int k = 0; k < cb->M; k++) ((double *)mu->data)[k] += log(cb->factor[k]);
    if (!cb->rename) return;
    const ctr_kv *kv = ctr_get(o, "metrics.names", KV_STRARR, origin, &err);
    if (!kv || kv->n != cb->M)
        seer_die("%s", kv ? "metrics.names does not have one name per metric" : err.msg);
    for (int k = 0; k < cb->M; k++) { // the metrics now name the target device
        char **slot = (char **)kv->data + k;
        free(*slot);
        *slot = seer_strdup(cb->names[k]);
    }
}

/* An ensemble (seerexport --ensemble) predicts the geometric mean of its members: every member
 * calibrated by the same factors scales it by exactly those factors. Each member's image is
 * calibrated, the ensemble written beside out, loaded back, and only then renamed into place. */
static void write_ensemble(const seer_container *c, const calib *cb, const char *origin, const char *out) {
    seer_err err;
    seer_container o;
    char tmp[1200], name[64], msg[1024];
    ctr_init(&o, c->magic, c->version);
    for (int i = 0; i < c->n_kv; i++) // the ensemble's own keys (its info falls back to member 0)
        if (c->kv[i].type == KV_STR && strcmp(c->kv[i].key, "info.calibration"))
            ctr_add_str(&o, c->kv[i].key, c->kv[i].data);
        else if (c->kv[i].type == KV_I64)
            ctr_add_i64(&o, c->kv[i].key, *(const int64_t *)c->kv[i].data);
    ctr_add_str(&o, "info.calibration", cb->info);
    const ctr_kv *nm = ctr_get(c, "ensemble.members", KV_I64, origin, &err);
    if (!nm) seer_die("%s", err.msg);
    int n = (int)*(const int64_t *)nm->data;
    char **imgs = seer_calloc((size_t)n, sizeof *imgs);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "ensemble.member.%d", i);
        const ctr_tensor *t = ctr_tensor_find(c, name);
        if (!t) seer_die("%s: no tensor %s", origin, name);
        seer_container mc, mo;
        snprintf(tmp, sizeof tmp, "%s (member %d)", origin, i);
        if (ctr_read_mem(&mc, t->data, (size_t)t->nbytes, tmp, SEER_MODEL_MAGIC, SEER_MODEL_VERSION, &err))
            seer_die("%s", err.msg);
        calibrate(&mc, cb, tmp, &mo);
        size_t len;
        imgs[i] = ctr_write_mem(&mo, &len);
        ctr_add_tensor(&o, name, DT_I8, 1, (int64_t[]){(int64_t)len}, imgs[i]);
        ctr_free(&mo), ctr_free(&mc);
    }
    snprintf(tmp, sizeof tmp, "%s.check", out);
    seer_model *m;
    if (ctr_write(&o, tmp, &err)) seer_die("%s", err.msg);
    if (seer_load(tmp, &m, msg, sizeof msg)) {
        remove(tmp);
        seer_die("%s: the calibrated ensemble does not load: %s", out, msg);
    }
    seer_free(m);
    if (rename(tmp, out)) {
        remove(tmp);
        seer_die("%s: cannot write it", out);
    }
    for (int i = 0; i < n; i++) free(imgs[i]);
    free(imgs);
    ctr_free(&o);
}

static int valid_device(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

int main(int argc, char **argv) {
    const char *model = NULL, *data = NULL, *out = NULL;
    char from[128] = "", *to = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            const char *v = argv[++i], *eq = strchr(v, '=');
            if (!eq || eq == v || (size_t)(eq - v) >= sizeof from || !valid_device(eq + 1)) {
                fprintf(stderr, "seercalibrate: --device %s: give FROM=TO, two device names of "
                                "lower-case letters, digits and '_' (e.g. cpu_xeon=cpu_epyc)\n", v);
                return 2;
            }
            snprintf(from, sizeof from, "%.*s", (int)(eq - v), v);
            to = (char *)eq + 1;
            if (!valid_device(from)) {
                fprintf(stderr, "seercalibrate: --device %s: '%s' is not a device name (lower-case "
                                "letters, digits and '_')\n", v, from);
                return 2;
            }
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "seercalibrate: unknown or incomplete option '%s' (see --help)\n", argv[i]);
            return 2;
        } else if (!model) {
            model = argv[i];
        } else if (!data) {
            data = argv[i];
        } else {
            fprintf(stderr, "seercalibrate: unexpected argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (!model || !data || !out) {
        usage(stderr);
        return 2;
    }
    char msg[1024];
    seer_model *m;
    if (seer_load(model, &m, msg, sizeof msg)) seer_die("%s", msg);
    pg_dataset ds;
    double *pred;
    seer_err err;
    if (score_predict(m, data, &ds, &pred, &err)) seer_die("%s", err.msg);
    int M = seer_n_metrics(m), used = 0, renamed = 0;
    char (*names)[128] = seer_malloc(sizeof *names * (size_t)M); // each metric's name on the target
    for (int k = 0; k < M; k++) {
        char d[128];
        score_metric_device(seer_metric_name(m, k), d, sizeof d);
        renamed += to && !strcmp(d, from);
        target_name(seer_metric_name(m, k), to ? from : NULL, to, names[k], sizeof names[k]);
    }
    if (to && !renamed)
        seer_die("%s: --device %s=%s: the model has no metric of device '%s' (its metrics: %s%s; "
                 "seerpredict --list-devices names the devices)", model, from, to, from,
                 seer_metric_name(m, 0), M > 1 ? ", ..." : "");
    double *factor = seer_malloc(sizeof(double) * (size_t)M), *r = seer_malloc(sizeof(double) * (size_t)(ds.G + 1));
    int64_t *count = seer_calloc((size_t)M, sizeof(int64_t));
    char note[4096];
    int len = snprintf(note, sizeof note, "%s:", data);
    for (int k = 0; k < M; k++) {
        int col = pg_find_name(ds.labels, ds.M, names[k]);
        int64_t n = 0;
        for (int64_t g = 0; col >= 0 && g < ds.G; g++) {
            double y = ds.label_y[g * ds.M + col], p = pred[g * M + k];
            if (y > 0 && isfinite(y) && p > 0 && isfinite(p)) r[n++] = y / p;
        }
        factor[k] = 1, count[k] = n;
        if (n) {
            qsort(r, (size_t)n, sizeof *r, cmp_double);
            factor[k] = n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]);
            used++;
            if (len < (int)sizeof note - 1)
                len += snprintf(note + len, sizeof note - (size_t)len, " %s x%.6g (%lld graphs)",
                                names[k], factor[k], (long long)n);
        } else if (to && strcmp(names[k], seer_metric_name(m, k))) {
            seer_die("%s: no measured label %s: with --device %s=%s every metric of %s must be "
                     "measured on %s, or the output would predict it unmeasured (add the column)",
                     data, names[k], from, to, from, to);
        }
    }
    if (!used) {
        seer_die("%s: no graph carries a measured label named like the model's metrics (%s%s): "
                 "nothing to calibrate with (name the label columns as the metrics%s)", data,
                 names[0], M > 1 ? ", ..." : "", to ? "" : ", or --device FROM=TO for another device");
    }
    const char *prev = seer_info(m, "calibration"); // a second calibration composes with the first
    char info[8192];
    snprintf(info, sizeof info, "%s%s%s%s%s%s%s", prev ? prev : "", prev ? "; then " : "",
             to ? "device " : "", to ? from : "", to ? " -> " : "", to ? to : "", to ? ", " : "");
    snprintf(info + strlen(info), sizeof info - strlen(info), "%s", note);
    calib cb = {M, factor, names, to != NULL, info};
    seer_container c, o;
    if (ctr_read(&c, model, SEER_MODEL_MAGIC, SEER_MODEL_VERSION, &err)) seer_die("%s", err.msg);
    if (!strcmp(seer_info(m, "model"), "ensemble")) {
        write_ensemble(&c, &cb, model, out);
    } else {
        calibrate(&c, &cb, model, &o);
        if (ctr_write(&o, out, &err)) seer_die("%s", err.msg);
        ctr_free(&o);
    }
    for (int k = 0; k < M; k++) {
        if (count[k])
            printf("%-28s x %.4f (median of measured / predicted over %lld graphs)%s%s\n",
                   names[k], factor[k], (long long)count[k],
                   strcmp(names[k], seer_metric_name(m, k)) ? ", was " : "",
                   strcmp(names[k], seer_metric_name(m, k)) ? seer_metric_name(m, k) : "");
        else
            printf("%-28s not measured in the file: unchanged\n", names[k]);
    }
    printf("wrote %s\n", out);
    ctr_free(&c);
    free(factor), free(r), free(count), free(pred), free(names);
    pg_free(&ds);
    seer_free(m);
    return 0;
}
