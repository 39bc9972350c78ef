/* export: a trained checkpoint -> the compact .seer predictor (libseer) and safetensors + JSON
 * (for PyTorch, JAX or Rust tools). Formats: src/infer/seer_format.h and datasets/FORMAT.md. */
#ifndef SEER_EXPORT_H
#define SEER_EXPORT_H

#include <stdint.h>

#include "common/common.h"

typedef struct {
    int64_t params;   // parameter count
    uint64_t bytes;   // size of the written file
    char sidecar[1024]; // safetensors: the JSON sidecar's path
    char note[1024];    // .seer: what the tool should tell the user ("" when nothing)
} export_info;

/* dtype: EXPORT_FP32 / EXPORT_FP16 / EXPORT_INT8. A checkpoint written before the training data's
 * operator counts (coverage.op_counts) or its watched operator pairs (coverage.op_pairs) were
 * recorded gets them recounted from its dataset and
 * split, reproduced from its stored config by the trainer's own code and used only when every
 * range the checkpoint recorded comes out the same; info->note says which happened. The rows of
 * an operator embedding (op_embed.weight) for operators the data never had are written as the
 * seen rows' mean (data/coverage.h: coverage_fill_unseen). */
int export_seer(const char *ckpt_path, const char *out_path, int dtype, export_info *info,
                seer_err *err);

/* seerexport --count-pairs: the exported model (or each member of an ensemble) at model_path,
 * written before it recorded its watched operator pairs (coverage.op_pairs, data/coverage.h), with
 * them counted on the PerfGraph file(s) data_path (a.h5,b.h5 as [data] path takes them): every
 * graph of the families the model trained on (info.families; all where either records none), so that a pair with no edge there
 * had none in the training split either. Refused when data_path cannot hold the training split the
 * model recorded (fewer graphs, narrower node or edge counts, fewer nodes of an operator) or the
 * model records the pairs already. report gets one line per model or member. */
int export_count_pairs(const char *model_path, const char *data_path, const char *out_path,
                       char *report, size_t len, seer_err *err);

/* Writes out_path (safetensors, fp32) and the sidecar next to it: out_path with ".safetensors"
 * replaced by ".json" (or ".json" appended). */
int export_safetensors(const char *ckpt_path, const char *out_path, export_info *info,
                       seer_err *err);

#endif
