/* eval: accuracy metrics in native units (the trainer's tables, seerpredict's scores).
 * Metrics skip pairs whose truth is NaN (not measured). Spearman uses average ranks for ties;
 * Kendall is tau-b. Predictions that are NaN count as a miss (error 100%+, see metrics.c). */
#ifndef SEER_EVAL_METRICS_H
#define SEER_EVAL_METRICS_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    int64_t n;
    double mape, rmspe, within5, within10, spearman, kendall; // percentages for the first four
} label_metrics;

void metrics_compute(const double *pred, const double *truth, int64_t n, label_metrics *out);

/* The summary table: a header, then one row per label and (M > 1) their mean. */
void metrics_print_header(FILE *f);
void metrics_print_rows(FILE *f, const char *split, char *const *names, const label_metrics *m,
                        int M);

#endif
