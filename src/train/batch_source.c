/* train: the batch source (see batch_source.h): the CPU implementation and the choice. */
#include "batch_source.h"

#include <string.h>

static model_input cpu_make(batch_source *s, const int64_t *ids, int64_t n) {
    batch_build(&s->host, s->ds, s->targets, ids, n);
    return model_input_from_batch(&s->host);
}

static const float *cpu_targets(const batch_source *s) { return s->host.y; }

static void cpu_release(batch_source *s) { (void)s; }

int batch_source_init(batch_source *s, const seer_backend *be, const pg_dataset *ds,
                      const float *targets, int M, int64_t cap_G, int64_t cap_N, int64_t cap_E,
                      int want_extra, seer_err *err) {
    memset(s, 0, sizeof *s);
    s->be = be, s->ds = ds, s->targets = targets, s->M = M;
    batch_init(&s->host, cap_G, cap_N, cap_E, ds->Fn, ds->Fe, ds->Fg, M, ds->n_ops);
    s->host.want_extra = want_extra;
    s->make = cpu_make, s->step_targets = cpu_targets, s->release = cpu_release;
    if (!be->device) return 0;
#ifdef SEER_HAVE_CUDA
    return batch_source_cuda_init(s, err);
#else
    return seer_fail(err, "a device backend (%s) in a build without CUDA", be->name);
#endif
}

void batch_source_free(batch_source *s) {
    if (s->release) s->release(s);
    batch_free(&s->host);
    memset(s, 0, sizeof *s);
}
