/* data: splits and normalisation (see prep.h). */
#include "prep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t group, first;
} group_key;

static int cmp_group(const void *a, const void *b) {
    const group_key *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

int split_assign(int64_t G, const int64_t *group, int by_counts, double train_frac, double val_frac,
                 int64_t train_count, int64_t val_count, uint64_t seed, int8_t *which,
                 seer_err *err) {
    if (by_counts && train_count + val_count >= G)
        return seer_fail(err, "[data] split = counts: train_count %lld + val_count %lld leaves no "
                              "test graphs in a dataset of %lld", (long long)train_count,
                         (long long)val_count, (long long)G);
    // Sort (group, graph) pairs to find each group's members, then shuffle the distinct groups.
    group_key *k = seer_malloc(sizeof *k * (size_t)(G ? G : 1));
    for (int64_t g = 0; g < G; g++) k[g].group = group[g], k[g].first = g;
    qsort(k, (size_t)G, sizeof *k, cmp_group);
    int64_t *start = seer_malloc(sizeof(int64_t) * (size_t)(G + 1)), n_groups = 0;
    for (int64_t i = 0; i < G; i++)
        if (i == 0 || k[i].group != k[i - 1].group) start[n_groups++] = i;
    start[n_groups] = G;
    int64_t *order = seer_malloc(sizeof(int64_t) * (size_t)(n_groups ? n_groups : 1));
    for (int64_t i = 0; i < n_groups; i++) order[i] = i;
    seer_rng rng;
    rng_seed(&rng, seed ^ 0x5eed5011ull);
    rng_shuffle_i64(&rng, order, n_groups);
    int64_t want_train = by_counts ? train_count : (int64_t)llround(train_frac * (double)G);
    int64_t want_val = by_counts ? val_count : (int64_t)llround(val_frac * (double)G);
    int64_t n_train = 0, n_val = 0;
    for (int64_t i = 0; i < n_groups; i++) {
        int64_t gi = order[i], size = start[gi + 1] - start[gi];
        int kind = n_train < want_train ? SPLIT_TRAIN : n_val < want_val ? SPLIT_VAL : SPLIT_TEST;
        if (kind == SPLIT_TRAIN) n_train += size;
        else if (kind == SPLIT_VAL) n_val += size;
        for (int64_t j = start[gi]; j < start[gi + 1]; j++) which[k[j].first] = (int8_t)kind;
    }
    free(k);
    free(start);
    free(order);
    if (n_train == 0) return seer_fail(err, "split: no training graphs (dataset has %lld)", (long long)G);
    return 0;
}

int64_t split_ids(const int8_t *which, int64_t G, int kind, int64_t *ids) {
    int64_t n = 0;
    for (int64_t g = 0; g < G; g++)
        if (which[g] == kind) ids[n++] = g;
    return n;
}

/* Column mean/std over the rows of training graphs; rows of graph g are ptr[g]..ptr[g+1]
 * (ptr NULL: row g). Each rank runs Welford over its rows; with several ranks the per-rank
 * (count, mean, M2) are gathered and merged in rank order (Chan et al.), the same on every rank. */
static void fit_cols(const float *x, int w, const int64_t *ptr, const int8_t *which, int64_t G,
                     const norm_comm *comm, double **mean_out, double **std_out) {
    double *mean = seer_calloc((size_t)(w ? w : 1), sizeof(double));
    double *m2 = seer_calloc((size_t)(w ? w : 1), sizeof(double));
    int64_t count = 0;
    for (int64_t g = 0; g < G; g++) {
        if (which[g] != SPLIT_TRAIN) continue;
        int64_t r0 = ptr ? ptr[g] : g, r1 = ptr ? ptr[g + 1] : g + 1;
        for (int64_t r = r0; r < r1; r++) {
            count++;
            for (int c = 0; c < w; c++) { // Welford, in float64
                double v = x[r * w + c], d = v - mean[c];
                mean[c] += d / (double)count;
                m2[c] += d * (v - mean[c]);
            }
        }
    }
    double n = (double)count;
    if (comm && comm->ranks > 1) {
        int64_t row = 1 + 2 * (int64_t)w, R = comm->ranks;
        double *all = seer_calloc((size_t)(R * row), sizeof(double));
        double *mine = all + comm->rank * row;
        mine[0] = n;
        memcpy(mine + 1, mean, sizeof(double) * (size_t)w);
        memcpy(mine + 1 + w, m2, sizeof(double) * (size_t)w);
        comm->sum_f64(all, R * row); // an all-gather: every other row is zero
        n = 0;
        for (int64_t r = 0; r < R; r++) {
            const double *p = all + r * row;
            double nb = p[0], tot = n + nb;
            if (nb == 0) continue;
            for (int c = 0; c < w; c++) {
                double d = p[1 + c] - (n ? mean[c] : 0);
                if (n == 0) mean[c] = p[1 + c], m2[c] = p[1 + w + c];
                else mean[c] += d * nb / tot, m2[c] += p[1 + w + c] + d * d * n * nb / tot;
            }
            n = tot;
        }
        free(all);
    }
    for (int c = 0; c < w; c++) {
        double sd = n > 1 ? sqrt(m2[c] / n) : 0.0;
        m2[c] = sd < 1e-6 ? 1.0 : sd;
    }
    *mean_out = mean;
    *std_out = m2;
}

int norm_fit(norm_stats *s, const pg_dataset *ds, const int8_t *which, const int *label_cols,
             int M, const norm_comm *comm, seer_err *err) {
    memset(s, 0, sizeof *s);
    s->Fn = ds->Fn, s->Fe = ds->Fe, s->Fg = ds->Fg, s->M = M;
    fit_cols(ds->node_x, ds->Fn, ds->node_ptr, which, ds->G, comm, &s->node_mean, &s->node_std);
    fit_cols(ds->edge_x, ds->Fe, ds->edge_ptr, which, ds->G, comm, &s->edge_mean, &s->edge_std);
    fit_cols(ds->global_x, ds->Fg, NULL, which, ds->G, comm, &s->global_mean, &s->global_std);
    s->label_mu = seer_calloc((size_t)M, sizeof(double));
    s->label_sigma = seer_calloc((size_t)M, sizeof(double));
    double *acc = seer_calloc((size_t)(3 * M), sizeof(double)); // (count, sum, sum of squares)
    for (int m = 0; m < M; m++) {
        double *a = acc + 3 * m;
        for (int64_t g = 0; g < ds->G; g++) {
            float y = ds->label_y[g * ds->M + label_cols[m]];
            if (which[g] != SPLIT_TRAIN || isnan(y)) continue;
            double l = log((double)y);
            a[0] += 1, a[1] += l, a[2] += l * l;
        }
    }
    if (comm && comm->ranks > 1) comm->sum_f64(acc, 3 * M);
    for (int m = 0; m < M; m++) {
        double n = acc[3 * m], sum = acc[3 * m + 1], sq = acc[3 * m + 2];
        if (n == 0) {
            free(acc);
            norm_free(s);
            return seer_fail(err, "label %s: no measured (non-NaN) value in the training split",
                             ds->labels[label_cols[m]]);
        }
        double mu = sum / n, var = sq / n - mu * mu;
        s->label_mu[m] = mu;
        s->label_sigma[m] = var > 1e-12 ? sqrt(var) : 1.0;
    }
    free(acc);
    return 0;
}

void norm_free(norm_stats *s) {
    free(s->node_mean), free(s->node_std), free(s->edge_mean), free(s->edge_std);
    free(s->global_mean), free(s->global_std), free(s->label_mu), free(s->label_sigma);
    memset(s, 0, sizeof *s);
}

void norm_rows(float *x, int64_t rows, int w, const double *mean, const double *sd) {
    for (int64_t r = 0; r < rows; r++)
        for (int c = 0; c < w; c++) x[r * w + c] = (float)(((double)x[r * w + c] - mean[c]) / sd[c]);
}

void norm_apply(const norm_stats *s, pg_dataset *ds) {
    norm_rows(ds->node_x, ds->N, ds->Fn, s->node_mean, s->node_std);
    norm_rows(ds->edge_x, ds->E, ds->Fe, s->edge_mean, s->edge_std);
    norm_rows(ds->global_x, ds->G, ds->Fg, s->global_mean, s->global_std);
}

void norm_targets(const norm_stats *s, const pg_dataset *ds, const int *label_cols, float *targets) {
    for (int64_t g = 0; g < ds->G; g++)
        for (int m = 0; m < s->M; m++) {
            float y = ds->label_y[g * ds->M + label_cols[m]];
            targets[g * s->M + m] =
                isnan(y) ? NAN : (float)((log((double)y) - s->label_mu[m]) / s->label_sigma[m]);
        }
}

double norm_to_native(const norm_stats *s, int m, double t) {
    return exp(t * s->label_sigma[m] + s->label_mu[m]);
}
