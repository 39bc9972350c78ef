/* model: the parameter table (see params.h). */
#include "params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t params_add(param_table *t, const char *name, int64_t rows, int64_t cols) {
    SEER_ASSERT(t->n < PARAMS_MAX);
    param_info *pi = &t->p[t->n++];
    snprintf(pi->name, sizeof pi->name, "%s", name);
    pi->rows = rows, pi->cols = cols, pi->offset = t->total;
    // Keep every tensor 16-float aligned so vector loads of any tensor start aligned.
    t->total += (rows * cols + 15) & ~(int64_t)15;
    return pi->offset;
}

void params_free(param_table *t) { memset(t, 0, sizeof *t); }

lin_p params_linear(param_table *t, const char *name, int fin, int fout) {
    char buf[64];
    lin_p l = {.fin = fin, .fout = fout};
    snprintf(buf, sizeof buf, "%s.weight", name);
    l.w = params_add(t, buf, fout, fin);
    snprintf(buf, sizeof buf, "%s.bias", name);
    l.b = params_add(t, buf, 1, fout);
    return l;
}

mlp_p params_mlp(param_table *t, const char *name, int fin, int hid, int fout) {
    char buf[64];
    mlp_p m;
    snprintf(buf, sizeof buf, "%s.0", name);
    m.l1 = params_linear(t, buf, fin, hid);
    snprintf(buf, sizeof buf, "%s.2", name);
    m.l2 = params_linear(t, buf, hid, fout);
    return m;
}

void params_init_uniform(const param_table *t, float *p, seer_rng *rng) {
    memset(p, 0, sizeof(float) * (size_t)t->total);
    for (int i = 0; i < t->n; i++) {
        const param_info *pi = &t->p[i];
        // fan-in of a weight is its column count; a bias uses its weight's (the previous entry)
        size_t len = strlen(pi->name);
        int is_bias = len > 5 && strcmp(pi->name + len - 5, ".bias") == 0;
        int64_t fin = is_bias && i > 0 ? t->p[i - 1].cols : pi->cols;
        double bound = 1.0 / sqrt((double)fin);
        for (int64_t k = 0; k < pi->rows * pi->cols; k++)
            p[pi->offset + k] = (float)((2.0 * rng_uniform(rng) - 1.0) * bound);
    }
}
