/* bench_train: CPU training throughput of seertrain's step (graphs per second).
 * usage: bench_train CONFIG.ini [--set k=v ...] [--steps N]
 * Uses the config's data, model and batch size; runs 3 warm-up steps and N timed steps on
 * consecutive shuffled training batches, as benchmarks/bench_train_cpu.sh does for PyTorch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train/train.h"
#include "backend/backend.h"

int main(int argc, char **argv) {
    backend_cpu_blas_kernels(argv, "bench_train"); // OpenBLAS's kernels for this processor (backend.h)
    if (argc < 2) {
        fprintf(stderr, "usage: bench_train CONFIG.ini [--set section.key=value ...] [--steps N]\n");
        return 2;
    }
    seer_config cfg;
    seer_err err;
    config_defaults(&cfg);
    if (config_load(&cfg, argv[1], &err)) seer_die("%s", err.msg);
    int steps = 30;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            if (config_set(&cfg, argv[++i], &err)) seer_die("%s", err.msg);
        } else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
            steps = atoi(argv[++i]);
        } else {
            seer_die("bench_train: unknown argument %s", argv[i]);
        }
    }
    if (config_validate(&cfg, &err)) seer_die("%s", err.msg);
    trainer *t = calloc(1, sizeof *t);
    if (trainer_init(t, &cfg, &err)) seer_die("%s", err.msg);
    int64_t n = t->n_ids[SPLIT_TRAIN], bs = cfg.train_batch_size;
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)n);
    memcpy(perm, t->ids[SPLIT_TRAIN], sizeof(int64_t) * (size_t)n);
    seer_rng r;
    rng_seed(&r, 0);
    rng_shuffle_i64(&r, perm, n);
    double t0 = 0, loss = 0;
    int64_t graphs = 0;
    for (int s = 0; s < steps + 3; s++) {
        if (s == 3) t0 = seer_now();
        int64_t start = (s * bs) % (n - bs);
        loss = trainer_step(t, perm + start, bs);
        if (s >= 3) graphs += bs;
    }
    double el = seer_now() - t0;
    printf("seer threads=%lld H=%lld L=%lld batch=%lld: %.1f graphs/s (%d steps, %.2fs, loss %.4f)\n",
           (long long)cfg.train_threads, (long long)cfg.model_hidden, (long long)cfg.model_blocks,
           (long long)bs, (double)graphs / el, steps, el, loss);
    trainer_free(t);
    free(t), free(perm);
    return 0;
}
