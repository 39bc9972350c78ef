/* infer: the .seer file (the container of common/container.h, magic "SEERMODL"), shared by the
 * writer (src/export, seerexport) and the reader (libseer).
 *
 *   kv       model.name ("seernet"), model.sizes (the checkpoint's), export.dtype (fp32|fp16|int8),
 *            schema.{node,edge,global}_features, schema.op_types, metrics.names, metrics.units,
 *            norm.* (float64 statistics, as in checkpoints), info.* (provenance strings),
 *            coverage.* (the training split's ranges, data/coverage.h; absent in files written
 *            before libseer 0.3; coverage.op_counts absent before 0.4), calib.batch (seercalibrate's
 *            factors by batch) and calib.flops (--with-flops; --power: a = c = 0), data/prep.h;
 *            only in files it wrote, which are version 3; an ensemble (seerexport --ensemble): ensemble.members,
 *            info.ensemble and ensemble.weights (--weights; version 4), its members' files as
 *            byte tensors ensemble.member.<i>
 *   tensors  one per parameter, named as in the checkpoint: fp32 or fp16 (IEEE half), or for
 *            int8 files an int8 weight (fout, fin) plus "<name>.scale" fp32 (fout), symmetric per
 *            output channel (w = q * scale); biases stay fp32 in int8 files.
 * Units: a metric's unit is the suffix after its last underscore when it is a known unit. */
#ifndef SEER_SEER_FORMAT_H
#define SEER_SEER_FORMAT_H

#include <stdint.h>

#define SEER_MODEL_MAGIC "SEERMODL"
#define SEER_MODEL_VERSION 4 // the newest this build reads; 2: CRC-32C checksums, coverage.* ranges;
                             // 3: calib.batch (a build that reads only 2 refuses it instead of
                             // predicting without the factors); 4: ensemble.weights (a build that
                             // reads only 3 refuses a weighted ensemble instead of weighing its
                             // members alike)
#define SEER_MODEL_VERSION_WEIGHTS 4 // what a weighted ensemble is written as
#define SEER_MODEL_VERSION_PLAIN 2 // what a file without calib.batch is written as

enum { EXPORT_FP32 = 0, EXPORT_FP16 = 1, EXPORT_INT8 = 2 };

/* "fp32" / "fp16" / "int8" <-> EXPORT_*; parse returns -1 for anything else. */
const char *export_dtype_name(int dtype);
int export_dtype_parse(const char *s);

/* IEEE 754 binary16, round to nearest even (overflow to inf, NaN kept). */
uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);

/* Symmetric per-row int8: scale[r] = max|w[r, :]| / 127 (1 for an all-zero row), q = round(w / scale). */
void quantize_rows_i8(const float *w, int64_t rows, int64_t cols, int8_t *q, float *scale);

/* The unit of a metric name ("train_time_ms" -> "ms"), or "" when the suffix is not a unit. */
const char *metric_unit(const char *name);

#endif
