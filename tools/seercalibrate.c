/* seercalibrate: a .seer model rescaled to a handful of networks measured on the target.
 *   seercalibrate MODEL.seer MEASURED.h5 -o CALIBRATED.seer
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "eval/metrics.h"
#include "eval/score.h"
#include "data/prep.h"
#include "infer/seer_format.h"

static void usage(FILE *f) {
    fputs("usage: seercalibrate MODEL.seer MEASURED.h5 -o CALIBRATED.seer [--device FROM=TO]\n"
          "                     [--one-factor] [--power | --with-flops | --with-feature NAME]\n\n"
          "Across search spaces most of a predictor's error is one scale factor per metric and\n"
          "batch (the ranking holds, the level is off: benchmarks/transfer.md). MEASURED.h5 holds\n"
          "a few networks of the new space measured on the target (a PerfGraph file: seerconvert\n"
          "--manifest with label columns named like the model's metrics; ten networks already\n"
          "help). Each metric is multiplied by the median of measured / predicted over the graphs\n"
          "that carry its label; when the file measures several batch sizes, one median per batch\n"
          "(log_batch) with 3 graphs or more, and between those batches the log factor is\n"
          "interpolated linearly in log_batch, beyond them the nearest one holds (the output is\n"
          "then format version 3, which libseer before 0.5 refuses). Metrics the file does not\n"
          "measure are left alone; a batch with fewer graphs of a metric takes its factor from the\n"
          "batches beside it (from all the metric's graphs when no batch has 3). The\n"
          "factors and the file are recorded in the output (seer_info(model, \"calibration\"));\n"
          "the training range it reports is unchanged, so unlike networks still carry the warning.\n"
          "It prints how the calibrated model fits the file's graphs (MAPE, Spearman, and the\n"
          "Spearman of their FLOPs alone) and warns when the model ranks them clearly worse than\n"
          "their FLOPs do: a device unlike the one it learned (benchmarks/new_device.md).\n"
          "A calibrated model calibrated again composes the two. An ensemble (seerexport\n"
          "--ensemble) is calibrated as a whole: its members each take the same factors, which\n"
          "scale their geometric mean by exactly those.\n\n"
          "  --device FROM=TO  a device the model was not trained on: the metrics of device FROM\n"
          "                    (<FROM>_<metric>_<unit>) are calibrated against the file's labels\n"
          "                    <TO>_<metric>_<unit> and renamed so, and the output predicts for TO\n"
          "                    (seerpredict --device TO); every one of them must be measured there.\n"
          "                    E.g. --device cpu_xeon=cpu_epyc: the Xeon predictor, rescaled to an\n"
          "                    EPYC by ten networks timed on it (benchmarks/cross_device.md).\n"
          "  --one-factor      one factor per metric over all batches, even when the file measures\n"
          "                    several (a file readable by libseer 0.3 and 0.4)\n"
          "  --power           a factor per batch and one exponent per metric, y = (prediction x\n"
          "                    factor)^b, least squares in log over the file's graphs: for a table\n"
          "                    whose times grow faster or slower with size than the model's (a\n"
          "                    second harness's fixed overhead per network); the networks must\n"
          "                    differ in predicted time (by 5% or more) and b come out in [0.2, 5].\n"
          "                    FBNet -> NAS-Bench-201 on ten networks: PerfSAGE 7.5% MAPE with\n"
          "                    factors, 5.1% with --power (benchmarks/transfer.md). Measure ten\n"
          "                    networks or more: fitted on three, the exponent is noise\n"
          "  --with-flops      for a device unlike the model's (a GPU predictor taken to a phone or\n"
          "                    a CPU): log y = a + b log(prediction) + c log_flops_total, three\n"
          "                    numbers per metric fitted by least squares on the file's graphs (3\n"
          "                    or more; b must come out positive): the model's ranking where it\n"
          "                    holds, FLOPs where it does not (benchmarks/new_device.md: better than\n"
          "                    a FLOPs regression on the same ten networks in 14 of 24 cases, one\n"
          "                    factor in 6)\n"
          "  --with-feature NAME  the same fit with another global feature of the graph in place of\n"
          "                    log_flops_total (--with-flops is --with-feature log_flops_total);\n"
          "                    log_nodes, the operator count, is the one for a GPU at small batches,\n"
          "                    whose time is its kernel launches more than its arithmetic: the\n"
          "                    Titan RTX predictor taken to an H200 by ten real networks, 61% MAPE\n"
          "                    with log_flops_total, 34% with log_nodes (benchmarks/new_gpu.md)\n",
          f);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define MIN_PER_BATCH 3 // graphs of a metric at a batch for that batch to get its own factor
// --with-flops below this many measured graphs warns: its FLOPs term, fitted on so few, extrapolates
// (benchmarks/new_cpu.md: three networks at three batches took one predictor's inference from
// 21% MAPE with a factor per batch to 141% with --with-flops; ten networks, 17%)
#define MIN_WITH_FLOPS 15
// --power: below this many measured graphs of a metric it warns; predictions spread less than
// POWER_MIN_SD (standard deviation of log prediction within a batch) leave the exponent unfitted
#define MIN_POWER 10
#define POWER_MIN_SD 0.05

/* Metric k's ratios measured / predicted (label column col_y of ds) into r (may be NULL: only
 * counted): over the graphs whose global feature col is kv, or over all graphs when col < 0. */
static int64_t ratios(const pg_dataset *ds, const double *pred, int M, int k, int col_y, int col,
                      double kv, double *r) {
    int64_t n = 0;
    for (int64_t g = 0; col_y >= 0 && g < ds->G; g++) {
        double y = ds->label_y[g * ds->M + col_y], p = pred[g * M + k];
        if (col >= 0 && ds->global_x[g * ds->Fg + col] != kv) continue;
        if (y > 0 && isfinite(y) && p > 0 && isfinite(p)) {
            if (r) r[n] = y / p;
            n++;
        }
    }
    return n;
}

/* --with-flops / --with-feature: metric k's least-squares log y = a + b log p + c x (x: global
 * feature cf, named feat) over the file's graphs into abc; dies with what to do when the fit cannot
 * be a calibration. */
static void fit_abc(const pg_dataset *ds, const double *pred, int M, int k, int cy, int cf,
                    const char *feat, const char *path, const char *name, double *abc) {
    double sp = 0, sx = 0, sy = 0, spp = 0, sxx = 0, spx = 0, spy = 0, sxy = 0;
    int64_t n = 0;
    for (int pass = 0; pass < 2; pass++) { // the means first, then the centred sums
        for (int64_t g = 0; cy >= 0 && g < ds->G; g++) {
            double t = ds->label_y[g * ds->M + cy], q = pred[g * M + k];
            if (!(t > 0 && isfinite(t) && q > 0 && isfinite(q))) continue;
            double lp = log(q), x = ds->global_x[g * ds->Fg + cf], ly = log(t);
            if (!pass) {
                sp += lp, sx += x, sy += ly, n++;
            } else {
                lp -= sp, x -= sx, ly -= sy;
                spp += lp * lp, sxx += x * x, spx += lp * x, spy += lp * ly, sxy += x * ly;
            }
        }
        if (!pass && n) sp /= (double)n, sx /= (double)n, sy /= (double)n;
    }
    const char *opt = strcmp(feat, "log_flops_total") ? "--with-feature" : "--with-flops";
    if (n < 3)
        seer_die("%s: %s fits three numbers for %s and has %lld measured graph%s: measure "
                 "3 or more (10 help)", path, opt, name, (long long)n, n == 1 ? "" : "s");
    double det = spp * sxx - spx * spx;
    if (!(det > 1e-12 * spp * sxx) || !(spp > 0) || !(sxx > 0))
        seer_die("%s: %s: the %lld graphs measured for %s do not vary enough in %s and "
                 "predicted time to fit both: measure networks of different sizes", path, opt, (long long)n,
                 name, feat);
    double b = (spy * sxx - sxy * spx) / det, c = (sxy * spp - spy * spx) / det;
    double a = sy - b * sp - c * sx;
    if (!(b > 0 && b <= 10 && fabs(a) < 100 && fabs(c) < 100))
        seer_die("%s: %s: for %s the fit gives log y = %.3g + %.3g log(prediction) + %.3g "
                 "%s: the model's predictions do not rise with the measured times, so it "
                 "cannot be calibrated to this device; use a regression on FLOPs or another predictor",
                 path, opt, name, a, b, c, feat);
    abc[0] = a, abc[1] = b, abc[2] = c;
    if (n < MIN_WITH_FLOPS)
        printf("warning: %s: %s fitted on %lld graphs: with fewer than %d its %s term can move "
               "networks of other sizes far off (measure more networks, or calibrate without %s)\n",
               name, opt, (long long)n, MIN_WITH_FLOPS, feat, opt);
}

/* --power: metric k's least-squares log y = a_j + b log p over the file's graphs, a_j one per knot j
 * with own[j] == 1 (graphs at other knots left out), or one a over all graphs when pooled. Writes
 * b to *bexp and a_j / b to logf[j] for those knots (pooled: every knot); dies with what to do when
 * the fit cannot be a calibration. */
static void fit_power(const pg_dataset *ds, const double *pred, int M, int k, int cy, int col,
                      const double *knot, int nk, const uint8_t *own, int pooled, const char *path,
                      const char *name, double *bexp, double *logf) {
    double *sp = seer_calloc((size_t)nk, sizeof(double)), *sy = seer_calloc((size_t)nk, sizeof(double));
    int64_t *cnt = seer_calloc((size_t)nk, sizeof(int64_t)), n = 0;
    double sxx = 0, sxy = 0;
    for (int pass = 0; pass < 2; pass++) { // the means of each knot first, then the centred sums
        for (int64_t g = 0; cy >= 0 && g < ds->G; g++) {
            double t = ds->label_y[g * ds->M + cy], q = pred[g * M + k];
            if (!(t > 0 && isfinite(t) && q > 0 && isfinite(q))) continue;
            int j = 0;
            if (!pooled) { // the graph's knot, when that knot is fitted
                double x = ds->global_x[g * ds->Fg + col];
                while (j < nk && knot[j] != x) j++;
                if (j == nk || own[j] != 1) continue;
            }
            double lp = log(q), ly = log(t);
            if (!pass) {
                sp[j] += lp, sy[j] += ly, cnt[j]++, n++;
            } else {
                lp -= sp[j], ly -= sy[j];
                sxx += lp * lp, sxy += lp * ly;
            }
        }
        for (int j = 0; !pass && j < nk; j++)
            if (cnt[j]) sp[j] /= (double)cnt[j], sy[j] /= (double)cnt[j];
    }
    if (n < 3)
        seer_die("%s: --power fits an exponent for %s and has %lld measured graph%s: measure 3 or more "
                 "(10 help)", path, name, (long long)n, n == 1 ? "" : "s");
    if (!(sxx >= POWER_MIN_SD * POWER_MIN_SD * (double)n))
        seer_die("%s: --power: the %lld graphs measured for %s are predicted within %.1f%% of each other "
                 "at each batch, too close to fit an exponent: measure networks of different sizes, or "
                 "calibrate without --power", path, (long long)n, name, 100 * sqrt(sxx / (double)n));
    double b = sxy / sxx;
    if (!(b >= 0.2 && b <= 5))
        seer_die("%s: --power: for %s the fit gives measured = (prediction x factor)^%.3g: %s, so it "
                 "cannot be calibrated this way; calibrate without --power%s", path, name, b,
                 b > 0 ? "far from proportional to the model's predictions" :
                         "the model's predictions do not rise with the measured times",
                 b > 0 ? "" : ", or use a regression on FLOPs or another predictor");
    *bexp = b;
    for (int j = 0; j < nk; j++)
        if (pooled || own[j] == 1) logf[j] = (sy[pooled ? 0 : j] - b * sp[pooled ? 0 : j]) / b;
    if (n < MIN_POWER)
        printf("warning: %s: --power fitted on %lld graphs: with fewer than %d its exponent can move "
               "networks of other sizes far off (measure more networks, or calibrate without --power)\n",
               name, (long long)n, MIN_POWER);
    free(sp), free(sy), free(cnt);
}

/* How the calibrated metric k fits the file's graphs, against their FLOPs alone: a model that ranks
 * the measured networks clearly worse than their FLOPs do learned a device unlike this one (a GPU
 * calibrated to a phone: benchmarks/new_device.md), and the user should know it is guessing. */
static void fit_report(const pg_dataset *ds, const double *cal, int M, int k, const char *name) {
    int cy = pg_find_name(ds->labels, ds->M, name), cf = pg_find_name(ds->global_features, ds->Fg, "log_flops_total");
    double *p = seer_malloc(sizeof(double) * (size_t)(3 * ds->G + 1)), *y = p + ds->G, *fl = y + ds->G;
    int64_t n = 0;
    for (int64_t g = 0; cy >= 0 && g < ds->G; g++) {
        double t = ds->label_y[g * ds->M + cy], q = cal[g * M + k];
        if (!(t > 0 && isfinite(t) && q > 0 && isfinite(q))) continue;
        p[n] = q, y[n] = t, fl[n] = cf >= 0 ? ds->global_x[g * ds->Fg + cf] : 0;
        n++;
    }
    label_metrics lm, lf;
    metrics_compute(p, y, n, &lm);
    metrics_compute(fl, y, n, &lf);
    printf("%-28s calibrated, on the file's %lld graphs: MAPE %.1f%%, Spearman %.2f", name, (long long)n,
           lm.mape, lm.spearman);
    if (cf >= 0) printf(" (their FLOPs alone: Spearman %.2f)", lf.spearman);
    putchar('\n');
    if (cf >= 0 && n >= 5 && lf.spearman - lm.spearman > 0.2)
        printf("warning: %s: the model ranks the measured networks worse than their FLOPs do (Spearman "
               "%.2f against %.2f): the device it learned is unlike this one, so its predictions here are "
               "guesses; a predictor of a like device, a regression on FLOPs, or calibrating --with-flops (a "
               "GPU at small batches: --with-feature log_nodes) may do better\n",
               name, lm.spearman, lf.spearman);
    free(p);
}

/* log of the median of r (n > 0; sorts r). */
static double log_median(double *r, int64_t n) {
    qsort(r, (size_t)n, sizeof *r, cmp_double);
    return log(n % 2 ? r[n / 2] : 0.5 * (r[n / 2 - 1] + r[n / 2]));
}

/* A copy of c's keys (all but skip and skip2) and tensors into o, a new container of the same kind. */
/* --device FROM=TO: metric k's name on the target (renamed when its device is FROM) into out. */
static void target_name(const char *name, const char *from, const char *to, char *out, size_t len) {
    char d[128];
    score_metric_device(name, d, sizeof d);
    if (from && !strcmp(d, from)) snprintf(out, len, "%s%s", to, name + strlen(from));
    else snprintf(out, len, "%s", name);
}

/* What a calibration does to one model's container: y x factor[k] for each metric, or by batch
 * (calib.batch), recorded. */
enum { CAL_FACTOR, CAL_BATCH, CAL_FLOPS };
typedef struct {
    int M, mode;          // CAL_*
    const double *factor; // CAL_FACTOR: one factor per metric (folded into norm.label_mu)
    int aff_col;          // CAL_FLOPS, and --power after its factors (a = c = 0): log y -> a + b log y
    const double *abc;    // + c x[aff_col], (a, b, c) per metric, fitted on graphs with x in [aff_lo, aff_hi]
    double aff_lo, aff_hi;
    int col, n;           // CAL_BATCH: the global column and n knots x (n), log factors y (M, n)
    const double *x, *y;
    char (*names)[128]; // each metric's name on the target
    int rename;         // --device: the metrics take those names
    const char *info;   // info.calibration
} calib;

/* calib.batch of a model calibrated before composed with cb's knots: the union of the knots, at
 * each the sum of the two log factors (both are linear between knots and constant beyond, so the
 * sum is exactly that function again). Returns the new calib.batch values; *len their count. */
static double *compose_knots(const ctr_kv *old, const calib *cb, const char *origin, int64_t *len) {
    const double *v = old ? old->data : NULL;
    int on = v ? (int)v[1] : 0;
    if (v && (int)v[0] != cb->col)
        seer_die("%s: calibrated before against global feature %d, now %d: calibrate the "
                 "uncalibrated model", origin, (int)v[0], cb->col);
    double *x = seer_malloc(sizeof(double) * (size_t)(on + cb->n));
    int n = 0;
    for (int j = 0; j < on; j++) x[n++] = v[2 + j];
    for (int j = 0; j < cb->n; j++) x[n++] = cb->x[j];
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    int u = 0;
    for (int j = 0; j < n; j++)
        if (!u || x[j] != x[u - 1]) x[u++] = x[j];
    if (u > NORM_CALIB_MAX)
        seer_die("%s: %d batch sizes with the earlier calibration's, at most %d: calibrate the "
                 "uncalibrated model, or use --one-factor", origin, u, NORM_CALIB_MAX);
    *len = 2 + u + (int64_t)cb->M * u;
    double *out = seer_malloc(sizeof(double) * (size_t)*len);
    out[0] = cb->col, out[1] = u;
    memcpy(out + 2, x, sizeof(double) * (size_t)u);
    for (int k = 0; k < cb->M; k++)
        for (int j = 0; j < u; j++)
            out[2 + u + k * u + j] = norm_interp(cb->x, cb->y + (int64_t)k * cb->n, cb->n, x[j]) +
                                     (v ? norm_interp(v + 2, v + 2 + on + (int64_t)k * on, on, x[j]) : 0);
    free(x);
    return out;
}

/* o = c calibrated (one model, not an ensemble). */
static void calibrate(const seer_container *c, const calib *cb, const char *origin, seer_container *o) {
    seer_err err;
    const ctr_kv *old = ctr_find(c, "calib.batch"), *oldf = ctr_find(c, "calib.flops");
    if ((old && (old->type != KV_F64ARR || old->n < 2)) ||
        (oldf && (oldf->type != KV_F64ARR || oldf->n != 3 + 3 * (int64_t)cb->M)))
        seer_die("%s: calib.* is not a calibration's (the file does not load either)", origin);
    if (oldf && cb->mode != CAL_FLOPS) // its factors would act inside the earlier b log y
        seer_die("%s: calibrated with --with-flops, --with-feature or --power before: calibrate it with "
                 "--with-flops (--with-feature) again, or calibrate the model it was made from", origin);
    ctr_copy(c, "info.calibration", cb->mode == CAL_BATCH ? "calib.batch" : cb->mode == CAL_FLOPS ?
                   "calib.flops" : "", o);
    ctr_add_str(o, "info.calibration", cb->info);
    if (cb->mode == CAL_BATCH) { // by batch: the knots, composed with an earlier calibration's
        int64_t len;
        double *kv = compose_knots(old, cb, origin, &len);
        ctr_add_arr(o, "calib.batch", KV_F64ARR, kv, len);
        free(kv);
    }
    if (cb->abc) { // --with-flops (after an earlier one: a2 + b2 (a1 + b1 l + c1 x) + c2 x), --power
        const double *ov = oldf ? oldf->data : NULL;
        if (ov && (int)ov[0] != cb->aff_col)
            seer_die("%s: calibrated before against global feature %d, now %d: calibrate it with the same "
                     "--with-feature again, or calibrate the model it was made from", origin, (int)ov[0], cb->aff_col);
        double *kv = seer_malloc(sizeof(double) * (size_t)(3 + 3 * cb->M));
        kv[0] = cb->aff_col; // the range: both calibrations' graphs
        kv[1] = ov && ov[1] < cb->aff_lo ? ov[1] : cb->aff_lo, kv[2] = ov && ov[2] > cb->aff_hi ? ov[2] : cb->aff_hi;
        for (int k = 0; k < cb->M; k++) {
            const double *n2 = cb->abc + 3 * k, *n1 = ov ? ov + 3 + 3 * k : (double[]){0, 1, 0};
            kv[3 + 3 * k] = n2[0] + n2[1] * n1[0], kv[4 + 3 * k] = n2[1] * n1[1];
            kv[5 + 3 * k] = n2[1] * n1[2] + n2[2];
        }
        ctr_add_arr(o, "calib.flops", KV_F64ARR, kv, 3 + 3 * (int64_t)cb->M);
        free(kv);
    }
    if ((cb->mode != CAL_FACTOR || cb->abc) && o->version < 3) o->version = 3; // version 2 readers would ignore calib.*
    const ctr_kv *mu = ctr_get(o, "norm.label_mu", KV_F64ARR, origin, &err);
    if (!mu || mu->n != cb->M)
        seer_die("%s", mu ? "norm.label_mu does not have one value per metric" : err.msg);
    // y = exp(t sigma + mu + log cost): a factor on y is log(factor) on mu
    for (int k = 0; cb->mode == CAL_FACTOR && k < cb->M; k++) ((double *)mu->data)[k] += log(cb->factor[k]);
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
    ctr_init(&o, c->magic, c->version < 3 && (cb->mode != CAL_FACTOR || cb->abc) ? 3 : c->version); // as new as its members
    for (int i = 0; i < c->n_kv; i++) // the ensemble's own keys (its info falls back to member 0)
        if (c->kv[i].type == KV_STR && strcmp(c->kv[i].key, "info.calibration"))
            ctr_add_str(&o, c->kv[i].key, c->kv[i].data);
        else if (c->kv[i].type == KV_I64)
            ctr_add_i64(&o, c->kv[i].key, *(const int64_t *)c->kv[i].data);
        else if (c->kv[i].type == KV_F64ARR) // ensemble.weights
            ctr_add_arr(&o, c->kv[i].key, KV_F64ARR, c->kv[i].data, c->kv[i].n);
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
    int one_factor = 0, with_flops = 0, power = 0;
    const char *feat = "log_flops_total"; // the global feature of --with-flops / --with-feature
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
        } else if (!strcmp(argv[i], "--one-factor")) {
            one_factor = 1;
        } else if (!strcmp(argv[i], "--with-flops") || (!strcmp(argv[i], "--with-feature") && i + 1 < argc)) {
            if (with_flops) {
                fprintf(stderr, "seercalibrate: --with-flops and --with-feature given together: choose one\n");
                return 2;
            }
            with_flops = 1;
            if (!strcmp(argv[i], "--with-feature")) feat = argv[++i];
        } else if (!strcmp(argv[i], "--power")) {
            power = 1;
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
    const char *opt = strcmp(feat, "log_flops_total") ? "--with-feature" : "--with-flops";
    if (with_flops && (one_factor || power)) {
        fprintf(stderr, "seercalibrate: %s and %s are two calibrations: choose one\n",
                one_factor ? "--one-factor" : "--power", opt);
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
    // the batches the file measures: the distinct values of the model's log_batch feature
    int col = -1, nk = 0;
    for (int j = 0; j < seer_n_features(m, SEER_GLOBAL); j++)
        if (!strcmp(seer_feature_name(m, SEER_GLOBAL, j), "log_batch")) col = j;
    double *knot = seer_malloc(sizeof(double) * (size_t)(ds.G + 1));
    for (int64_t g = 0; col >= 0 && g < ds.G; g++) knot[nk++] = ds.global_x[g * ds.Fg + col];
    qsort(knot, (size_t)nk, sizeof *knot, cmp_double);
    int u = 0;
    for (int j = 0; j < nk; j++)
        if (!u || knot[j] != knot[u - 1]) knot[u++] = knot[j];
    nk = one_factor || with_flops || u < 2 ? 1 : u; // one knot: one factor per metric over all the file's graphs
    if (nk > NORM_CALIB_MAX)
        seer_die("%s: %d batch sizes, at most %d get a factor each: use --one-factor, or measure "
                 "fewer batch sizes", data, nk, NORM_CALIB_MAX);
    // which batches get a factor of their own: those with MIN_PER_BATCH graphs of a metric
    if (nk > 1) {
        int any = 0;
        for (int k = 0; k < M && !any; k++)
            for (int j = 0; j < nk && !any; j++)
                any = ratios(&ds, pred, M, k, pg_find_name(ds.labels, ds.M, names[k]), col, knot[j], NULL) >= MIN_PER_BATCH;
        if (!any) {
            printf("note: %s measures %d batch sizes but no metric at %d graphs at any of them: one "
                   "factor per metric\n", data, nk, MIN_PER_BATCH);
            nk = 1;
        }
    }
    // logf (M, nk): the log of the median measured / predicted of each metric at each knot; own:
    // 1 fitted there, 2 fitted over all batches (too few graphs at each), 0 from the knots beside
    double *logf = seer_calloc((size_t)M * (size_t)nk, sizeof(double)), *r = seer_malloc(sizeof(double) * (size_t)(ds.G + 1));
    double *mx = seer_malloc(sizeof(double) * (size_t)nk), *my = seer_malloc(sizeof(double) * (size_t)nk);
    int64_t *count = seer_calloc((size_t)M * (size_t)nk, sizeof(int64_t)), *total = seer_calloc((size_t)M, sizeof(int64_t));
    double *bexp = seer_malloc(sizeof(double) * (size_t)M); // --power: each metric's exponent
    for (int k = 0; k < M; k++) bexp[k] = 1;
    uint8_t *own = seer_calloc((size_t)M * (size_t)nk, 1);
    char note[8192];
    int len = snprintf(note, sizeof note, "%s:", data);
    for (int k = 0; k < M; k++) {
        int col_y = pg_find_name(ds.labels, ds.M, names[k]), measured = 0;
        if (!(total[k] = ratios(&ds, pred, M, k, col_y, -1, 0, r))) {
            if (to && strcmp(names[k], seer_metric_name(m, k)))
                seer_die("%s: no measured label %s: with --device %s=%s every metric of %s must be "
                         "measured on %s, or the output would predict it unmeasured (add the column)",
                         data, names[k], from, to, from, to);
            continue;
        }
        used++;
        for (int j = 0; j < nk; j++) {
            int64_t n = nk == 1 ? total[k] : ratios(&ds, pred, M, k, col_y, col, knot[j], r);
            count[k * nk + j] = n;
            if (nk > 1 && n < MIN_PER_BATCH) continue;
            own[k * nk + j] = 1;
            mx[measured] = knot[j];
            my[measured++] = logf[k * nk + j] = log_median(r, n);
        }
        if (!measured) { // too few graphs at every batch: one factor over all of them
            double lf = log_median(r, ratios(&ds, pred, M, k, col_y, -1, 0, r));
            for (int j = 0; j < nk; j++) logf[k * nk + j] = lf, own[k * nk + j] = 2;
        }
        if (power) { // the factors at the fitted batches and the exponent, by least squares instead
            fit_power(&ds, pred, M, k, col_y, col, knot, nk, own + k * nk, nk == 1 || !measured, data,
                      names[k], &bexp[k], logf + k * nk);
            for (int j = 0, i = 0; j < nk; j++)
                if (own[k * nk + j] == 1) my[i++] = logf[k * nk + j];
        }
        for (int j = 0; measured && j < nk; j++) // a batch without enough graphs: the ones beside it
            if (!own[k * nk + j]) logf[k * nk + j] = norm_interp(mx, my, measured, knot[j]);
        for (int j = 0; j < nk && len < (int)sizeof note - 1; j++) {
            size_t left = sizeof note - (size_t)len;
            char f[64];
            if (power) snprintf(f, sizeof f, "(prediction x%.6g)^%.4g", exp(logf[k * nk + j]), bexp[k]);
            else snprintf(f, sizeof f, "x%.6g", exp(logf[k * nk + j]));
            if (nk == 1)
                len += snprintf(note + len, left, " %s %s (%lld graphs)", names[k], f, (long long)total[k]);
            else if (own[k * nk + j])
                len += snprintf(note + len, left, " %s %s at batch %.0f (%s%lld graphs)", names[k], f,
                                expm1(knot[j]), own[k * nk + j] == 2 ? "of all " : "",
                                (long long)(own[k * nk + j] == 1 ? count[k * nk + j] : total[k]));
        }
    }
    if (!used) {
        seer_die("%s: no graph carries a measured label named like the model's metrics (%s%s): "
                 "nothing to calibrate with (name the label columns as the metrics%s)", data,
                 names[0], M > 1 ? ", ..." : "", to ? "" : ", or --device FROM=TO for another device");
    }
    double *factor = NULL;
    if (nk == 1) {
        factor = seer_malloc(sizeof(double) * (size_t)M);
        for (int k = 0; k < M; k++) factor[k] = exp(logf[k]);
    }
    int aff_col = -1;
    double *abc = NULL, aff_lo = INFINITY, aff_hi = -INFINITY;
    if (with_flops || power) { // the feature's range the fit covers: what seerpredict warns beyond
        for (int j = 0; j < seer_n_features(m, SEER_GLOBAL); j++)
            if (!strcmp(seer_feature_name(m, SEER_GLOBAL, j), feat)) aff_col = j;
        if (aff_col < 0) {
            char known[2048] = "";
            for (int j = 0, len = 0; j < seer_n_features(m, SEER_GLOBAL) && len < (int)sizeof known - 1; j++)
                len += snprintf(known + len, sizeof known - (size_t)len, "%s%s", j ? ", " : "",
                                seer_feature_name(m, SEER_GLOBAL, j));
            seer_die("%s: %s %s: the model has no global feature of that name (it has: %s)", model,
                     power ? "--power" : opt, feat, known);
        }
        for (int64_t g = 0; g < ds.G; g++) { // the FLOPs of the graphs with a measured metric
            int any = 0;
            for (int k = 0; k < M && !any; k++) {
                int cy = pg_find_name(ds.labels, ds.M, names[k]);
                double t = cy >= 0 ? ds.label_y[g * ds.M + cy] : NAN;
                any = t > 0 && isfinite(t);
            }
            double x = ds.global_x[g * ds.Fg + aff_col];
            if (any && x < aff_lo) aff_lo = x;
            if (any && x > aff_hi) aff_hi = x;
        }
    }
    if (power) { // stored as calib.flops with a = c = 0, applied after the factors
        abc = seer_malloc(sizeof(double) * 3 * (size_t)M);
        for (int k = 0; k < M; k++) abc[3 * k] = 0, abc[3 * k + 1] = bexp[k], abc[3 * k + 2] = 0;
    }
    if (with_flops) { // log y = a + b log(prediction) + c feat, least squares per metric
        abc = seer_malloc(sizeof(double) * 3 * (size_t)M);
        len = snprintf(note, sizeof note, "%s: log y = a + b log(prediction) + c %s:", data, feat);
        for (int k = 0; k < M; k++) {
            abc[3 * k] = 0, abc[3 * k + 1] = 1, abc[3 * k + 2] = 0;
            if (!total[k]) continue;
            fit_abc(&ds, pred, M, k, pg_find_name(ds.labels, ds.M, names[k]), aff_col, feat, data, names[k], abc + 3 * k);
            if (len < (int)sizeof note - 1)
                len += snprintf(note + len, sizeof note - (size_t)len, " %s %.6g, %.6g, %.6g (%lld graphs)",
                                names[k], abc[3 * k], abc[3 * k + 1], abc[3 * k + 2], (long long)total[k]);
        }
    }
    const char *prev = seer_info(m, "calibration"); // a second calibration composes with the first
    char info[8192];
    snprintf(info, sizeof info, "%s%s%s%s%s%s%s", prev ? prev : "", prev ? "; then " : "",
             to ? "device " : "", to ? from : "", to ? " -> " : "", to ? to : "", to ? ", " : "");
    snprintf(info + strlen(info), sizeof info - strlen(info), "%s", note);
    calib cb = {M, with_flops ? CAL_FLOPS : nk == 1 ? CAL_FACTOR : CAL_BATCH, factor, aff_col, abc, aff_lo,
                aff_hi, col, nk, knot, logf, names, to != NULL, info};
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
        const char *was = strcmp(names[k], seer_metric_name(m, k)) ? seer_metric_name(m, k) : NULL;
        if (!total[k]) {
            printf("%-28s not measured in the file: unchanged\n", names[k]);
            continue;
        }
        if (with_flops) {
            printf("%-28s log y = %.4f + %.4f log(prediction) + %.4f %s (least squares over "
                   "%lld graphs)%s%s\n", names[k], abc[3 * k], abc[3 * k + 1], abc[3 * k + 2], feat,
                   (long long)total[k], was ? ", was " : "", was ? was : "");
            continue;
        }
        for (int j = 0; j < nk; j++) {
            int64_t n = count[k * nk + j];
            if (power) printf("%-28s (prediction x %.4f)^%.4f ", names[k], exp(logf[k * nk + j]), bexp[k]);
            else printf("%-28s x %.4f ", names[k], exp(logf[k * nk + j]));
            const char *how = power ? "least squares in log" : "median of measured / predicted";
            if (nk == 1)
                printf("(%s over %lld graphs)", how, (long long)n);
            else if (own[k * nk + j] == 1)
                printf("at batch %.0f (%s over %lld graphs)", expm1(knot[j]), how, (long long)n);
            else if (own[k * nk + j] == 2)
                printf("at batch %.0f (under %d graphs at every batch: the %s over all %lld)", expm1(knot[j]),
                       MIN_PER_BATCH, power ? "least squares" : "median", (long long)total[k]);
            else if (n)
                printf("at batch %.0f (only %lld graph%s there: from the batches beside it)", expm1(knot[j]),
                       (long long)n, n == 1 ? "" : "s");
            else
                printf("at batch %.0f (not measured there: from the batches beside it)", expm1(knot[j]));
            printf("%s%s\n", was ? ", was " : "", was ? was : "");
        }
    }
    double *cal = seer_malloc(sizeof(double) * (size_t)(ds.G * M + 1)); // the calibrated predictions
    for (int64_t g = 0; g < ds.G; g++)
        for (int k = 0; k < M; k++) {
            double q = pred[g * M + k], x = ds.global_x[g * ds.Fg + (with_flops ? aff_col : col < 0 ? 0 : col)];
            cal[g * M + k] = with_flops ? exp(abc[3 * k] + abc[3 * k + 1] * log(q) + abc[3 * k + 2] * x)
                                        : exp(bexp[k] * (log(q) + (nk == 1 ? logf[k] : norm_interp(knot, logf + (int64_t)k * nk, nk, x))));
        }
    for (int k = 0; k < M; k++)
        if (total[k]) fit_report(&ds, cal, M, k, names[k]);
    free(cal), free(abc);
    printf("wrote %s\n", out);
    ctr_free(&c);
    free(factor), free(r), free(count), free(pred), free(names), free(knot), free(logf), free(mx), free(my), free(total), free(own), free(bexp);
    pg_free(&ds);
    seer_free(m);
    return 0;
}
