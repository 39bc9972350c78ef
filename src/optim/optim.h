/* optim: the learning-rate schedules (ReduceLROnPlateau as in PerfSeer, cosine). The update
 * itself (Adam / AdamW, clipping) is a backend op: backend/adam.h. */
#ifndef SEER_OPTIM_H
#define SEER_OPTIM_H

#include <stdint.h>

#include "backend/adam.h"

enum { SCHED_NONE = 0, SCHED_PLATEAU = 1, SCHED_COSINE = 2 };

typedef struct {
    int kind;
    double lr0, lr, min_lr, factor;
    int64_t patience, bad_epochs, total_epochs;
    double best; // best monitored value (plateau); starts at +inf
} lr_schedule;

void sched_init(lr_schedule *s, int kind, double lr0, double min_lr, double factor,
                int64_t patience, int64_t total_epochs);
/* Call at the end of an epoch (epoch counts from 1) with the validation loss; updates s->lr. */
void sched_epoch_end(lr_schedule *s, int64_t epoch, double val_loss);

#endif
