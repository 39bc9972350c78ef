/* eval: accuracy metrics (see metrics.h). */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

typedef struct {
    double v;
    int64_t i;
} vi;

static int cmp_vi(const void *a, const void *b) {
    const vi *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static void ranks(const double *x, int64_t n, double *r) {
    vi *t = seer_malloc(sizeof *t * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) t[i].v = x[i], t[i].i = i;
    qsort(t, (size_t)n, sizeof *t, cmp_vi);
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j + 1 < n && t[j + 1].v == t[i].v) j++;
        double avg = 0.5 * (double)(i + j) + 1.0;
        for (int64_t k = i; k <= j; k++) r[t[k].i] = avg;
        i = j + 1;
    }
    free(t);
}

static double pearson(const double *a, const double *b, int64_t n) {
    double ma = 0, mb = 0;
    for (int64_t i = 0; i < n; i++) ma += a[i], mb += b[i];
    ma /= (double)n, mb /= (double)n;
    double sab = 0, saa = 0, sbb = 0;
    for (int64_t i = 0; i < n; i++) {
        double da = a[i] - ma, db = b[i] - mb;
        sab += da * db, saa += da * da, sbb += db * db;
    }
    return saa > 0 && sbb > 0 ? sab / sqrt(saa * sbb) : 0.0;
}

static double kendall_tau_b(const double *x, const double *y, int64_t n) {
    // O(n^2) with exact tie handling; n is a validation or test split (thousands to tens of
    // thousands of graphs), which this handles in well under a second.
    double conc = 0, disc = 0, tx = 0, ty = 0;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i + 1; j < n; j++) {
            double dx = x[i] - x[j], dy = y[i] - y[j];
            if (dx == 0 && dy == 0) continue;
            if (dx == 0) tx++;
            else if (dy == 0) ty++;
            else if ((dx > 0) == (dy > 0)) conc++;
            else disc++;
        }
    double den = sqrt((conc + disc + tx) * (conc + disc + ty));
    return den > 0 ? (conc - disc) / den : 0.0;
}

void metrics_compute(const double *pred, const double *truth, int64_t n, label_metrics *out) {
    memset(out, 0, sizeof *out);
    double *p = seer_malloc(sizeof(double) * (size_t)(n ? n : 1));
    double *t = seer_malloc(sizeof(double) * (size_t)(n ? n : 1));
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (!isnan(truth[i])) p[k] = pred[i], t[k] = truth[i], k++;
    out->n = k;
    if (k == 0) { // nothing to score: no figure (printed "-", JSON null), never a 0% error
        out->mape = out->rmspe = out->within5 = out->within10 = out->spearman = out->kendall = NAN;
        free(p), free(t);
        return;
    }
    double ape = 0, sq = 0, w5 = 0, w10 = 0;
    for (int64_t i = 0; i < k; i++) {
        double rel = fabs(p[i] - t[i]) / fabs(t[i]);
        if (isnan(rel)) rel = 1.0; // a NaN prediction is scored as a 100% miss, not skipped
        ape += rel, sq += rel * rel;
        w5 += rel <= 0.05, w10 += rel <= 0.10;
    }
    out->mape = 100.0 * ape / (double)k;
    out->rmspe = 100.0 * sqrt(sq / (double)k);
    out->within5 = 100.0 * w5 / (double)k;
    out->within10 = 100.0 * w10 / (double)k;
    double *rp = seer_malloc(sizeof(double) * (size_t)k), *rt = seer_malloc(sizeof(double) * (size_t)k);
    ranks(p, k, rp);
    ranks(t, k, rt);
    out->spearman = k > 1 ? pearson(rp, rt, k) : NAN; // one pair has no order to agree on
    out->kendall = k > 1 ? kendall_tau_b(p, t, k) : NAN;
    free(rp), free(rt), free(p), free(t);
}

void metrics_none(label_metrics *m, int M) {
    for (int i = 0; i < M; i++) metrics_compute(NULL, NULL, 0, &m[i]);
}

void metrics_print_header(FILE *f) {
    fprintf(f, "%-5s %-22s %6s %8s %8s %7s %7s %8s %8s\n", "split", "label", "n", "MAPE%",
            "RMSPE%", "<5%", "<10%", "Spearman", "Kendall");
}

/* One table cell: the number, or "-" where there is none (NaN: nothing was scored). */
static void cell(FILE *f, double v, int width, int prec) {
    if (isnan(v)) fprintf(f, " %*s", width, "-");
    else fprintf(f, " %*.*f", width, prec, v);
}

static void row(FILE *f, const char *split, const char *name, const label_metrics *m) {
    fprintf(f, "%-5s %-22s %6lld", split, name, (long long)m->n);
    cell(f, m->mape, 8, 3), cell(f, m->rmspe, 8, 3), cell(f, m->within5, 7, 2);
    cell(f, m->within10, 7, 2), cell(f, m->spearman, 8, 4), cell(f, m->kendall, 8, 4);
    fputc('\n', f);
}

void metrics_mean(const label_metrics *m, int M, label_metrics *mean) {
    double *out[6] = {&mean->mape, &mean->rmspe, &mean->within5, &mean->within10,
                      &mean->spearman, &mean->kendall};
    memset(mean, 0, sizeof *mean);
    int scored = 0;
    for (int i = 0; i < M; i++) {
        mean->n += m[i].n;
        if (m[i].n == 0) continue;
        const double in[6] = {m[i].mape, m[i].rmspe, m[i].within5, m[i].within10, m[i].spearman,
                              m[i].kendall};
        for (int k = 0; k < 6; k++) *out[k] += in[k];
        scored++;
    }
    for (int k = 0; k < 6; k++) *out[k] = scored ? *out[k] / scored : NAN;
}

void metrics_json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

void metrics_print_rows(FILE *f, const char *split, char *const *names, const label_metrics *m,
                        int M) {
    for (int i = 0; i < M; i++) row(f, split, names[i], &m[i]);
    label_metrics mean;
    metrics_mean(m, M, &mean);
    if (M > 1) row(f, split, "(mean)", &mean);
}
