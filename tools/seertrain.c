/* seertrain: trains a performance predictor from an INI config (see configs/README.md). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "train/train.h"

static void usage(FILE *f) {
    fputs("usage: seertrain CONFIG.ini [--set section.key=value ...] [--resume RUN_DIR]\n"
          "       seertrain --resume RUN_DIR [--set section.key=value ...]\n"
          "       seertrain --help-config [--markdown]\n\n"
          "Trains a SeerNet predictor on a PerfGraph HDF5 dataset as the config says, writing\n"
          "checkpoints (last.ckpt, best.ckpt), metrics.jsonl and summary.json to the run folder\n"
          "([output] dir / run, the config's base name by default).\n\n"
          "  --set section.key=value  override one config key (repeatable)\n"
          "  --resume RUN_DIR         continue RUN_DIR/last.ckpt exactly where it stopped, with the\n"
          "                           config stored in it (overrides still apply, e.g.\n"
          "                           --set train.max_steps=2000)\n"
          "  --print-config           print the resolved config and exit\n"
          "  --quiet                  no progress or per-epoch lines\n"
          "  --help-config            list every config key with its type, default and meaning\n",
          f);
}

static void base_name(const char *path, char *out, size_t len) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, len, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

int main(int argc, char **argv) {
    const char *config_path = NULL, *resume = NULL;
    const char **sets = calloc((size_t)argc, sizeof(char *));
    int n_sets = 0, print_only = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--help-config")) {
            config_help(stdout, i + 1 < argc && !strcmp(argv[i + 1], "--markdown"));
            return 0;
        } else if (!strcmp(a, "--set") && i + 1 < argc) {
            sets[n_sets++] = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) {
            sets[n_sets++] = a + 6;
        } else if (!strcmp(a, "--resume") && i + 1 < argc) {
            resume = argv[++i];
        } else if (!strcmp(a, "--print-config")) {
            print_only = 1;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "seertrain: unknown or incomplete option '%s' (see seertrain --help)\n", a);
            return 2;
        } else if (!config_path) {
            config_path = a;
        } else {
            fprintf(stderr, "seertrain: unexpected argument '%s' (see seertrain --help)\n", a);
            return 2;
        }
    }
    if (!config_path && !resume) {
        usage(stderr);
        return 2;
    }
    seer_config cfg;
    seer_err err;
    config_defaults(&cfg);
    char ckpt[1200] = "";
    if (resume) {
        snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", resume);
        if (ckpt_read_config(ckpt, &cfg, &err)) seer_die("%s", err.msg);
        snprintf(cfg.file, sizeof cfg.file, "%s", ckpt);
        if (config_path)
            fprintf(stderr, "seertrain: resuming with the config stored in %s; %s is ignored\n",
                    ckpt, config_path);
    } else if (config_load(&cfg, config_path, &err)) {
        seer_die("%s", err.msg);
    }
    for (int i = 0; i < n_sets; i++)
        if (config_set(&cfg, sets[i], &err)) seer_die("%s", err.msg);
    if (config_validate(&cfg, &err)) seer_die("%s", err.msg);
    if (print_only) {
        char *s = config_to_string(&cfg);
        fputs(s, stdout);
        free(s);
        return 0;
    }
    trainer *t = calloc(1, sizeof *t);
    if (trainer_init(t, &cfg, &err)) seer_die("%s", err.msg);
    t->quiet = quiet;
    if (resume) {
        snprintf(t->run_dir, sizeof t->run_dir, "%s", resume);
        if (trainer_load(t, ckpt, &err)) seer_die("%s", err.msg);
        if (!quiet)
            printf("seertrain: resumed %s at step %lld (epoch %lld)\n", ckpt, (long long)t->step,
                   (long long)t->epoch);
    } else {
        char run[256];
        if (cfg.output_run[0]) snprintf(run, sizeof run, "%s", cfg.output_run);
        else base_name(config_path, run, sizeof run);
        snprintf(t->run_dir, sizeof t->run_dir, "%s/%s", cfg.output_dir, run);
    }
    if (trainer_run(t, &err)) seer_die("%s", err.msg);
    trainer_free(t);
    free(t);
    config_free(&cfg);
    free(sets);
    return 0;
}
