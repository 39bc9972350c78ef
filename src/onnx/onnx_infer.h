/* onnx: what the shape-inference functions share (onnx_ops.c defines these, onnx_shapes.c
 * uses them); private to src/onnx. */
#ifndef SEER_ONNX_INFER_H
#define SEER_ONNX_INFER_H

#include "onnx.pb-c.h"
#include "onnx/onnx_ops.h"

/* The node being inferred. */
typedef struct ictx {
    ox_graph *g;
    const char *origin;
    seer_err *err;
    int v, op;
    const Onnx__NodeProto *p;
} ictx;

/* The infer column of OX_OPS. */
#define X(name, infer, cost, k, flags, buffers, min_in, max_in) int ix_infer_##infer(ictx *c);
OX_OPS(X)
#undef X

const Onnx__AttributeProto *ix_attr(const Onnx__NodeProto *n, const char *name);
int64_t ix_attr_i(const Onnx__NodeProto *n, const char *name, int64_t def);
/* Copies up to max ints; returns the count, or -1 when the attribute is absent. */
int ix_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max);
int ix_attr_is(const Onnx__NodeProto *n, const char *name, const char *value);

/* Fails naming the node: "origin: node v 'name' (op): what". */
int ix_fail(ictx *c, const char *what);
ox_tensor *ix_in(ictx *c, int i);
ox_tensor *ix_out(ictx *c, int i);
void ix_set_shape(ox_tensor *t, const int64_t *dims, int rank, int dtype);
void ix_set_value(ox_tensor *t, const int64_t *v, int64_t n);
int ix_axis(int64_t a, int rank);
/* numpy broadcasting of a and b into out (rank returned, -1 when incompatible) */
int ix_broadcast(const ox_tensor *a, const ox_tensor *b, int64_t *out);
/* Conv / pools: spatial dims after the window (X is (N, C, spatial...)). */
int ix_window_shape(ictx *c, const ox_tensor *x, const int64_t *kernel, int nk, int64_t *out,
                    int ceil_mode);
/* Input i is present and its shape known (else fails naming it). */
int ix_need_in(ictx *c, int i);
/* The int64 values of input i (a constant, an initializer with data, or folded shape arithmetic). */
const int64_t *ix_in_values(ictx *c, int i, int64_t *n);
/* The axes of Squeeze / Unsqueeze / ReduceMean: an attribute before opset `as_input`, input 1
 * from it on. na = -1 when absent. */
int ix_read_axes(ictx *c, int as_input, int64_t *axes, int64_t *na);
/* The values of input i as doubles (its float values, else its int64 ones), at most max: the
 * count, or -1 when they are not known. */
int64_t ix_in_numbers(ictx *c, int i, double *buf, int64_t max);
void ix_set_fvalue(ox_tensor *t, const double *v, int64_t n);
/* Folds Add/Sub/Mul/Div of known int64 values (of float values when the output is a float). */
int ix_fold_elementwise(ictx *c, int op);

#endif
