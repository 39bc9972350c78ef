/* eval: accuracy metrics in native units (the trainer's tables, seerpredict's scores).
 * Metrics skip pairs whose truth is NaN (not measured). Spearman uses average ranks for ties;
 * Kendall is tau-b. Predictions that are NaN count as a miss (error 100%+, see metrics.c). */
#ifndef SEER_EVAL_METRICS_H
#define SEER_EVAL_METRICS_H

#include <stdint.h>
#include <stdio.h>

typedef struct {
    int64_t n;
    double mape, rmspe, within5, within10, spearman, kendall; // percentages for the first four;
                                                              // NaN when n = 0
} label_metrics;

void metrics_compute(const double *pred, const double *truth, int64_t n, label_metrics *out);
/* The figures of M labels with nothing scored (n = 0, every figure NaN). */
void metrics_none(label_metrics *m, int M);

/* The mean of each figure over the labels that scored any graph (n > 0); NaN when none did. */
void metrics_mean(const label_metrics *m, int M, label_metrics *mean);
/* A number for JSON: null where it is NaN or infinite (a figure with nothing scored). */
void metrics_json_num(FILE *f, double v);

/* The summary table: a header, then one row per label and (M > 1) their mean; "-" where a label
 * had nothing to score. */
void metrics_print_header(FILE *f);
void metrics_print_rows(FILE *f, const char *split, char *const *names, const label_metrics *m,
                        int M);

#endif
