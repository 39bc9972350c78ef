/* train: the training run behind seertrain (data, model, loop, evaluation, checkpoints).
 * Size letters: G graphs, M labels, P parameters. */
#ifndef SEER_TRAIN_H
#define SEER_TRAIN_H

#include "common/container.h"
#include "config/config.h"
#include "data/coverage.h"
#include "data/prep.h"
#include "dist/grad_comm.h"
#include "model/model.h"
#include "model/ridge.h"
#include "optim/optim.h"
#include "train/batch_source.h"
#include "eval/metrics.h"

/* [output] profile: seconds per phase of the training steps, each phase ended by waiting for the
 * backend (prof_mark), so a phase's figure is its own device work plus its host work. */
enum { PROF_BATCH, PROF_FORWARD, PROF_LOSS, PROF_BACKWARD, PROF_REDUCE, PROF_CLIP, PROF_OPTIM,
       PROF_EVAL, PROF_N };
typedef struct {
    int on;
    double last, sec[PROF_N];
    int64_t steps;
} step_profile;

typedef struct {
    seer_config cfg;
    // Data-parallel (dist/dist.h): every rank has the file's index and the split; it holds the
    // rows of graphs [ds.g0, ds.g0 + ds.G) only. Graph ids below are file ids unless named local.
    int rank, ranks;
    pg_index ix;
    pg_dataset ds;    // this rank's shard (all graphs with one rank)
    pg_read_stats rd; // what the shard read took from the file
    double load_seconds, load_rss_mb; // reading the shard: time, peak memory after it
    int M;
    int *label_cols;  // (M) columns of ds->label_y
    int8_t *which;    // (ix.G) split of each graph
    int64_t *ids[3];  // graph ids per split
    int64_t n_ids[3];
    int64_t global_batch;         // graphs per step over all ranks
    int64_t *step_local, *step_pos; // (max(global_batch, eval batch)) local ids of a step and
                                    // their positions in the step's list
    double imb_max, imb_mean;     // sums over the epoch's steps of max and mean graphs per rank
    int inject_rank, inject_step; // [dist] inject_failure (test only; step 0 = off)
    char inject_kind[16];
    norm_stats norm;
    coverage cov;     // the training split's ranges (data/coverage.h), for the export
    char *families;   // the families of the training split, comma-separated (NULL: none recorded)
    float *targets;   // (G, M) standardised log targets
    double *log_cost; // (G, M) log roofline cost of each graph and label (0: target = log)
    model net;
    const seer_backend *be;
    char device_name[200];      // the GPU and precision when training on one ("" on the CPU)
    int gpu;                    // this rank's GPU (-1 on the CPU)
    batch_source src;           // where a step's batch comes from (CPU or resident on the GPU)
    grad_comm comm;             // the gradient all-reduce over the ranks
    int64_t P;
    float *params, *grads, *adam_m, *adam_v; // (P) each, backend memory
    model_acts acts, dacts;
    int pcgrad;                 // PCGrad on the trunk (multi_task = pcgrad and M > 1)
    float *task_grads;          // (M, P) per-task gradients (PCGrad)
    double *pc_gd, *pc_k, *pc_out; // PCGrad float64 workspace: (M, trunk), (M, M), (trunk)
    seer_rng rng_pcgrad;        // task orders of PCGrad; saved in checkpoints
    float *host_pred;           // (batch, M) host copy of an evaluation batch's predictions
    // progress, all saved in checkpoints
    int64_t step, epoch, batch_in_epoch, since_best;
    seer_rng rng_epoch; // generator state at the start of the current epoch (its shuffle)
    lr_schedule sched;
    double best_val;
    double epoch_loss_sum;             // running sums of the current epoch (for its log line)
    int64_t epoch_batches, epoch_graphs;
    char run_dir[1024];
    int quiet;
    // figures of the best checkpoint, filled at the end of trainer_run
    label_metrics final_val[MODEL_MAX_HEADS], final_test[MODEL_MAX_HEADS];
    // validation figures of the latest evaluation (saved in checkpoints: seerexport's provenance)
    label_metrics last_val[MODEL_MAX_HEADS];
    int has_last_val;
    double train_seconds;
    step_profile prof; // [output] profile: where a step's time goes
    // a model fitted in closed form (MODEL_CLOSED_FORM: the ridge baseline, model/ridge.h)
    int closed;
    int cost_only; // model "cost": the closed form with every weight zero (MODEL_COST_ONLY)
    ridge_model ridge;
    double *ridge_X; // (G, F) standardised features of every graph
} trainer;

/* Sets up a run from a resolved config: loads and splits the data, fits normalisation, builds the
 * model and initialises its parameters. */
int trainer_init(trainer *t, const seer_config *cfg, seer_err *err);
void trainer_free(trainer *t);

/* Loads parameters, optimizer moments, normalisation and progress from a checkpoint. */
int trainer_load(trainer *t, const char *ckpt_path, seer_err *err);
int trainer_save(const trainer *t, const char *ckpt_path, seer_err *err);
/* The operator embedding's rows (op_embed.weight) of operators the training split never had set
 * to the seen rows' mean (data/coverage.h: coverage_fill_unseen), in the live parameters: done
 * at every epoch end before validation, and on the copy every checkpoint writes. */
void trainer_fill_unseen_ops(trainer *t);
/* Loads only the parameters (and reports the checkpoint's step). */
int trainer_load_params(trainer *t, const char *ckpt_path, int64_t *step, seer_err *err);

/* Reads a checkpoint file into a container (checked magic and version). */
int ckpt_open(const char *ckpt_path, seer_container *c, seer_err *err);

/* Reads only the resolved config stored in a checkpoint. */
int ckpt_read_config(const char *ckpt_path, seer_config *cfg, seer_err *err);
/* The same from an open checkpoint c (path names it). A checkpoint of a [model] target =
 * roofline_dw run written before 2026-12-07 stores "target = (null)" (config_choice named only 8
 * values); its target is then taken from norm.target, which records it. */
int ckpt_config(const seer_container *c, const char *path, seer_config *cfg, seer_err *err);

/* Trains until epochs, max_steps or early stopping; writes last.ckpt / best.ckpt and
 * metrics.jsonl under run_dir; prints the summary table. */
int trainer_run(trainer *t, seer_err *err);

/* One optimizer step on the given graph ids (the step's whole batch over all ranks: each rank runs
 * the graphs it holds); returns the mean over labels of the per-label
 * losses (before the step). */
double trainer_step(trainer *t, const int64_t *ids, int64_t count);

/* Loss and per-label metrics (native units) over a list of graphs; pred (count, M) optional. With
 * several ranks, each predicts the graphs it holds and all ranks get every prediction (so the
 * metrics are exact, not averages of per-rank figures). */
double trainer_evaluate(trainer *t, const int64_t *ids, int64_t count, label_metrics *metrics,
                        double *pred);
/* The same, also giving the native labels (y, (count, M), may be NULL). */
double trainer_evaluate_labels(trainer *t, const int64_t *ids, int64_t count,
                               label_metrics *metrics, double *pred, float *y);

#endif
