/* export: checkpoint -> .seer and safetensors (see export.h). */
#define _POSIX_C_SOURCE 200809L
#include "export.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/container.h"
#include "config/config.h"
#include "data/coverage.h"
#include "infer/seer_format.h"
#include "model/model.h"
#include "model/ridge.h"
#include "train/train.h"

/* What both exports read from a checkpoint. */
typedef struct {
    seer_container c;
    model net;
    ridge_model ridge; // a closed-form model (MODEL_CLOSED_FORM), pointing into c
    int M;
    const ctr_kv *sizes, *labels;
    const char *name;
    int closed;
    char dataset[1024], device[256], saved_at[32];
} ckpt_view;

static void view_free(ckpt_view *v) {
    model_free(&v->net);
    ridge_free(&v->ridge);
    ctr_free(&v->c);
}

static void iso_time(time_t t, char *buf, size_t len) {
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int view_open(ckpt_view *v, const char *path, seer_err *err) {
    memset(v, 0, sizeof *v);
    if (ckpt_open(path, &v->c, err)) return -1;
    const ctr_kv *name = ctr_get(&v->c, "model.name", KV_STR, path, err);
    if (!name) goto bad;
    if (!(v->labels = ctr_get(&v->c, "schema.labels", KV_STRARR, path, err))) goto bad;
    v->name = name->data;
    const model_ops *ops = model_find(name->data);
    if (!ops) {
        seer_fail(err, "%s: model '%s' is not one this build knows (%s)", path, v->name, model_names());
        goto bad;
    }
    v->closed = (ops->flags & MODEL_CLOSED_FORM) != 0;
    if (v->closed) {
        v->M = (int)v->labels->n;
        if (ridge_load_stored(&v->ridge, v->M, &v->c, 0, path, err)) goto bad;
    } else {
        if (!(v->sizes = ctr_get(&v->c, "model.sizes", KV_I64ARR, path, err))) goto bad;
        model_sizes ms;
        if (model_sizes_from_stored(name->data, v->sizes->data, v->sizes->n, path, &ms, err)) goto bad;
        model_init(&v->net, &ms);
        v->M = ms.M;
    }
    for (int i = 0; i < v->net.pt.n; i++) {
        const param_info *pi = &v->net.pt.p[i];
        const ctr_tensor *t = ctr_tensor_find(&v->c, pi->name);
        if (!t || t->dtype != DT_F32 || t->nbytes != sizeof(float) * (uint64_t)(pi->rows * pi->cols)) {
            seer_fail(err, "%s: tensor %s is missing or has the wrong shape", path, pi->name);
            goto bad;
        }
    }
    // provenance: the dataset (path from the stored config, source attribute), device, date
    const ctr_kv *cfgkv = ctr_find(&v->c, "config"), *src = ctr_find(&v->c, "data.source"),
                 *dev = ctr_find(&v->c, "data.device");
    seer_config cfg;
    config_defaults(&cfg);
    const char *data_path = "";
    if (cfgkv && cfgkv->type == KV_STR && config_load_string(&cfg, cfgkv->data, path, NULL) == 0)
        data_path = cfg.data_path;
    const char *source = src && src->type == KV_STR ? src->data : "";
    if (*source) snprintf(v->dataset, sizeof v->dataset, "%s (%s)", data_path, source);
    else snprintf(v->dataset, sizeof v->dataset, "%s", data_path);
    config_free(&cfg);
    snprintf(v->device, sizeof v->device, "%s", dev && dev->type == KV_STR ? (char *)dev->data : "");
    struct stat st;
    if (stat(path, &st) == 0) iso_time(st.st_mtime, v->saved_at, sizeof v->saved_at);
    return 0;
bad:
    view_free(v);
    return -1;
}

/* Per-metric figures of a val.* key as "a,b,c" (empty when the checkpoint has none). */
static void figures(const ckpt_view *v, const char *key, char *buf, size_t len) {
    buf[0] = 0;
    const ctr_kv *kv = ctr_find(&v->c, key);
    if (!kv || kv->type != KV_F64ARR) return;
    for (int64_t i = 0; i < kv->n; i++) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, "%s%.4g", i ? "," : "", ((const double *)kv->data)[i]);
    }
}

static uint64_t file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int64_t count_params(const model *net) {
    int64_t n = 0;
    for (int i = 0; i < net->pt.n; i++) n += net->pt.p[i].rows * net->pt.p[i].cols;
    return n;
}

static const char *const NORM_KEYS[] = {"norm.node_mean", "norm.node_std", "norm.edge_mean",
                                        "norm.edge_std", "norm.global_mean", "norm.global_std",
                                        "norm.label_mu", "norm.label_sigma"};
static const char *const SCHEMA_KEYS[] = {"schema.node_features", "schema.edge_features",
                                          "schema.global_features", "schema.op_types"};

/* The coverage of a checkpoint's training split fitted again from its data (a checkpoint written
 * before coverage.op_counts or coverage.op_pairs existed: export.h) into fit: -1, with why, when
 * the data cannot be read or the reproduced ranges differ from those recorded. */
static int refit_coverage(const ckpt_view *v, const char *ckpt_path, int64_t n_ops, seer_container *fit,
                          char *why, size_t len) {
    const ctr_kv *cfgkv = ctr_find(&v->c, "config");
    if (!cfgkv || cfgkv->type != KV_STR) {
        snprintf(why, len, "the checkpoint stores no config");
        return -1;
    }
    seer_config cfg;
    seer_err e = {{0}};
    config_defaults(&cfg);
    if (ckpt_config(&v->c, ckpt_path, &cfg, &e)) {
        snprintf(why, len, "its stored config does not load: %.600s", e.msg);
        config_free(&cfg);
        return -1;
    }
    cfg.train_threads = 1, cfg.backend_device = CFG_DEVICE_CPU; // only the data is needed
    trainer *t = seer_calloc(1, sizeof *t);
    int rc = -1;
    if (trainer_init(t, &cfg, &e)) {
        snprintf(why, len, "its data could not be read again: %.600s", e.msg);
        goto done;
    }
    if (t->cov.n_ops != n_ops) {
        snprintf(why, len, "%s has %d operator types, the checkpoint %lld", cfg.data_path,
                 t->cov.n_ops, (long long)n_ops);
        goto done;
    }
    coverage_store(&t->cov, fit);
    for (int k = 0; k < v->c.n_kv; k++) { // every recorded range must come out bit for bit
        const ctr_kv *a = &v->c.kv[k], *b;
        if (strncmp(a->key, "coverage.", 9) || a->type != KV_F64ARR) continue;
        b = ctr_find(fit, a->key);
        if (!b || b->n != a->n || memcmp(a->data, b->data, sizeof(double) * (size_t)a->n)) {
            snprintf(why, len, "%s read again gives another %s than the checkpoint recorded (the "
                               "file changed since training)", cfg.data_path, a->key);
            goto done;
        }
    }
    rc = 0;
done:
    trainer_free(t);
    free(t);
    config_free(&cfg);
    return rc;
}

int export_seer(const char *ckpt_path, const char *out_path, int dtype, export_info *info,
                seer_err *err) {
    ckpt_view v;
    if (view_open(&v, ckpt_path, err)) return -1;
    seer_container o;
    ctr_init(&o, SEER_MODEL_MAGIC, SEER_MODEL_VERSION_PLAIN);
    ctr_add_str(&o, "model.name", v.name);
    if (v.closed) ridge_store(&v.ridge, &o);
    else ctr_add_arr(&o, "model.sizes", KV_I64ARR, v.sizes->data, v.sizes->n);
    // a closed-form model's few numbers stay float64 whatever --dtype says
    ctr_add_str(&o, "export.dtype", v.closed ? "fp64" : export_dtype_name(dtype));
    int rc = -1;
    seer_container fit;     // the coverage fitted again for an older checkpoint
    ctr_init(&fit, SEER_MODEL_MAGIC, SEER_MODEL_VERSION_PLAIN);
    float *filled = NULL;   // op_embed.weight with the unseen rows filled
    if (info) info->note[0] = 0;
    for (int k = 0; k < 4; k++) {
        const ctr_kv *kv = ctr_get(&v.c, SCHEMA_KEYS[k], KV_STRARR, ckpt_path, err);
        if (!kv) goto out;
        ctr_add_strs(&o, SCHEMA_KEYS[k], kv->data, kv->n);
    }
    ctr_add_strs(&o, "metrics.names", v.labels->data, v.labels->n);
    const char **units = seer_malloc(sizeof(char *) * (size_t)(v.labels->n ? v.labels->n : 1));
    for (int64_t i = 0; i < v.labels->n; i++) units[i] = metric_unit(((char **)v.labels->data)[i]);
    ctr_add_strs(&o, "metrics.units", (char *const *)units, v.labels->n);
    free(units);
    for (int k = 0; k < 8; k++) {
        const ctr_kv *kv = ctr_get(&v.c, NORM_KEYS[k], KV_F64ARR, ckpt_path, err);
        if (!kv) goto out;
        // a .seer that libseer would refuse is never written: statistics finite, deviations > 0
        for (int64_t i = 0; i < kv->n; i++) {
            double x = ((const double *)kv->data)[i];
            if (!isfinite(x) || (k % 2 == 1 && x <= 0)) {
                seer_fail(err, "%s: %s[%lld] = %g: the normalisation statistics are not finite and "
                               "positive (a corrupt or diverged run): not exported", ckpt_path,
                          NORM_KEYS[k], (long long)i, x);
                goto out;
            }
        }
        ctr_add_arr(&o, NORM_KEYS[k], KV_F64ARR, kv->data, kv->n);
    }
    // the target's form (data/prep.h), when the checkpoint has it (older ones trained on log y)
    const ctr_kv *tk = ctr_find(&v.c, "norm.target");
    if (tk) {
        const ctr_kv *gf = ctr_find(&v.c, "schema.global_features");
        norm_stats ns = {.M = (int)v.labels->n, .Fg = gf ? (int)gf->n : 0};
        if (tk->type != KV_F64ARR) {
            seer_fail(err, "%s: norm.target is not a float64 array: the checkpoint is corrupt",
                      ckpt_path);
            goto out;
        }
        if (norm_target_unpack(&ns, tk->data, tk->n, ckpt_path, err)) goto out;
        ctr_add_arr(&o, "norm.target", KV_F64ARR, tk->data, tk->n);
    }
    // the training data's ranges (data/coverage.h), when the checkpoint has them
    for (int k = 0; k < v.c.n_kv; k++)
        if (!strncmp(v.c.kv[k].key, "coverage.", 9) && v.c.kv[k].type == KV_F64ARR)
            ctr_add_arr(&o, v.c.kv[k].key, KV_F64ARR, v.c.kv[k].data, v.c.kv[k].n);
    const ctr_kv *ops_kv = ctr_find(&v.c, "schema.op_types"), *opc = ctr_find(&v.c, "coverage.op_counts");
    const int missing_ops = !opc, missing_pairs = !ctr_find(&v.c, "coverage.op_pairs");
    if ((missing_ops || missing_pairs) && ctr_find(&v.c, "coverage.counts")) {
        char why[800];
        const char *what = missing_ops ? "operator coverage" : "operator-pair coverage";
        if (!refit_coverage(&v, ckpt_path, ops_kv->n, &fit, why, sizeof why)) {
            static const char *const keys[] = {"coverage.op_counts", "coverage.op_pairs"};
            const int missing[] = {missing_ops, missing_pairs};
            for (int k = 0; k < 2; k++) {
                const ctr_kv *kv = ctr_find(&fit, keys[k]);
                if (missing[k] && kv) ctr_add_arr(&o, keys[k], KV_F64ARR, kv->data, kv->n);
            }
            opc = ctr_find(&fit, "coverage.op_counts");
            if (info) snprintf(info->note, sizeof info->note, "the checkpoint predates %s: recounted "
                               "from its data (every recorded range reproduced)", what);
        } else if (info)
            snprintf(info->note, sizeof info->note, "the checkpoint predates %s and %.800s: this export "
                     "will not flag %s its training data never had", what, why,
                     missing_ops ? "operators" : "operator pairs");
    }
    coverage opcov = {.n_ops = (int)ops_kv->n};
    if (opc && opc->type == KV_F64ARR && opc->n == ops_kv->n) opcov.op_counts = opc->data;
    char buf[2048], now[32];
    ctr_add_str(&o, "info.dataset", v.dataset);
    ctr_add_str(&o, "info.device", v.device);
    const ctr_kv *fam = ctr_find(&v.c, "coverage.families"); // what the training split held
    if (fam && fam->type == KV_STR) ctr_add_str(&o, "info.families", fam->data);
    ctr_add_str(&o, "info.checkpoint", ckpt_path);
    ctr_add_str(&o, "info.trained_at", v.saved_at);
    iso_time(time(NULL), now, sizeof now);
    ctr_add_str(&o, "info.exported_at", now);
    const ctr_kv *step = ctr_find(&v.c, "train.step"), *epoch = ctr_find(&v.c, "train.epoch");
    snprintf(buf, sizeof buf, "%lld", step && step->type == KV_I64 ? (long long)*(int64_t *)step->data : -1LL);
    ctr_add_str(&o, "info.trained_step", buf);
    snprintf(buf, sizeof buf, "%lld", epoch && epoch->type == KV_I64 ? (long long)*(int64_t *)epoch->data : -1LL);
    ctr_add_str(&o, "info.trained_epoch", buf);
    static const char *const vk[][2] = {{"val.mape", "info.val_mape"}, {"val.rmspe", "info.val_rmspe"},
                                        {"val.within10", "info.val_within10"},
                                        {"val.spearman", "info.val_spearman"},
                                        {"val.kendall", "info.val_kendall"}};
    for (int k = 0; k < 5; k++) {
        figures(&v, vk[k][0], buf, sizeof buf);
        ctr_add_str(&o, vk[k][1], buf);
    }
    // weights; the converted buffers stay alive until ctr_write
    const param_table *pt = &v.net.pt;
    size_t elem = dtype == EXPORT_FP16 ? 2 : dtype == EXPORT_INT8 ? 1 : 4;
    uint8_t *conv = seer_malloc((size_t)pt->total * elem + 64);
    float *scales = seer_malloc(sizeof(float) * (size_t)pt->total + 64);
    for (int i = 0; i < pt->n; i++) {
        const param_info *pi = &pt->p[i];
        const float *w = ctr_tensor_find(&v.c, pi->name)->data;
        int64_t n = pi->rows * pi->cols, dims[2] = {pi->rows, pi->cols};
        if (!strcmp(pi->name, "op_embed.weight") && pi->rows == opcov.n_ops && opcov.op_counts) {
            filled = seer_malloc(sizeof(float) * (size_t)n); // unseen operators read as average
            memcpy(filled, w, sizeof(float) * (size_t)n);
            coverage_fill_unseen(&opcov, filled, pi->rows, pi->cols);
            w = filled;
        }
        int is_bias = strstr(pi->name, ".bias") != NULL;
        int ndim = is_bias ? 1 : 2;
        const int64_t *d = is_bias ? dims + 1 : dims;
        uint8_t *dst = conv + (size_t)pi->offset * elem;
        if (dtype == EXPORT_FP32) ctr_add_tensor(&o, pi->name, DT_F32, ndim, d, w);
        else if (dtype == EXPORT_FP16) {
            for (int64_t k = 0; k < n; k++) {
                uint16_t h = f32_to_f16(w[k]);
                memcpy(dst + 2 * k, &h, 2);
            }
            ctr_add_tensor(&o, pi->name, DT_F16, ndim, d, dst);
        } else if (is_bias) ctr_add_tensor(&o, pi->name, DT_F32, ndim, d, w);
        else {
            float *sc = scales + pi->offset;
            quantize_rows_i8(w, pi->rows, pi->cols, (int8_t *)dst, sc);
            ctr_add_tensor(&o, pi->name, DT_I8, 2, dims, dst);
            char sn[96];
            snprintf(sn, sizeof sn, "%s.scale", pi->name);
            ctr_add_tensor(&o, sn, DT_F32, 1, dims, sc);
        }
    }
    rc = ctr_write(&o, out_path, err);
    free(conv);
    free(scales);
    free(filled);
    if (!rc && info) {
        info->params = v.closed ? (int64_t)v.M * (v.ridge.s.F + 1) : count_params(&v.net);
        info->bytes = file_size(out_path);
    }
out:
    ctr_free(&o);
    view_free(&v);
    ctr_free(&fit);
    return rc;
}

/* --count-pairs on one model's container c (not an ensemble): checks that ds can hold the training
 * split c recorded, then adds coverage.op_pairs counted on all of ds's graphs. */
static int count_pairs_one(seer_container *c, const pg_dataset *ds, const char *data_path,
                           const char *origin, char *report, size_t len, seer_err *err) {
    if (ctr_find(c, "coverage.op_pairs"))
        return seer_fail(err, "%s: it records its operator pairs already (coverage.op_pairs): nothing "
                              "to count", origin);
    const ctr_kv *cnt = ctr_find(c, "coverage.counts"), *ops = ctr_get(c, "schema.op_types", KV_STRARR, origin, err);
    if (!ops) return -1;
    if (!cnt || cnt->type != KV_F64ARR || cnt->n != COV_COUNTS)
        return seer_fail(err, "%s: it records no training range (coverage.counts; exported before libseer "
                              "0.3): re-export it from its checkpoint", origin);
    if (!ds->node_op || !ds->op_types)
        return seer_fail(err, "%s: no operator types (node/op): not a dataset a model with an op table "
                              "was trained on", data_path);
    // the graphs of the families the model trained on (info.families, where both record them)
    const ctr_kv *fk = ctr_find(c, "info.families");
    const char *fams = fk && fk->type == KV_STR && ds->family ? fk->data : NULL;
    uint8_t *use = seer_malloc((size_t)(ds->G ? ds->G : 1));
    int64_t used = 0;
    for (int64_t g = 0; g < ds->G; g++) {
        use[g] = !fams;
        for (const char *p = fams; p && *p && !use[g]; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
            size_t l = strcspn(p, ",");
            use[g] = strlen(ds->family[g]) == l && !strncmp(ds->family[g], p, l);
        }
        used += use[g];
    }
    // the training split is a subset of them: its counts, sizes and operators must fit inside theirs
    const double *rec = cnt->data;
    double nlo = INFINITY, nhi = -INFINITY, elo = INFINITY, ehi = -INFINITY;
    double *have = seer_calloc((size_t)ds->n_ops + 1, sizeof(double)), edges[COV_MAX_PAIRS] = {0};
    int32_t mids[2 * COV_MAX_PAIRS], dids[2 * COV_MAX_PAIRS];
    coverage_pair_ids(ops->data, (int)ops->n, mids);
    coverage_pair_ids(ds->op_types, ds->n_ops, dids);
    for (int64_t g = 0; g < ds->G; g++) {
        if (!use[g]) continue;
        double n = (double)(ds->node_ptr[g + 1] - ds->node_ptr[g]), e = (double)(ds->edge_ptr[g + 1] - ds->edge_ptr[g]);
        nlo = fmin(nlo, n), nhi = fmax(nhi, n), elo = fmin(elo, e), ehi = fmax(ehi, e);
        for (int64_t r = ds->node_ptr[g]; r < ds->node_ptr[g + 1]; r++)
            if (ds->node_op[r] >= 0 && ds->node_op[r] < ds->n_ops) have[ds->node_op[r]] += 1;
        coverage_count_pairs(dids, ds->node_op, ds->edge_index + 2 * ds->edge_ptr[g],
                             ds->edge_ptr[g + 1] - ds->edge_ptr[g], ds->node_ptr[g], edges);
    }
    free(use);
    char fam_text[64] = "";
    if (fams) {
        int n_fams = fams[0] != 0;
        for (const char *p = fams; *p; p++) n_fams += *p == ',';
        snprintf(fam_text, sizeof fam_text, " of the %d families it trained on", n_fams);
    }
    if ((double)used < rec[COV_GRAPHS] || rec[COV_NODES_LO] < nlo || rec[COV_NODES_HI] > nhi ||
        rec[COV_EDGES_LO] < elo || rec[COV_EDGES_HI] > ehi) {
        free(have);
        return seer_fail(err, "%s: %lld graphs%s, of %g .. %g nodes and %g .. %g edges, cannot hold the "
                              "training split %s recorded (%g graphs, %g .. %g nodes, %g .. %g edges): give "
                              "the dataset it was trained on", data_path, (long long)used, fam_text, nlo, nhi,
                         elo, ehi, origin, rec[COV_GRAPHS], rec[COV_NODES_LO], rec[COV_NODES_HI],
                         rec[COV_EDGES_LO], rec[COV_EDGES_HI]);
    }
    const ctr_kv *opc = ctr_find(c, "coverage.op_counts");
    for (int64_t i = 0; opc && opc->type == KV_F64ARR && opc->n == ops->n && i < ops->n; i++) {
        const char *name = ((char **)ops->data)[i];
        int j = pg_find_name(ds->op_types, ds->n_ops, name);
        double h = j < 0 ? 0 : have[j], want = ((const double *)opc->data)[i];
        if (want > h) {
            free(have);
            return seer_fail(err, "%s: %g nodes of %s in the graphs%s, the training split %s recorded %g: "
                                  "give the dataset it was trained on", data_path, h, name, fam_text, origin, want);
        }
    }
    free(have);
    double rows[3 * COV_MAX_PAIRS];
    int k = coverage_pairs_rows(mids, edges, rows);
    if (!k) return seer_fail(err, "%s: its op table has none of the watched operator pairs", origin);
    ctr_add_arr(c, "coverage.op_pairs", KV_F64ARR, rows, 3 * (int64_t)k);
    size_t o = strlen(report);
    o += (size_t)snprintf(report + o, o < len ? len - o : 0, "%s:", origin);
    for (int p = 0; p < k && o < len; p++)
        o += (size_t)snprintf(report + o, len - o, "%s %s>%s %.0f edges", p ? "," : "",
                              ((char **)ops->data)[(int)rows[3 * p]], ((char **)ops->data)[(int)rows[3 * p + 1]],
                              rows[3 * p + 2]);
    if (o < len) snprintf(report + o, len - o, " in %lld graphs%s (training split %.0f)\n", (long long)used, fam_text,
                          rec[COV_GRAPHS]);
    return 0;
}

int export_count_pairs(const char *model_path, const char *data_path, const char *out_path,
                       char *report, size_t len, seer_err *err) {
    seer_container c;
    pg_dataset ds;
    memset(&ds, 0, sizeof ds);
    report[0] = 0;
    if (ctr_read(&c, model_path, SEER_MODEL_MAGIC, SEER_MODEL_VERSION, err)) return -1;
    int rc = -1;
    void **imgs = NULL;
    const ctr_kv *nm = ctr_find(&c, "ensemble.members");
    pg_index ix = {0};
    int bad = pg_read_index_paths(data_path, &ix, err) ||
              pg_read_range_paths(data_path, &ix, 0, ix.G, &ds, NULL, err);
    pg_index_free(&ix);
    if (bad) goto out;
    if (!nm) rc = count_pairs_one(&c, &ds, data_path, model_path, report, len, err);
    else { // an ensemble: each member's image gains the array, its byte tensor then points to it
        rc = 0;
        imgs = seer_calloc((size_t)c.n_t, sizeof *imgs);
        for (int i = 0; i < c.n_t && !rc; i++) {
            ctr_tensor *t = &c.t[i];
            if (strncmp(t->name, "ensemble.member.", 16)) continue;
            seer_container mc;
            char origin[1200];
            snprintf(origin, sizeof origin, "%s (%s)", model_path, t->name);
            if (ctr_read_mem(&mc, t->data, (size_t)t->nbytes, origin, SEER_MODEL_MAGIC, SEER_MODEL_VERSION, err)) {
                rc = -1;
                break;
            }
            rc = count_pairs_one(&mc, &ds, data_path, origin, report, len, err);
            if (!rc) {
                size_t n;
                imgs[i] = ctr_write_mem(&mc, &n);
                t->data = imgs[i], t->nbytes = n, t->dims[0] = (int64_t)n;
            }
            ctr_free(&mc);
        }
    }
    if (!rc) rc = ctr_write(&c, out_path, err);
out:
    for (int i = 0; imgs && i < c.n_t; i++) free(imgs[i]);
    free(imgs);
    pg_free(&ds);
    ctr_free(&c);
    return rc;
}

/* JSON writing helpers. */
static void json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void json_strs(FILE *f, const ctr_kv *kv) {
    fputc('[', f);
    for (int64_t i = 0; i < kv->n; i++) {
        if (i) fputc(',', f);
        json_str(f, ((char **)kv->data)[i]);
    }
    fputc(']', f);
}

static void json_f64s(FILE *f, const ctr_kv *kv) {
    fputc('[', f);
    for (int64_t i = 0; i < kv->n; i++)
        fprintf(f, "%s%.17g", i ? "," : "", ((const double *)kv->data)[i]);
    fputc(']', f);
}

/* Writes through a temporary file renamed into place. */
static FILE *open_tmp(const char *path, char *tmp, size_t len, seer_err *err) {
    snprintf(tmp, len, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) seer_fail(err, "%s: cannot create: %s", tmp, strerror(errno));
    return f;
}

static int close_tmp(FILE *f, const char *tmp, const char *path, seer_err *err) {
    int bad = ferror(f) | (fflush(f) != 0);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return seer_fail(err, "%s: write failed: %s", path, strerror(errno));
    }
    return 0;
}

int export_safetensors(const char *ckpt_path, const char *out_path, export_info *info,
                       seer_err *err) {
    ckpt_view v;
    if (view_open(&v, ckpt_path, err)) return -1;
    if (v.closed) {
        view_free(&v);
        return seer_fail(err, "%s: the linear baseline has no network weights to write as "
                              "safetensors (export it as .seer)", ckpt_path);
    }
    const param_table *pt = &v.net.pt;
    // header JSON, in memory first (its length leads the file)
    char *hdr = NULL;
    size_t hlen = 0;
    FILE *h = open_memstream(&hdr, &hlen);
    uint64_t off = 0;
    fputc('{', h);
    for (int i = 0; i < pt->n; i++) {
        const param_info *pi = &pt->p[i];
        int is_bias = strstr(pi->name, ".bias") != NULL;
        uint64_t nb = sizeof(float) * (uint64_t)(pi->rows * pi->cols);
        json_str(h, pi->name);
        if (is_bias) fprintf(h, ":{\"dtype\":\"F32\",\"shape\":[%lld],", (long long)pi->cols);
        else fprintf(h, ":{\"dtype\":\"F32\",\"shape\":[%lld,%lld],", (long long)pi->rows, (long long)pi->cols);
        fprintf(h, "\"data_offsets\":[%llu,%llu]},", (unsigned long long)off, (unsigned long long)(off + nb));
        off += nb;
    }
    fprintf(h, "\"__metadata__\":{\"format\":\"pt\",\"producer\":\"seerexport\",\"sidecar\":\"json\"}}");
    fclose(h);
    // pad the header with spaces to a multiple of 8 (the data then starts 8-byte aligned)
    size_t padded = (hlen + 7) & ~(size_t)7;
    char tmp[1100];
    FILE *f = open_tmp(out_path, tmp, sizeof tmp, err);
    int rc = -1;
    if (!f) goto out;
    uint64_t n8 = padded;
    fwrite(&n8, 8, 1, f);
    fwrite(hdr, 1, hlen, f);
    for (size_t i = hlen; i < padded; i++) fputc(' ', f);
    for (int i = 0; i < pt->n; i++) {
        const param_info *pi = &pt->p[i];
        fwrite(ctr_tensor_find(&v.c, pi->name)->data, sizeof(float), (size_t)(pi->rows * pi->cols), f);
    }
    if (close_tmp(f, tmp, out_path, err)) goto out;

    // sidecar: schema, normalisation, architecture, provenance
    char side[1024];
    size_t ol = strlen(out_path);
    if (ol > 12 && !strcmp(out_path + ol - 12, ".safetensors"))
        snprintf(side, sizeof side, "%.*s.json", (int)(ol - 12), out_path);
    else snprintf(side, sizeof side, "%s.json", out_path);
    if (!(f = open_tmp(side, tmp, sizeof tmp, err))) goto out;
    const int64_t *s = v.sizes->data;
    fprintf(f, "{\n  \"format\": \"seer-safetensors-sidecar\",\n  \"version\": 1,\n");
    fprintf(f, "  \"architecture\": {\"name\": \"%s\", \"hidden\": %lld, \"blocks\": %lld, "
               "\"node_features\": %lld, \"edge_features\": %lld, \"global_features\": %lld, "
               "\"outputs\": %lld, \"agg\": \"%s\", \"head_hidden\": %lld, \"op_types\": %lld, "
               "\"op_embed\": %lld, \"readout\": \"%s\",\n"
               "    \"reference\": \"%s\"},\n",
            v.name, (long long)s[0], (long long)s[1], (long long)s[2], (long long)s[3],
            (long long)s[4], (long long)s[5], s[6] == AGG_SYNMM ? "synmm" : "mean", (long long)s[7],
            (long long)v.net.n_ops, (long long)v.net.emb,
            v.net.readout == READOUT_ADDITIVE ? "additive" : "pooled", v.net.ops->equations);
    fprintf(f, "  \"schema\": {");
    static const char *const short_keys[] = {"node_features", "edge_features", "global_features", "op_types"};
    for (int k = 0; k < 4; k++) {
        const ctr_kv *kv = ctr_get(&v.c, SCHEMA_KEYS[k], KV_STRARR, ckpt_path, err);
        if (!kv) { fclose(f); remove(tmp); goto out; }
        fprintf(f, "%s\n    \"%s\": ", k ? "," : "", short_keys[k]);
        json_strs(f, kv);
    }
    fprintf(f, ",\n    \"metrics\": ");
    json_strs(f, v.labels);
    fprintf(f, ",\n    \"units\": [");
    for (int64_t i = 0; i < v.labels->n; i++) {
        if (i) fputc(',', f);
        json_str(f, metric_unit(((char **)v.labels->data)[i]));
    }
    fprintf(f, "]\n  },\n  \"normalisation\": {\n    \"rule\": \"features: x' = (x - mean) / std per "
               "column; targets: y = exp(t * label_sigma + label_mu) for a model output t\"");
    for (int k = 0; k < 8; k++) {
        const ctr_kv *kv = ctr_get(&v.c, NORM_KEYS[k], KV_F64ARR, ckpt_path, err);
        if (!kv) { fclose(f); remove(tmp); goto out; }
        fprintf(f, ",\n    \"%s\": ", NORM_KEYS[k] + 5);
        json_f64s(f, kv);
    }
    fprintf(f, "\n  },\n  \"provenance\": {\"dataset\": ");
    json_str(f, v.dataset);
    fprintf(f, ", \"device\": ");
    json_str(f, v.device);
    fprintf(f, ", \"checkpoint\": ");
    json_str(f, ckpt_path);
    fprintf(f, ", \"trained_at\": \"%s\"}\n}\n", v.saved_at);
    if (close_tmp(f, tmp, side, err)) goto out;
    if (info) {
        info->params = count_params(&v.net);
        info->bytes = file_size(out_path);
        snprintf(info->sidecar, sizeof info->sidecar, "%s", side);
    }
    rc = 0;
out:
    free(hdr);
    view_free(&v);
    return rc;
}
