/* optim: learning-rate schedules (see optim.h). */
#include "optim.h"

#include <math.h>

void sched_init(lr_schedule *s, int kind, double lr0, double min_lr, double factor,
                int64_t patience, int64_t total_epochs) {
    s->kind = kind, s->lr0 = s->lr = lr0, s->min_lr = min_lr, s->factor = factor;
    s->patience = patience, s->bad_epochs = 0, s->total_epochs = total_epochs;
    s->best = INFINITY;
}

void sched_epoch_end(lr_schedule *s, int64_t epoch, double val_loss) {
    if (s->kind == SCHED_PLATEAU) {
        // torch's ReduceLROnPlateau, mode min, threshold 1e-4 relative.
        if (val_loss < s->best * (1.0 - 1e-4)) {
            s->best = val_loss;
            s->bad_epochs = 0;
        } else if (++s->bad_epochs > s->patience) {
            s->lr = fmax(s->lr * s->factor, s->min_lr);
            s->bad_epochs = 0;
        }
    } else if (s->kind == SCHED_COSINE) {
        double frac = s->total_epochs > 0 ? (double)epoch / (double)s->total_epochs : 1.0;
        if (frac > 1) frac = 1;
        s->lr = s->min_lr + 0.5 * (s->lr0 - s->min_lr) * (1.0 + cos(3.141592653589793 * frac));
    }
}
