/* train: where a step's batch comes from. One interface, two implementations:
 *   CPU   batch_build on the host (graph/batch.h);
 *   CUDA  the dataset shard resident on the GPU (uploaded once with its CSR/CSC), batches
 *         assembled there from graph ids (cuda/batch.cu): a step sends only its ids and offsets,
 *         and for models that read them (MODEL_EXTRA_INDEX) the extra indexes built on the host.
 * The trainer calls only this header; the device's #ifs live in batch_source.c.
 * Size letters: G graphs, N nodes, E edges, M labels. */
#ifndef SEER_BATCH_SOURCE_H
#define SEER_BATCH_SOURCE_H

#include "backend/backend.h"
#include "graph/batch.h"
#include "model/model.h"

typedef struct batch_source batch_source;

struct batch_source {
    const seer_backend *be;
    const pg_dataset *ds;
    const float *targets; // (ds->G, M) standardised targets, host
    int M;
    // The host batch: on the CPU the batch itself; on a GPU the step's standardised targets
    // (evaluation computes its metrics on the host) and the extra indexes before upload.
    graph_batch host;
    size_t resident_bytes; // device memory of the resident data (0 on the CPU)
    void *dev;             // the device implementation's state
    model_input (*make)(batch_source *s, const int64_t *ids, int64_t n);
    const float *(*step_targets)(const batch_source *s); // backend memory, (G, M)
    void (*release)(batch_source *s);
};

/* A source for batches of up to cap_G graphs / cap_N nodes / cap_E edges of ds (local ids) on
 * backend be; want_extra: build the extra indexes (MODEL_EXTRA_INDEX). Fails only on a device
 * without memory for the resident data. */
int batch_source_init(batch_source *s, const seer_backend *be, const pg_dataset *ds,
                      const float *targets, int M, int64_t cap_G, int64_t cap_N, int64_t cap_E,
                      int want_extra, seer_err *err);
void batch_source_free(batch_source *s);

/* The model's view of the batch of local graphs ids[0..n), in backend memory. */
static inline model_input batch_source_make(batch_source *s, const int64_t *ids, int64_t n) {
    return s->make(s, ids, n);
}

/* The standardised targets of the last batch made, in backend memory. */
static inline const float *batch_source_targets(const batch_source *s) {
    return s->step_targets(s);
}

#ifdef SEER_HAVE_CUDA
#include "cuda_backend.h"
/* The CUDA implementation (batch_source_cuda.c). */
int batch_source_cuda_init(batch_source *s, seer_err *err);
/* What cuda_shard_upload takes for ds and its (G, M) targets: pointers into ds, and the shard's
 * CSR by destination and CSC by source built here (free them with cuda_shard_src_free). */
void cuda_shard_src_make(cuda_shard_src *src, const pg_dataset *ds, const float *targets, int M);
void cuda_shard_src_free(cuda_shard_src *src);
#endif

#endif
