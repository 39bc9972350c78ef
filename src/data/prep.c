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

static const char *const ROOF_FEATURES[ROOF_TERMS_MAX - 1] = {"log_nodes", "log_flops_total",
                                                              "log_mem_total", "log_weight_total",
                                                              "log_mem_light"};
static const char *const TARGET_NAMES[] = {"log", "roofline", "roofline_weights", "roofline_light",
                                           "roofline_kept", "roofline_kept_silu",
                                           "roofline_kept_acts", "roofline_peak", "roofline_dw"};

/* The global feature the cost's term k + 1 reads: roofline_kept's sixth term is log_mem_kept,
 * roofline_kept_silu's log_mem_kept_silu, roofline_kept_acts's, roofline_peak's and roofline_dw's
 * log_mem_kept_acts; roofline_peak's and roofline_dw's seventh the mean activation tensor's bytes;
 * roofline_dw's eighth the depthwise convolutions' FLOPs. */
static const char *roof_feature(int target, int k) {
    if (k == 4 && target == TARGET_ROOFLINE_K) return "log_mem_kept";
    if (k == 4 && target == TARGET_ROOFLINE_KS) return "log_mem_kept_silu";
    if (k == 4 && target >= TARGET_ROOFLINE_KA) return "log_mem_kept_acts";
    if (k == 5) return "log_tensor_bytes_mean";
    if (k == 6) return "log_flops_dw";
    return ROOF_FEATURES[k];
}

int norm_roof_columns(char *const *global_names, int Fg, int target, int col[ROOF_TERMS_MAX - 1],
                      const char *origin, seer_err *err) {
    for (int k = 0; k < norm_roof_terms(target) - 1; k++) {
        col[k] = -1; // (libseer has prep.c but not the HDF5 reader's pg_find_name)
        for (int j = 0; j < Fg && col[k] < 0; j++)
            if (!strcmp(global_names[j], roof_feature(target, k))) col[k] = j;
        if (col[k] < 0)
            return seer_fail(err, "%s: [model] target = %s reads the global feature '%s', "
                                  "which this dataset does not have (%s)", origin,
                             TARGET_NAMES[target], roof_feature(target, k),
                             k == 4 ? (target == TARGET_ROOFLINE_L
                                           ? "files converted before 2026-12-03 have none: convert it again "
                                             "with seerconvert, or use target = roofline_weights"
                                           : "files converted before 2026-12-04 (05:00 UTC for "
                                             "log_mem_kept_silu, 06:00 for log_mem_kept_acts) have none: convert it again with "
                                             "seerconvert, or use target = roofline_weights")
                             : k == 6 ? "files converted before 2026-12-05 (16:00 UTC) have none: convert it again "
                                        "with seerconvert, or use target = roofline_peak"
                                      : "rebuild it with seerconvert, or use target = log");
    }
    return 0;
}

/* The cost's terms of one graph: 1, nodes, FLOPs, bytes[, weight bytes[, light or kept bytes[,
 * mean activation tensor bytes]]] (the raw features are log1p; roofline_light's bytes term is the
 * rest's, all bytes less the light ones); returns their count. */
static int roof_terms(const norm_stats *s, const float *xg, double x[ROOF_TERMS_MAX]) {
    int R = norm_roof_terms(s->target);
    x[0] = 1;
    for (int k = 0; k < R - 1; k++) x[k + 1] = expm1((double)xg[s->roof_col[k]]);
    if (s->target == TARGET_ROOFLINE_L) x[3] = fmax(x[3] - x[5], 0); // float32 rounding: never below 0
    return R;
}

const char *norm_target_name(int target) {
    return target >= 0 && target <= TARGET_LAST ? TARGET_NAMES[target] : "unknown";
}

double norm_interp(const double *x, const double *y, int n, double v) {
    if (v <= x[0]) return y[0];
    if (v >= x[n - 1]) return y[n - 1];
    int j = 1;
    while (x[j] < v) j++; // x[j - 1] < v <= x[j]
    double t = (v - x[j - 1]) / (x[j] - x[j - 1]);
    return y[j - 1] + t * (y[j] - y[j - 1]);
}

double norm_log_cost(const norm_stats *s, int m, const float *global_raw) {
    double calib = s->calib_n ? norm_interp(s->calib_x, s->calib_y + (int64_t)m * s->calib_n, s->calib_n,
                                            (double)global_raw[s->calib_col]) : 0;
    if (!norm_roof_terms(s->target)) return calib;
    double x[ROOF_TERMS_MAX], cost = 0;
    int R = roof_terms(s, global_raw, x);
    for (int k = 0; k < R; k++) cost += s->roof[m * R + k] * x[k];
    return calib + log(cost > 1e-30 ? cost : 1e-30); // a graph with none of the fitted terms
}

/* Non-negative least squares min |A c - 1|^2 over c >= 0 from the normal equations (AtA
 * (R^2), At1 (R), n rows): each of the 2^R - 1 subsets of terms is solved on its Jacobi-scaled
 * equations by Gaussian elimination; the feasible solution with the least residual wins (exact
 * for so few terms, and deterministic). */
static void roof_nnls(int R, const double *AtA, const double *At1, double n, double *c) {
    enum { RM = ROOF_TERMS_MAX };
    double best = INFINITY;
    memset(c, 0, sizeof(double) * R);
    for (int mask = 1; mask < (1 << R); mask++) {
        int idx[RM], k = 0, ok = 1;
        for (int t = 0; t < R; t++)
            if (mask >> t & 1) idx[k++] = t;
        double S[RM][RM + 1], d[RM], x[RM], cand[RM] = {0};
        for (int i = 0; i < k; i++) ok &= (d[i] = sqrt(AtA[idx[i] * R + idx[i]])) > 0;
        if (!ok) continue;
        for (int i = 0; i < k; i++) {
            for (int j = 0; j < k; j++) S[i][j] = AtA[idx[i] * R + idx[j]] / (d[i] * d[j]);
            S[i][k] = At1[idx[i]] / d[i];
        }
        for (int p = 0; p < k && ok; p++) {
            int piv = p;
            for (int i = p + 1; i < k; i++)
                if (fabs(S[i][p]) > fabs(S[piv][p])) piv = i;
            if (!(fabs(S[piv][p]) > 1e-10)) ok = 0; // collinear terms: a smaller subset serves
            for (int j = 0; j <= k && ok; j++) {
                double tmp = S[p][j];
                S[p][j] = S[piv][j], S[piv][j] = tmp;
            }
            for (int i = p + 1; i < k && ok; i++) {
                double f = S[i][p] / S[p][p];
                for (int j = p; j <= k; j++) S[i][j] -= f * S[p][j];
            }
        }
        for (int i = k - 1; i >= 0 && ok; i--) {
            double v = S[i][k];
            for (int j = i + 1; j < k; j++) v -= S[i][j] * x[j];
            x[i] = v / S[i][i];
            cand[idx[i]] = x[i] / d[i];
            ok = cand[idx[i]] >= 0 && isfinite(cand[idx[i]]);
        }
        if (!ok) continue;
        double res = n;
        for (int i = 0; i < R; i++) {
            res -= 2 * cand[i] * At1[i];
            for (int j = 0; j < R; j++) res += cand[i] * AtA[i * R + j] * cand[j];
        }
        if (res < best) best = res, memcpy(c, cand, sizeof(double) * R);
    }
}

/* The roofline costs of the M labels from the training graphs' raw global features. */
static void roof_fit(norm_stats *s, const pg_dataset *ds, const int8_t *which,
                     const int *label_cols, const norm_comm *comm) {
    const int R = norm_roof_terms(s->target), W = R * R + R + 1;
    double *acc = seer_calloc((size_t)(W * s->M), sizeof(double)); // per label AtA, At1, n
    for (int m = 0; m < s->M; m++) {
        double *AtA = acc + W * m, *At1 = AtA + R * R;
        for (int64_t g = 0; g < ds->G; g++) {
            float y = ds->label_y[g * ds->M + label_cols[m]];
            if (which[g] != SPLIT_TRAIN || isnan(y) || !(y > 0)) continue;
            double a[ROOF_TERMS_MAX];
            roof_terms(s, ds->global_x + g * ds->Fg, a);
            for (int i = 0; i < R; i++) {
                a[i] /= y; // relative error: row a / y against 1
                At1[i] += a[i];
            }
            for (int i = 0; i < R; i++)
                for (int j = 0; j < R; j++) AtA[i * R + j] += a[i] * a[j];
            At1[R] += 1;
        }
    }
    if (comm && comm->ranks > 1) comm->sum_f64(acc, W * s->M);
    s->roof = seer_calloc((size_t)(R * s->M), sizeof(double));
    for (int m = 0; m < s->M; m++) {
        const double *AtA = acc + W * m;
        roof_nnls(R, AtA, AtA + R * R, AtA[R * R + R], s->roof + R * m);
    }
    free(acc);
}

int norm_fit(norm_stats *s, const pg_dataset *ds, const int8_t *which, const int *label_cols,
             int M, int target, const char *origin, const norm_comm *comm, seer_err *err) {
    memset(s, 0, sizeof *s);
    s->Fn = ds->Fn, s->Fe = ds->Fe, s->Fg = ds->Fg, s->M = M;
    s->target = target;
    if (norm_roof_terms(target)) {
        if (norm_roof_columns(ds->global_features, ds->Fg, target, s->roof_col, origin, err))
            return -1;
        roof_fit(s, ds, which, label_cols, comm);
    }
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
            double l = log((double)y) - norm_log_cost(s, m, ds->global_x + g * ds->Fg);
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
    free(s->roof);
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

void norm_targets(const norm_stats *s, const pg_dataset *ds, const int *label_cols, float *targets,
                  double *log_cost) {
    for (int64_t g = 0; g < ds->G; g++)
        for (int m = 0; m < s->M; m++) {
            float y = ds->label_y[g * ds->M + label_cols[m]];
            double lc = norm_log_cost(s, m, ds->global_x + g * ds->Fg);
            if (log_cost) log_cost[g * s->M + m] = lc;
            targets[g * s->M + m] = isnan(y) ? NAN
                                  : (float)((log((double)y) - lc - s->label_mu[m]) / s->label_sigma[m]);
        }
}

double norm_to_native(const norm_stats *s, int m, double t, double log_cost) {
    return exp(t * s->label_sigma[m] + s->label_mu[m] + log_cost);
}

/* norm.target's layout for a kind: cost terms per metric (log keeps roofline's four, as zeros),
 * global columns (one fewer: the constant has none), values in all. */
static int target_terms(int target) { return norm_roof_terms(target) ? norm_roof_terms(target) : 4; }
static int target_cols(int target) { return target_terms(target) - 1; }
static int64_t target_count(int target, int M) {
    return 2 + target_cols(target) + (int64_t)M * target_terms(target);
}

int64_t norm_target_pack(const norm_stats *s, double *v) {
    int cols = target_cols(s->target), head = 2 + cols, roof = norm_roof_terms(s->target) > 0;
    v[0] = s->target, v[1] = s->clamp;
    for (int k = 0; k < cols; k++) v[2 + k] = roof ? s->roof_col[k] : -1;
    for (int64_t i = 0; i < (int64_t)s->M * target_terms(s->target); i++)
        v[head + i] = roof ? s->roof[i] : 0; // log: zeros, as files always had
    return target_count(s->target, s->M);
}

int norm_target_unpack(norm_stats *s, const double *v, int64_t n, const char *origin, seer_err *err) {
    if (n < 2 || !(v[0] >= TARGET_LOG && v[0] <= TARGET_LAST && v[0] == (int)v[0]) ||
        (v[1] != 0 && v[1] != 1))
        return seer_fail(err, "%s: norm.target: target kind %g or clamp %g is not one this "
                              "library knows (kind 0 to %d; clamp 0 or 1)",
                         origin, n ? v[0] : -1.0, n > 1 ? v[1] : -1.0, TARGET_LAST);
    int target = (int)v[0], cols = target_cols(target), head = 2 + cols;
    if (n != target_count(target, s->M))
        return seer_fail(err, "%s: norm.target has %lld values, target kind %d with %d metrics "
                              "needs %lld", origin, (long long)n, target, s->M,
                         (long long)target_count(target, s->M));
    s->target = target, s->clamp = (int)v[1];
    s->roof = NULL;
    if (!norm_roof_terms(s->target)) return 0;
    for (int k = 0; k < cols; k++) {
        if (!(v[2 + k] >= 0 && v[2 + k] < s->Fg) || v[2 + k] != (int)v[2 + k])
            return seer_fail(err, "%s: norm.target: roofline column %g is not a global feature "
                                  "(0..%d)", origin, v[2 + k], s->Fg - 1);
        s->roof_col[k] = (int)v[2 + k];
    }
    for (int64_t i = 0; i < (int64_t)s->M * target_terms(target); i++)
        if (!(v[head + i] >= 0) || !isfinite(v[head + i]))
            return seer_fail(err, "%s: norm.target: roofline cost term %lld = %g is not finite "
                                  "and non-negative", origin, (long long)i, v[head + i]);
    s->roof = (double *)(v + head);
    return 0;
}

int norm_calib_unpack(norm_stats *s, const double *v, int64_t n, const char *origin, seer_err *err) {
    if (n < 2 || !(v[0] >= 0 && v[0] < s->Fg && v[0] == (int)v[0]))
        return seer_fail(err, "%s: calib.batch: column %g is not a global feature (0..%d)", origin,
                         n ? v[0] : -1.0, s->Fg - 1);
    if (!(v[1] >= 2 && v[1] <= NORM_CALIB_MAX && v[1] == (int)v[1]))
        return seer_fail(err, "%s: calib.batch: %g knots (2..%d)", origin, v[1], NORM_CALIB_MAX);
    int k = (int)v[1];
    if (n != 2 + k + (int64_t)s->M * k)
        return seer_fail(err, "%s: calib.batch has %lld values, %d knots of %d metrics need %lld",
                         origin, (long long)n, k, s->M, (long long)(2 + k + (int64_t)s->M * k));
    for (int j = 0; j < k; j++)
        if (!isfinite(v[2 + j]) || (j && !(v[2 + j] > v[1 + j])))
            return seer_fail(err, "%s: calib.batch: knot %d (%g) is not finite and above the one "
                                  "before: re-run seercalibrate", origin, j, v[2 + j]);
    for (int64_t i = 0; i < (int64_t)s->M * k; i++)
        if (!(fabs(v[2 + k + i]) < 50)) // a factor beyond e^50 is no calibration
            return seer_fail(err, "%s: calib.batch: log factor %lld = %g is not finite and within "
                                  "+-50", origin, (long long)i, v[2 + k + i]);
    s->calib_col = (int)v[0], s->calib_n = k;
    s->calib_x = v + 2, s->calib_y = v + 2 + k;
    return 0;
}

int norm_affine_unpack(norm_stats *s, const double *v, int64_t n, const char *origin, seer_err *err) {
    if (n != 3 + 3 * (int64_t)s->M)
        return seer_fail(err, "%s: calib.flops has %lld values, %d metrics need %lld", origin,
                         (long long)n, s->M, (long long)(3 + 3 * (int64_t)s->M));
    if (!(v[0] >= 0 && v[0] < s->Fg && v[0] == (int)v[0]))
        return seer_fail(err, "%s: calib.flops: column %g is not a global feature (0..%d)", origin,
                         v[0], s->Fg - 1);
    if (!(isfinite(v[1]) && isfinite(v[2]) && v[1] <= v[2]))
        return seer_fail(err, "%s: calib.flops: the calibrated range %g .. %g is not one", origin, v[1], v[2]);
    for (int m = 0; m < s->M; m++) {
        const double *c = v + 3 + 3 * m;
        if (!(fabs(c[0]) < 100 && c[1] > 0 && c[1] <= 10 && fabs(c[2]) < 100))
            return seer_fail(err, "%s: calib.flops: metric %d's a, b, c = %g, %g, %g are not a "
                                  "calibration's (|a|, |c| < 100, 0 < b <= 10): re-run seercalibrate",
                             origin, m, c[0], c[1], c[2]);
    }
    s->aff_col = (int)v[0], s->aff_lo = v[1], s->aff_hi = v[2], s->aff = v + 3;
    return 0;
}

double norm_affine(const norm_stats *s, int m, double y, const float *global_raw) {
    if (!s->aff) return y;
    const double *c = s->aff + 3 * m;
    return exp(c[0] + c[1] * log(y > 1e-300 ? y : 1e-300) + c[2] * (double)global_raw[s->aff_col]);
}
