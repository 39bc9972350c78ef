/* seertrain: trains a performance predictor from an INI config (see configs/README.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "dist/dist.h"
#include "eval/score.h"
#include "export/export.h"
#include "infer/seer_format.h"
#include "train/train.h"
#include "backend/backend.h"

static void usage(FILE *f) {
    fputs("usage: seertrain CONFIG.ini [--set section.key=value ...] [--resume RUN_DIR]\n"
          "       seertrain --resume RUN_DIR [--set section.key=value ...]\n"
          "       seertrain --help-config [--markdown]\n\n"
          "Trains a SeerNet predictor on a PerfGraph HDF5 dataset as the config says, writing\n"
          "checkpoints (last.ckpt, best.ckpt), metrics.jsonl and summary.json to the run folder\n"
          "([output] dir / run, the config's base name by default).\n\n"
          "With [train] multi_task = single, one model per label is trained in RUN_DIR/<label>/\n"
          "and --resume RUN_DIR continues the unfinished ones.\n\n"
          "  --set section.key=value  override one config key (repeatable)\n"
          "  --resume RUN_DIR         continue RUN_DIR/last.ckpt exactly where it stopped, with the\n"
          "                           config stored in it (overrides still apply, e.g.\n"
          "                           --set train.max_steps=2000)\n"
          "  --print-config           print the resolved config and exit\n"
          "  --quiet                  no progress or per-epoch lines\n"
          "  --help-config            list every config key with its type, default and meaning\n\n"
          "[eval] paths = A.h5,B.h5 scores the best checkpoint, exported to RUN_DIR/best.seer, on\n"
          "other datasets at the end (the figures `seerpredict best.seer A.h5` prints; also in\n"
          "summary.json under \"eval\").\n\n"
          "Data-parallel: `mpirun -np R seertrain CONFIG.ini` (or srun under Slurm) trains on R\n"
          "ranks; each reads only its shard of the dataset; see [dist] in --help-config.\n",
          f);
}

static void base_name(const char *path, char *out, size_t len) {
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    snprintf(out, len, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot && dot != out) *dot = 0;
}

/* Trains one model in run_dir (resuming run_dir/last.ckpt when resume is set). */
static trainer *train_one(const seer_config *cfg, const char *run_dir, int resume, int quiet) {
    seer_err err;
    trainer *t = calloc(1, sizeof *t);
    if (trainer_init(t, cfg, &err)) seer_die("%s", err.msg);
    t->quiet = quiet || dist_rank() != 0; // rank 0 speaks for a parallel run
    snprintf(t->run_dir, sizeof t->run_dir, "%s", run_dir);
    if (resume) {
        char ckpt[1100];
        snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", run_dir);
        if (trainer_load(t, ckpt, &err)) seer_die("%s", err.msg);
        if (!quiet)
            printf("seertrain: resumed %s at step %lld (epoch %lld)\n", ckpt, (long long)t->step,
                   (long long)t->epoch);
    }
    if (trainer_run(t, &err)) seer_die("%s", err.msg);
    if (cfg->output_plot && dist_rank() == 0) {
        char args[2300], what[1200];
        snprintf(args, sizeof args, "run '%s'", run_dir);
        snprintf(what, sizeof what, "%s/predicted_vs_measured.png, loss.png", run_dir);
        seer_plot("run_plot.py", args, what, stdout);
    }
    return t;
}

/* [eval] paths: every file must be readable before hours of training are spent. */
static void eval_check_paths(const seer_config *cfg) {
    if (!cfg->eval_paths[0]) return;
    if (cfg->train_multi_task == CFG_MULTI_SINGLE)
        seer_die("%s: [eval] paths needs one model with a head per label; it does not run with "
                 "[train] multi_task = single (use sum or pcgrad)", cfg->file);
    char **paths = NULL;
    int np = seer_split_list(cfg->eval_paths, &paths, 64), bad = -1;
    for (int k = 0; k < np; k++) {
        if (bad < 0 && access(paths[k], R_OK) != 0) {
            bad = k;
            fprintf(stderr, "seertrain: error: %s: [eval] paths = %s: %s (build it, or remove it "
                            "from the list)\n", cfg->file, paths[k], strerror(errno));
        }
        free(paths[k]);
    }
    free(paths);
    if (bad >= 0) exit(1);
}

/* [eval] paths: the best checkpoint exported to run_dir/best.seer, scored on each file through
 * libseer (eval/score.h), the tables printed and appended to summary.json as "eval". */
static void eval_run(const seer_config *cfg, const char *run_dir) {
    if (!cfg->eval_paths[0] || dist_rank() != 0) return;
    char ckpt[1200], out[1200], sum[1200], tmp[1300], msg[1024];
    snprintf(ckpt, sizeof ckpt, "%s/best.ckpt", run_dir);
    snprintf(out, sizeof out, "%s/best.seer", run_dir);
    seer_err err;
    export_info info;
    if (export_seer(ckpt, out, EXPORT_FP32, &info, &err)) seer_die("[eval] %s", err.msg);
    seer_model *m;
    if (seer_load(out, &m, msg, sizeof msg)) seer_die("[eval] %s", msg);
    char **paths = NULL;
    int np = seer_split_list(cfg->eval_paths, &paths, 64);
    score_result *r = calloc((size_t)(np ? np : 1), sizeof *r);
    for (int k = 0; k < np; k++) {
        printf("\n[eval] %s (exported to %s)\n", paths[k], out);
        if (score_dataset(m, paths[k], 0, NULL, NULL, &r[k], &err)) seer_die("[eval] %s", err.msg);
        score_print(stdout, m, paths[k], &r[k]);
    }
    // summary.json gains "eval": written whole to a temporary file, then renamed over it
    snprintf(sum, sizeof sum, "%s/summary.json", run_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", sum);
    FILE *f = fopen(sum, "rb");
    char *text = NULL;
    long len = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        text = malloc((size_t)len + 1);
        if (text && fread(text, 1, (size_t)len, f) != (size_t)len) free(text), text = NULL;
    }
    if (f) fclose(f);
    while (text && len > 0 && text[len - 1] != '}') len--;
    if (!text || len == 0) seer_die("%s: cannot read the run's summary to add [eval]", sum);
    FILE *o = fopen(tmp, "w");
    if (!o) seer_die("%s: cannot write: %s", tmp, strerror(errno));
    fwrite(text, 1, (size_t)len - 1, o);
    fputs(",\"eval\":[", o);
    for (int k = 0; k < np; k++) {
        if (k) fputc(',', o);
        score_json(o, m, paths[k], &r[k]);
    }
    fputs("]}\n", o);
    if ((ferror(o) | fclose(o)) || rename(tmp, sum) != 0) {
        remove(tmp);
        seer_die("%s: write failed: %s", sum, strerror(errno));
    }
    for (int k = 0; k < np; k++) free(paths[k]);
    free(paths), free(r), free(text);
    seer_free(m);
}

/* multi_task = single: one model per label, each in run_dir/<label>, then the figures side by
 * side and run_dir/summary.json with all of them. */
static void train_single(const seer_config *cfg, const char *run_dir, int resume, int quiet) {
    seer_err err;
    char **names = NULL, **all = NULL;
    int M = 0, n_all = 0;
    char **paths = NULL; // several files share one schema: the first names the labels
    int np = seer_split_list(cfg->data_path, &paths, 64);
    int bad = pg_read_label_names(np ? paths[0] : cfg->data_path, &all, &n_all, &err);
    for (int k = 0; k < np; k++) free(paths[k]);
    free(paths);
    if (bad) seer_die("%s", err.msg);
    if (!strcmp(cfg->data_labels, "all")) {
        names = all, M = n_all;
    } else {
        M = seer_split_list(cfg->data_labels, &names, MODEL_MAX_HEADS);
    }
    char *text = config_to_string(cfg);
    char path[1200];
    snprintf(path, sizeof path, "%s/config.ini", run_dir);
    FILE *f = NULL;
    if (dist_rank() == 0) { // rank 0 writes the files of a parallel run
        if (seer_mkdir_p(run_dir, &err)) seer_die("%s", err.msg);
        if (!(f = fopen(path, "w"))) seer_die("%s: cannot write", path);
        fputs(text, f);
        fclose(f);
    }
    quiet = quiet || dist_rank() != 0;
    label_metrics *val = calloc((size_t)M, sizeof *val), *test = calloc((size_t)M, sizeof *test);
    double seconds = 0;
    for (int m = 0; m < M; m++) {
        seer_config one;
        config_defaults(&one);
        if (config_load_string(&one, text, "resolved config", &err)) seer_die("%s", err.msg);
        snprintf(one.file, sizeof one.file, "%s", cfg->file);
        char set[600];
        snprintf(set, sizeof set, "data.labels=%s", names[m]);
        if (config_set(&one, set, &err) || config_set(&one, "train.multi_task=sum", &err))
            seer_die("%s", err.msg);
        char sub[1200], ck[1300];
        snprintf(sub, sizeof sub, "%s/%s", run_dir, names[m]);
        snprintf(ck, sizeof ck, "%s/last.ckpt", sub);
        if (!quiet) printf("\n== single-metric model %d/%d: %s ==\n", m + 1, M, names[m]);
        trainer *t = train_one(&one, sub, resume && access(ck, R_OK) == 0, quiet);
        val[m] = t->final_val[0], test[m] = t->final_test[0];
        seconds += t->train_seconds;
        trainer_free(t);
        free(t);
        config_free(&one);
    }
    if (dist_rank() != 0) goto done;
    printf("\nsingle-metric models, one per label (best checkpoints), %.0f s of training\n", seconds);
    metrics_print_header(stdout);
    metrics_print_rows(stdout, "val", names, val, M);
    metrics_print_rows(stdout, "test", names, test, M);
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    f = fopen(path, "w");
    if (f) {
        double mv = 0, mt = 0;
        for (int m = 0; m < M; m++) mv += val[m].mape / M, mt += test[m].mape / M;
        fprintf(f, "{\"multi_task\":\"single\",\"train_seconds\":%.1f,\"mean_val_mape\":%.6g,"
                   "\"mean_test_mape\":%.6g,\"test\":{", seconds, mv, mt);
        for (int m = 0; m < M; m++)
            fprintf(f, "%s\"%s\":{\"n\":%lld,\"mape\":%.6g,\"rmspe\":%.6g,\"within5\":%.6g,"
                       "\"within10\":%.6g,\"spearman\":%.6g,\"kendall\":%.6g}", m ? "," : "",
                    names[m], (long long)test[m].n, test[m].mape, test[m].rmspe, test[m].within5,
                    test[m].within10, test[m].spearman, test[m].kendall);
        fputs("}}\n", f);
        fclose(f);
    }
done:
    free(val), free(test), free(text);
    if (names != all) {
        for (int m = 0; m < M; m++) free(names[m]);
        free(names);
    }
    for (int m = 0; m < n_all; m++) free(all[m]);
    free(all);
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
    if (resume) {
        // a run folder holds last.ckpt (with its config), or, for multi_task = single, config.ini
        // and one sub-folder per label
        char ckpt[1200];
        snprintf(ckpt, sizeof ckpt, "%s/last.ckpt", resume);
        if (access(ckpt, R_OK) == 0) {
            if (ckpt_read_config(ckpt, &cfg, &err)) seer_die("%s", err.msg);
            snprintf(cfg.file, sizeof cfg.file, "%.500s", ckpt);
        } else {
            snprintf(ckpt, sizeof ckpt, "%s/config.ini", resume);
            if (access(ckpt, R_OK) != 0)
                seer_die("%s: no last.ckpt or config.ini to resume from (is it a run folder?)", resume);
            if (config_load(&cfg, ckpt, &err)) seer_die("%s", err.msg);
        }
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
    // OpenBLAS's kernels for this processor (backend.h), once the config is known to be good and
    // before any rank starts: a bad input still gets its one error line alone
    backend_cpu_blas_kernels(argv, "seertrain");
    eval_check_paths(&cfg);
    if (dist_init(config_choice(CFG_KEY_dist_backend, cfg.dist_backend), cfg.dist_timeout, &err)) seer_die("%s", err.msg);
    char run_dir[1100];
    if (resume) {
        snprintf(run_dir, sizeof run_dir, "%s", resume);
    } else {
        char run[256];
        if (cfg.output_run[0]) snprintf(run, sizeof run, "%s", cfg.output_run);
        else base_name(config_path, run, sizeof run);
        snprintf(run_dir, sizeof run_dir, "%s/%s", cfg.output_dir, run);
    }
    if (cfg.train_multi_task == CFG_MULTI_SINGLE) {
        train_single(&cfg, run_dir, resume != NULL, quiet);
    } else {
        trainer *t = train_one(&cfg, run_dir, resume != NULL, quiet);
        trainer_free(t);
        free(t);
        eval_run(&cfg, run_dir);
    }
    config_free(&cfg);
    free(sets);
    dist_finalize();
    return 0;
}
