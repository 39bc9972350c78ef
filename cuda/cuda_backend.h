/* The CUDA backend: the CUDA twin of every op of src/backend/backend.h, for training on one GPU.
 *
 * Each op family lives in one .cu file (dense.cu, elementwise.cu, segment.cu, pool.cu, pcgrad.cu)
 * and each launcher carries its CPU twin's name stem and argument order plus a stream
 * (seg_max_forward_cpu -> seg_max_forward_cuda(..., stream)). backend_cuda() is the op table over
 * those launchers on the backend's stream; pointers it takes are device memory. Semantics are the
 * CPU backend's, kept where they are observable: ties in max to the lowest position, NaN
 * propagation, empty segments, accumulate-into-gradients; reductions run in a fixed order
 * (no atomics), so a run repeats bit for bit on the same GPU.
 *
 * Without a GPU (or a driver) cuda_device_count() is 0 and cuda_backend_init fails with a
 * message; nothing else may be called then. */
#ifndef SEER_CUDA_BACKEND_H
#define SEER_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "backend/backend.h"
#include "common/common.h"

/* Dense products: plain fp32, TF32 tensor cores (fp32 accumulate), or bf16 tensor cores with
 * fp32 inputs, outputs and accumulation (cuBLAS compute types 32F, 32F_FAST_TF32, 32F_FAST_16BF). */
enum { PREC_FP32 = 0, PREC_TF32 = 1, PREC_BF16 = 2 };

/* GPUs visible to this process; 0 when there is no device or no driver. */
int cuda_device_count(void);

/* Selects the device, creates the stream, the cuBLAS handle and the fixed workspaces; called
 * again for the same device (a run that trains one model per label) it only sets the precision. */
int cuda_backend_init(int device, int precision, seer_err *err);
void cuda_backend_shutdown(void);
/* Changes the precision of the dense products (PREC_*) of an initialised backend. */
void cuda_backend_set_precision(int precision);
const seer_backend *backend_cuda(void);
/* "NVIDIA H200 (sm_90, 139.8 GiB)" after init. */
const char *cuda_device_name(void);
/* Waits for the stream; dies with the CUDA error (file and line of the failing call) if any. */
void cuda_backend_sync(void);
/* The backend's stream (a cudaStream_t), for collectives on its buffers. */
void *cuda_backend_stream(void);
/* Bytes of device memory the backend's alloc holds now. */
size_t cuda_backend_allocated(void);

/* Resident data (batch.cu): a shard of the dataset on the GPU, and batches assembled there. */
#define CUDA_BATCH_MAX_GRAPHS 4096
typedef struct {
    int64_t G;
    int Fn, Fe, Fg;
    const int64_t *node_ptr, *edge_ptr; // (G+1)
    const int32_t *edge_index;          // (E, 2) local to each graph
    const int64_t *in_ptr, *in_idx;     // (N+1), (E): the shard's edges by destination (stable)
    const int64_t *out_ptr, *out_idx;   // (N+1), (E): by source
    const float *xn, *xe, *xg;          // features (standardised)
    const float *y;                     // (G, M) standardised targets
    int M;
    int64_t *step_ids;                  // (3, CUDA_BATCH_MAX_GRAPHS): a step's ids and offsets
} cuda_shard;

/* Device buffers of an assembled batch (capacity-sized, as graph_batch's). */
typedef struct {
    int64_t *node_ptr, *edge_ptr, *src, *dst, *node_graph, *edge_graph;
    int64_t *in_ptr, *in_idx, *out_ptr, *out_idx;
    float *xn, *xe, *xg, *y;
} cuda_batch_out;

/* What a shard is made from, in host memory: the graphs' offsets, per-graph edges, features as
 * they will be trained on, the (G, M) targets, and the shard's edges over shard-global node ids
 * by destination (in_ptr, in_idx) and by source (out_ptr, out_idx), each a stable sort (the
 * trainer's batch source builds them: src/train/batch_source_cuda.c). */
typedef struct {
    int64_t G, N, E;
    int Fn, Fe, Fg, M;
    const int64_t *node_ptr, *edge_ptr;   // (G+1)
    const int32_t *edge_index;            // (E, 2) local to each graph
    const float *xn, *xe, *xg, *y;        // (N, Fn), (E, Fe), (G, Fg), (G, M)
    const int64_t *in_ptr, *in_idx;       // (N+1), (E)
    const int64_t *out_ptr, *out_idx;     // (N+1), (E)
} cuda_shard_src;

/* Uploads a shard; returns the bytes used. */
size_t cuda_shard_upload(cuda_shard *s, const cuda_shard_src *src);
void cuda_shard_free(cuda_shard *s);
/* Fills o with the graphs ids[0..B) of the shard (local ids), as batch_build would; N and E of the
 * batch come back (from node_ptr and edge_ptr, the host copy of the shard's offsets). */
void cuda_batch_assemble(const cuda_shard *s, const int64_t *node_ptr, const int64_t *edge_ptr,
                         const int64_t *ids, int64_t B, const cuda_batch_out *o, int64_t *N_out,
                         int64_t *E_out);

#ifdef __cplusplus
}
#endif

#endif
