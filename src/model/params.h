/* model: the parameter table. All parameters of a model live in one contiguous buffer (and so
 * do their gradients and the optimizer moments); the table names each tensor and its offset, so
 * zeroing is one memset, the all-reduce one call and the checkpoint one tensor list. */
#ifndef SEER_PARAMS_H
#define SEER_PARAMS_H

#include <stdint.h>

#include "common/common.h"

typedef struct {
    char name[64];
    int64_t rows, cols, offset; // a bias is (1, fout)
} param_info;

/* A fixed-size table: building a model allocates nothing (libseer builds one per load and must
 * not exit on out-of-memory). SeerNet's largest table (8 blocks, 64 heads) has 420 entries. */
#define PARAMS_MAX 1024

typedef struct {
    param_info p[PARAMS_MAX];
    int n;
    int64_t total;
} param_table;

int64_t params_add(param_table *t, const char *name, int64_t rows, int64_t cols);
void params_free(param_table *t);

/* Linear layer y = x W^T + b: offsets of W (fout, fin) and b (fout). */
typedef struct {
    int64_t w, b;
    int fin, fout;
} lin_p;

/* One-hidden-layer ReLU MLP: l2(relu(l1(x))). */
typedef struct {
    lin_p l1, l2;
} mlp_p;

lin_p params_linear(param_table *t, const char *name, int fin, int fout);
mlp_p params_mlp(param_table *t, const char *name, int fin, int hid, int fout);

/* PyTorch's default init for nn.Linear: U(-1/sqrt(fin), 1/sqrt(fin)) for W and b, drawn in table
 * order from rng into host memory p. */
void params_init_uniform(const param_table *t, float *p, seer_rng *rng);

#endif
