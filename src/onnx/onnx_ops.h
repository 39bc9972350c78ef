/* onnx: the operator table. One row per ONNX operator, read by both the shape pass (onnx_ops.c)
 * and the graph builder (perfgraph_build.c):
 *   name     the ONNX op_type; the row's position is its id in /schema/op_types (append new
 *            rows before Other: the ids of datasets already written must not move);
 *   infer    the shape-inference function, infer_<infer> in onnx_ops.c;
 *   cost     how its FLOPs are counted (COST_*), with a factor k (perfgraph_build.h has the
 *            conventions);
 *   flags    OPF_*: which node features it fills and how fusion treats it;
 *   buffers  a mask of input positions that are not learned parameters when they are
 *            initializers (BatchNormalization's running statistics, Clip's bounds);
 *   min_in, max_in  how many inputs the ONNX spec allows (opsets 7 to 18; optional inputs given
 *            as "" count), IN_ANY for no bound.
 * Adding an operator: one row here and, when no existing infer_* fits, one function. */
#ifndef SEER_ONNX_OPS_H
#define SEER_ONNX_OPS_H

#include "onnx/onnx_graph.h"

enum {
    COST_NONE,    // data movement: 0
    COST_CONV,    // 2 per multiply-add (+1 per output with a bias)
    COST_GEMM,    // 2 per multiply-add (+1 per output with a bias)
    COST_MATMUL,  // 2 per multiply-add
    COST_PER_OUT, // k per output element
    COST_PER_IN,  // k per input element
    COST_POOL,    // the window's size per output element
    COST_RESIZE,  // 1 per output element (nearest), 4 (linear, cubic)
    COST_EINSUM,  // 2 per multiply-add of the contraction (ox_einsum); one operand: 1 per input element
    COST_RNN,     // 2 per multiply-add of every step's input and recurrent products (W and R times
                  // each sequence element), + k per output element (the gates)
};

enum {
    OPF_WINDOW = 1 << 0,    // kernel, stride, pad, dilation, group node features
    OPF_BIAS = 1 << 1,      // an optional bias as input 2 (the has_bias feature)
    OPF_FUSE_ROOT = 1 << 2, // --fuse folds following BN and activations into it
    OPF_FUSABLE = 1 << 3,   // --fuse folds it into a preceding root
    OPF_CONST = 1 << 4,     // produces a constant: never a PerfGraph operator
    OPF_NO_INPUT = 1 << 5,  // its shape needs no known input 0
    OPF_MULTI_OUT = 1 << 6, // any of its outputs may be omitted
    OPF_LIGHT = 1 << 7,     // elementwise arithmetic or a view: its bytes are the log_mem_light
                            // global feature (a roofline_light cost prices them apart)
    OPF_KEEPS_IN = 1 << 8,  // a training step keeps its data inputs for the backward pass
    OPF_KEEPS_OUT = 1 << 9, // a training step keeps its output (log_mem_kept: perfgraph_build.h)
};

#define OPF_CONV_ (OPF_WINDOW | OPF_BIAS | OPF_FUSE_ROOT)
#define OPF_SOURCE_ (OPF_CONST | OPF_NO_INPUT)
#define BUF_BN_STATS ((1u << 3) | (1u << 4))
#define BUF_CLIP_BOUNDS (~1u)
#define BUF_RNN_STATE ((1u << 4) | (1u << 5) | (1u << 6)) // sequence_lens, initial_h, initial_c
#define IN_ANY 1000000

// X(name, infer, cost, k, flags, buffers, min_in, max_in)
#define OX_OPS(X)                                                                              \
    X(Conv, conv, CONV, 0, OPF_CONV_ | OPF_KEEPS_IN, 0, 2, 3)                                  \
    X(ConvTranspose, conv_transpose, CONV, 0, OPF_CONV_ | OPF_KEEPS_IN, 0, 2, 3)               \
    X(Gemm, gemm, GEMM, 0, OPF_BIAS | OPF_FUSE_ROOT | OPF_KEEPS_IN, 0, 2, 3)                   \
    X(MatMul, matmul, MATMUL, 0, OPF_KEEPS_IN, 0, 2, 2)                                        \
    X(BatchNormalization, same, PER_OUT, 2, OPF_FUSABLE | OPF_KEEPS_IN, BUF_BN_STATS, 5, 5)    \
    X(LayerNormalization, same, PER_OUT, 5, OPF_KEEPS_IN, 0, 2, 3)                             \
    X(InstanceNormalization, same, PER_OUT, 5, OPF_KEEPS_IN, 0, 3, 3)                          \
    X(Relu, same, PER_OUT, 1, OPF_FUSABLE | OPF_KEEPS_OUT, 0, 1, 1)                            \
    X(LeakyRelu, same, PER_OUT, 1, OPF_FUSABLE | OPF_KEEPS_IN, 0, 1, 1)                        \
    X(PRelu, same, PER_OUT, 1, OPF_KEEPS_IN, 0, 2, 2)                                          \
    X(Clip, same, PER_OUT, 1, OPF_FUSABLE | OPF_KEEPS_IN, BUF_CLIP_BOUNDS, 1, 3)               \
    X(Sigmoid, same, PER_OUT, 1, OPF_FUSABLE | OPF_KEEPS_OUT, 0, 1, 1)                         \
    X(HardSigmoid, same, PER_OUT, 1, OPF_FUSABLE | OPF_KEEPS_IN, 0, 1, 1)                      \
    X(HardSwish, same, PER_OUT, 1, OPF_FUSABLE | OPF_KEEPS_IN, 0, 1, 1)                        \
    X(Tanh, same, PER_OUT, 1, OPF_KEEPS_OUT, 0, 1, 1)                                          \
    X(Erf, same, PER_OUT, 1, OPF_LIGHT, 0, 1, 1)                                               \
    X(Gelu, same, PER_OUT, 1, OPF_KEEPS_IN, 0, 1, 1)                                           \
    X(Softmax, same, PER_OUT, 3, OPF_KEEPS_OUT, 0, 1, 1)                                       \
    X(Add, binary, PER_OUT, 1, OPF_LIGHT, 0, 2, 2)                                             \
    X(Sub, binary, PER_OUT, 1, OPF_LIGHT, 0, 2, 2)                                             \
    X(Mul, binary, PER_OUT, 1, OPF_LIGHT | OPF_KEEPS_IN, 0, 2, 2)                              \
    X(Div, binary, PER_OUT, 1, OPF_LIGHT, 0, 2, 2)                                             \
    X(Pow, binary, PER_OUT, 1, OPF_LIGHT | OPF_KEEPS_IN, 0, 2, 2)                              \
    X(Sqrt, same, PER_OUT, 1, OPF_LIGHT | OPF_KEEPS_OUT, 0, 1, 1)                              \
    X(Concat, concat, NONE, 0, 0, 0, 1, IN_ANY)                                                \
    X(Split, split, NONE, 0, OPF_MULTI_OUT | OPF_LIGHT, 0, 1, 2)                               \
    X(Slice, slice, NONE, 0, OPF_LIGHT, 0, 1, 5)                                               \
    X(MaxPool, pool, POOL, 0, OPF_WINDOW | OPF_KEEPS_IN, 0, 1, 1)                              \
    X(AveragePool, pool, POOL, 0, OPF_WINDOW | OPF_KEEPS_IN, 0, 1, 1)                          \
    X(GlobalAveragePool, global_pool, PER_IN, 1, OPF_KEEPS_IN, 0, 1, 1)                        \
    X(GlobalMaxPool, global_pool, PER_IN, 1, OPF_KEEPS_IN, 0, 1, 1)                            \
    X(Flatten, flatten, NONE, 0, OPF_LIGHT, 0, 1, 1)                                           \
    X(Reshape, reshape, NONE, 0, OPF_LIGHT, 0, 2, 2)                                           \
    X(Transpose, transpose, NONE, 0, OPF_LIGHT, 0, 1, 1)                                       \
    X(Squeeze, squeeze, NONE, 0, OPF_LIGHT, 0, 1, 2)                                           \
    X(Unsqueeze, squeeze, NONE, 0, OPF_LIGHT, 0, 1, 2)                                         \
    X(Pad, pad, NONE, 0, 0, 0, 1, 4)                                                           \
    X(Resize, resize, RESIZE, 0, 0, 0, 1, 4)                                                   \
    X(Identity, same, NONE, 0, 0, 0, 1, 1)                                                     \
    X(Dropout, same, NONE, 0, 0, 0, 1, 3)                                                      \
    X(Constant, constant, NONE, 0, OPF_SOURCE_, 0, 0, 0)                                       \
    X(Shape, shape, NONE, 0, 0, 0, 1, 1)                                                       \
    X(Gather, gather, NONE, 0, 0, 0, 2, 2)                                                     \
    X(ReduceMean, reduce, PER_IN, 1, 0, 0, 1, 2)                                               \
    X(Expand, expand, NONE, 0, OPF_LIGHT, 0, 2, 2)                                             \
    X(Where, where, NONE, 0, 0, 0, 3, 3)                                                       \
    X(Cast, same, NONE, 0, 0, 0, 1, 1)                                                         \
    X(ConstantOfShape, constant_of_shape, NONE, 0, OPF_SOURCE_, 0, 1, 1)                       \
    X(Other, unknown, PER_OUT, 1, 0, 0, 0, IN_ANY)                                             \
    /* added after Other so that the ids above (stored in datasets and models) never move */   \
    X(Equal, binary, PER_OUT, 1, 0, 0, 2, 2)                                                   \
    X(Mod, binary, PER_OUT, 1, 0, 0, 2, 2)                                                     \
    X(Not, same, PER_OUT, 1, 0, 0, 1, 1)                                                       \
    X(Range, range, NONE, 0, 0, 0, 3, 3)                                                       \
    X(ScatterND, same, NONE, 0, 0, 0, 3, 3)                                                    \
    X(Einsum, einsum, EINSUM, 0, OPF_KEEPS_IN, 0, 1, IN_ANY)                                   \
    /* added 2026-12-02 for timm's models (ConViT, ResNeSt, SKNet, GCViT, XCiT, EdgeNeXt, Swin-V2-CR) */ \
    X(ReduceSum, reduce, PER_IN, 1, 0, 0, 1, 2)                                                \
    X(ReduceMax, reduce, PER_IN, 1, OPF_KEEPS_IN, 0, 1, 2)                                     \
    X(ReduceL2, reduce, PER_IN, 2, OPF_KEEPS_IN, 0, 1, 2)                                      \
    X(Exp, same, PER_OUT, 1, OPF_KEEPS_OUT, 0, 1, 1)                                           \
    X(Sin, same, PER_OUT, 1, OPF_KEEPS_IN, 0, 1, 1)                                            \
    X(Cos, same, PER_OUT, 1, OPF_KEEPS_IN, 0, 1, 1)                                            \
    X(CumSum, same, PER_OUT, 1, 0, 0, 2, 2)                                                    \
    X(Tile, tile, NONE, 0, 0, 0, 2, 2)                                                         \
    X(Ceil, same, PER_OUT, 1, 0, 0, 1, 1)                                                      \
    X(Floor, same, PER_OUT, 1, 0, 0, 1, 1)                                                     \
    /* recurrent layers (timm's Sequencer: LSTM over the rows and columns of a feature map) */ \
    X(LSTM, rnn, RNN, 8, OPF_MULTI_OUT, BUF_RNN_STATE, 3, 8)                                   \
    X(GRU, rnn, RNN, 6, OPF_MULTI_OUT, BUF_RNN_STATE, 3, 6)                                    \
    X(RNN, rnn, RNN, 2, OPF_MULTI_OUT, BUF_RNN_STATE, 3, 6)

enum {
#define X(name, infer, cost, k, flags, buffers, min_in, max_in) OP_##name,
    OX_OPS(X)
#undef X
    OP_COUNT
};

struct ictx;
typedef struct {
    const char *name;
    int (*infer)(struct ictx *c);
    int cost;
    double k;
    unsigned flags;
    unsigned buffers;
    int min_in, max_in;
} ox_op_def;

/* The row of an operator id (out of range: Other's). */
const ox_op_def *ox_op(int op);
/* The id of an op_type of the default domain (Other when the table lacks it). */
int ox_op_lookup(const char *op_type);

/* Infers the output shapes of node v (its inputs inferred); -1 with a message naming the node. */
int ox_infer(ox_graph *g, int v, const char *origin, int allow_unknown, seer_err *err);

/* Einsum node n over its inputs' known shapes: the output's dims and rank, and the contraction's
 * multiply-adds (0 for one operand). -1 with what is wrong in why. */
int ox_einsum(const ox_graph *g, const ox_node *n, int64_t *dims, int *rank, double *macs, char *why,
              size_t wl);

/* Reads the values of a small int64/int32 TensorProto into t (shape arithmetic). */
void ox_tensor_values(ox_tensor *t, const void *tensor_proto);

/* An integer attribute of a node: the k-th of its ints, or its int when k = 0, or def. */
int64_t ox_attr_int_at(const ox_node *n, const char *name, size_t k, int64_t def);
/* A float attribute of a node, or def. */
double ox_attr_float(const ox_node *n, const char *name, double def);
/* The product of an ints attribute's values (1 when absent). */
double ox_attr_ints_product(const ox_node *n, const char *name);
/* Whether a string attribute equals value (value NULL: whether the node has it as a string). */
int ox_attr_str_is(const ox_node *n, const char *name, const char *value);

#endif
