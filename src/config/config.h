/* config: the INI configuration, described by one table.
 *
 * SEER_CONFIG_KEYS lists every key once (section, key, type, default, allowed values, help);
 * parsing, defaults, validation, `seertrain --help-config`, the echo of the resolved config and
 * configs/README.md all come from it. A field is named section_key (cfg.train_lr). */
#ifndef SEER_CONFIG_H
#define SEER_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "common/common.h"

// X(section, key, type STR|INT|DBL|ENUM, default, allowed ("a|b", or NULL), help)
// An ENUM key is parsed once into the position of its value in the allowed list (an int field);
// the CFG_* enums below name the positions (test_config checks each against the list), and
// config_choice gives the name back. Strings stop at the parser.
#define SEER_CONFIG_KEYS(X)                                                                        \
    X(data, path, STR, "datasets/nb201.h5", NULL,                                                  \
      "PerfGraph HDF5 dataset (datasets/FORMAT.md); several files with one schema, comma-separated, train as one (a file without /graph/family gives its name as the family)") \
    X(data, labels, STR, "titan_rtx_infer_ms", NULL,                                                 \
      "comma-separated label names from /schema/labels, or 'all'")                                 \
    X(data, split, ENUM, "fractions", "fractions|counts",                                          \
      "split by fractions (PerfSeer 2:1:1) or by graph counts (BRP-NAS: 900/100/rest)")            \
    X(data, train_frac, DBL, "0.5", NULL, "split=fractions: share of graphs for training")         \
    X(data, val_frac, DBL, "0.25", NULL, "split=fractions: share for validation (test = rest)")    \
    X(data, train_count, INT, "900", NULL, "split=counts: training graphs")                       \
    X(data, val_count, INT, "100", NULL, "split=counts: validation graphs (test = rest)")          \
    X(data, split_seed, INT, "0", NULL, "seed of the split (graphs sharing /graph/group stay together)") \
    X(data, limit, INT, "0", NULL, "use only the first N graphs of the file (0 = all)")            \
    X(data, test_family, STR, "", NULL,                                                           \
      "hold out these families (/graph/family, comma-separated, e.g. fbnet) as the whole test split: a transfer evaluation; the other graphs keep their train/val split and their test share trains") \
    X(model, name, STR, "seernet", NULL,                                                         \
      "predictor, a name in the model registry (src/model/model.c): seernet (PerfSeer's SeerNet), " \
      "perfsage (GraphSAGE over operators), gcn (BRP-NAS), linear (ridge on a bag of "            \
      "operators; no training loop), or cost (the roofline cost of [model] target alone, no "    \
      "learned weights)")                                                                       \
    X(model, hidden, INT, "256", NULL, "width H of every hidden state (PerfSAGE: of each of the self and neighbour halves)") \
    X(model, blocks, INT, "1", NULL, "message-passing blocks / layers L (1..8)")                 \
    X(model, op_embed, INT, "16", NULL, "perfsage: width of the learned operator-type embedding") \
    X(model, agg, ENUM, "mean", "mean|synmm", "node aggregation of incoming edge messages")         \
    X(model, head_hidden, INT, "0", NULL, "hidden width of the output MLP (0 = model.hidden)")     \
    X(model, target, ENUM, "log",                                                                \
      "log|roofline|roofline_weights|roofline_light|roofline_kept|roofline_kept_silu|roofline_kept_acts|roofline_peak|roofline_dw", \
      "what the network learns: the standardised log label (log; PerfSeer), or the log ratio of the label to a roofline cost c0 + c1 nodes + c2 FLOPs + c3 bytes fitted per label on the training split (roofline: the scale comes from the graph, so predictions extrapolate to networks larger or smaller than any trained on); roofline_weights adds c4 weight bytes (what a training step reads, updates and keeps gradients of whatever the batch: AlexNet's and VGG's memory); roofline_light also prices the light operators' bytes (elementwise arithmetic and views: the global feature log_mem_light, which a runtime fuses, does in place or never copies) apart from the rest's, c3 (bytes - light) + c5 light; roofline_kept adds to roofline_weights c5 times the bytes a training step keeps for the backward pass (the global feature log_mem_kept: a convolution keeps its input, a ReLU its output, a sum nothing), which follow peak training memory across network families; roofline_kept_silu the same with SiLU (exported as a sigmoid and a product) keeping its input alone, as PyTorch's does (log_mem_kept_silu); roofline_kept_acts that count less the tensors computed from weights alone, such as a weight transposed at run time (log_mem_kept_acts); roofline_peak adds to roofline_kept_acts c6 times the mean activation tensor's bytes (log_tensor_bytes_mean: the gradients a backward pass holds beside what it keeps, and what the allocator retains of them, scale with the size of a typical tensor); roofline_dw adds to roofline_peak c7 times the depthwise convolutions' FLOPs (log_flops_dw: a CPU's training step of a depthwise convolution runs at a tenth to a seventieth of a dense one's FLOP rate)") \
    X(model, readout, ENUM, "pooled", "pooled|additive",                                         \
      "pooled: each head reads the pooled graph embedding (the papers); additive: beside it, per label a small MLP on each node's own features gives a log contribution and the graph adds their log-sum-exp (a sum of positive per-node terms), so the output grows with the work in the graph instead of averaging it away") \
    X(model, clamp, ENUM, "off", "off|range",                                                    \
      "range: clamp every feature to its training range before the network reads it, so a graph unlike the training data cannot drive the network into extrapolation (the roofline cost reads the true values; seerpredict still warns)") \
    X(train, multi_task, ENUM, "sum", "sum|pcgrad|single",                                        \
      "several labels: one trunk, a head per label, summed losses (sum) or PCGrad on the trunk "  \
      "(pcgrad); or one separate model per label, trained in turn (single)")                     \
    X(train, epochs, INT, "50", NULL, "maximum number of epochs")                                \
    X(train, batch_size, INT, "128", NULL, "graphs per mini-batch")                               \
    X(train, eval_batch_size, INT, "512", NULL, "graphs per batch when evaluating")               \
    X(train, optimizer, ENUM, "adamw", "adam|adamw", "Adam (L2 in the gradient) or AdamW (decoupled decay)") \
    X(train, lr, DBL, "1e-3", NULL, "initial learning rate")                                     \
    X(train, weight_decay, DBL, "0", NULL, "weight decay (L2 for adam, decoupled for adamw)")      \
    X(train, beta1, DBL, "0.9", NULL, "Adam first-moment decay")                                  \
    X(train, beta2, DBL, "0.999", NULL, "Adam second-moment decay")                               \
    X(train, eps, DBL, "1e-8", NULL, "Adam epsilon")                                             \
    X(train, schedule, ENUM, "plateau", "plateau|cosine|none",                                    \
      "learning-rate schedule: ReduceLROnPlateau on validation loss, cosine over epochs, or none") \
    X(train, plateau_factor, DBL, "0.5", NULL, "plateau: multiply lr by this on a plateau")       \
    X(train, plateau_patience, INT, "5", NULL, "plateau: epochs without improvement before a cut") \
    X(train, min_lr, DBL, "1e-6", NULL, "lower bound of the learning rate (plateau and cosine)")  \
    X(train, grad_clip, DBL, "1.0", NULL, "clip the global gradient norm to this (0 = off)")      \
    X(train, early_stop, INT, "15", NULL, "stop after this many epochs without a better validation loss (0 = off)") \
    X(train, max_steps, INT, "0", NULL, "stop after this many optimizer steps in total (0 = no limit)") \
    X(train, stop_epoch, INT, "0", NULL,                                                        \
      "pause after this epoch (resumable; the schedule still spans [train] epochs; 0 = off): how seersweep runs a trial rung by rung") \
    X(train, seed, INT, "1", NULL, "seed of initialisation and shuffling")                       \
    X(train, threads, INT, "0", NULL, "CPU threads for BLAS and the sparse ops (0 = all cores)")  \
    X(eval, paths, STR, "", NULL,                                                              \
      "after training, score the best checkpoint (exported to best.seer in the run folder) on these datasets, comma-separated: a per-label table for each, also in summary.json under \"eval\" (a transfer evaluation on other search spaces)") \
    X(output, dir, STR, "checkpoints", NULL, "folder that holds run folders")                    \
    X(output, run, STR, "", NULL, "run folder name (empty = the config file's base name)")       \
    X(output, save_every, INT, "0", NULL, "also checkpoint every N steps (0 = at epoch ends only)") \
    X(output, step_log, INT, "0", NULL, "1: also write steps.tsv, the loss, learning rate and seconds of every step") \
    X(output, plot, INT, "1", NULL,                                                             \
      "1: draw predicted_vs_measured.png (the test split, log-log, a panel per label) and loss.png in the run folder at the end (scripts/run_plot.py, python3-matplotlib; skipped with a note when missing); 0: no plots") \
    X(output, profile, INT, "0", NULL,                                                          \
      "1: time each phase of a training step (waiting for the GPU after each, so a little slower) and print where the time goes") \
    X(backend, device, ENUM, "auto", "auto|cpu|cuda", "where to train: auto picks CUDA when a GPU is present and the build has it") \
    X(backend, precision, ENUM, "tf32", "fp32|tf32|bf16",                                         \
      "GPU dense products: TF32 tensor cores (default), plain fp32, or bf16 tensor cores; all accumulate in fp32")    \
    X(dist, backend, ENUM, "auto", "auto|mpi|none",                                               \
      "data-parallel ranks: auto joins the job when mpirun/srun started seertrain (MPI through libseer_mpi.so); none = one process") \
    X(dist, batch, ENUM, "global", "global|per_rank",                                             \
      "global: train.batch_size is the whole step's batch, each rank runs the graphs of it that it holds (R ranks match one rank); per_rank: the step's batch is ranks x batch_size") \
    X(dist, collectives, ENUM, "auto", "auto|mpi|nccl",                                          \
      "all-reduce through NCCL when training on GPUs (auto), or MPI; CPU ranks always use MPI")   \
    X(dist, timeout, DBL, "300", NULL,                                                         \
      "seconds a collective may wait for the other ranks before the job ends with an error (0 = no limit)") \
    X(dist, inject_failure, STR, "", NULL,                                                     \
      "test only: RANK:STEP:KIND makes rank RANK fail at step STEP; KIND is error, oom, crash or hang")

#define CFG_FIELD_STR(name) char *name;
#define CFG_FIELD_INT(name) int64_t name;
#define CFG_FIELD_DBL(name) double name;
#define CFG_FIELD_ENUM(name) int name;

enum { CFG_SPLIT_FRACTIONS, CFG_SPLIT_COUNTS };                 // data.split
enum { CFG_AGG_MEAN, CFG_AGG_SYNMM };                           // model.agg
enum { // model.target
    CFG_TARGET_LOG,
    CFG_TARGET_ROOFLINE,
    CFG_TARGET_ROOFLINE_W,
    CFG_TARGET_ROOFLINE_L,
    CFG_TARGET_ROOFLINE_K,
    CFG_TARGET_ROOFLINE_KS,
    CFG_TARGET_ROOFLINE_KA,
    CFG_TARGET_ROOFLINE_P,
    CFG_TARGET_ROOFLINE_DW
};
enum { CFG_CLAMP_OFF, CFG_CLAMP_RANGE };                        // model.clamp
enum { CFG_READOUT_POOLED, CFG_READOUT_ADDITIVE };              // model.readout
enum { CFG_MULTI_SUM, CFG_MULTI_PCGRAD, CFG_MULTI_SINGLE };     // train.multi_task
enum { CFG_OPT_ADAM, CFG_OPT_ADAMW };                           // train.optimizer
enum { CFG_SCHED_PLATEAU, CFG_SCHED_COSINE, CFG_SCHED_NONE };   // train.schedule
enum { CFG_DEVICE_AUTO, CFG_DEVICE_CPU, CFG_DEVICE_CUDA };      // backend.device
enum { CFG_PREC_FP32, CFG_PREC_TF32, CFG_PREC_BF16 };           // backend.precision
enum { CFG_DIST_AUTO, CFG_DIST_MPI, CFG_DIST_NONE };            // dist.backend
enum { CFG_BATCH_GLOBAL, CFG_BATCH_PER_RANK };                  // dist.batch
enum { CFG_COLL_AUTO, CFG_COLL_MPI, CFG_COLL_NCCL };            // dist.collectives

enum {
#define X(sec, key, type, def, choices, help) CFG_KEY_##sec##_##key,
    SEER_CONFIG_KEYS(X)
#undef X
    CFG_NKEYS
};

typedef struct {
#define X(sec, key, type, def, choices, help) CFG_FIELD_##type(sec##_##key)
    SEER_CONFIG_KEYS(X)
#undef X
    int line[CFG_NKEYS]; // line in `file` where each key was set (0 = default or --set)
    char file[512];
} seer_config;

void config_defaults(seer_config *c);
void config_free(seer_config *c);
/* Parses an INI file over the current values. */
int config_load(seer_config *c, const char *path, seer_err *err);
/* Parses INI text (origin names it in messages), e.g. the config stored in a checkpoint. */
int config_load_string(seer_config *c, const char *text, const char *origin, seer_err *err);
/* Applies one "section.key=value" override. */
int config_set(seer_config *c, const char *assignment, seer_err *err);
/* Cross-key checks (ranges, sums). */
int config_validate(const seer_config *c, seer_err *err);
/* The resolved config as INI text that config_load_string reads back (caller frees). */
char *config_to_string(const seer_config *c);
/* `--help-config`: every key with type, default and help. markdown != 0 writes a table. */
void config_help(FILE *f, int markdown);
/* The name of an ENUM key's value (CFG_*), or NULL. */
const char *config_choice(int key, int value);
/* "file:line" of where a key was set, or "--set/default" (for messages). */
const char *config_where(const seer_config *c, int key, char *buf, size_t len);

#endif
