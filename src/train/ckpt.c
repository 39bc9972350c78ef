/* train: checkpoints. The container of common/container.h with magic "SEERCKPT":
 *   kv      config (the resolved INI), schema.* names, norm.* statistics (float64), model.*
 *           sizes, train.* progress (step, epoch, position in the epoch, generator state,
 *           schedule and early-stopping state)
 *   tensors every parameter by name (float32, (rows, cols) or (cols) for a bias), then
 *           optim.m and optim.v (the flat Adam moments, P floats). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/container.h"
#include "dist/dist.h"
#include "train.h"

static const char *const VAL_KEYS[5] = {"val.mape", "val.rmspe", "val.within10", "val.spearman",
                                        "val.kendall"};

/* The model's operator embedding, when it has one over the op table the coverage counted. */
static const param_info *op_embed(const trainer *t) {
    for (int i = 0; !t->closed && i < t->net.pt.n; i++) {
        const param_info *pi = &t->net.pt.p[i];
        if (!strcmp(pi->name, "op_embed.weight") && pi->rows == t->cov.n_ops && t->cov.op_counts)
            return pi;
    }
    return NULL;
}

void trainer_fill_unseen_ops(trainer *t) {
    const param_info *emb = op_embed(t);
    if (!emb) return;
    size_t bytes = sizeof(float) * (size_t)(emb->rows * emb->cols);
    float *host = seer_malloc(bytes);
    t->be->download(t->be->ctx, host, t->params + emb->offset, bytes);
    coverage_fill_unseen(&t->cov, host, emb->rows, emb->cols);
    t->be->upload(t->be->ctx, t->params + emb->offset, host, bytes);
    free(host);
}

int trainer_save(const trainer *t, const char *path, seer_err *err) {
    if (t->rank != 0) return 0; // rank 0 writes the checkpoints of a parallel run
    seer_container c;
    ctr_init(&c, CKPT_MAGIC, CKPT_VERSION);
    char *cfg = config_to_string(&t->cfg);
    ctr_add_str(&c, "config", cfg);
    free(cfg);
    ctr_add_str(&c, "data.source", t->ds.source ? t->ds.source : "");
    ctr_add_str(&c, "data.device", t->ds.device ? t->ds.device : "");
    if (t->has_last_val) {
        // validation figures of the latest evaluation, per label (provenance for seerexport)
        double v[5][MODEL_MAX_HEADS];
        for (int m = 0; m < t->M; m++) {
            const label_metrics *lm = &t->last_val[m];
            v[0][m] = lm->mape, v[1][m] = lm->rmspe, v[2][m] = lm->within10;
            v[3][m] = lm->spearman, v[4][m] = lm->kendall;
        }
        for (int k = 0; k < 5; k++) ctr_add_arr(&c, VAL_KEYS[k], KV_F64ARR, v[k], t->M);
    }
    ctr_add_strs(&c, "schema.node_features", t->ds.node_features, t->ds.Fn);
    ctr_add_strs(&c, "schema.edge_features", t->ds.edge_features, t->ds.Fe);
    ctr_add_strs(&c, "schema.global_features", t->ds.global_features, t->ds.Fg);
    ctr_add_strs(&c, "schema.op_types", t->ds.op_types, t->ds.n_ops);
    char **labels = seer_malloc(sizeof(char *) * (size_t)t->M);
    for (int m = 0; m < t->M; m++) labels[m] = t->ds.labels[t->label_cols[m]];
    ctr_add_strs(&c, "schema.labels", labels, t->M);
    free(labels);
    const norm_stats *n = &t->norm;
    ctr_add_arr(&c, "norm.node_mean", KV_F64ARR, n->node_mean, n->Fn);
    ctr_add_arr(&c, "norm.node_std", KV_F64ARR, n->node_std, n->Fn);
    ctr_add_arr(&c, "norm.edge_mean", KV_F64ARR, n->edge_mean, n->Fe);
    ctr_add_arr(&c, "norm.edge_std", KV_F64ARR, n->edge_std, n->Fe);
    ctr_add_arr(&c, "norm.global_mean", KV_F64ARR, n->global_mean, n->Fg);
    ctr_add_arr(&c, "norm.global_std", KV_F64ARR, n->global_std, n->Fg);
    ctr_add_arr(&c, "norm.label_mu", KV_F64ARR, n->label_mu, n->M);
    ctr_add_arr(&c, "norm.label_sigma", KV_F64ARR, n->label_sigma, n->M);
    double *tv = seer_malloc(sizeof(double) * (size_t)NORM_TARGET_MAX(n->M));
    ctr_add_arr(&c, "norm.target", KV_F64ARR, tv, norm_target_pack(n, tv));
    free(tv);
    coverage_store(&t->cov, &c);
    if (t->families) ctr_add_str(&c, "coverage.families", t->families);
    const model *m = &t->net;
    if (t->closed) {
        // the ridge solution: raw-feature statistics and weights per label (float64)
        ctr_add_str(&c, "model.name", t->cfg.model_name);
        ridge_store(&t->ridge, &c);
        ctr_add_i64(&c, "train.step", 0);
        ctr_add_i64(&c, "train.epoch", t->epoch);
        int rc = ctr_write(&c, path, err);
        ctr_free(&c);
        return rc;
    }
    ctr_add_str(&c, "model.name", m->ops->name);
    model_sizes ms = model_get_sizes(m);
    int64_t sizes[MODEL_STORED_MAX];
    ctr_add_arr(&c, "model.sizes", KV_I64ARR, sizes, model_sizes_to_stored(&ms, sizes));
    ctr_add_i64(&c, "train.step", t->step);
    ctr_add_i64(&c, "train.epoch", t->epoch);
    ctr_add_i64(&c, "train.batch_in_epoch", t->batch_in_epoch);
    ctr_add_i64(&c, "train.since_best", t->since_best);
    ctr_add_arr(&c, "train.rng_epoch", KV_U64ARR, t->rng_epoch.s, 4);
    ctr_add_arr(&c, "train.rng_pcgrad", KV_U64ARR, t->rng_pcgrad.s, 4);
    ctr_add_f64(&c, "train.best_val", t->best_val);
    ctr_add_f64(&c, "train.epoch_loss_sum", t->epoch_loss_sum);
    ctr_add_i64(&c, "train.epoch_batches", t->epoch_batches);
    ctr_add_i64(&c, "train.epoch_graphs", t->epoch_graphs);
    ctr_add_f64(&c, "sched.lr", t->sched.lr);
    ctr_add_f64(&c, "sched.best", t->sched.best);
    ctr_add_i64(&c, "sched.bad_epochs", t->sched.bad_epochs);

    size_t pb = sizeof(float) * (size_t)t->P;
    float *host = seer_malloc(pb * 3);
    t->be->download(t->be->ctx, host, t->params, pb);
    t->be->download(t->be->ctx, host + t->P, t->adam_m, pb);
    t->be->download(t->be->ctx, host + 2 * t->P, t->adam_v, pb);
    const param_info *emb = op_embed(t); // unseen operators read as average ones
    if (emb) coverage_fill_unseen(&t->cov, host + emb->offset, emb->rows, emb->cols);
    for (int i = 0; i < m->pt.n; i++) {
        const param_info *pi = &m->pt.p[i];
        int64_t dims[2] = {pi->rows, pi->cols};
        int is_bias = strstr(pi->name, ".bias") != NULL;
        ctr_add_tensor(&c, pi->name, DT_F32, is_bias ? 1 : 2, is_bias ? dims + 1 : dims,
                       host + pi->offset);
    }
    int64_t P = t->P;
    ctr_add_tensor(&c, "optim.m", DT_F32, 1, &P, host + t->P);
    ctr_add_tensor(&c, "optim.v", DT_F32, 1, &P, host + 2 * t->P);
    int rc = ctr_write(&c, path, err);
    free(host);
    ctr_free(&c);
    return rc;
}

/* The ridge baseline's solution, copied into the trainer's model. */
static int read_ridge(trainer *t, const seer_container *c, const char *path, seer_err *err) {
    ridge_model r;
    if (ridge_load(&r, &t->ridge.s, t->M, c, 0, path, err)) return -1;
    int F = r.s.F, M = t->M;
    memcpy(t->ridge.mean, r.mean, sizeof(double) * (size_t)F);
    memcpy(t->ridge.std, r.std, sizeof(double) * (size_t)F);
    memcpy(t->ridge.w, r.w, sizeof(double) * (size_t)(M * F));
    memcpy(t->ridge.b, r.b, sizeof(double) * (size_t)M);
    if (r.lambda) memcpy(t->ridge.lambda, r.lambda, sizeof(double) * (size_t)M);
    return 0;
}

/* Copies every parameter tensor into params after checking it matches the model's table. */
static int read_params(trainer *t, const seer_container *c, const char *path, seer_err *err) {
    const model *m = &t->net;
    const ctr_kv *name = ctr_get(c, "model.name", KV_STR, path, err);
    if (!name) return -1;
    const char *want_name = t->cfg.model_name;
    if (strcmp(name->data, want_name) != 0)
        return seer_fail(err, "%s: a %s model, the config asks for %s", path,
                         (const char *)name->data, want_name);
    if (t->closed) return read_ridge(t, c, path, err);
    const ctr_kv *sz = ctr_get(c, "model.sizes", KV_I64ARR, path, err);
    if (!sz) return -1;
    const int64_t *s = sz->data;
    model_sizes ms = model_get_sizes(m), got;
    int64_t want[MODEL_STORED_MAX];
    int nw = model_sizes_to_stored(&ms, want);
    if (model_sizes_from_stored(name->data, s, sz->n, path, &got, err)) return -1;
    if (got.readout != ms.readout)
        return seer_fail(err, "%s: a model with the %s readout, the config asks for %s ([model] "
                              "readout)", path, got.readout ? "additive" : "pooled",
                         ms.readout ? "additive" : "pooled");
    int64_t have[MODEL_STORED_MAX];
    model_sizes_to_stored(&got, have);
    if (memcmp(have, want, sizeof(int64_t) * (size_t)nw) != 0)
        return seer_fail(err, "%s: model sizes (H %lld, L %lld, features %lld/%lld/%lld, labels "
                              "%lld) differ from the config's (H %d, L %d, features %d/%d/%d, "
                              "labels %d)", path, (long long)s[0], (long long)s[1],
                         (long long)s[2], (long long)s[3], (long long)s[4], (long long)s[5], m->H,
                         m->L, m->Fn, m->Fe, m->Fg, m->M);
    float *host = seer_calloc((size_t)t->P, sizeof(float));
    for (int i = 0; i < m->pt.n; i++) {
        const param_info *pi = &m->pt.p[i];
        const ctr_tensor *ct = ctr_tensor_find(c, pi->name);
        if (!ct || ct->dtype != DT_F32 || ct->nbytes != sizeof(float) * (uint64_t)(pi->rows * pi->cols)) {
            free(host);
            return seer_fail(err, "%s: tensor %s is missing or has the wrong shape", path, pi->name);
        }
        memcpy(host + pi->offset, ct->data, ct->nbytes);
    }
    t->be->upload(t->be->ctx, t->params, host, sizeof(float) * (size_t)t->P);
    free(host);
    return 0;
}

static int get_i64(const seer_container *c, const char *key, const char *path, int64_t *v,
                   seer_err *err) {
    const ctr_kv *kv = ctr_get(c, key, KV_I64, path, err);
    if (!kv) return -1;
    memcpy(v, kv->data, 8);
    return 0;
}

static int get_f64(const seer_container *c, const char *key, const char *path, double *v,
                   seer_err *err) {
    const ctr_kv *kv = ctr_get(c, key, KV_F64, path, err);
    if (!kv) return -1;
    memcpy(v, kv->data, 8);
    return 0;
}

/* The run's statistics are fitted again from the same data and split when it resumes; they must
 * equal the stored ones, or the checkpoint belongs to other data. Equal up to 1e-9 relative: a run
 * on another number of ranks merges the shards' statistics in another order. */
static int get_f64s(const seer_container *c, const char *key, const char *path, double *dst,
                    int64_t n, seer_err *err) {
    const ctr_kv *kv = ctr_get(c, key, KV_F64ARR, path, err);
    if (!kv) return -1;
    int same = kv->n == n;
    for (int64_t i = 0; same && i < n; i++) {
        double a = dst[i], b;
        memcpy(&b, (const char *)kv->data + 8 * i, 8);
        same = fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)) + 1e-300;
    }
    if (!same)
        return seer_fail(err, "%s: %s differs from the statistics of this run's training split: "
                              "the checkpoint was trained on other data or another split", path, key);
    return 0;
}

/* Rank 0 reads the file and broadcasts it, so the other ranks need not see the run folder. */
static int ckpt_read_shared(seer_container *c, const char *path, seer_err *err) {
    if (dist_ranks() == 1) return ctr_read(c, path, CKPT_MAGIC, CKPT_VERSION, err);
    size_t len = 0;
    char *buf = dist_rank() == 0 ? seer_read_file(path, &len, err) : NULL;
    int64_t n = dist_rank() == 0 ? (buf ? (int64_t)len : -1) : 0;
    dist_bcast(&n, sizeof n, 0);
    if (n < 0) { // every rank fails with rank 0's message
        dist_bcast(err->msg, sizeof err->msg, 0);
        return -1;
    }
    if (dist_rank() != 0) buf = seer_malloc((size_t)n + 1);
    dist_bcast(buf, (size_t)n, 0);
    int rc = ctr_read_mem(c, buf, (size_t)n, path, CKPT_MAGIC, CKPT_VERSION, err);
    free(buf);
    return rc;
}

int trainer_load_params(trainer *t, const char *path, int64_t *step, seer_err *err) {
    seer_container c;
    if (ckpt_read_shared(&c, path, err)) return -1;
    int rc = read_params(t, &c, path, err);
    if (!rc && step) rc = get_i64(&c, "train.step", path, step, err);
    ctr_free(&c);
    return rc;
}

/* The progress counters read back must be consistent with each other (a corrupt or hand-edited
 * checkpoint that passed its checksum, or one from another run, must not resume at epoch 10^13). */
static int plausible(const trainer *t, const char *path, seer_err *err) {
    struct {
        const char *key;
        int64_t v, max;
    } c[] = {{"train.step", t->step, INT64_MAX / 4},
             {"train.epoch", t->epoch, t->step},
             {"train.batch_in_epoch", t->batch_in_epoch, t->step},
             {"train.since_best", t->since_best, t->epoch},
             {"train.epoch_batches", t->epoch_batches, t->step},
             {"train.epoch_graphs", t->epoch_graphs, t->epoch_batches * t->global_batch},
             {"sched.bad_epochs", t->sched.bad_epochs, t->epoch}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        if (c[i].v < 0 || c[i].v > c[i].max)
            return seer_fail(err, "%s: %s = %lld is implausible (0 .. %lld given the other counters): "
                                  "the checkpoint is corrupt; resume from another (best.ckpt) or retrain",
                             path, c[i].key, (long long)c[i].v, (long long)c[i].max);
    if (!(t->sched.lr > 0) || !isfinite(t->sched.lr) || isnan(t->best_val) || isnan(t->epoch_loss_sum))
        return seer_fail(err, "%s: learning rate %g, best validation loss %g or loss sum %g is not a "
                              "valid number: the checkpoint is corrupt", path, t->sched.lr, t->best_val,
                         t->epoch_loss_sum);
    return 0;
}

/* The checkpoint's target and clamp (norm.target) must be the config's: the targets were made
 * from the config and the roofline costs are refitted from the same data. */
static int same_target(const seer_container *c, const norm_stats *n, const char *path,
                       seer_err *err) {
    const ctr_kv *kv = ctr_get(c, "norm.target", KV_F64ARR, path, err);
    if (!kv) return -1;
    norm_stats got = *n;
    if (norm_target_unpack(&got, kv->data, kv->n, path, err)) return -1;
    static const char *const CLAMPS[] = {"off", "range"};
    if (got.target != n->target || got.clamp != n->clamp)
        return seer_fail(err, "%s: the checkpoint was trained with [model] target = %s, clamp = %s; "
                              "the config says target = %s, clamp = %s (resume with the run's own "
                              "config)", path, norm_target_name(got.target), CLAMPS[got.clamp],
                         norm_target_name(n->target), CLAMPS[n->clamp]);
    for (int64_t i = 0; i < (int64_t)n->M * norm_roof_terms(n->target); i++)
        if (got.roof[i] != n->roof[i])
            return seer_fail(err, "%s: the roofline costs differ from the ones fitted on this "
                                  "data (the dataset changed since the checkpoint)", path);
    return 0;
}

int trainer_load(trainer *t, const char *path, seer_err *err) {
    if (t->closed)
        return seer_fail(err, "%s: the linear baseline is fitted in one go; there is nothing to "
                              "resume (run it again)", path);
    seer_container c;
    if (ckpt_read_shared(&c, path, err)) return -1;
    int rc = read_params(t, &c, path, err);
    norm_stats *n = &t->norm;
    const ctr_kv *rng = NULL;
    if (rc) goto done;
    rc = -1;
    if (get_f64s(&c, "norm.node_mean", path, n->node_mean, n->Fn, err) ||
        get_f64s(&c, "norm.node_std", path, n->node_std, n->Fn, err) ||
        get_f64s(&c, "norm.edge_mean", path, n->edge_mean, n->Fe, err) ||
        get_f64s(&c, "norm.edge_std", path, n->edge_std, n->Fe, err) ||
        get_f64s(&c, "norm.global_mean", path, n->global_mean, n->Fg, err) ||
        get_f64s(&c, "norm.global_std", path, n->global_std, n->Fg, err) ||
        get_f64s(&c, "norm.label_mu", path, n->label_mu, n->M, err) ||
        get_f64s(&c, "norm.label_sigma", path, n->label_sigma, n->M, err) ||
        same_target(&c, n, path, err) ||
        get_i64(&c, "train.step", path, &t->step, err) ||
        get_i64(&c, "train.epoch", path, &t->epoch, err) ||
        get_i64(&c, "train.batch_in_epoch", path, &t->batch_in_epoch, err) ||
        get_i64(&c, "train.since_best", path, &t->since_best, err) ||
        get_f64(&c, "train.best_val", path, &t->best_val, err) ||
        get_f64(&c, "train.epoch_loss_sum", path, &t->epoch_loss_sum, err) ||
        get_i64(&c, "train.epoch_batches", path, &t->epoch_batches, err) ||
        get_i64(&c, "train.epoch_graphs", path, &t->epoch_graphs, err) ||
        get_f64(&c, "sched.lr", path, &t->sched.lr, err) ||
        get_f64(&c, "sched.best", path, &t->sched.best, err) ||
        get_i64(&c, "sched.bad_epochs", path, &t->sched.bad_epochs, err) ||
        plausible(t, path, err))
        goto done;
    rng = ctr_get(&c, "train.rng_epoch", KV_U64ARR, path, err);
    if (!rng || rng->n != 4) {
        if (rng) seer_fail(err, "%s: train.rng_epoch must hold 4 words", path);
        goto done;
    }
    memcpy(t->rng_epoch.s, rng->data, sizeof t->rng_epoch.s);
    rng = ctr_get(&c, "train.rng_pcgrad", KV_U64ARR, path, err);
    if (!rng || rng->n != 4) {
        if (rng) seer_fail(err, "%s: train.rng_pcgrad must hold 4 words", path);
        goto done;
    }
    memcpy(t->rng_pcgrad.s, rng->data, sizeof t->rng_pcgrad.s);
    // latest validation figures (absent before the first evaluation)
    t->has_last_val = 0;
    for (int k = 0; k < 5; k++) {
        const ctr_kv *kv = ctr_find(&c, VAL_KEYS[k]);
        if (!kv) break;
        if (kv->type != KV_F64ARR || kv->n != t->M) {
            seer_fail(err, "%s: %s must hold %d numbers", path, VAL_KEYS[k], t->M);
            goto done;
        }
        for (int m = 0; m < t->M; m++) {
            double x = ((const double *)kv->data)[m];
            label_metrics *lm = &t->last_val[m];
            double *f[5] = {&lm->mape, &lm->rmspe, &lm->within10, &lm->spearman, &lm->kendall};
            *f[k] = x;
        }
        t->has_last_val = k == 4;
    }
    const ctr_tensor *tm = ctr_tensor_find(&c, "optim.m"), *tv = ctr_tensor_find(&c, "optim.v");
    size_t pb = sizeof(float) * (size_t)t->P;
    if (!tm || !tv || tm->dtype != DT_F32 || tv->dtype != DT_F32 || tm->nbytes != pb || tv->nbytes != pb) {
        seer_fail(err, "%s: optimizer moments optim.m / optim.v missing or of the wrong size", path);
        goto done;
    }
    t->be->upload(t->be->ctx, t->adam_m, tm->data, pb);
    t->be->upload(t->be->ctx, t->adam_v, tv->data, pb);
    rc = 0;
done:
    ctr_free(&c);
    return rc;
}

int ckpt_open(const char *path, seer_container *c, seer_err *err) {
    return ctr_read(c, path, CKPT_MAGIC, CKPT_VERSION, err);
}

int ckpt_config(const seer_container *c, const char *path, seer_config *cfg, seer_err *err) {
    const ctr_kv *kv = ctr_get(c, "config", KV_STR, path, err), *nt = ctr_find(c, "norm.target");
    if (!kv) return -1;
    static const char bad[] = "\ntarget = (null)\n";
    const char *at = strstr(kv->data, bad), *name = NULL;
    if (at && nt && nt->type == KV_F64ARR && nt->n >= 1) name = norm_target_name((int)((const double *)nt->data)[0]);
    if (!name || !strcmp(name, "unknown")) return config_load_string(cfg, kv->data, path, err);
    size_t head = (size_t)(at - (const char *)kv->data), len = strlen(kv->data) + strlen(name) + 16;
    char *fixed = seer_malloc(len);
    snprintf(fixed, len, "%.*s\ntarget = %s\n%s", (int)head, (const char *)kv->data, name, at + strlen(bad));
    int rc = config_load_string(cfg, fixed, path, err);
    free(fixed);
    return rc;
}

int ckpt_read_config(const char *path, seer_config *cfg, seer_err *err) {
    seer_container c;
    if (ctr_read(&c, path, CKPT_MAGIC, CKPT_VERSION, err)) return -1;
    int rc = ckpt_config(&c, path, cfg, err);
    ctr_free(&c);
    return rc;
}
