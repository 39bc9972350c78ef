/* libseeronnx: Seer's ONNX front end as a library (reader, shape inference, operator costs and
 * the PerfGraph features), producing the seer_graph that libseer predicts from. Unlike libseer it
 * depends on protobuf-c. seerpredict and the Python binding use it for ONNX paths.
 *
 *   seer_onnx_graph *og;
 *   if (seer_onnx_load("net.onnx", 8, 0, &og, err, sizeof err)) ...
 *   seer_graph g = *seer_onnx_view(og);
 *   g.node_op = NULL;            // or remap seer_onnx_op_name ids to the model's op table
 *   seer_predict(model, &g, y, err, sizeof err);
 *   seer_onnx_free(og);  */
#ifndef SEER_SEER_ONNX_H
#define SEER_SEER_ONNX_H

#include "seer/seer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct seer_onnx_graph seer_onnx_graph;

/* batch: the leading dimension of every graph input (0 = the model's own, or 1); fuse != 0 folds
 * BatchNormalization and activations into the preceding Conv/Gemm (seerconvert --fuse). */
SEER_API seer_status seer_onnx_load(const char *path, int64_t batch, int fuse,
                                    seer_onnx_graph **out, char *err, size_t err_len);
/* The graph; node_op holds ids into seer_onnx_op_name's table. Valid until seer_onnx_free. */
SEER_API const seer_graph *seer_onnx_view(const seer_onnx_graph *g);
SEER_API void seer_onnx_free(seer_onnx_graph *g);
/* The model's totals: FLOPs (a multiply-add is 2), bytes moved, parameters. */
SEER_API double seer_onnx_flops(const seer_onnx_graph *g);
SEER_API double seer_onnx_params(const seer_onnx_graph *g);
/* The batch the graph was built at (the one asked for, or the model's own leading dimension). */
SEER_API int64_t seer_onnx_batch(const seer_onnx_graph *g);
/* How many operators slide a window over 3 or more spatial dimensions (Conv3d, MaxPool3d: video,
 * volumes). The node features describe two (kernel_h/w, in_h/w, ...): the others count only
 * through FLOPs and bytes, so a prediction for such a graph is a guess whatever its ranges say
 * (seerpredict warns; libseeronnx 0.6.1 and later). */
SEER_API int seer_onnx_deep_windows(const seer_onnx_graph *g);

/* The converter's feature schema (what a model trained on seerconvert output expects). */
SEER_API int seer_onnx_n_features(int kind);
SEER_API const char *seer_onnx_feature_name(int kind, int i);
SEER_API int seer_onnx_n_op_types(void);
SEER_API const char *seer_onnx_op_name(int i);

/* 0 when the model's feature schema is the converter's (its global features may be the leading
 * ones of the converter's: a model trained before a global feature was appended); otherwise
 * SEER_ERR_INVALID with a message naming the first difference (a model trained on other features). */
SEER_API seer_status seer_onnx_check_schema(const seer_model *m, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
