/* train: reporting (report.c). Every function that writes a file returns -1 with a message when
 * it cannot; the collective ones (report_shards, report_final, report_test_predictions) are
 * called by every rank. */
#ifndef SEER_REPORT_H
#define SEER_REPORT_H

#include <stdio.h>

#include "train/train.h"

double report_mean_mape(const label_metrics *m, int M);
/* "split":{label:{n, mape, ...}, ...} */
void report_json_metrics(FILE *f, const trainer *t, const char *split, const label_metrics *m);
/* The shards (one with one process), printed by rank 0 at the start of a run. */
void report_shards(const trainer *t);
/* Test predictions of the current weights: run_dir/test_predictions.csv (graph id, name, and
 * per label the measurement and the prediction, native units; empty when not measured); the
 * test metrics into tm. */
int report_test_predictions(trainer *t, label_metrics *tm, seer_err *err);
/* summary.json and the final table (printed even with --quiet, which silences progress only). */
int report_final(trainer *t, const label_metrics *vm, const label_metrics *tm, int64_t best_step,
                 seer_err *err);
/* Peak resident memory of this process so far, MB. */
double report_peak_rss_mb(void);

#endif
