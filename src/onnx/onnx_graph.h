/* onnx: an ONNX model as an operator graph with every tensor's shape inferred.
 *
 * The reader uses protobuf-c bindings generated at build time from Debian's onnx.proto. It takes
 * models with weights, with weights stripped (initializers that carry only dims) and with
 * external data absent, opsets 7 to 18 of the default domain. Shape inference runs over the
 * nodes in topological order from the graph inputs (their leading dimension set by --batch) and
 * the initializer dims; small int64 tensors (Constant, Shape, initializers with data) carry their
 * values, so the shape subgraphs exporters emit around Reshape fold away: a node whose outputs
 * are all known constants is "folded" and is not an operator of the PerfGraph.
 * Size letters: T tensors, V nodes (ONNX nodes), R rank. */
#ifndef SEER_ONNX_GRAPH_H
#define SEER_ONNX_GRAPH_H

#include <stdint.h>

#include "common/common.h"

#define OX_MAX_RANK 8

/* ONNX TensorProto.DataType values this reader names. */
enum {
    OX_DT_FLOAT = 1, OX_DT_UINT8 = 2, OX_DT_INT8 = 3, OX_DT_UINT16 = 4, OX_DT_INT16 = 5,
    OX_DT_INT32 = 6, OX_DT_INT64 = 7, OX_DT_STRING = 8, OX_DT_BOOL = 9, OX_DT_FLOAT16 = 10,
    OX_DT_DOUBLE = 11, OX_DT_UINT32 = 12, OX_DT_UINT64 = 13, OX_DT_BFLOAT16 = 16,
};
/* Bytes per element (4 for the types it does not name) and whether the type is floating-point. */
double ox_dtype_size(int dtype);
int ox_dtype_is_float(int dtype);
#define OX_MAX_VALUE 4096 /* longest int64 tensor whose values are tracked for folding */

typedef struct {
    char *name;
    int rank, known;          // known: the shape is inferred
    int64_t dims[OX_MAX_RANK];
    int dtype;                // ONNX TensorProto.DataType
    int64_t *value, n_value;  // int64 values when known (shape arithmetic), else NULL
    double *fvalue;           // a float tensor's values when known (shape arithmetic in floating
    int64_t n_fvalue;         // point: timm's same padding, ceil(size / stride)), else NULL
    int producer;             // node index, or -1 (graph input / initializer / absent)
    int is_init, is_input;
} ox_tensor;

typedef struct {
    const char *op_type, *name;
    int op;                   // index into ox_op_names(), or the "Other" index for unknown ops
    int n_in, n_out;
    int *in, *out;            // tensor ids, -1 for an omitted optional input
    const void *proto;        // Onnx__NodeProto
    int folded;               // all outputs constant: shape arithmetic, not a PerfGraph operator
    int fused_into;           // --fuse: the node this one was folded into, else -1
    // costs, filled by ox_costs
    double flops, bytes_in, bytes_out, weight_bytes, params;
} ox_node;

typedef struct {
    void *model;              // Onnx__ModelProto
    ox_tensor *t;
    int n_t, cap_t;
    ox_node *n;
    int n_n;
    int *order;               // topological order of the nodes (n_n)
    int opset;
    int64_t batch; // as asked (0: the model's own); after loading, the first input's leading dimension
    int unknown_ops;          // nodes treated as elementwise under --allow-unknown
    int64_t *hash;            // name -> tensor id (open addressing)
    int64_t hash_cap;
} ox_graph;

/* Loads, checks and shape-infers a model. batch > 0 sets the leading dimension of every graph
 * input. allow_unknown treats unsupported operators as elementwise (counted in unknown_ops). */
int ox_load(const char *path, int64_t batch, int allow_unknown, ox_graph *g, seer_err *err);
int ox_load_mem(const void *buf, size_t len, const char *origin, int64_t batch, int allow_unknown,
                ox_graph *g, seer_err *err);
void ox_free(ox_graph *g);

/* The operator names the converter knows, in /schema/op_types order; the last is "Other". */
const char *const *ox_op_names(int *count);

int64_t ox_numel(const ox_tensor *t);

#endif
