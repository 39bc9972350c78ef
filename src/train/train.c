/* train: the training run (see train.h). The loop is deterministic: the same config, seed and
 * thread count give the same numbers, and resuming from a checkpoint continues bit for bit
 * because the shuffle of the current epoch is regenerated from the saved generator state. */
#define _POSIX_C_SOURCE 200809L
#include "train.h"

#include "dist/dist.h"
#ifdef SEER_HAVE_CUDA
#include "cuda_backend.h"
#endif
#ifdef SEER_HAVE_NCCL
#include "dist/nccl_comm.h"
#endif

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Peak resident memory of this process so far, MB. */
static double peak_rss_mb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

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
    t->M = 0;
    char *copy = seer_strdup(spec), *save = NULL;
    for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        int col = pg_find_name(t->ds.labels, t->ds.M, tok);
        if (col < 0) {
            char avail[512] = "";
            for (int m = 0; m < t->ds.M && strlen(avail) < 400; m++)
                strcat(avail, m ? "," : ""), strcat(avail, t->ds.labels[m]);
            seer_fail(err, "%s: [data] labels: '%s' is not a label of %s (it has: %s)", where, tok,
                      t->cfg.data_path, avail);
            free(copy);
            return -1;
        }
        if (t->M == t->ds.M) break;
        t->label_cols[t->M++] = col;
    }
    free(copy);
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
    ridge_standardise_fit(&t->ridge, t->ridge_X, ds->G, t->ids[SPLIT_TRAIN], t->n_ids[SPLIT_TRAIN]);
    return 0;
}

/* [backend] device: cpu, cuda, or auto (CUDA when the build has it and a GPU is present). A rank
 * takes the GPU of its rank on the node. */
static int select_backend(trainer *t, const seer_config *cfg, seer_err *err) {
    const char *dev = cfg->backend_device;
    char where[600];
    config_where(cfg, CFG_KEY_backend_device, where, sizeof where);
    // the linear baseline is fitted in closed form on the host: nothing to run on a GPU
    if (!strcmp(dev, "cpu") || t->closed) return 0;
#ifdef SEER_HAVE_CUDA
    int n = cuda_device_count();
    if (n == 0) {
        if (!strcmp(dev, "cuda"))
            return seer_fail(err, "%s: [backend] device = cuda, but this machine has no CUDA device "
                                  "(or no NVIDIA driver); use device = cpu or auto", where);
        return 0;
    }
    int prec = !strcmp(cfg->backend_precision, "fp32") ? PREC_FP32
               : !strcmp(cfg->backend_precision, "bf16") ? PREC_BF16 : PREC_TF32;
    int device = dist_local_rank() % n;
    if (cuda_backend_init(device, prec, err)) return -1;
    t->be = backend_cuda();
    if (t->ranks > 1 && strcmp(cfg->dist_collectives, "mpi") != 0) {
#ifdef SEER_HAVE_NCCL
        if (nccl_open(device, cfg->dist_timeout, err)) return -1;
        t->nccl = 1;
#else
        if (!strcmp(cfg->dist_collectives, "nccl"))
            return seer_fail(err, "%s: [dist] collectives = nccl, but this build has no NCCL; use "
                                  "collectives = auto or mpi", cfg->file);
#endif
    }
    snprintf(t->device_name, sizeof t->device_name, "%s, %s", cuda_device_name(),
             cfg->backend_precision);
    return 0;
#else
    (void)t;
    if (!strcmp(dev, "cuda"))
        return seer_fail(err, "%s: [backend] device = cuda, but this build has no CUDA backend "
                              "(nvcc was not found when it was built); use device = cpu or auto",
                         where);
    return 0;
#endif
}

int trainer_init(trainer *t, const seer_config *cfg, seer_err *err) {
    memset(t, 0, sizeof *t);
    t->cfg = *cfg; // shares the strings; cfg must outlive the trainer
    t->be = backend_cpu();
    backend_cpu_set_threads(cfg->train_threads > 0 ? (int)cfg->train_threads
                                                   : (int)sysconf(_SC_NPROCESSORS_ONLN));
    t->rank = dist_rank(), t->ranks = dist_ranks();
    const model_ops *ops = model_find(cfg->model_name); // a known name: config_validate checked it
    SEER_ASSERT(ops);
    t->closed = (ops->flags & MODEL_CLOSED_FORM) != 0;
    if (select_backend(t, cfg, err)) return -1;
    if (t->ranks > 1 && t->closed)
        return seer_fail(err, "%s: model.name = %s is fitted in closed form by one process; "
                              "run it without mpirun/srun", cfg->file, ops->name);
    if (t->ranks > 1 && strcmp(cfg->dist_collectives, "nccl") == 0 && !t->be->device)
        return seer_fail(err, "%s: [dist] collectives = nccl needs GPU ranks ([backend] device = "
                              "cuda or auto on a machine with GPUs); use collectives = auto or mpi",
                         cfg->file);
    if (cfg->dist_inject_failure[0])
        sscanf(cfg->dist_inject_failure, "%d:%d:%15[a-z]", &t->inject_rank, &t->inject_step,
               t->inject_kind); // checked by config_validate
    if (access(cfg->data_path, R_OK) != 0) {
        char where[600];
        config_where(cfg, CFG_KEY_data_path, where, sizeof where);
        return seer_fail(err, "%s: [data] path = %s: %s (build the default dataset with "
                              "scripts/datasets/nb201_build.py, or set --set data.path=FILE)",
                         where, cfg->data_path, strerror(errno));
    }
    // The index and the split are the same on every rank; then each rank reads its shard.
    double t0 = seer_now();
    if (pg_read_index(cfg->data_path, &t->ix, err)) return -1;
    pg_index_limit(&t->ix, cfg->data_limit);
    int64_t G = t->ix.G, lo, hi;
    t->which = seer_malloc((size_t)(G ? G : 1));
    if (split_assign(G, t->ix.group, strcmp(cfg->data_split, "counts") == 0, cfg->data_train_frac,
                     cfg->data_val_frac, cfg->data_train_count, cfg->data_val_count,
                     (uint64_t)cfg->data_split_seed, t->which, err))
        return -1;
    for (int k = 0; k < 3; k++) {
        t->ids[k] = seer_malloc(sizeof(int64_t) * (size_t)(G ? G : 1));
        t->n_ids[k] = split_ids(t->which, G, k, t->ids[k]);
    }
    pg_shard(&t->ix, t->rank, t->ranks, &lo, &hi);
    if (pg_read_range(cfg->data_path, &t->ix, lo, hi, &t->ds, &t->rd, err)) return -1;
    t->load_seconds = seer_now() - t0;
    t->load_rss_mb = peak_rss_mb();
    if (parse_labels(t, err)) return -1;
    norm_comm comm = {t->rank, t->ranks, dist_sum_f64};
    if (norm_fit(&t->norm, &t->ds, t->which + t->ds.g0, t->label_cols, t->M, &comm, err)) return -1;
    if (t->closed && ridge_prepare(t, err)) return -1; // from the raw features
    norm_apply(&t->norm, &t->ds);
    t->targets = seer_malloc(sizeof(float) * (size_t)(t->ds.G * t->M + 1));
    norm_targets(&t->norm, &t->ds, t->label_cols, t->targets);
#ifdef SEER_HAVE_CUDA
    if (t->be->device) // resident data
        t->shard_bytes = cuda_shard_upload(&t->shard, &t->ds, t->targets, t->M);
#endif
    t->best_val = INFINITY;
    if (t->closed) return 0;

    int H = (int)cfg->model_hidden;
    model_sizes ms = {
        .ops = ops, .H = H, .L = (int)cfg->model_blocks,
        .Fn = t->ds.Fn, .Fe = t->ds.Fe, .Fg = t->ds.Fg, .M = t->M,
        .agg = strcmp(cfg->model_agg, "synmm") == 0 ? AGG_SYNMM : AGG_MEAN,
        .head_hidden = cfg->model_head_hidden > 0 ? (int)cfg->model_head_hidden : H,
    };
    if (ops->flags & MODEL_OP_TYPES) ms.n_ops = t->ds.n_ops, ms.emb = (int)cfg->model_op_embed;
    if ((ops->flags & MODEL_OP_TYPES) && t->ds.n_ops < 1)
        return seer_fail(err, "%s: %s needs operator types (/schema/op_types is empty)",
                         cfg->data_path, ops->name);
    model_init(&t->net, &ms);
    t->P = t->net.pt.total;
    size_t pb = sizeof(float) * (size_t)t->P;
    t->params = t->be->alloc(pb), t->grads = t->be->alloc(pb);
    t->adam_m = t->be->alloc(pb), t->adam_v = t->be->alloc(pb);
    float *host = seer_malloc(pb);
    seer_rng init;
    rng_seed(&init, (uint64_t)cfg->train_seed);
    params_init_uniform(&t->net.pt, host, &init);
    t->be->upload(t->params, host, pb);
    free(host);
    t->be->zero(t->grads, pb), t->be->zero(t->adam_m, pb), t->be->zero(t->adam_v, pb);

    // One allocation per run, sized for the largest batch any split can form from this rank's
    // graphs (with R ranks a step's batch is spread over them, but one rank may hold all of it).
    int64_t bs = cfg->train_batch_size, ebs = cfg->train_eval_batch_size;
    t->global_batch = strcmp(cfg->dist_batch, "per_rank") == 0 ? bs * t->ranks : bs;
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
    batch_init(&t->batch, cap_g, all_n, all_e, t->ds.Fn, t->ds.Fe, t->ds.Fg, t->M, t->ds.n_ops);
    t->batch.want_extra = (ops->flags & MODEL_EXTRA_INDEX) != 0; // only the models that read them
#ifdef SEER_HAVE_CUDA
    if (t->be->device) { // the batch on the device (make_batch): arrays at the batch's capacity
        int64_t cG = t->batch.cap_G, cN = t->batch.cap_N, cE = t->batch.cap_E, words = 0;
        cuda_batch_out *o = &t->dev_out;
        int64_t **field[] = {&o->node_ptr, &o->edge_ptr, &o->src, &o->dst, &o->edge_graph,
                             &o->in_idx, &o->out_idx, &o->node_graph, &o->in_ptr, &o->out_ptr};
        int64_t cap[] = {cG + 1, cG + 1, cE, cE, cE, cE, cE, cN, cN + 1, cN + 1};
        for (size_t k = 0; k < sizeof cap / sizeof *cap; k++) words += cap[k];
        int64_t *p = t->dev_i = t->be->alloc(sizeof(int64_t) * (size_t)words);
        for (size_t k = 0; k < sizeof cap / sizeof *cap; k++) *field[k] = p, p += cap[k];
        float *f = t->dev_f = t->be->alloc(
            sizeof(float) * (size_t)(cN * t->ds.Fn + cE * t->ds.Fe + cG * (t->ds.Fg + t->M)));
        o->xn = f, o->xe = o->xn + cN * t->ds.Fn, o->xg = o->xe + cE * t->ds.Fe;
        o->y = o->xg + cG * t->ds.Fg;
        if (ops->flags & MODEL_EXTRA_INDEX)
            t->dev_xbuf = t->be->alloc(sizeof(int64_t) * extra_index_words(cN, cE, cG, t->ds.n_ops));
    }
#endif
    size_t gm = sizeof(float) * (size_t)(cap_g * t->M);
    t->host_pred = seer_malloc(gm);
    t->step_local = seer_malloc(sizeof(int64_t) * (size_t)cap_g);
    t->step_pos = seer_malloc(sizeof(int64_t) * (size_t)cap_g);
    t->pcgrad = strcmp(cfg->train_multi_task, "pcgrad") == 0 && t->M > 1;
    if (t->pcgrad) {
        int64_t tr = t->net.trunk_params;
        t->task_grads = t->be->alloc(sizeof(float) * (size_t)(t->M * t->P));
        t->pc_gd = t->be->alloc(sizeof(double) * (size_t)(t->M * tr));
        t->pc_k = seer_malloc(sizeof(double) * (size_t)(t->M * t->M));
        t->pc_out = t->be->alloc(sizeof(double) * (size_t)tr);
    }
    if (t->be->device && t->ranks > 1 && !t->nccl)
        t->stage = seer_malloc(sizeof(float) * (size_t)(t->P * (t->pcgrad ? t->M : 1)));
    rng_seed(&t->rng_pcgrad, (uint64_t)cfg->train_seed * 0x2545f4914f6cdd1dull + 7);

    rng_seed(&t->rng_epoch, (uint64_t)cfg->train_seed * 0x9e3779b97f4a7c15ull + 1);
    int sk = strcmp(cfg->train_schedule, "plateau") == 0  ? SCHED_PLATEAU
             : strcmp(cfg->train_schedule, "cosine") == 0 ? SCHED_COSINE
                                                           : SCHED_NONE;
    sched_init(&t->sched, sk, cfg->train_lr, cfg->train_min_lr, cfg->train_plateau_factor,
               cfg->train_plateau_patience, cfg->train_epochs);
    return 0;
}

void trainer_free(trainer *t) {
    if (t->be) {
        t->be->release(t->params), t->be->release(t->grads);
        t->be->release(t->adam_m), t->be->release(t->adam_v);
        if (t->acts.fbase) model_acts_free(&t->acts, t->be);
        if (t->dacts.fbase) model_acts_free(&t->dacts, t->be);
        if (t->task_grads) t->be->release(t->task_grads);
    }
    if (t->be) t->be->release(t->pc_gd), t->be->release(t->pc_out);
    free(t->pc_k), free(t->stage);
    if (t->be && t->be->device)
        t->be->release(t->dev_i), t->be->release(t->dev_f), t->be->release(t->dev_xbuf);
#ifdef SEER_HAVE_CUDA
    if (t->be && t->be->device) cuda_shard_free(&t->shard);
#endif
    free(t->host_pred);
    batch_free(&t->batch);
    model_free(&t->net);
    norm_free(&t->norm);
    pg_free(&t->ds);
    pg_index_free(&t->ix);
    free(t->step_local), free(t->step_pos);
    free(t->label_cols), free(t->which), free(t->targets);
    ridge_free(&t->ridge);
    free(t->ridge_X);
    for (int k = 0; k < 3; k++) free(t->ids[k]);
    memset(t, 0, sizeof *t);
}

/* Adam on the trunk, and on each head whose label was measured in this batch: a head whose
 * task has no label here is left untouched (no momentum drift, no weight decay). */
static void optimizer_step(trainer *t, const int64_t *count) {
    const seer_config *c = &t->cfg;
    int kind = strcmp(c->train_optimizer, "adamw") == 0 ? OPT_ADAMW : OPT_ADAM;
    t->step++;
    const model *m = &t->net;
    for (int h = -1; h < t->M; h++) {
        if (h >= 0 && count[h] == 0) continue;
        int64_t lo = h < 0 ? 0 : m->head_begin[h], hi = h < 0 ? m->trunk_params : m->head_begin[h + 1];
        t->be->adam_update(t->params + lo, t->grads + lo, t->adam_m + lo, t->adam_v + lo, hi - lo, kind,
                    t->sched.lr, c->train_beta1, c->train_beta2, c->train_eps, c->train_weight_decay,
                    t->step);
    }
}

/* Builds the batch of the local graphs ids[0..n) and returns the model's view of it. On the CPU:
 * batch_build. On a GPU the shard is resident (uploaded at init) and the batch, targets included,
 * is assembled there (cuda/batch.cu): a step sends only its graph ids and offsets. The host copy of
 * the targets is for evaluation, which computes its metrics on the host. */
static model_input make_batch(trainer *t, const int64_t *ids, int64_t n) {
    if (!t->be->device) {
        batch_build(&t->batch, &t->ds, t->targets, ids, n);
        return model_input_from_batch(&t->batch);
    }
    model_input in = {0};
#ifdef SEER_HAVE_CUDA
    graph_batch *b = &t->batch;
    int M = t->M;
    for (int64_t i = 0; i < n; i++)
        memcpy(b->y + i * M, t->targets + ids[i] * M, sizeof(float) * (size_t)M);
    const cuda_batch_out o = t->dev_out;
    int64_t N, E;
    cuda_batch_assemble(&t->shard, &t->ds, ids, n, &t->dev_out, &N, &E);
    b->G = n, b->N = N, b->E = E;
    in = (model_input){.G = n, .N = N, .E = E, .node_ptr = o.node_ptr, .edge_ptr = o.edge_ptr,
                         .src = o.src, .dst = o.dst, .node_graph = o.node_graph,
                         .edge_graph = o.edge_graph, .in_ptr = o.in_ptr, .in_idx = o.in_idx,
                         .out_ptr = o.out_ptr, .out_idx = o.out_idx, .xn = o.xn, .xe = o.xe,
                         .xg = o.xg, .x = NULL};
    if (t->net.ops->flags & MODEL_EXTRA_INDEX) {
        // PerfSAGE / GCN: their extra indexes (both-way and global-node edge sets, operator
        // groups) are built on the host and uploaded: index words, no features
        batch_build(&t->batch, &t->ds, t->targets, ids, n);
        extra_index *x = &t->dev_x;
        *x = b->x;
        int64_t used = x->op_ptr + x->n_ops + 1 - b->xbuf;
        t->be->upload(t->dev_xbuf, b->xbuf, sizeof(int64_t) * (size_t)used);
        int64_t **ptrs[] = {&x->sym.src, &x->sym.dst, &x->sym.in_ptr, &x->sym.in_idx,
                            &x->sym.out_ptr, &x->sym.out_idx, &x->gcn.src, &x->gcn.dst,
                            &x->gcn.in_ptr, &x->gcn.in_idx, &x->gcn.out_ptr, &x->gcn.out_idx,
                            &x->op, &x->op_ptr, &x->op_idx};
        for (size_t k = 0; k < sizeof ptrs / sizeof *ptrs; k++)
            *ptrs[k] = t->dev_xbuf + (*ptrs[k] - b->xbuf);
        in.x = x;
    }
#else
    (void)ids, (void)n;
    SEER_ASSERT(!"a device backend without CUDA");
#endif
    return in;
}

/* Sums a gradient buffer over the ranks (in place): NCCL on GPU buffers when the build has it
 * ([dist] collectives = auto or nccl), else MPI, through a host copy for a GPU's buffer. */
static void sum_over_ranks(trainer *t, float *x, int64_t n) {
    if (t->ranks < 2) return;
    if (!t->be->device) {
        dist_sum_f32(x, n);
        return;
    }
#ifdef SEER_HAVE_NCCL
    if (t->nccl) {
        seer_err err;
        if (nccl_sum_f32(x, n, cuda_backend_stream(), &err)) seer_die("%s", err.msg);
        return;
    }
#endif
    t->be->download(t->stage, x, sizeof(float) * (size_t)n);
    dist_sum_f32(t->stage, n);
    t->be->upload(x, t->stage, sizeof(float) * (size_t)n);
}

/* The graphs of ids[0..count) that this rank holds: local ids in t->step_local, their positions
 * in ids in t->step_pos; returns how many. */
static int64_t own_graphs(trainer *t, const int64_t *ids, int64_t count) {
    int64_t n = 0, g0 = t->ds.g0, G = t->ds.G;
    for (int64_t i = 0; i < count; i++)
        if (ids[i] >= g0 && ids[i] < g0 + G) t->step_local[n] = ids[i] - g0, t->step_pos[n++] = i;
    return n;
}

double trainer_step(trainer *t, const int64_t *ids, int64_t count) {
    const seer_config *c = &t->cfg;
    int M = t->M, R = t->ranks;
    int64_t n = own_graphs(t, ids, count);
    model_input in = {0};
    if (n) {
        in = make_batch(t, t->step_local, n);
        model_forward(&t->net, t->be, t->params, &in, &t->acts);
    }
    size_t gb = sizeof(float) * (size_t)t->P;
#ifdef SEER_HAVE_CUDA
    const float *target = t->be->device ? t->dev_out.y : t->batch.y; // standardised targets
#else
    const float *target = t->batch.y;
#endif
    int64_t n_label[MODEL_MAX_HEADS];
    // Each label's loss is a mean over the whole step's batch: its count and sum of squares are
    // summed over ranks (with each rank's graph count, for the imbalance figure) before backward.
    double sums[2 * MODEL_MAX_HEADS + 1024] = {0};
    SEER_ASSERT(R <= 1024);
    t->be->loss_sums(t->acts.pred, target, n, M, sums);
    sums[2 * M + t->rank] = (double)n;
    dist_sum_f64(sums, 2 * M + R);
    double loss = loss_mse_finish(NULL, NULL, 0, M, sums, NULL, NULL, n_label);
    double most = 0;
    for (int r = 0; r < R; r++) most = fmax(most, sums[2 * M + r]);
    t->imb_max += most, t->imb_mean += (double)count / R;
    if (!t->pcgrad) {
        t->be->zero(t->grads, gb);
        if (n) {
            model_acts_zero(&t->dacts, t->be);
            t->be->loss_grad(t->dacts.pred, t->acts.pred, target, n, M, sums, -1);
            model_backward(&t->net, t->be, t->params, t->grads, &in, &t->acts, &t->dacts, -1);
        }
        sum_over_ranks(t, t->grads, t->P); // the one gradient all-reduce of the step
    } else {
        // One backward per task, each with only its own head's output gradient, into row task
        // of the (M, P) task-gradient buffer; then PCGrad on the trunk, own gradient per head.
        for (int task = 0; task < M; task++) {
            float *g = t->task_grads + (int64_t)task * t->P;
            t->be->zero(g, gb);
            if (!n) continue;
            model_acts_zero(&t->dacts, t->be);
            t->be->loss_grad(t->dacts.pred, t->acts.pred, target, n, M, sums, task);
            model_backward(&t->net, t->be, t->params, g, &in, &t->acts, &t->dacts, task);
        }
        // every task's gradient summed over ranks in one all-reduce; PCGrad then runs on the
        // global gradients, identically on every rank
        sum_over_ranks(t, t->task_grads, (int64_t)M * t->P);
        const model *m = &t->net;
        t->be->pcgrad_combine(t->task_grads, t->P, M, m->trunk_params, &t->rng_pcgrad, t->pc_gd,
                              t->pc_k, t->grads, t->pc_out);
        for (int task = 0; task < M; task++) {
            int64_t lo = m->head_begin[task], hi = m->head_begin[task + 1];
            t->be->copy_rows(t->grads + lo, 0, t->task_grads + (int64_t)task * t->P + lo, 0, 1,
                             (int)(hi - lo));
        }
    }
    if (c->train_grad_clip > 0) {
        double norm = t->be->grad_norm(t->grads, t->P);
        if (norm > c->train_grad_clip)
            t->be->grad_scale(t->grads, t->P, (float)(c->train_grad_clip / norm));
    }
    optimizer_step(t, n_label);
    return loss / M;
}

/* trainer_evaluate, also giving the native labels (y_out, (count, M), may be NULL). */
static double evaluate(trainer *t, const int64_t *ids, int64_t count, label_metrics *metrics,
                       double *pred_out, float *y_out) {
    int M = t->M;
    int64_t bs = t->cfg.train_eval_batch_size, CM = count * M;
    // pred, target and native label of every graph; each rank fills the graphs it holds and the
    // sum over ranks (zeros elsewhere, so exact) gives every rank all of them
    float *buf = seer_calloc((size_t)(3 * CM + 1), sizeof(float));
    float *pred = buf, *tgt = buf + CM, *y = buf + 2 * CM;
    for (int64_t i = 0; i < count && t->closed; i++) {
        for (int m = 0; m < M; m++) {
            pred[i * M + m] = (float)ridge_predict(&t->ridge, m, t->ridge_X + ids[i] * t->ridge.s.F);
            tgt[i * M + m] = t->targets[ids[i] * M + m];
            y[i * M + m] = t->ds.label_y[ids[i] * t->ds.M + t->label_cols[m]];
        }
    }
    for (int64_t i = 0; i < count && !t->closed; i += bs) {
        int64_t n = own_graphs(t, ids + i, count - i < bs ? count - i : bs);
        if (!n) continue;
        model_input in = make_batch(t, t->step_local, n);
        model_forward(&t->net, t->be, t->params, &in, &t->acts);
        t->be->download(t->host_pred, t->acts.pred, sizeof(float) * (size_t)(n * M));
        for (int64_t k = 0; k < n; k++) {
            int64_t at = (i + t->step_pos[k]) * M, g = t->step_local[k];
            for (int m = 0; m < M; m++) {
                pred[at + m] = t->host_pred[k * M + m];
                tgt[at + m] = t->batch.y[k * M + m];
                y[at + m] = t->ds.label_y[g * t->ds.M + t->label_cols[m]];
            }
        }
    }
    dist_sum_f32(buf, 3 * CM);
    if (y_out) memcpy(y_out, y, sizeof(float) * (size_t)CM);
    double loss = loss_mse_masked(pred, tgt, count, M, NULL, NULL, NULL) / M;
    if (metrics) {
        double *p = seer_malloc(sizeof(double) * (size_t)(count + 1));
        double *yd = seer_malloc(sizeof(double) * (size_t)(count + 1));
        for (int m = 0; m < M; m++) {
            for (int64_t i = 0; i < count; i++) {
                p[i] = norm_to_native(&t->norm, m, pred[i * M + m]);
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
    return evaluate(t, ids, count, metrics, pred_out, NULL);
}

static int mkdir_p(const char *path, seer_err *err) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST) goto fail;
            *p = '/';
        }
    if (mkdir(buf, 0755) && errno != EEXIST) goto fail;
    return 0;
fail:
    return seer_fail(err, "%s: cannot create run folder: %s", buf, strerror(errno));
}

static double mean_mape(const label_metrics *m, int M) {
    double s = 0;
    for (int i = 0; i < M; i++) s += m[i].mape;
    return s / M;
}

static void print_table(const trainer *t, const char *split, const label_metrics *m, FILE *f) {
    char *names[MODEL_MAX_HEADS];
    for (int i = 0; i < t->M; i++) names[i] = t->ds.labels[t->label_cols[i]];
    metrics_print_rows(f, split, names, m, t->M);
}

static void json_metrics(FILE *f, const trainer *t, const char *split, const label_metrics *m) {
    fprintf(f, "\"%s\":{", split);
    for (int i = 0; i < t->M; i++)
        fprintf(f, "%s\"%s\":{\"n\":%lld,\"mape\":%.6g,\"rmspe\":%.6g,\"within5\":%.6g,"
                   "\"within10\":%.6g,\"spearman\":%.6g,\"kendall\":%.6g}",
                i ? "," : "", t->ds.labels[t->label_cols[i]], (long long)m[i].n, m[i].mape,
                m[i].rmspe, m[i].within5, m[i].within10, m[i].spearman, m[i].kendall);
    fputc('}', f);
}

/* MAPE (per label, validation split) of predicting the training split's arithmetic mean. */
static void mean_baseline(const trainer *t, double *mape) {
    const pg_dataset *ds = &t->ds;
    for (int m = 0; m < t->M; m++) {
        int col = t->label_cols[m];
        double a[4] = {0}; // training sum and count, then validation APE sum and count
        for (int k = 0; k < 2; k++) {
            double mean = a[0] / (a[1] ? a[1] : 1);
            for (int64_t i = 0; i < t->n_ids[k]; i++) {
                int64_t g = t->ids[k][i] - ds->g0;
                if (g < 0 || g >= ds->G) continue;
                float y = ds->label_y[g * ds->M + col];
                if (isnan(y)) continue;
                if (k == SPLIT_TRAIN) a[0] += y, a[1]++;
                else a[2] += fabs(mean - y) / y, a[3]++;
            }
            dist_sum_f64(a + 2 * k, 2);
        }
        mape[m] = a[3] ? 100.0 * a[2] / a[3] : NAN;
    }
}

/* Test predictions of the reported weights: test_predictions.csv with graph id, name, and per
 * label the measurement and the prediction (native units; empty when not measured). */
static void write_test_predictions(trainer *t, label_metrics *tm) {
    int M = t->M;
    int64_t n = t->n_ids[SPLIT_TEST];
    if (!n) return;
    double *pred = seer_malloc(sizeof(double) * (size_t)(n * M));
    float *y = seer_malloc(sizeof(float) * (size_t)(n * M));
    evaluate(t, t->ids[SPLIT_TEST], n, tm, pred, y);
    char path[1200];
    snprintf(path, sizeof path, "%s/test_predictions.csv", t->run_dir);
    FILE *f = t->rank == 0 ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "graph,name");
        for (int m = 0; m < M; m++)
            fprintf(f, ",%s,%s_pred", t->ds.labels[t->label_cols[m]], t->ds.labels[t->label_cols[m]]);
        fputc('\n', f);
        for (int64_t i = 0; i < n; i++) {
            int64_t g = t->ids[SPLIT_TEST][i];
            fprintf(f, "%lld,%s", (long long)g, t->ix.name[g]);
            for (int m = 0; m < M; m++) {
                float yv = y[i * M + m];
                if (isnan(yv)) fprintf(f, ",,%.9g", pred[i * M + m]);
                else fprintf(f, ",%.9g,%.9g", (double)yv, pred[i * M + m]);
            }
            fputc('\n', f);
        }
        fclose(f);
    }
    free(pred), free(y);
}

/* Per-rank figures of the job, gathered on every rank: (ranks, RF_N). */
enum { RF_G0, RF_G, RF_N_NODES, RF_E, RF_READS, RF_LOAD, RF_LOAD_RSS, RF_RSS, RF_N };
static double *rank_figures(const trainer *t) {
    double *a = seer_calloc((size_t)(t->ranks * RF_N), sizeof(double)), *me = a + t->rank * RF_N;
    me[RF_G0] = (double)t->ds.g0, me[RF_G] = (double)t->ds.G, me[RF_N_NODES] = (double)t->ds.N;
    me[RF_E] = (double)t->ds.E, me[RF_READS] = (double)t->rd.reads, me[RF_LOAD] = t->load_seconds;
    me[RF_LOAD_RSS] = t->load_rss_mb, me[RF_RSS] = peak_rss_mb();
    dist_sum_f64(a, t->ranks * RF_N);
    return a;
}

/* The shards (one with one process), printed by rank 0 at the start of a run. */
static void report_shards(const trainer *t) {
    double *a = rank_figures(t), most = 0, mean = 0;
    for (int r = 0; r < t->ranks; r++)
        most = fmax(most, a[r * RF_N + RF_N_NODES]), mean += a[r * RF_N + RF_N_NODES] / t->ranks;
    if (!t->quiet && t->ranks > 1)
        printf("seertrain: %d ranks (%s), [dist] batch = %s: %lld graphs per step in all\n",
               t->ranks, dist_library(), t->cfg.dist_batch, (long long)t->global_batch);
    if (!t->quiet) {
        for (int r = 0; r < t->ranks; r++) {
            const double *f = a + r * RF_N;
            char who[32] = "data";
            if (t->ranks > 1) snprintf(who, sizeof who, "rank %d", r);
            printf("  %s: graphs %.0f..%.0f, %.0f nodes, %.0f edges, %.0f hyperslab reads, "
                   "loaded in %.2f s (%.0f MB), %.0f MB with the batch workspace\n", who, f[RF_G0],
                   f[RF_G0] + f[RF_G] - 1, f[RF_N_NODES], f[RF_E], f[RF_READS], f[RF_LOAD],
                   f[RF_LOAD_RSS], f[RF_RSS]);
        }
        if (t->ranks > 1)
            printf("  node imbalance: the largest shard holds %.3fx the mean\n", mean > 0 ? most / mean : 1.0);
    }
    free(a);
}

/* summary.json and the final table (printed even with --quiet, which silences progress only). */
static void final_report(trainer *t, const label_metrics *vm, const label_metrics *tm,
                         int64_t best_step) {
    int M = t->M;
    char path[1200];
    memcpy(t->final_val, vm, sizeof(label_metrics) * (size_t)M);
    memcpy(t->final_test, tm, sizeof(label_metrics) * (size_t)M);
    double *base = seer_calloc((size_t)M, sizeof(double)), base_mean = 0;
    mean_baseline(t, base);
    for (int m = 0; m < M; m++) base_mean += base[m] / M;
    double *rk = rank_figures(t); // collective: before rank 0 goes its own way
    if (t->rank != 0) {
        free(base), free(rk);
        return;
    }
    snprintf(path, sizeof path, "%s/summary.json", t->run_dir);
    FILE *s = fopen(path, "w");
    if (s) {
        fprintf(s, "{\"model\":\"%s\",\"multi_task\":\"%s\",\"train_seconds\":%.1f,"
                   "\"best_step\":%lld,\"best_val_loss\":%.6g,\"mean_val_mape\":%.6g,"
                   "\"mean_test_mape\":%.6g,\"train_mean_val_mape\":%.6g,",
                t->cfg.model_name, t->cfg.train_multi_task, t->train_seconds, (long long)best_step,
                t->best_val, mean_mape(vm, M), mean_mape(tm, M), base_mean);
        json_metrics(s, t, "val", vm);
        fputc(',', s);
        json_metrics(s, t, "test", tm);
#ifdef SEER_HAVE_CUDA
        if (t->be->device)
            fprintf(s, ",\"device\":\"%s\",\"device_memory_mb\":%.1f,\"batch_capacity_nodes\":%lld,"
                       "\"resident_data_mb\":%.1f",
                    t->device_name, (double)cuda_backend_allocated() / (1 << 20),
                    (long long)t->batch.cap_N, (double)t->shard_bytes / (1 << 20));
#endif
        {
            fprintf(s, ",\"dist\":{\"ranks\":%d,\"library\":\"%s\",\"batch\":\"%s\"", t->ranks,
                    dist_library(), t->cfg.dist_batch);
            static const char *keys[RF_N] = {"first_graph", "graphs", "nodes", "edges",
                                             "hyperslab_reads", "load_seconds", "loaded_rss_mb",
                                             "peak_rss_mb"};
            for (int k = 0; k < RF_N; k++) {
                fprintf(s, ",\"%s\":[", keys[k]);
                for (int r = 0; r < t->ranks; r++)
                    fprintf(s, "%s%.6g", r ? "," : "", rk[r * RF_N + k]);
                fputc(']', s);
            }
            fputc('}', s);
        }
        fputs("}\n", s);
        fclose(s);
    }
    free(rk);
    if (t->closed) printf("\nlinear baseline (ridge on a bag of operators), val loss %.4f\n", t->best_val);
    else printf("\nbest checkpoint: step %lld (val loss %.4f)\n", (long long)best_step, t->best_val);
    metrics_print_header(stdout);
    print_table(t, "val", vm, stdout);
    print_table(t, "test", tm, stdout);
    printf("mean MAPE: val %.3f%%, test %.3f%%; predicting the training mean gives %.3f%% on val\n",
           mean_mape(vm, M), mean_mape(tm, M), base_mean);
    free(base);
}

/* A closed-form model (the ridge baseline): one ridge per label, lambda from a grid by validation
 * loss (model/ridge.h); the checkpoint holds the solution (last.ckpt = best.ckpt). */
static int closed_form_run(trainer *t, seer_err *err) {
    int M = t->M;
    int64_t ntr = t->n_ids[SPLIT_TRAIN], nva = t->n_ids[SPLIT_VAL];
    double t0 = seer_now();
    if (ridge_fit_labels(&t->ridge, t->ridge_X, t->targets, t->ids[SPLIT_TRAIN], ntr,
                         t->ids[SPLIT_VAL], nva, &t->best_val, err))
        return -1;
    t->train_seconds = seer_now() - t0;
    t->epoch = 1;
    char last[1200], best[1200];
    snprintf(last, sizeof last, "%s/last.ckpt", t->run_dir);
    snprintf(best, sizeof best, "%s/best.ckpt", t->run_dir);
    label_metrics vm[MODEL_MAX_HEADS] = {{0}}, tm[MODEL_MAX_HEADS] = {{0}};
    if (nva) trainer_evaluate(t, t->ids[SPLIT_VAL], nva, vm, NULL);
    write_test_predictions(t, tm);
    if (nva) memcpy(t->last_val, vm, sizeof(label_metrics) * (size_t)M), t->has_last_val = 1;
    if (trainer_save(t, last, err) || trainer_save(t, best, err)) return -1;
    if (!t->quiet)
        printf("seertrain: linear baseline, %d features, %lld train / %lld val / %lld test graphs, "
               "fitted in %.2f s\n", t->ridge.s.F, (long long)ntr, (long long)nva,
               (long long)t->n_ids[SPLIT_TEST], t->train_seconds);
    final_report(t, vm, tm, 0);
    return 0;
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

int trainer_run(trainer *t, seer_err *err) {
    const seer_config *c = &t->cfg;
    if (t->rank == 0 && mkdir_p(t->run_dir, err)) return -1;
    if (t->closed) return closed_form_run(t, err);
    char path[1200], last[1200], best[1200];
    snprintf(last, sizeof last, "%s/last.ckpt", t->run_dir);
    snprintf(best, sizeof best, "%s/best.ckpt", t->run_dir);
    snprintf(path, sizeof path, "%s/metrics.jsonl", t->run_dir);
    // a fresh run starts its log anew; a resumed one appends to it
    int fresh = t->step == 0 && t->epoch == 0 && t->batch_in_epoch == 0;
    FILE *log = NULL, *steps = NULL; // rank 0 logs and writes checkpoints
    if (t->rank == 0) {
        log = fopen(path, fresh ? "w" : "a");
        if (fresh) remove(best); // a best.ckpt left by an earlier run here is not this one's
        if (!log) return seer_fail(err, "%s: cannot open metrics log: %s", path, strerror(errno));
        if (c->output_step_log) {
            snprintf(path, sizeof path, "%s/steps.tsv", t->run_dir);
            steps = fopen(path, fresh ? "w" : "a");
            if (!steps) {
                fclose(log);
                return seer_fail(err, "%s: cannot open the step log: %s", path, strerror(errno));
            }
            if (fresh) fputs("step\tloss\tlr\tseconds\n", steps);
        }
    }
    int64_t ntr = t->n_ids[SPLIT_TRAIN], bs = t->global_batch;
    int64_t per_epoch = (ntr + bs - 1) / bs;
    int M = t->M;
    label_metrics *vm = seer_calloc((size_t)M, sizeof *vm), *tm = seer_calloc((size_t)M, sizeof *tm);
    int64_t *perm = seer_malloc(sizeof(int64_t) * (size_t)(ntr ? ntr : 1));
    int stopped = 0, rc = 0;
    double run_t0 = seer_now();
    if (!t->quiet)
        printf("seertrain: %lld train / %lld val / %lld test graphs, %d label(s), %lld parameters, "
               "%lld steps per epoch, %s, run folder %s\n",
               (long long)ntr, (long long)t->n_ids[SPLIT_VAL], (long long)t->n_ids[SPLIT_TEST], M,
               (long long)t->P, (long long)per_epoch, t->device_name[0] ? t->device_name : "CPU",
               t->run_dir);
    report_shards(t);
    while (t->epoch < c->train_epochs && !stopped &&
           (c->train_stop_epoch <= 0 || t->epoch < c->train_stop_epoch)) {
        // The shuffle of epoch e comes from the generator state saved at its start.
        seer_rng r = t->rng_epoch;
        memcpy(perm, t->ids[SPLIT_TRAIN], sizeof(int64_t) * (size_t)ntr);
        rng_shuffle_i64(&r, perm, ntr);
        seer_progress prog;
        char label[64];
        snprintf(label, sizeof label, "epoch %lld/%lld", (long long)t->epoch + 1,
                 (long long)c->train_epochs);
        progress_begin(&prog, label, per_epoch);
        if (t->quiet) prog.tty = 0;
        double t0 = seer_now();
        while (t->batch_in_epoch < per_epoch) {
            int64_t start = t->batch_in_epoch * bs, n = ntr - start < bs ? ntr - start : bs;
            dist_phase("training step");
            double step_t0 = seer_now();
            double loss = trainer_step(t, perm + start, n);
            if (t->inject_step == t->step && t->inject_rank == t->rank) inject_failure(t);
            if (!isfinite(loss)) {
                rc = seer_fail(err, "step %lld: the loss is %g (diverged); lower [train] lr or "
                                    "enable grad_clip", (long long)t->step, loss);
                goto out;
            }
            if (steps)
                fprintf(steps, "%lld\t%.9g\t%.9g\t%.6f\n", (long long)t->step, loss, t->sched.lr,
                        seer_now() - step_t0);
            t->epoch_loss_sum += loss, t->epoch_batches++, t->epoch_graphs += n;
            t->batch_in_epoch++;
            char extra[64];
            snprintf(extra, sizeof extra, "loss %.4f", t->epoch_loss_sum / (double)t->epoch_batches);
            progress_update(&prog, t->batch_in_epoch, extra);
            if (c->output_save_every > 0 && t->step % c->output_save_every == 0 &&
                (rc = trainer_save(t, last, err)))
                goto out;
            if (c->train_max_steps > 0 && t->step >= c->train_max_steps) {
                stopped = 1;
                break;
            }
        }
        progress_end(&prog);
        double secs = seer_now() - t0;
        if (stopped && t->batch_in_epoch < per_epoch) break; // stopped mid-epoch: resume continues it
        // end of epoch: evaluate, schedule, early stopping, checkpoints
        double loss_sum = t->epoch_loss_sum;
        int64_t nb = t->epoch_batches, graphs = t->epoch_graphs;
        t->epoch_loss_sum = 0, t->epoch_batches = 0, t->epoch_graphs = 0;
        double imbalance = t->imb_mean > 0 ? t->imb_max / t->imb_mean : 1.0;
        t->imb_max = t->imb_mean = 0;
        dist_phase("evaluation");
        t->epoch++;
        t->batch_in_epoch = 0;
        t->rng_epoch = r;
        double val_loss = t->n_ids[SPLIT_VAL] ? trainer_evaluate(t, t->ids[SPLIT_VAL],
                                                                 t->n_ids[SPLIT_VAL], vm, NULL)
                                              : loss_sum / (double)(nb ? nb : 1);
        if (t->n_ids[SPLIT_VAL]) {
            memcpy(t->last_val, vm, sizeof(label_metrics) * (size_t)M);
            t->has_last_val = 1;
        }
        double lr_used = t->sched.lr;
        sched_epoch_end(&t->sched, t->epoch, val_loss);
        int improved = val_loss < t->best_val;
        if (improved) t->best_val = val_loss, t->since_best = 0;
        else t->since_best++;
        if (log) {
            fprintf(log, "{\"epoch\":%lld,\"step\":%lld,\"train_loss\":%.6g,\"val_loss\":%.6g,"
                         "\"lr\":%.6g,\"graphs_per_s\":%.1f,\"seconds\":%.4f,",
                    (long long)t->epoch, (long long)t->step, loss_sum / (double)(nb ? nb : 1),
                    val_loss, lr_used, graphs / (secs > 0 ? secs : 1e-9), secs);
            if (t->ranks > 1) fprintf(log, "\"ranks\":%d,\"step_imbalance\":%.4f,", t->ranks, imbalance);
            json_metrics(log, t, "val", vm);
            fputs("}\n", log);
            fflush(log);
        }
        if (!t->quiet)
            printf("epoch %3lld  step %6lld  loss %.4f  val_loss %.4f  val_mape %.3f%%  lr %.2g  "
                   "%.0f graphs/s%s\n",
                   (long long)t->epoch, (long long)t->step, loss_sum / (double)(nb ? nb : 1),
                   val_loss, mean_mape(vm, M), lr_used, graphs / (secs > 0 ? secs : 1e-9),
                   improved ? "  *" : "");
        if (!t->quiet && t->ranks > 1)
            printf("           %d ranks: the busiest rank ran %.2fx the mean graphs per step\n",
                   t->ranks, imbalance);
        fflush(stdout);
        if (c->train_early_stop > 0 && t->since_best >= c->train_early_stop) {
            if (!t->quiet) printf("early stop: no better validation loss for %lld epochs\n",
                                  (long long)t->since_best);
            stopped = 1;
        }
        if ((rc = trainer_save(t, last, err))) goto out;
        if (improved && (rc = trainer_save(t, best, err))) goto out;
    }
    if (t->batch_in_epoch > 0 && (rc = trainer_save(t, last, err))) goto out;
    t->train_seconds = seer_now() - run_t0;

    // Final report with the best weights (by validation loss); the live state stays the last.
    int64_t have_best = t->rank == 0 && access(best, R_OK) == 0;
    dist_bcast(&have_best, sizeof have_best, 0);
    if (have_best) {
        size_t pb = sizeof(float) * (size_t)t->P;
        float *keep = seer_malloc(pb);
        t->be->download(keep, t->params, pb);
        int64_t best_step = 0;
        if (trainer_load_params(t, best, &best_step, err)) {
            free(keep);
            rc = -1;
            goto out;
        }
        if (t->n_ids[SPLIT_VAL]) trainer_evaluate(t, t->ids[SPLIT_VAL], t->n_ids[SPLIT_VAL], vm, NULL);
        write_test_predictions(t, tm);
        t->be->upload(t->params, keep, pb);
        free(keep);
        final_report(t, vm, tm, best_step);
    }
out:
    if (log) fclose(log);
    if (steps) fclose(steps);
    free(vm), free(tm), free(perm);
    return rc;
}
