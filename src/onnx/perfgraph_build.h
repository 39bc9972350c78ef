/* onnx: operator costs and the PerfGraph features of DESIGN.md for one shape-inferred model.
 *
 * Cost conventions (also in datasets/FORMAT.md): a multiply-add is 2 FLOPs (Conv, ConvTranspose,
 * Gemm, MatMul; a bias adds 1 per output); BatchNormalization 2 per element (its inference
 * form), LayerNormalization and InstanceNormalization 5, Softmax 3, other elementwise operators
 * 1 per output element, pools k*k per output element, global pools and ReduceMean 1 per input
 * element, Resize 1 per output element (nearest) or 4 (linear, cubic); data movement (Concat,
 * Split, Slice, Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Pad, Expand, Gather, Identity,
 * Dropout, Cast, Where's selection) 0. Bytes read are all inputs (weights included), bytes
 * written all outputs, at each tensor's element size. Parameters are the elements of
 * floating-point initializers, except BatchNormalization's running mean and variance (as
 * torchvision counts them) and Clip's bounds; weight bytes include those. LayerNorm written out
 * by opset-13 exporters (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add over the last
 * axis) is one LayerNormalization operator, as an opset-17 export has it; Hardswish written as
 * x * HardSigmoid(x) below opset 14 is one HardSwish, as an opset-14 export has it. log_mem_light (the
 * last global feature) is the bytes the light operators (OPF_LIGHT: elementwise arithmetic and
 * views) move, their weights left out: what a runtime fuses, does in place or never copies, which
 * [model] target = roofline_light prices apart from the rest. log_mem_kept (appended after it)
 * is the bytes a training step keeps for the backward pass, as PyTorch's autograd does, counted
 * from the graph: each tensor once (an operator's output: the largest edge leaving it; the graph's
 * inputs, outputs and weights left out), kept when its writer keeps its output (OPF_KEEPS_OUT:
 * ReLU, sigmoid, tanh, softmax, sqrt, exp) or a reader keeps its inputs (OPF_KEEPS_IN: the
 * convolutions, products, normalisations, pools, ...); a Mul by a constant scalar (one
 * operator input, weights of 64 bytes or less) and the product closing GELU as torch.onnx writes
 * it (x times the Add that reads the Erf) keep nothing; MaxPool adds its int64 indices (twice its
 * output). Sums, concatenations, views, Div and Erf keep nothing.
 * [model] target = roofline_kept prices it as a sixth term (benchmarks/kept_bytes.py measures
 * the rule against autograd). Its definition is frozen: predictors/cpu_epyc.seer reads it as it
 * is (SiLU, exported as Sigmoid and Mul, counted at about 1.3x what PyTorch keeps). The refined
 * count is log_mem_kept_silu (appended after it; [model] target = roofline_kept_silu): a Sigmoid
 * whose one reader is a Mul that also reads the Sigmoid's input is a SiLU, which keeps that input
 * alone. log_mem_kept_acts (appended after it; [model] target = roofline_kept_acts) is
 * log_mem_kept_silu less the tensors computed from weights and constants alone: a weight
 * transposed, reshaped or standardised at run time (torch.onnx without constant folding writes
 * every linear layer on tokens as MatMul(x, Transpose(W))) is a weight to autograd, whose bytes the
 * cost prices apart, not an activation it keeps. On ViT-B/16 so exported log_mem_kept counts 2.1x
 * what autograd keeps, log_mem_kept_acts 0.995x. log_flops_dw (appended after it; [model] target =
 * roofline_dw) is the FLOPs of the depthwise convolutions (more than one group, one input channel per
 * group): PyTorch's CPU training step of a depthwise convolution runs at 2 to 15 GFLOP/s whatever
 * its kernel, where a dense 3x3 convolution reaches 148 (benchmarks/dw_backward.py), so the cost
 * prices these FLOPs apart (benchmarks/RESULTS.md, "Depthwise convolutions' training step").
 * Size letters: V operators, E edges. */

#ifndef SEER_PERFGRAPH_BUILD_H
#define SEER_PERFGRAPH_BUILD_H

#include "onnx/onnx_graph.h"

#define PGB_NODE_F 23
#define PGB_EDGE_F 5
#define PGB_GLOBAL_F 23 // new global features are appended: a model reads its own leading ones


typedef struct {
    int64_t V, E;
    float *xn;       // (V, PGB_NODE_F)
    int32_t *op;     // (V) index into ox_op_names()
    int32_t *edge;   // (E, 2) local (src, dst)
    float *xe;       // (E, PGB_EDGE_F)
    float xg[PGB_GLOBAL_F];
    int *node_of;    // (V) the ONNX node behind each operator
    // model totals
    double flops, macs, bytes, weight_bytes, params;
    int n_onnx_nodes, n_folded, n_fused, n_unknown;
    // window operators (Conv, pools) over 3 or more spatial dimensions (video, volumes): the node
    // features describe two (kernel_h/w, in_h/w, ...); the others enter only through FLOPs and bytes
    int n_deep_window;
} pgb_graph;

/* Builds the operator graph of a loaded model: folded shape arithmetic and Constant nodes are
 * left out; with fuse, BatchNormalization and activations are folded into the preceding
 * Conv/ConvTranspose/Gemm when it feeds only them (as inference runtimes do). */
void pgb_build(ox_graph *g, int fuse, pgb_graph *out);
void pgb_free(pgb_graph *p);

const char *const *pgb_node_feature_names(void);
const char *const *pgb_edge_feature_names(void);
const char *const *pgb_global_feature_names(void);

#endif
