/* train: the training run (see train.h). The loop is deterministic: the same config, seed and
 * thread count give the same numbers, and resuming from a checkpoint continues bit for bit
 * because the shuffle of the current epoch is regenerated from the saved generator state.
 * Where the batches come from (CPU or resident on a GPU) is the batch source's business
 * (batch_source.h), the gradient all-reduce grad_comm's (dist/grad_comm.h), the files a run
 * reports report.c's. */
#define _POSIX_C_SOURCE 200809L
#include "train.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend_open.h"
#include "backend/loss.h"
#include "dist/dist.h"
#include "train/report.h"

/* [data] labels: "all" or a list of the file's label names, each at most once. */
static int parse_labels(trainer *t, seer_err *err) {
    const char *spec = t->cfg.data_labels;
    char where[600];
    config_where(&t->cfg, CFG_KEY_data_labels, where, sizeof where);
    t->label_cols = seer_calloc((size_t)t->ds.M + 1, sizeof(int));
    if (strcmp(spec, "all") == 0) {
        for (int m = 0; m < t->ds.M; m++) t->label_cols[m] = m;
        t->M = t->ds.M;
        return 0;
    }
    char **names;
    int n = seer_split_list(spec, &names, MODEL_MAX_HEADS + 1), rc = 0;
    t->M = 0;
    for (int i = 0; i < n && !rc; i++) {
        int col = pg_find_name(t->ds.labels, t->ds.M, names[i]);
        if (col < 0) {
            char avail[512] = "";
            for (int m = 0; m < t->ds.M && strlen(avail) < 400; m++)
                strcat(avail, m ? "," : ""), strcat(avail, t->ds.labels[m]);
            rc = seer_fail(err, "%s: [data] labels: '%s' is not a label of %s (it has: %s)", where,
                           names[i], t->cfg.data_path, avail);
        }
        for (int m = 0; m < t->M && !rc; m++)
            if (t->label_cols[m] == col)
                rc = seer_fail(err, "%s: [data] labels: '%s' is listed twice (one head per label)",
                               where, names[i]);
        if (!rc && t->M == MODEL_MAX_HEADS)
            rc = seer_fail(err, "%s: [data] labels: more than %d labels", where, MODEL_MAX_HEADS);
        if (!rc) t->label_cols[t->M++] = col;
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    if (rc) return -1;
    if (t->M == 0) return seer_fail(err, "%s: [data] labels is empty", where);
    return 0;
}

/* The ridge baseline's features of every graph, standardised with training statistics. */
static int ridge_prepare(trainer *t, seer_err *err) {
    pg_dataset *ds = &t->ds;
    linear_schema ls;
    if (linear_schema_init(&ls, ds->node_features, ds->Fn, ds->global_features, ds->Fg, ds->n_ops,
                           t->cfg.data_path, err))
        return -1;
    ridge_alloc(&t->ridge, &ls, t->M);
    int F = ls.F;
    t->ridge_X = seer_malloc(sizeof(double) * (size_t)(ds->G * F));
    for (int64_t g = 0; g < ds->G; g++) {
        int64_t n0 = ds->node_ptr[g];
        linear_features(&ls, ds->node_x + n0 * ds->Fn, ds->Fn, ds->node_op + n0,
                        ds->node_ptr[g + 1] - n0, ds->global_x + g * ds->Fg, t->ridge_X + g * F);
    }
    ridge_standardise_fit(&t->ridge, t->ridge_X, ds->G, t->ids[SPLIT_TRAIN], t->n_ids[SPLIT_TRAIN],
                          t->cfg.model_clamp == CFG_CLAMP_RANGE);
    return 0;
}

/* [data] test_family: the listed families are the whole test split; the other graphs keep their
 * train/val split and their test share joins training. */
static int hold_out_families(trainer *t, const seer_config *cfg, seer_err *err) {
    char where[600];
    config_where(cfg, CFG_KEY_data_test_family, where, sizeof where);
    if (!t->ix.family)
        return seer_fail(err, "%s: [data] test_family = %s: %s has no /graph/family (build it with "
                              "a manifest family column, see datasets/FORMAT.md)", where,
                         cfg->data_test_family, cfg->data_path);
    char **fams = NULL;
    int nf = seer_split_list(cfg->data_test_family, &fams, 64);
    int64_t held = 0, *per = seer_calloc((size_t)(nf > 0 ? nf : 1), sizeof(int64_t));
    for (int64_t g = 0; g < t->ix.G; g++) {
        int hit = -1;
        for (int k = 0; k < nf && hit < 0; k++)
            if (!strcmp(t->ix.family[g], fams[k])) hit = k;
        if (hit >= 0) t->which[g] = SPLIT_TEST, held++, per[hit]++;
        else if (t->which[g] == SPLIT_TEST) t->which[g] = SPLIT_TRAIN;
    }
    int rc = 0;
    for (int k = 0; k < nf && !rc; k++)
        if (!per[k]) rc = seer_fail(err, "%s: [data] test_family: no graph of %s has family '%s'",
                                    where, cfg->data_path, fams[k]);
    if (!rc && held == t->ix.G)
        rc = seer_fail(err, "%s: [data] test_family = %s holds out every graph: nothing is left to "
                            "train on", where, cfg->data_test_family);
    for (int k = 0; k < nf; k++) free(fams[k]);
    free(fams), free(per);
    return rc;
}

/* t->families: the distinct families of the training graphs, in first-seen order (what the
 * checkpoint and the export record as the model's coverage). */
static void training_families(trainer *t) {
    if (!t->ix.family) return;
    size_t cap = 64, len = 0;
    char *list = seer_calloc(cap, 1);
    for (int64_t i = 0; i < t->n_ids[SPLIT_TRAIN]; i++) {
        const char *f = t->ix.family[t->ids[SPLIT_TRAIN][i]];
        size_t n = strlen(f);
        int seen = 0;
        for (const char *p = list; *p && !seen; p += strcspn(p, ","), p += *p == ',')
            seen = !strncmp(p, f, n) && (p[n] == ',' || p[n] == 0);
        if (seen) continue;
        while (len + n + 2 > cap) list = seer_realloc(list, cap *= 2);
        if (len) list[len++] = ',';
        memcpy(list + len, f, n + 1), len += n;
    }
    t->families = list;
}

/* The index and the split (the same on every rank), this rank's shard, the labels, the
 * normalisation and the standardised targets. */
static int load_data(trainer *t, const seer_config *cfg, seer_err *err) {
    char **paths = NULL; // [data] path: one file, or several with one schema read as one
    int np = seer_split_list(cfg->data_path, &paths, 64), bad = -1, why = 0;
    for (int k = 0; k < np; k++) {
        if (bad < 0 && access(paths[k], R_OK) != 0) bad = k, why = errno;
        if (k != bad) free(paths[k]);
    }
    if (bad >= 0) {
        char where[600];
        config_where(cfg, CFG_KEY_data_path, where, sizeof where);
        seer_fail(err, "%s: [data] path = %s: %s (build the default dataset with "
                       "scripts/datasets/nb201_build.py, or set --set data.path=FILE[,FILE...])",
                  where, paths[bad], strerror(why));
        free(paths[bad]), free(paths);
        return -1;
    }
    free(paths);
    double t0 = seer_now();
    if (pg_read_index_paths(cfg->data_path, &t->ix, err)) return -1;
    pg_index_limit(&t->ix, cfg->data_limit);
    int64_t G = t->ix.G, lo, hi;
    t->which = seer_malloc((size_t)(G ? G : 1));
    if (split_assign(G, t->ix.group, cfg->data_split == CFG_SPLIT_COUNTS, cfg->data_train_frac,
                     cfg->data_val_frac, cfg->data_train_count, cfg->data_val_count,
                     (uint64_t)cfg->data_split_seed, t->which, err))
        return -1;
    if (cfg->data_test_family[0] && hold_out_families(t, cfg, err)) return -1;
    for (int k = 0; k < 3; k++) {
        t->ids[k] = seer_malloc(sizeof(int64_t) * (size_t)(G ? G : 1));
        t->n_ids[k] = split_ids(t->which, G, k, t->ids[k]);
    }
    training_families(t);
    pg_shard(&t->ix, t->rank, t->ranks, &lo, &hi);
    if (pg_read_range_paths(cfg->data_path, &t->ix, lo, hi, &t->ds, &t->rd, err)) return -1;
    t->load_seconds = seer_now() - t0;
    t->load_rss_mb = report_peak_rss_mb();
    if (parse_labels(t, err)) return -1;
    norm_comm comm = {t->rank, t->ranks, dist_sum_f64};
    _Static_assert((int)CFG_TARGET_ROOFLINE_L == (int)TARGET_ROOFLINE_L &&
                       (int)CFG_TARGET_ROOFLINE_K == (int)TARGET_ROOFLINE_K &&
                       (int)CFG_TARGET_ROOFLINE_KS == (int)TARGET_ROOFLINE_KS &&
                       (int)CFG_TARGET_ROOFLINE_KA == (int)TARGET_ROOFLINE_KA &&
                       (int)CFG_TARGET_ROOFLINE_P == (int)TARGET_ROOFLINE_P &&
                       (int)CFG_TARGET_ROOFLINE_DW == (int)TARGET_ROOFLINE_DW,
                   "config.h's [model] target values are prep.h's");
    if (norm_fit(
&t->norm, &t->ds, t->which + t->ds.g0, t->label_cols, t->M, cfg->model_target,
                 cfg->data_path, &comm, err))
        return -1;
    t->norm.clamp = cfg->model_clamp == CFG_CLAMP_RANGE;
    coverage_fit(&t->cov, &t->ds, t->which + t->ds.g0, t->label_cols, t->M, &comm); // raw values
    // the targets and the roofline costs read the raw global features, the network the clamped ones
    t->targets = seer_malloc(sizeof(float) * (size_t)(t->ds.G * t->M + 1));
    t->log_cost = seer_malloc(sizeof(double) * (size_t)(t->ds.G * t->M + 1));
    norm_targets(&t->norm, &t->ds, t->label_cols, t->targets, t->log_cost);
    if (t->norm.clamp) {
        coverage_clamp(&t->cov, 0, t->ds.node_x, t->ds.N);
        coverage_clamp(&t->cov, 1, t->ds.edge_x, t->ds.E);
        coverage_clamp(&t->cov, 2, t->ds.global_x, t->ds.G);
    }
    if (t->closed && ridge_prepare(t, err)) return -1; // from the raw features
    norm_apply(&t->norm, &t->ds);
    return 0;
}

/* The parameters (initialised from the seed) and the optimizer's moments, in backend memory. */
static void build_model(trainer *t, const model_ops *ops, const seer_config *cfg) {
    int H = (int)cfg->model_hidden;
    static const int agg[] = {[CFG_AGG_MEAN] = AGG_MEAN, [CFG_AGG_SYNMM] = AGG_SYNMM};
    model_sizes ms = {
        .ops = ops, .H = H, .L = (int)cfg->model_blocks,
        .Fn = t->ds.Fn, .Fe = t->ds.Fe, .Fg = t->ds.Fg, .M = t->M, .agg = agg[cfg->model_agg],
        .head_hidden = cfg->model_head_hidden > 0 ? (int)cfg->model_head_hidden : H,
        .readout = cfg->model_readout == CFG_READOUT_ADDITIVE ? READOUT_ADDITIVE : READOUT_POOLED,
    };
    if (ops->flags & MODEL_OP_TYPES) ms.n_ops = t->ds.n_ops, ms.emb = (int)cfg->model_op_embed;
    model_init(&t->net, &ms);
    t->P = t->net.pt.total;
    size_t pb = sizeof(float) * (size_t)t->P;
    t->params = t->be->alloc(t->be->ctx, pb), t->grads = t->be->alloc(t->be->ctx, pb);
    t->adam_m = t->be->alloc(t->be->ctx, pb), t->adam_v = t->be->alloc(t->be->ctx, pb);
    float *host = seer_malloc(pb);
    seer_rng init;
    rng_seed(&init, (uint64_t)cfg->train_seed);
    params_init_uniform(&t->net.pt, host, &init);
    t->be->upload(t->be->ctx, t->params, host, pb);
    free(host);
    t->be->zero(t->be->ctx, t->grads, pb), t->be->zero(t->be->ctx, t->adam_m, pb), t->be->zero(t->be->ctx, t->adam_v, pb);
}

/* One allocation per run, sized for the largest batch any split can form from this rank's graphs
 * (with R ranks a step's batch is spread over them, but one rank may hold all of it). */
static int build_workspace(trainer *t, const model_ops *ops, const seer_config *cfg, seer_err *err) {
    int64_t bs = cfg->train_batch_size, ebs = cfg->train_eval_batch_size;
    t->global_batch = cfg->dist_batch == CFG_BATCH_PER_RANK ? bs * t->ranks : bs;
    int64_t gbs = t->global_batch;
    int64_t cap_g = gbs > ebs ? gbs : ebs, tn = 0, te = 0, all_n = 0, all_e = 0;
    int64_t *own = seer_malloc(sizeof(int64_t) * (size_t)(t->ds.G ? t->ds.G : 1));
    for (int k = 0; k < 3; k++) {
        int64_t n_own = 0, en, ee;
        for (int64_t i = 0; i < t->n_ids[k]; i++)
            if (t->ids[k][i] >= t->ds.g0 && t->ids[k][i] < t->ds.g0 + t->ds.G)
                own[n_own++] = t->ids[k][i] - t->ds.g0;
        if (k == SPLIT_TRAIN) batch_capacity(&t->ds, own, n_own, gbs, &tn, &te);
        batch_capacity(&t->ds, own, n_own, ebs, &en, &ee);
        all_n = en > all_n ? en : all_n, all_e = ee > all_e ? ee : all_e;
    }
    free(own);
    all_n = tn > all_n ? tn : all_n, all_e = te > all_e ? te : all_e;
    if (model_acts_init(&t->acts, &t->net, t->be, all_n, all_e, cap_g) ||
        model_acts_init(&t->dacts, &t->net, t->be, tn, te, gbs))
        return seer_fail(err, "out of memory for the activations of a batch of %lld graphs",
                         (long long)cap_g);
    if (batch_source_init(&t->src, t->be, &t->ds, t->targets, t->M, cap_g, all_n, all_e,
                          (ops->flags & MODEL_EXTRA_INDEX) != 0, err))
        return -1;
    t->host_pred = seer_malloc(sizeof(float) * (size_t)(cap_g * t->M));
    t->step_local = seer_malloc(sizeof(int64_t) * (size_t)cap_g);
    t->step_pos = seer_malloc(sizeof(int64_t) * (size_t)cap_g);
    t->pcgrad = cfg->train_multi_task == CFG_MULTI_PCGRAD && t->M > 1;
    if (t->pcgrad) {
        int64_t tr = t->net.trunk_params;
        t->task_grads = t->be->alloc(t->be->ctx, sizeof(float) * (size_t)(t->M * t->P));
        t->pc_gd = t->be->alloc(t->be->ctx, sizeof(double) * (size_t)(t->M * tr));
        t->pc_k = seer_malloc(sizeof(double) * (size_t)(t->M * t->M));
        t->pc_out = t->be->alloc(t->be->ctx, sizeof(double) * (size_t)tr);
    }
    static const int coll[] = {[CFG_COLL_AUTO] = COLLECTIVES_AUTO, [CFG_COLL_MPI] = COLLECTIVES_MPI,
                               [CFG_COLL_NCCL] = COLLECTIVES_NCCL};
    return grad_comm_init(&t->comm, t->be, t->ranks, coll[cfg->dist_collectives], t->gpu,
                          cfg->dist_timeout, t->P * (t->pcgrad ? t->M : 1), cfg->file, err);
}

int trainer_init(trainer *t, const seer_config *cfg, seer_err *err) {
    memset(t, 0, sizeof *t);
    t->cfg = *cfg; // shares the strings; cfg must outlive the trainer
    t->be = backend_cpu();
    backend_cpu_set_threads(cfg->train_threads > 0 ? (int)cfg->train_threads
                                                   : (int)sysconf(_SC_NPROCESSORS_ONLN));
    t->rank = dist_rank(), t->ranks = dist_ranks();
    char where[600];
    const model_ops *ops = model_find(cfg->model_name);
    if (!ops)
        return seer_fail(err, "%s: [model] name = '%s': must be one of %s",
                         config_where(cfg, CFG_KEY_model_name, where, sizeof where),
                         cfg->model_name, model_names());
    t->closed = (ops->flags & MODEL_CLOSED_FORM) != 0;
    t->cost_only = (ops->flags & MODEL_COST_ONLY) != 0;
    if (t->cost_only && cfg->model_target == CFG_TARGET_LOG)
        return seer_fail(err, "%s: [model] name = %s is the roofline cost alone, and target = log has "
                              "no cost: set [model] target = roofline, roofline_weights, roofline_light, "
                              "roofline_kept, roofline_kept_silu, roofline_kept_acts, roofline_peak or "
                              "roofline_dw",

                         config_where(cfg, CFG_KEY_model_target, where, sizeof where), ops->name);
    // a closed-form model is fitted on the host: nothing to run on a GPU
    backend_choice bc;
    static const int device[] = {[CFG_DEVICE_AUTO] = DEVICE_AUTO, [CFG_DEVICE_CPU] = DEVICE_CPU,
                                 [CFG_DEVICE_CUDA] = DEVICE_CUDA};
    static const int precision[] = {[CFG_PREC_FP32] = PRECISION_FP32,
                                    [CFG_PREC_TF32] = PRECISION_TF32,
                                    [CFG_PREC_BF16] = PRECISION_BF16};
    if (backend_open(t->closed ? DEVICE_CPU : device[cfg->backend_device],
                     precision[cfg->backend_precision],
                     dist_local_rank(), config_where(cfg, CFG_KEY_backend_device, where, sizeof where),
                     &bc, err))
        return -1;
    t->be = bc.be, t->gpu = bc.gpu;
    t->prof.on = cfg->output_profile != 0;
    snprintf(t->device_name, sizeof t->device_name, "%s", bc.name);
    if (t->ranks > 1 && t->closed)
        return seer_fail(err, "%s: model.name = %s is fitted in closed form by one process; "
                              "run it without mpirun/srun", cfg->file, ops->name);
    if (cfg->dist_inject_failure[0])
        sscanf(cfg->dist_inject_failure, "%d:%d:%15[a-z]", &t->inject_rank, &t->inject_step,
               t->inject_kind); // checked by config_validate
    if (load_data(t, cfg, err)) return -1;
    t->best_val = INFINITY;
    if (t->closed) return 0;
    if ((ops->flags & MODEL_OP_TYPES) && t->ds.n_ops < 1)
        return seer_fail(err, "%s: %s needs operator types (/schema/op_types is empty)",
                         cfg->data_path, ops->name);
    build_model(t, ops, cfg);
    if (build_workspace(t, ops, cfg, err)) return -1;
    rng_seed(&t->rng_pcgrad, (uint64_t)cfg->train_seed * 0x2545f4914f6cdd1dull + 7);
    rng_seed(&t->rng_epoch, (uint64_t)cfg->train_seed * 0x9e3779b97f4a7c15ull + 1);
    static const int sched[] = {[CFG_SCHED_PLATEAU] = SCHED_PLATEAU, [CFG_SCHED_COSINE] = SCHED_COSINE,
                                [CFG_SCHED_NONE] = SCHED_NONE};
    sched_init(&t->sched, sched[cfg->train_schedule], cfg->train_lr, cfg->train_min_lr,
               cfg->train_plateau_factor, cfg->train_plateau_patience, cfg->train_epochs);
    return 0;
}

void trainer_free(trainer *t) {
    if (t->be) {
        t->be->release(t->be->ctx, t->params), t->be->release(t->be->ctx, t->grads);
        t->be->release(t->be->ctx, t->adam_m), t->be->release(t->be->ctx, t->adam_v);
        if (t->acts.fbase) model_acts_free(&t->acts, t->be);
        if (t->dacts.fbase) model_acts_free(&t->dacts, t->be);
        if (t->task_grads) t->be->release(t->be->ctx, t->task_grads);
        t->be->release(t->be->ctx, t->pc_gd), t->be->release(t->be->ctx, t->pc_out);
    }
    free(t->pc_k);
    grad_comm_free(&t->comm);
    batch_source_free(&t->src);
    free(t->host_pred);
    model_free(&t->net);
    norm_free(&t->norm);
    coverage_free(&t->cov);
    free(t->families);
    pg_free(&t->ds);
    pg_index_free(&t->ix);
    free(t->step_local), free(t->step_pos);
    free(t->label_cols), free(t->which), free(t->targets), free(t->log_cost);
    ridge_free(&t->ridge);
    free(t->ridge_X);
    for (int k = 0; k < 3; k++) free(t->ids[k]);
    memset(t, 0, sizeof *t);
}

/* Adam on the trunk, and on each head whose label was measured in this batch: a head whose
 * task has no label here is left untouched (no momentum drift, no weight decay). */
static void optimizer_step(trainer *t, const int64_t *count) {
    const seer_config *c = &t->cfg;
    int kind = c->train_optimizer == CFG_OPT_ADAMW ? OPT_ADAMW : OPT_ADAM;
    t->step++;
    const model *m = &t->net;
    for (int h = -1; h < t->M; h++) {
        if (h >= 0 && count[h] == 0) continue;
        int64_t lo = h < 0 ? 0 : m->head_begin[h], hi = h < 0 ? m->trunk_params : m->head_begin[h + 1];
        t->be->adam_update(t->be->ctx, t->params + lo, t->grads + lo, t->adam_m + lo, t->adam_v + lo, hi - lo, kind,
                    t->sched.lr, c->train_beta1, c->train_beta2, c->train_eps, c->train_weight_decay,
                    t->step);
    }
}

/* The graphs of ids[0..count) that this rank holds: local ids in t->step_local, their positions
 * in ids in t->step_pos; returns how many. */
static int64_t own_graphs(trainer *t, const int64_t *ids, int64_t count) {
    int64_t n = 0, g0 = t->ds.g0, G = t->ds.G;
    for (int64_t i = 0; i < count; i++)
        if (ids[i] >= g0 && ids[i] < g0 + G) t->step_local[n] = ids[i] - g0, t->step_pos[n++] = i;
    return n;
}

/* [output] profile: ends the current phase (after the backend's queued work) and charges it. */
static void prof_mark(trainer *t, int phase) {
    step_profile *p = &t->prof;
    if (!p->on) return;
    if (t->be->sync) t->be->sync(t->be->ctx);
    double now = seer_now();
    if (phase >= 0) p->sec[phase] += now - p->last;
    p->last = now;
}

double trainer_step(trainer *t, const int64_t *ids, int64_t count) {
    const seer_config *c = &t->cfg;
    int M = t->M, R = t->ranks;
    int64_t n = own_graphs(t, ids, count);
    model_input in = {0};
    prof_mark(t, -1);
    if (n) {
        in = batch_source_make(&t->src, t->step_local, n);
        prof_mark(t, PROF_BATCH);
        model_forward(&t->net, t->be, t->params, &in, &t->acts);
        prof_mark(t, PROF_FORWARD);
    }
    size_t gb = sizeof(float) * (size_t)t->P;
    const float *target = batch_source_targets(&t->src); // standardised, backend memory
    int64_t n_label[MODEL_MAX_HEADS];
    // Each label's loss is a mean over the whole step's batch: its count and sum of squares are
    // summed over ranks (with each rank's graph count, for the imbalance figure) before backward.
    double sums[2 * MODEL_MAX_HEADS + 1024] = {0};
    SEER_ASSERT(R <= 1024);
    t->be->loss_sums(t->be->ctx, t->acts.pred, target, n, M, sums);
    sums[2 * M + t->rank] = (double)n;
    dist_sum_f64(sums, 2 * M + R);
    double loss = loss_mse_finish(NULL, NULL, 0, M, sums, NULL, NULL, n_label);
    double most = 0;
    for (int r = 0; r < R; r++) most = fmax(most, sums[2 * M + r]);
    t->imb_max += most, t->imb_mean += (double)count / R;
    prof_mark(t, PROF_LOSS);
    if (!t->pcgrad) {
        t->be->zero(t->be->ctx, t->grads, gb);
        if (n) {
            model_acts_fit(&t->dacts, &t->net, in.N, in.E, in.G); // zero this batch's rows only
            model_acts_zero(&t->dacts, t->be);
            t->be->loss_grad(t->be->ctx, t->dacts.pred, t->acts.pred, target, n, M, sums, -1);
            model_backward(&t->net, t->be, t->params, t->grads, &in, &t->acts, &t->dacts, -1);
        }
        prof_mark(t, PROF_BACKWARD);
        grad_comm_sum(&t->comm, t->grads, t->P); // the one gradient all-reduce of the step
    } else {
        // One backward per task, each with only its own head's output gradient, into row task
        // of the (M, P) task-gradient buffer; then PCGrad on the trunk, own gradient per head.
        if (n) model_acts_fit(&t->dacts, &t->net, in.N, in.E, in.G);
        for (int task = 0; task < M; task++) {

            float *g = t->task_grads + (int64_t)task * t->P;
            t->be->zero(t->be->ctx, g, gb);
            if (!n) continue;
            model_acts_zero(&t->dacts, t->be);
            t->be->loss_grad(t->be->ctx, t->dacts.pred, t->acts.pred, target, n, M, sums, task);
            model_backward(&t->net, t->be, t->params, g, &in, &t->acts, &t->dacts, task);
        }
        prof_mark(t, PROF_BACKWARD);
        // every task's gradient summed over ranks in one all-reduce; PCGrad then runs on the
        // global gradients, identically on every rank
        grad_comm_sum(&t->comm, t->task_grads, (int64_t)M * t->P);
        const model *m = &t->net;
        t->be->pcgrad_combine(t->be->ctx, t->task_grads, t->P, M, m->trunk_params, &t->rng_pcgrad, t->pc_gd,
                              t->pc_k, t->grads, t->pc_out);
        for (int task = 0; task < M; task++) {
            int64_t lo = m->head_begin[task], hi = m->head_begin[task + 1];
            t->be->copy_rows(t->be->ctx, t->grads + lo, 0, t->task_grads + (int64_t)task * t->P + lo, 0, 1,
                             (int)(hi - lo));
        }
    }
    prof_mark(t, PROF_REDUCE);
    if (c->train_grad_clip > 0) {
        double norm = t->be->grad_norm(t->be->ctx, t->grads, t->P);
        if (norm > c->train_grad_clip)
            t->be->grad_scale(t->be->ctx, t->grads, t->P, (float)(c->train_grad_clip / norm));
    }
    prof_mark(t, PROF_CLIP);
    optimizer_step(t, n_label);
    prof_mark(t, PROF_OPTIM);
    t->prof.steps++;
    return loss / M;
}

double trainer_evaluate_labels(trainer *t, const int64_t *ids, int64_t count,
                               label_metrics *metrics, double *pred_out, float *y_out) {
    int M = t->M;
    int64_t bs = t->cfg.train_eval_batch_size, CM = count * M;
    // pred, target and native label of every graph; each rank fills the graphs it holds and the
    // sum over ranks (zeros elsewhere, so exact) gives every rank all of them
    // (and its log roofline cost, 0 for target = log)
    float *buf = seer_calloc((size_t)(4 * CM + 1), sizeof(float));
    float *pred = buf, *tgt = buf + CM, *y = buf + 2 * CM, *lc = buf + 3 * CM;
    for (int64_t i = 0; i < count && t->closed; i++) {
        for (int m = 0; m < M; m++) {
            pred[i * M + m] = (float)ridge_predict(&t->ridge, m, t->ridge_X + ids[i] * t->ridge.s.F);
            tgt[i * M + m] = t->targets[ids[i] * M + m];
            y[i * M + m] = t->ds.label_y[ids[i] * t->ds.M + t->label_cols[m]];
            lc[i * M + m] = (float)t->log_cost[ids[i] * M + m];
        }
    }
    for (int64_t i = 0; i < count && !t->closed; i += bs) {
        int64_t n = own_graphs(t, ids + i, count - i < bs ? count - i : bs);
        if (!n) continue;
        model_input in = batch_source_make(&t->src, t->step_local, n);
        model_forward(&t->net, t->be, t->params, &in, &t->acts);
        t->be->download(t->be->ctx, t->host_pred, t->acts.pred, sizeof(float) * (size_t)(n * M));
        for (int64_t k = 0; k < n; k++) {
            int64_t at = (i + t->step_pos[k]) * M, g = t->step_local[k];
            for (int m = 0; m < M; m++) {
                pred[at + m] = t->host_pred[k * M + m];
                tgt[at + m] = t->src.host.y[k * M + m];
                y[at + m] = t->ds.label_y[g * t->ds.M + t->label_cols[m]];
                lc[at + m] = (float)t->log_cost[g * M + m];
            }
        }
    }
    dist_sum_f32(buf, 4 * CM);
    if (y_out) memcpy(y_out, y, sizeof(float) * (size_t)CM);
    double loss = loss_mse_masked(pred, tgt, count, M, NULL, NULL, NULL) / M;
    if (metrics) {
        double *p = seer_malloc(sizeof(double) * (size_t)(count + 1));
        double *yd = seer_malloc(sizeof(double) * (size_t)(count + 1));
        for (int m = 0; m < M; m++) {
            for (int64_t i = 0; i < count; i++) {
                p[i] = norm_to_native(&t->norm, m, pred[i * M + m], lc[i * M + m]);
                yd[i] = y[i * M + m];
                if (pred_out) pred_out[i * M + m] = p[i];
            }
            metrics_compute(p, yd, count, &metrics[m]);
        }
        free(p), free(yd);
    }
    free(buf);
    return loss;
}

double trainer_evaluate(trainer *t, const int64_t *ids, int64_t count, label_metrics *metrics,
                        double *pred_out) {
    return trainer_evaluate_labels(t, ids, count, metrics, pred_out, NULL);
}

/* A closed-form model (the ridge baseline): one ridge per label, lambda from a grid by validation
 * loss (model/ridge.h); the checkpoint holds the solution (last.ckpt = best.ckpt). */
static int closed_form_run(trainer *t, seer_err *err) {
    int M = t->M;
    int64_t ntr = t->n_ids[SPLIT_TRAIN], nva = t->n_ids[SPLIT_VAL];
    double t0 = seer_now();
    // model cost: the standardised target of log y = log cost, (0 - mu) / sigma, for every graph
    double zero[MODEL_MAX_HEADS];
    for (int m = 0; m < M; m++) zero[m] = -t->norm.label_mu[m] / t->norm.label_sigma[m];
    if (ridge_fit_labels(&t->ridge, t->ridge_X, t->targets, t->ids[SPLIT_TRAIN], ntr,
                         t->ids[SPLIT_VAL], nva, t->cost_only ? zero : NULL, &t->best_val, err))
        return -1;
    t->train_seconds = seer_now() - t0;
    t->epoch = 1;
    char last[1200], best[1200];
    snprintf(last, sizeof last, "%s/last.ckpt", t->run_dir);
    snprintf(best, sizeof best, "%s/best.ckpt", t->run_dir);
    label_metrics vm[MODEL_MAX_HEADS], tm[MODEL_MAX_HEADS];
    metrics_none(vm, M), metrics_none(tm, M); // an empty split keeps them so
    if (nva) trainer_evaluate(t, t->ids[SPLIT_VAL], nva, vm, NULL);
    if (report_test_predictions(t, tm, err)) return -1;
    if (nva) memcpy(t->last_val, vm, sizeof(label_metrics) * (size_t)M), t->has_last_val = 1;
    if (trainer_save(t, last, err) || trainer_save(t, best, err)) return -1;
    if (!t->quiet && t->cost_only)
        printf("seertrain: the roofline cost alone (%d terms per label), %lld train / %lld val / "
               "%lld test graphs, fitted in %.2f s\n", norm_roof_terms(t->norm.target), (long long)ntr,
               (long long)nva, (long long)t->n_ids[SPLIT_TEST], t->train_seconds);
    else if (!t->quiet)
        printf("seertrain: linear baseline, %d features, %lld train / %lld val / %lld test graphs, "
               "fitted in %.2f s\n", t->ridge.s.F, (long long)ntr, (long long)nva,
               (long long)t->n_ids[SPLIT_TEST], t->train_seconds);
    return report_final(t, vm, tm, 0, err);
}

/* [dist] inject_failure: the faults a real job meets, on demand, for the tests. */
static void inject_failure(const trainer *t) {
    const char *k = t->inject_kind;
    if (!strcmp(k, "error"))
        seer_die("step %lld: injected failure ([dist] inject_failure = %s)", (long long)t->step,
                 t->cfg.dist_inject_failure);
    if (!strcmp(k, "oom")) {
        volatile size_t huge = (size_t)1 << 62; // no machine has this much memory
        free(seer_malloc(huge));
    }
    if (!strcmp(k, "crash")) raise(SIGKILL); // dies without a word, as a killed process does
    for (;;) pause();                        // hang
}

/* The state of trainer_run: its logs, the epoch's order, the figures of the latest evaluation. */
typedef struct {
    FILE *log, *steps; // rank 0 logs and writes checkpoints
    char last[1200], best[1200];
    int64_t per_epoch;
    int64_t *perm;
    label_metrics *vm, *tm;
    int stopped;
} run_state;

/* A resumed run's log keeps only what its checkpoint had reached: a kill between a log line and
 * the checkpoint that follows it would otherwise leave that line twice once the run resumes.
 * Keeps the lines whose leading number (after key, e.g. "{\"epoch\":", or "" for the step log's
 * first column) is at most upto, lines without one (a header), and drops a cut last line. */
static int log_trim(const char *path, const char *key, int64_t upto, seer_err *err) {
    size_t len;
    char *text = seer_read_file(path, &len, NULL);
    if (!text) return 0; // no log yet: nothing to trim
    char tmp[1300];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        free(text);
        return seer_fail(err, "%s: cannot write: %s", tmp, strerror(errno));
    }
    size_t klen = strlen(key);
    for (char *line = text, *nl; (nl = memchr(line, '\n', len - (size_t)(line - text))); line = nl + 1) {
        char *end;
        long long v = strncmp(line, key, klen) ? -1 : strtoll(line + klen, &end, 10);
        if (v >= 0 && end == line + klen) v = -1; // no number: keep it (a header)
        if (v <= upto) fwrite(line, 1, (size_t)(nl + 1 - line), f);
    }
    free(text);
    if (ferror(f) | fclose(f) || rename(tmp, path))
        return seer_fail(err, "%s: cannot rewrite: %s", path, strerror(errno));
    return 0;
}

static int run_open(trainer *t, run_state *r, seer_err *err) {
    char path[1200];
    snprintf(r->last, sizeof r->last, "%s/last.ckpt", t->run_dir);
    snprintf(r->best, sizeof r->best, "%s/best.ckpt", t->run_dir);
    snprintf(path, sizeof path, "%s/metrics.jsonl", t->run_dir);
    // a fresh run starts its log anew; a resumed one appends to it
    int fresh = t->step == 0 && t->epoch == 0 && t->batch_in_epoch == 0;
    if (t->rank == 0 && !fresh && log_trim(path, "{\"epoch\":", t->epoch, err)) return -1;
    if (t->rank == 0) {
        r->log = fopen(path, fresh ? "w" : "a");
        if (fresh) remove(r->best); // a best.ckpt left by an earlier run here is not this one's
        if (!r->log) return seer_fail(err, "%s: cannot open metrics log: %s", path, strerror(errno));
        if (t->cfg.output_step_log) {
            snprintf(path, sizeof path, "%s/steps.tsv", t->run_dir);
            if (!fresh && log_trim(path, "", t->step, err)) return -1;
            r->steps = fopen(path, fresh ? "w" : "a");
            if (!r->steps)
                return seer_fail(err, "%s: cannot open the step log: %s", path, strerror(errno));
            if (fresh) fputs("step\tloss\tlr\tseconds\n", r->steps);
        }
    }
    int64_t ntr = t->n_ids[SPLIT_TRAIN], bs = t->global_batch;
    r->per_epoch = (ntr + bs - 1) / bs;
    r->vm = seer_calloc((size_t)t->M, sizeof *r->vm), r->tm = seer_calloc((size_t)t->M, sizeof *r->tm);
    metrics_none(r->vm, t->M), metrics_none(r->tm, t->M); // an empty split keeps them so
    r->perm = seer_malloc(sizeof(int64_t) * (size_t)(ntr ? ntr : 1));
    return 0;
}

static void run_close(run_state *r) {
    if (r->log) fclose(r->log);
    if (r->steps) fclose(r->steps);
    free(r->vm), free(r->tm), free(r->perm);
}

/* The steps of the current epoch from t->batch_in_epoch on (the order in r->perm); sets
 * r->stopped at max_steps. */
static int run_steps(trainer *t, run_state *r, seer_err *err) {
    const seer_config *c = &t->cfg;
    int64_t ntr = t->n_ids[SPLIT_TRAIN], bs = t->global_batch;
    seer_progress prog;
    char label[64];
    snprintf(label, sizeof label, "epoch %lld/%lld", (long long)t->epoch + 1,
             (long long)c->train_epochs);
    progress_begin(&prog, label, r->per_epoch);
    if (t->quiet) prog.tty = 0;
    int rc = 0;
    while (t->batch_in_epoch < r->per_epoch) {
        int64_t start = t->batch_in_epoch * bs, n = ntr - start < bs ? ntr - start : bs;
        dist_phase("training step");
        double step_t0 = seer_now();
        double loss = trainer_step(t, r->perm + start, n);
        if (t->inject_step == t->step && t->inject_rank == t->rank) inject_failure(t);
        if (!isfinite(loss)) {
            rc = seer_fail(err, "step %lld: the loss is %g (diverged); lower [train] lr or "
                                "enable grad_clip", (long long)t->step, loss);
            break;
        }
        if (r->steps)
            fprintf(r->steps, "%lld\t%.9g\t%.9g\t%.6f\n", (long long)t->step, loss, t->sched.lr,
                    seer_now() - step_t0);
        t->epoch_loss_sum += loss, t->epoch_batches++, t->epoch_graphs += n;
        t->batch_in_epoch++;
        char extra[64];
        snprintf(extra, sizeof extra, "loss %.4f", t->epoch_loss_sum / (double)t->epoch_batches);
        progress_update(&prog, t->batch_in_epoch, extra);
        if (c->output_save_every > 0 && t->step % c->output_save_every == 0 &&
            (rc = trainer_save(t, r->last, err)))
            break;
        if (c->train_max_steps > 0 && t->step >= c->train_max_steps) {
            r->stopped = 1;
            break;
        }
    }
    progress_end(&prog);
    return rc;
}

/* End of an epoch: evaluate, schedule, early stopping, the log line, checkpoints. */
static int run_epoch_end(trainer *t, run_state *r, const seer_rng *next_rng, double secs,
                         seer_err *err) {
    const seer_config *c = &t->cfg;
    int M = t->M;
    double loss_sum = t->epoch_loss_sum;
    int64_t nb = t->epoch_batches, graphs = t->epoch_graphs;
    t->epoch_loss_sum = 0, t->epoch_batches = 0, t->epoch_graphs = 0;
    double imbalance = t->imb_mean > 0 ? t->imb_max / t->imb_mean : 1.0;
    t->imb_max = t->imb_mean = 0;
    dist_phase("evaluation");
    trainer_fill_unseen_ops(t); // before validation reads them
    t->epoch++;
    t->batch_in_epoch = 0;
    t->rng_epoch = *next_rng;
    prof_mark(t, -1);
    double val_loss = t->n_ids[SPLIT_VAL] ? trainer_evaluate(t, t->ids[SPLIT_VAL],
                                                             t->n_ids[SPLIT_VAL], r->vm, NULL)
                                          : loss_sum / (double)(nb ? nb : 1);
    prof_mark(t, PROF_EVAL);
    if (t->n_ids[SPLIT_VAL]) {
        memcpy(t->last_val, r->vm, sizeof(label_metrics) * (size_t)M);
        t->has_last_val = 1;
    }
    double lr_used = t->sched.lr;
    sched_epoch_end(&t->sched, t->epoch, val_loss);
    int improved = val_loss < t->best_val;
    if (improved) t->best_val = val_loss, t->since_best = 0;
    else t->since_best++;
    double rate = graphs / (secs > 0 ? secs : 1e-9);
    if (r->log) {
        fprintf(r->log, "{\"epoch\":%lld,\"step\":%lld,\"train_loss\":%.6g,\"val_loss\":%.6g,"
                        "\"lr\":%.6g,\"graphs_per_s\":%.1f,\"seconds\":%.4f,",
                (long long)t->epoch, (long long)t->step, loss_sum / (double)(nb ? nb : 1),
                val_loss, lr_used, rate, secs);
        if (t->ranks > 1) fprintf(r->log, "\"ranks\":%d,\"step_imbalance\":%.4f,", t->ranks, imbalance);
        report_json_metrics(r->log, t, "val", r->vm);
        fputs("}\n", r->log);
        fflush(r->log);
    }
    if (!t->quiet)
        printf("epoch %3lld  step %6lld  loss %.4f  val_loss %.4f  val_mape %.3f%%  lr %.2g  "
               "%.0f graphs/s%s\n",
               (long long)t->epoch, (long long)t->step, loss_sum / (double)(nb ? nb : 1),
               val_loss, report_mean_mape(r->vm, M), lr_used, rate, improved ? "  *" : "");
    if (!t->quiet && t->ranks > 1)
        printf("           %d ranks: the busiest rank ran %.2fx the mean graphs per step\n",
               t->ranks, imbalance);
    fflush(stdout);
    if (c->train_early_stop > 0 && t->since_best >= c->train_early_stop) {
        if (!t->quiet) printf("early stop: no better validation loss for %lld epochs\n",
                              (long long)t->since_best);
        r->stopped = 1;
    }
    if (trainer_save(t, r->last, err)) return -1;
    if (improved && trainer_save(t, r->best, err)) return -1;
    return 0;
}

/* The final report with the best weights (by validation loss); the live state stays the last. */
static int run_report(trainer *t, run_state *r, seer_err *err) {
    int64_t have_best = t->rank == 0 && access(r->best, R_OK) == 0;
    dist_bcast(&have_best, sizeof have_best, 0);
    if (!have_best) return 0;
    size_t pb = sizeof(float) * (size_t)t->P;
    float *keep = seer_malloc(pb);
    t->be->download(t->be->ctx, keep, t->params, pb);
    int64_t best_step = 0;
    int rc = trainer_load_params(t, r->best, &best_step, err);
    if (!rc) {
        if (t->n_ids[SPLIT_VAL]) trainer_evaluate(t, t->ids[SPLIT_VAL], t->n_ids[SPLIT_VAL], r->vm, NULL);
        rc = report_test_predictions(t, r->tm, err);
        t->be->upload(t->be->ctx, t->params, keep, pb);
    }
    free(keep);
    return rc ? rc : report_final(t, r->vm, r->tm, best_step, err);
}

int trainer_run(trainer *t, seer_err *err) {
    const seer_config *c = &t->cfg;
    if (t->rank == 0 && seer_mkdir_p(t->run_dir, err)) return -1;
    if (t->closed) return closed_form_run(t, err);
    run_state r = {0};
    int rc = run_open(t, &r, err);
    int64_t ntr = t->n_ids[SPLIT_TRAIN];
    double run_t0 = seer_now();
    if (!rc && !t->quiet)
        printf("seertrain: %lld train / %lld val / %lld test graphs, %d label(s), %lld parameters, "
               "%lld steps per epoch, %s, run folder %s\n",
               (long long)ntr, (long long)t->n_ids[SPLIT_VAL], (long long)t->n_ids[SPLIT_TEST],
               t->M, (long long)t->P, (long long)r.per_epoch,
               t->device_name[0] ? t->device_name : "CPU", t->run_dir);
    if (!rc) report_shards(t);
    while (!rc && t->epoch < c->train_epochs && !r.stopped &&
           (c->train_stop_epoch <= 0 || t->epoch < c->train_stop_epoch)) {
        // The shuffle of epoch e comes from the generator state saved at its start.
        seer_rng next = t->rng_epoch;
        memcpy(r.perm, t->ids[SPLIT_TRAIN], sizeof(int64_t) * (size_t)ntr);
        rng_shuffle_i64(&next, r.perm, ntr);
        double t0 = seer_now();
        if ((rc = run_steps(t, &r, err))) break;
        if (r.stopped && t->batch_in_epoch < r.per_epoch) break; // mid-epoch: resume continues it
        rc = run_epoch_end(t, &r, &next, seer_now() - t0, err);
    }
    if (!rc && t->batch_in_epoch > 0) rc = trainer_save(t, r.last, err);
    t->train_seconds = seer_now() - run_t0;
    if (!rc) rc = run_report(t, &r, err);
    run_close(&r);
    return rc;
}
