/* libseeronnx: Seer's ONNX front end as a library (reader, shape inference, operator costs and
 * the PerfGraph features), producing the seer_graph that libseer predicts from. Unlike libseer it
 * depends on protobuf-c. seerpredict and the Python binding use it for ONNX paths.
 *
 *   seer_onnx_graph *og;
 *   if (seer_onnx_load("net.onnx", 8, 0, &og, err, sizeof err)) ...
 *   seer_graph g; int32_t *ops;
 *   seer_onnx_model_graph(og, model, &g, &ops, err, sizeof err);  // ids in the model's op table
 *   seer_predict(model, &g, y, err, sizeof err);
 *   free(ops);
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

/* The graph as model m reads it: og's view with node_op renumbered from seer_onnx_op_name's ids
 * into m's op table by name (an operator m's table lacks is its Other). *ops gets the array to
 * free(), or NULL where m has no op table or, reading no op types, lacks an operator and has no
 * Other (its node_op is then NULL and only the operator check goes without). SEER_ERR_INVALID
 * where m reads op types, lacks one of og's and has no Other. Valid until seer_onnx_free and
 * free(*ops). Since libseeronnx 0.7. */
SEER_API seer_status seer_onnx_model_graph(const seer_onnx_graph *og, const seer_model *m,
                                           seer_graph *out, int32_t **ops, char *err, size_t err_len);
/* A device's main predictor and its specialist (a file marked by seerexport --specialist: one
 * trained on more, e.g. reparameterisable blocks): which of them answers for og. *answer is 1
 * (the specialist) where main reports structures its training graphs never had (seer_check_range's
 * SEER_OP and SEER_OP_PAIR items) that the specialist does not, else 0 (main). Those structures,
 * the reasons, go to items (*n_out of them, the first max_items stored; names by
 * seer_range_item_name(main, ...)); the specialist is not consulted where main reports none.
 * SEER_ERR_INVALID where spec is not marked a specialist. seerpredict --device and the Python
 * binding's seer.Routed route this way. Since libseeronnx 0.7. */
SEER_API seer_status seer_onnx_route(const seer_onnx_graph *og, const seer_model *main, const seer_model *spec,
                                     int *answer, seer_range_item *items, int max_items, int *n_out,
                                     char *err, size_t err_len);

#ifdef __cplusplus
}
#endif

#endif
