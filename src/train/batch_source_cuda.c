/* train: the CUDA batch source (see batch_source.h). The shard is resident on the GPU (uploaded
 * once, with its edges indexed by destination and by source); a batch is assembled there from
 * its graph ids (cuda/batch.cu, the same arrays as batch_build), so a step sends the GPU only its
 * graph ids and offsets, never features. PerfSAGE's and the GCN's extra indexes are built on the
 * host from the ids and uploaded (index words only). */
#include "batch_source.h"

#include <stdlib.h>
#include <string.h>


typedef struct {
    cuda_shard shard;
    cuda_batch_out out;   // the batch's arrays, laid out in words and floats
    int64_t *words;       // device: the batch's index arrays
    float *floats;        // device: the batch's features and targets
    int64_t *xbuf;        // device, MODEL_EXTRA_INDEX: the batch's extra indexes
    extra_index x;        // their layout (pointers into xbuf)
} cuda_source;

static model_input cuda_make(batch_source *s, const int64_t *ids, int64_t n) {
    cuda_source *c = s->dev;
    graph_batch *b = &s->host;
    int M = s->M;
    for (int64_t i = 0; i < n; i++)
        memcpy(b->y + i * M, s->targets + ids[i] * M, sizeof(float) * (size_t)M);
    const cuda_batch_out o = c->out;
    int64_t N, E;
    cuda_batch_assemble(&c->shard, s->ds->node_ptr, s->ds->edge_ptr, ids, n, &c->out, &N, &E);
    b->G = n, b->N = N, b->E = E;
    model_input in = {.G = n, .N = N, .E = E, .node_ptr = o.node_ptr, .edge_ptr = o.edge_ptr,
                      .src = o.src, .dst = o.dst, .node_graph = o.node_graph,
                      .edge_graph = o.edge_graph, .in_ptr = o.in_ptr, .in_idx = o.in_idx,
                      .out_ptr = o.out_ptr, .out_idx = o.out_idx, .xn = o.xn, .xe = o.xe,
                      .xg = o.xg, .x = NULL};
    if (c->xbuf) {
        // the extra indexes (both-way and global-node edge sets, operator groups), built on the
        // host from the graph ids (index_only: no features) and uploaded; the device copy has
        // the same layout over the device buffer
        batch_build(b, s->ds, NULL, ids, n);
        size_t used = extra_index_layout(&c->x, c->xbuf, N, E, n, s->ds->n_ops);
        s->be->upload(s->be->ctx, c->xbuf, b->xbuf, sizeof(int64_t) * used);
        in.x = &c->x;
    }
    return in;
}

static const float *cuda_targets(const batch_source *s) {
    return ((const cuda_source *)s->dev)->out.y;
}

static void cuda_release(batch_source *s) {
    cuda_source *c = s->dev;
    if (!c) return;
    s->be->release(s->be->ctx, c->words), s->be->release(s->be->ctx, c->floats), s->be->release(s->be->ctx, c->xbuf);
    cuda_shard_free(&c->shard);
    free(c);
    s->dev = NULL;
}

void cuda_shard_src_make(cuda_shard_src *src, const pg_dataset *ds, const float *targets, int M) {
    int64_t N = ds->N, E = ds->E, G = ds->G;
    *src = (cuda_shard_src){.G = G, .N = N, .E = E, .Fn = ds->Fn, .Fe = ds->Fe, .Fg = ds->Fg,
                            .M = M, .node_ptr = ds->node_ptr, .edge_ptr = ds->edge_ptr,
                            .edge_index = ds->edge_index, .xn = ds->node_x, .xe = ds->edge_x,
                            .xg = ds->global_x, .y = targets};
    // the shard's CSR by destination and CSC by source over shard-global node ids (stable)
    int64_t *key = seer_malloc(sizeof(int64_t) * (size_t)(E ? E : 1));
    int64_t *ptr[2], *idx[2];
    for (int side = 0; side < 2; side++) {
        for (int64_t g = 0; g < G; g++)
            for (int64_t e = ds->edge_ptr[g]; e < ds->edge_ptr[g + 1]; e++)
                key[e] = ds->node_ptr[g] + ds->edge_index[2 * e + (side == 0 ? 1 : 0)];
        ptr[side] = seer_malloc(sizeof(int64_t) * (size_t)(N + 1));
        idx[side] = seer_malloc(sizeof(int64_t) * (size_t)(E ? E : 1));
        batch_index(ptr[side], idx[side], key, N, E);
    }
    free(key);
    src->in_ptr = ptr[0], src->in_idx = idx[0], src->out_ptr = ptr[1], src->out_idx = idx[1];
}

void cuda_shard_src_free(cuda_shard_src *src) {
    free((void *)src->in_ptr), free((void *)src->in_idx);
    free((void *)src->out_ptr), free((void *)src->out_idx);
    memset(src, 0, sizeof *src);
}

int batch_source_cuda_init(batch_source *s, seer_err *err) {
    const pg_dataset *ds = s->ds;
    cuda_source *c = seer_calloc(1, sizeof *c);
    s->dev = c;
    s->make = cuda_make, s->step_targets = cuda_targets, s->release = cuda_release;
    cuda_shard_src src;
    cuda_shard_src_make(&src, ds, s->targets, s->M);
    s->resident_bytes = cuda_shard_upload(&c->shard, &src);
    cuda_shard_src_free(&src);
    // the batch's arrays at the batch's capacity
    int64_t cG = s->host.cap_G, cN = s->host.cap_N, cE = s->host.cap_E, words = 0;
    cuda_batch_out *o = &c->out;
    int64_t **field[] = {&o->node_ptr, &o->edge_ptr, &o->src, &o->dst, &o->edge_graph,
                         &o->in_idx, &o->out_idx, &o->node_graph, &o->in_ptr, &o->out_ptr};
    int64_t cap[] = {cG + 1, cG + 1, cE, cE, cE, cE, cE, cN, cN + 1, cN + 1};
    for (size_t k = 0; k < sizeof cap / sizeof *cap; k++) words += cap[k];
    int64_t *p = c->words = s->be->alloc(s->be->ctx, sizeof(int64_t) * (size_t)words);
    float *f = c->floats = s->be->alloc(s->be->ctx, 
        sizeof(float) * (size_t)(cN * ds->Fn + cE * ds->Fe + cG * (ds->Fg + s->M)));
    if (!p || !f) return seer_fail(err, "out of GPU memory for a batch of %lld graphs", (long long)cG);
    for (size_t k = 0; k < sizeof cap / sizeof *cap; k++) *field[k] = p, p += cap[k];
    o->xn = f, o->xe = o->xn + cN * ds->Fn, o->xg = o->xe + cE * ds->Fe;
    o->y = o->xg + cG * ds->Fg;
    s->host.index_only = 1;
    if (s->host.want_extra &&
        !(c->xbuf = s->be->alloc(s->be->ctx, sizeof(int64_t) * extra_index_words(cN, cE, cG, ds->n_ops))))
        return seer_fail(err, "out of GPU memory for the extra indexes of a batch");
    return 0;
}
