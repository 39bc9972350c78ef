/* graph: mini-batch assembly and the CSR/CSC indexes (see batch.h). */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

void batch_init(graph_batch *b, int64_t cap_G, int64_t cap_N, int64_t cap_E, int Fn, int Fe,
                int Fg, int M, int n_ops) {
    memset(b, 0, sizeof *b);
    b->cap_G = cap_G, b->cap_N = cap_N, b->cap_E = cap_E;
    b->Fn = Fn, b->Fe = Fe, b->Fg = Fg, b->M = M;
    size_t g = (size_t)cap_G, n = (size_t)cap_N, e = (size_t)cap_E;
    b->graph_id = seer_calloc(g, 8);
    b->node_ptr = seer_calloc(g + 1, 8);
    b->edge_ptr = seer_calloc(g + 1, 8);
    b->src = seer_calloc(e, 8);
    b->dst = seer_calloc(e, 8);
    b->node_graph = seer_calloc(n, 8);
    b->edge_graph = seer_calloc(e, 8);
    b->in_ptr = seer_calloc(n + 1, 8);
    b->in_idx = seer_calloc(e, 8);
    b->out_ptr = seer_calloc(n + 1, 8);
    b->out_idx = seer_calloc(e, 8);
    b->op = seer_calloc(n, 4);
    b->xn = seer_calloc(n * (size_t)Fn, 4);
    b->xe = seer_calloc(e * (size_t)Fe, 4);
    b->xg = seer_calloc(g * (size_t)Fg, 4);
    b->y = seer_calloc(g * (size_t)(M > 0 ? M : 1), 4);
    b->n_ops = n_ops;
    b->want_extra = 1;
    b->xbuf = seer_calloc(extra_index_words(cap_N, cap_E, cap_G, n_ops), 8);
}

void batch_free(graph_batch *b) {
    free(b->graph_id);
    free(b->node_ptr);
    free(b->edge_ptr);
    free(b->src);
    free(b->dst);
    free(b->node_graph);
    free(b->edge_graph);
    free(b->in_ptr);
    free(b->in_idx);
    free(b->out_ptr);
    free(b->out_idx);
    free(b->op);
    free(b->xn);
    free(b->xe);
    free(b->xg);
    free(b->y);
    free(b->xbuf);
    memset(b, 0, sizeof *b);
}

/* Stable counting sort of edge ids by key (dst or src): ptr (N+1), idx (E). */
void batch_index(int64_t *ptr, int64_t *idx, const int64_t *key, int64_t N, int64_t E) {
    memset(ptr, 0, sizeof(int64_t) * (size_t)(N + 1));
    for (int64_t e = 0; e < E; e++) ptr[key[e] + 1]++;
    for (int64_t v = 0; v < N; v++) ptr[v + 1] += ptr[v];
    for (int64_t e = 0; e < E; e++) idx[ptr[key[e]]++] = e;
    for (int64_t v = N; v > 0; v--) ptr[v] = ptr[v - 1];
    ptr[0] = 0;
}

void batch_build(graph_batch *b, const pg_dataset *ds, const float *targets, const int64_t *ids,
                 int64_t count) {
    SEER_ASSERT(count <= b->cap_G);
    int64_t N = 0, E = 0;
    b->node_ptr[0] = b->edge_ptr[0] = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t g = ids[i];
        int64_t n0 = ds->node_ptr[g], nn = ds->node_ptr[g + 1] - n0;
        int64_t e0 = ds->edge_ptr[g], ne = ds->edge_ptr[g + 1] - e0;
        SEER_ASSERT(N + nn <= b->cap_N && E + ne <= b->cap_E);
        b->graph_id[i] = g;
        memcpy(b->op + N, ds->node_op + n0, sizeof(int32_t) * (size_t)nn);
        if (!b->index_only) {
            memcpy(b->xn + N * b->Fn, ds->node_x + n0 * ds->Fn, sizeof(float) * (size_t)(nn * ds->Fn));
            memcpy(b->xe + E * b->Fe, ds->edge_x + e0 * ds->Fe, sizeof(float) * (size_t)(ne * ds->Fe));
            memcpy(b->xg + i * b->Fg, ds->global_x + g * ds->Fg, sizeof(float) * (size_t)ds->Fg);
        }
        for (int64_t v = 0; v < nn; v++) b->node_graph[N + v] = i;
        for (int64_t e = 0; e < ne; e++) {
            b->src[E + e] = N + ds->edge_index[2 * (e0 + e)];
            b->dst[E + e] = N + ds->edge_index[2 * (e0 + e) + 1];
            b->edge_graph[E + e] = i;
        }
        if (targets) memcpy(b->y + i * b->M, targets + g * b->M, sizeof(float) * (size_t)b->M);
        N += nn;
        E += ne;
        b->node_ptr[i + 1] = N;
        b->edge_ptr[i + 1] = E;
    }
    b->G = count, b->N = N, b->E = E;
    if (!b->index_only) {
        batch_index(b->in_ptr, b->in_idx, b->dst, N, E);
        batch_index(b->out_ptr, b->out_idx, b->src, N, E);
    }
    if (b->want_extra)
        extra_index_build(&b->x, b->xbuf, b->src, b->dst, b->node_graph, b->op, N, E, count, b->n_ops);
}

static size_t edge_set_words(int64_t V, int64_t E) { return (size_t)(4 * E + 2 * (V + 1)); }

static int64_t *edge_set_layout(edge_set *s, int64_t *p, int64_t V, int64_t E) {
    s->V = V, s->E = E;
    s->src = p, p += E;
    s->dst = p, p += E;
    s->in_ptr = p, p += V + 1;
    s->in_idx = p, p += E;
    s->out_ptr = p, p += V + 1;
    s->out_idx = p, p += E;
    return p;
}

size_t extra_index_words(int64_t N, int64_t E, int64_t G, int n_ops) {
    return edge_set_words(N, 2 * E) + edge_set_words(N + G, E + 2 * N + G) + (size_t)(2 * N) +
           (size_t)n_ops + 1;
}

size_t extra_index_layout(extra_index *x, int64_t *buf, int64_t N, int64_t E, int64_t G, int n_ops) {
    int64_t *p = edge_set_layout(&x->sym, buf, N, 2 * E);
    p = edge_set_layout(&x->gcn, p, N + G, E + 2 * N + G);
    x->op = p, p += N;
    x->op_idx = p, p += N;
    x->op_ptr = p, p += n_ops + 1;
    x->n_ops = n_ops;
    return (size_t)(p - buf);
}

void extra_index_build(extra_index *x, int64_t *buf, const int64_t *src, const int64_t *dst,
                       const int64_t *node_graph, const int32_t *op, int64_t N, int64_t E,
                       int64_t G, int n_ops) {
    extra_index_layout(x, buf, N, E, G, n_ops);
    for (int64_t e = 0; e < E; e++) {
        x->sym.src[e] = src[e], x->sym.dst[e] = dst[e];
        x->sym.src[E + e] = dst[e], x->sym.dst[E + e] = src[e];
    }
    edge_set *c = &x->gcn;
    memcpy(c->src, src, sizeof(int64_t) * (size_t)E);
    memcpy(c->dst, dst, sizeof(int64_t) * (size_t)E);
    for (int64_t v = 0; v < N; v++) {
        c->src[E + v] = v, c->dst[E + v] = v;                          // self loop
        c->src[E + N + v] = v, c->dst[E + N + v] = N + node_graph[v]; // to the global node
    }
    for (int64_t g = 0; g < G; g++) c->src[E + 2 * N + g] = c->dst[E + 2 * N + g] = N + g;
    edge_set *sets[2] = {&x->sym, &x->gcn};
    for (int k = 0; k < 2; k++) {
        batch_index(sets[k]->in_ptr, sets[k]->in_idx, sets[k]->dst, sets[k]->V, sets[k]->E);
        batch_index(sets[k]->out_ptr, sets[k]->out_idx, sets[k]->src, sets[k]->V, sets[k]->E);
    }
    for (int64_t v = 0; v < N; v++) x->op[v] = op ? op[v] : 0;
    if (n_ops > 0) batch_index(x->op_ptr, x->op_idx, x->op, n_ops, N);
}

static int cmp_desc(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

static int64_t top_sum(int64_t *v, int64_t n, int64_t count) {
    qsort(v, (size_t)n, sizeof *v, cmp_desc);
    int64_t s = 0;
    for (int64_t i = 0; i < n && i < count; i++) s += v[i];
    return s;
}

void batch_capacity(const pg_dataset *ds, const int64_t *ids, int64_t n_ids, int64_t count,
                    int64_t *max_nodes, int64_t *max_edges) {
    int64_t *v = seer_malloc(sizeof(int64_t) * (size_t)(n_ids ? n_ids : 1));
    for (int64_t i = 0; i < n_ids; i++) v[i] = ds->node_ptr[ids[i] + 1] - ds->node_ptr[ids[i]];
    *max_nodes = top_sum(v, n_ids, count);
    for (int64_t i = 0; i < n_ids; i++) v[i] = ds->edge_ptr[ids[i] + 1] - ds->edge_ptr[ids[i]];
    *max_edges = top_sum(v, n_ids, count);
    free(v);
}
