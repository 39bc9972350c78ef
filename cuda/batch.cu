/* Resident data: the whole shard lives on the GPU (features, per-graph edges, and the shard's CSR
 * by destination and CSC by source, built once on the host), and a batch is assembled on the
 * device from its graph ids: one block per graph copies its rows and rebases its indexes. The
 * result is, array for array, what batch_build makes on the CPU (the shard's CSR is a stable sort
 * by destination, and a graph's edges keep their order in the batch), so the model sees the same
 * input either way; the targets come along. Per step the host sends only the graph ids and their
 * node and edge offsets. */
#include <string.h>

#include "common.cuh"

/* One block per batch graph b: its nodes, its edges and its global row. */
__global__ void assemble_kernel(cuda_shard sh, const int64_t *ids, const int64_t *nbase,
                                const int64_t *ebase, int64_t B, cuda_batch_out o) {
    int64_t b = blockIdx.x;
    if (b >= B) return;
    int64_t g = ids[b], n0 = sh.node_ptr[g], nn = sh.node_ptr[g + 1] - n0;
    int64_t e0 = sh.edge_ptr[g], ne = sh.edge_ptr[g + 1] - e0, bn = nbase[b], be = ebase[b];
    int64_t in0 = sh.in_ptr[n0], out0 = sh.out_ptr[n0];
    for (int64_t i = threadIdx.x; i < nn; i += blockDim.x) {
        o.node_graph[bn + i] = b;
        o.in_ptr[bn + i] = be + sh.in_ptr[n0 + i] - in0;
        o.out_ptr[bn + i] = be + sh.out_ptr[n0 + i] - out0;
    }
    for (int64_t t = threadIdx.x; t < nn * sh.Fn; t += blockDim.x) o.xn[bn * sh.Fn + t] = sh.xn[n0 * sh.Fn + t];
    for (int64_t j = threadIdx.x; j < ne; j += blockDim.x) {
        o.src[be + j] = bn + sh.edge_index[2 * (e0 + j)];
        o.dst[be + j] = bn + sh.edge_index[2 * (e0 + j) + 1];
        o.edge_graph[be + j] = b;
        o.in_idx[be + j] = be + sh.in_idx[in0 + j] - e0;
        o.out_idx[be + j] = be + sh.out_idx[out0 + j] - e0;
    }
    for (int64_t t = threadIdx.x; t < ne * sh.Fe; t += blockDim.x) o.xe[be * sh.Fe + t] = sh.xe[e0 * sh.Fe + t];
    for (int t = threadIdx.x; t < sh.Fg; t += blockDim.x) o.xg[b * sh.Fg + t] = sh.xg[g * sh.Fg + t];
    for (int t = threadIdx.x; t < sh.M; t += blockDim.x) o.y[b * sh.M + t] = sh.y[g * sh.M + t];
    if (threadIdx.x == 0) {
        o.node_ptr[b] = bn, o.edge_ptr[b] = be;
        if (b == B - 1) {
            o.node_ptr[B] = bn + nn, o.edge_ptr[B] = be + ne;
            o.in_ptr[bn + nn] = be + ne, o.out_ptr[bn + nn] = be + ne;
        }
    }
}

static void *up(const void *h, size_t bytes) {
    void *d;
    CUDA_CHECK(cudaMalloc(&d, bytes ? bytes : 1));
    if (bytes) CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

extern "C" size_t cuda_shard_upload(cuda_shard *s, const cuda_shard_src *src) {
    memset(s, 0, sizeof *s);
    int64_t N = src->N, E = src->E, G = src->G;
    int M = src->M;
    s->G = G, s->Fn = src->Fn, s->Fe = src->Fe, s->Fg = src->Fg, s->M = M;
    s->in_ptr = (const int64_t *)up(src->in_ptr, 8 * (size_t)(N + 1));
    s->in_idx = (const int64_t *)up(src->in_idx, 8 * (size_t)E);
    s->out_ptr = (const int64_t *)up(src->out_ptr, 8 * (size_t)(N + 1));
    s->out_idx = (const int64_t *)up(src->out_idx, 8 * (size_t)E);
    s->node_ptr = (const int64_t *)up(src->node_ptr, 8 * (size_t)(G + 1));
    s->edge_ptr = (const int64_t *)up(src->edge_ptr, 8 * (size_t)(G + 1));
    s->edge_index = (const int32_t *)up(src->edge_index, 8 * (size_t)E);
    s->xn = (const float *)up(src->xn, 4 * (size_t)(N * src->Fn));
    s->xe = (const float *)up(src->xe, 4 * (size_t)(E * src->Fe));
    s->xg = (const float *)up(src->xg, 4 * (size_t)(G * src->Fg));
    s->y = (const float *)up(src->y, 4 * (size_t)(G * M));
    size_t bytes = 16 * (size_t)(N + 1 + E) + 16 * (size_t)(G + 1) + 8 * (size_t)E +
                   4 * (size_t)(N * src->Fn + E * src->Fe + G * (src->Fg + M));
    CUDA_CHECK(cudaMalloc((void **)&s->step_ids, 3 * sizeof(int64_t) * CUDA_BATCH_MAX_GRAPHS));
    return bytes;
}

extern "C" void cuda_shard_free(cuda_shard *s) {
    const void *p[] = {s->node_ptr, s->edge_ptr, s->edge_index, s->in_ptr, s->in_idx, s->out_ptr,
                       s->out_idx, s->xn, s->xe, s->xg, s->y, s->step_ids};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++) cudaFree((void *)p[i]);
    memset(s, 0, sizeof *s);
}

extern "C" void cuda_batch_assemble(const cuda_shard *s, const int64_t *node_ptr,
                                    const int64_t *edge_ptr, const int64_t *ids, int64_t B,
                                    const cuda_batch_out *o, int64_t *N_out, int64_t *E_out) {
    if (B > CUDA_BATCH_MAX_GRAPHS)
        seer_die("cuda_batch_assemble: %lld graphs in one batch (at most %d)", (long long)B,
                 CUDA_BATCH_MAX_GRAPHS);
    // ids, node and edge offsets: the only host-to-device copy of a step (3 x B words)
    int64_t host[3 * CUDA_BATCH_MAX_GRAPHS], N = 0, E = 0;
    for (int64_t b = 0; b < B; b++) {
        int64_t g = ids[b];
        host[b] = g, host[CUDA_BATCH_MAX_GRAPHS + b] = N, host[2 * CUDA_BATCH_MAX_GRAPHS + b] = E;
        N += node_ptr[g + 1] - node_ptr[g];
        E += edge_ptr[g + 1] - edge_ptr[g];
    }
    *N_out = N, *E_out = E;
    if (B == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(s->step_ids, host, sizeof host, cudaMemcpyHostToDevice, cuda_st.stream));
    assemble_kernel<<<(unsigned)B, 128, 0, cuda_st.stream>>>(*s, s->step_ids, s->step_ids + CUDA_BATCH_MAX_GRAPHS,
                                                             s->step_ids + 2 * CUDA_BATCH_MAX_GRAPHS, B, *o);
    LAUNCH_CHECK();
    // host[] may go: a copy from pageable memory is staged before cudaMemcpyAsync returns, and the
    // next step's copy into step_ids is ordered after this kernel on the stream
}
