/* seersweep: hyperparameter sweeps over seertrain: grid and random search, successive halving
 * over epochs, trials as parallel processes, resumable, with a results table, the best trial's
 * config and a plot. See --help and configs/sweep.ini.
 *
 * A trial is one seertrain run of the base config with its own values, in SWEEP_DIR/trial_NNN/
 * (its trial.ini, seertrain.log, checkpoints and summary.json). Successive halving: every trial
 * trains to the first rung (min_epochs), the best 1/eta of them (by the metric, at least one)
 * continue to the next rung (min_epochs * eta, ...) with `seertrain --resume`, the rest stop
 * there; the last rung is max_epochs. A rung runs its trials `workers` at a time. The trial's
 * schedule always spans max_epochs ([train] epochs); [train] stop_epoch pauses it at the rung,
 * so a trial trained rung by rung is bitwise the run its final config gives in one go.
 *
 * State: SWEEP_DIR/state.tsv, rewritten through a temporary file and rename after every event.
 * Rerunning the same sweep reads it, keeps finished trials and reruns the rungs that were in
 * flight (resuming their checkpoints). */
#define _GNU_SOURCE
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/common.h"
#include "config/config.h"
#ifdef SEER_HAVE_CUDA
#include "cuda_backend.h"
#endif

#define MAX_PARAMS 32
#define MAX_VALUES 64
#define MAX_TRIALS 1024
#define MAX_SETS 64

enum { P_GRID, P_CHOICE, P_UNIFORM, P_LOGUNIFORM, P_INT };
enum { T_PENDING, T_RUNNING, T_DONE, T_STOPPED, T_FAILED };
static const char *const STATUS[] = {"pending", "running", "done", "stopped", "failed"};

typedef struct {
    char key[128];
    int kind, n;
    char *values[MAX_VALUES]; // grid / choice
    double lo, hi;            // uniform / loguniform / int
} param;

typedef struct {
    char values[MAX_PARAMS][128];
    int status, rung, runs; // rung: the last rung reached; runs: seertrain invocations
    int epochs;             // epochs trained so far
    double metric;          // at the last finished rung (NaN: none yet)
    char error[256];
    pid_t pid;
} trial;

typedef struct {
    char path[512], base[512], name[128], dir[512], metric[128], direction[8];
    char seertrain[512], plot[512];
    long seed, trials, workers, threads, min_epochs, max_epochs, eta;
    int asha;
    param p[MAX_PARAMS];
    int np;
    char *sets[MAX_SETS]; // [set] overrides applied to every trial, "section.key=value"
    int n_sets;
    int line;     // of the INI being read (for messages)
    FILE *f;
    char err[600];
} sweep;

/* inih reads through this so the handler knows the line. */
static char *sweep_reader(char *buf, int size, void *stream) {
    sweep *s = stream;
    char *r = fgets(buf, size, s->f);
    if (r) s->line++;
    return r;
}

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static char *trim(char *s) {
    while (*s == ' ' || *s == '\t') s++;
    char *e = s + strlen(s);
    while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n')) *--e = 0;
    return s;
}

static int parse_param(sweep *s, const char *key, const char *value, int line) {
    if (s->np == MAX_PARAMS) {
        snprintf(s->err, sizeof s->err, "%s:%d: more than %d swept parameters", s->path, line, MAX_PARAMS);
        return 0;
    }
    param *p = &s->p[s->np++];
    memset(p, 0, sizeof *p);
    snprintf(p->key, sizeof p->key, "%s", key);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", value);
    char *sp = strchr(buf, ' ');
    char *kind = buf, *rest = sp ? (*sp = 0, trim(sp + 1)) : (char *)"";
    if (!strcmp(kind, "grid") || !strcmp(kind, "choice")) {
        p->kind = !strcmp(kind, "grid") ? P_GRID : P_CHOICE;
        char *save = NULL;
        for (char *tok = strtok_r(rest, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (p->n == MAX_VALUES) break;
            p->values[p->n++] = seer_strdup(trim(tok));
        }
        if (p->n == 0) {
            snprintf(s->err, sizeof s->err, "%s:%d: %s = %s: give the values after '%s', comma separated",
                     s->path, line, key, value, kind);
            return 0;
        }
        return 1;
    }
    p->kind = !strcmp(kind, "uniform") ? P_UNIFORM : !strcmp(kind, "loguniform") ? P_LOGUNIFORM
              : !strcmp(kind, "int") ? P_INT : -1;
    if (p->kind < 0 || sscanf(rest, "%lf %lf", &p->lo, &p->hi) != 2 || !(p->lo <= p->hi) ||
        (p->kind == P_LOGUNIFORM && p->lo <= 0)) {
        snprintf(s->err, sizeof s->err, "%s:%d: %s = %s: use 'grid a,b,...', 'choice a,b,...', "
                 "'uniform LO HI', 'loguniform LO HI' (LO > 0) or 'int LO HI'", s->path, line, key, value);
        return 0;
    }
    return 1;
}

static int on_ini(void *user, const char *section, const char *key, const char *value) {
    sweep *s = user;
    int line = s->line;
    if (s->err[0]) return 0;
    if (!strcmp(section, "params")) {
        if (!strchr(key, '.')) {
            snprintf(s->err, sizeof s->err, "%s:%d: [params] %s: name a config key as section.key "
                     "(e.g. model.hidden)", s->path, line, key);
            return 0;
        }
        return parse_param(s, key, value, line);
    }
    if (!strcmp(section, "set")) {
        if (s->n_sets == MAX_SETS) return 0;
        char buf[1024];
        snprintf(buf, sizeof buf, "%s=%s", key, value);
        s->sets[s->n_sets++] = seer_strdup(buf);
        return 1;
    }
    if (strcmp(section, "sweep") != 0) {
        snprintf(s->err, sizeof s->err, "%s:%d: unknown section [%s] (sections: sweep, set, params)",
                 s->path, line, section);
        return 0;
    }
#define STR(k, f) if (!strcmp(key, k)) { snprintf(s->f, sizeof s->f, "%s", value); return 1; }
#define NUM(k, f) if (!strcmp(key, k)) { char *end; s->f = strtol(value, &end, 10); \
        if (*end || end == value) { snprintf(s->err, sizeof s->err, "%s:%d: %s = %s: not an integer", \
                                             s->path, line, key, value); return 0; } return 1; }
    STR("base", base) STR("name", name) STR("dir", dir) STR("metric", metric)
    STR("direction", direction) NUM("seed", seed) NUM("trials", trials) NUM("workers", workers)
    NUM("threads", threads) NUM("min_epochs", min_epochs) NUM("max_epochs", max_epochs)
    NUM("eta", eta)
#undef STR
#undef NUM
    if (!strcmp(key, "asha") || !strcmp(key, "halving")) {
        s->asha = !strcmp(value, "on") || !strcmp(value, "1") || !strcmp(value, "true");
        return 1;
    }
    snprintf(s->err, sizeof s->err, "%s:%d: unknown key [sweep] %s (see seersweep --help)", s->path,
             line, key);
    return 0;
}

static void usage(FILE *f) {
    fputs("usage: seersweep SWEEP.ini [--workers N] [--threads N] [--seertrain PATH] [--no-plot]\n\n"
          "Runs seertrain trials of a base config with swept values, successive halving over\n"
          "epochs, several trials at once; rerun the same command to resume. Writes to the sweep\n"
          "folder ([sweep] dir/name): state.tsv, trial_NNN/ per trial, results.csv (sorted by the\n"
          "metric), best.ini (the best trial's config: `seertrain best.ini` reproduces it) and\n"
          "plot.png (the metric against each swept parameter; python3-matplotlib).\n\n"
          "[sweep]  base = CONFIG.ini        the config every trial starts from\n"
          "         name = NAME              sweep folder name (default: the sweep file's name)\n"
          "         dir = checkpoints/sweeps where sweep folders go\n"
          "         metric = mean_val_mape   a summary.json number: mean_val_mape, mean_test_mape,\n"
          "                                  best_val_loss, or val.LABEL.FIELD / test.LABEL.FIELD\n"
          "                                  (FIELD: mape, rmspe, within5, within10, spearman, kendall)\n"
          "         direction = min          min or max\n"
          "         trials = 8               random draws per grid point (1 without random params)\n"
          "         seed = 1                 seed of the draws\n"
          "         workers = 0              trials at once (0: the cores / threads)\n"
          "         threads = 1              [train] threads of each trial\n"
          "         asha = on                successive halving (off: every trial to max_epochs)\n"
          "         min_epochs = 1, eta = 3  first rung and reduction factor\n"
          "         max_epochs = 0           last rung (0: the base config's [train] epochs)\n"
          "[set]    section.key = value      overrides for every trial\n"
          "[params] section.key = grid a,b,c | choice a,b,c | uniform LO HI | loguniform LO HI |\n"
          "                       int LO HI\n"
          "GPUs: trials run on the CPU ([backend] device = cpu) until the CUDA backend exists.\n",
          f);
}

/* ---- trials ---- */

static void format_value(const param *p, double v, char *out, size_t len) {
    if (p->kind == P_INT) snprintf(out, len, "%lld", (long long)llround(v));
    else snprintf(out, len, "%.4g", v);
}

/* Trials: the grid's Cartesian product, each with `draws` random draws of the other params. */
static int make_trials(const sweep *s, trial *t) {
    int grid = 1, random = 0;
    for (int i = 0; i < s->np; i++) {
        if (s->p[i].kind == P_GRID) grid *= s->p[i].n;
        else random = 1;
    }
    int draws = random ? (int)(s->trials > 0 ? s->trials : 8) : 1, n = grid * draws;
    if (n > MAX_TRIALS) return -1;
    seer_rng r;
    rng_seed(&r, (uint64_t)s->seed);
    for (int k = 0; k < n; k++) {
        memset(&t[k], 0, sizeof t[k]);
        t[k].metric = NAN;
        int g = k / draws;
        for (int i = 0; i < s->np; i++) {
            const param *p = &s->p[i];
            char *v = t[k].values[i];
            if (p->kind == P_GRID) {
                snprintf(v, 128, "%s", p->values[g % p->n]);
                g /= p->n;
            } else if (p->kind == P_CHOICE) {
                snprintf(v, 128, "%s", p->values[rng_below(&r, (uint64_t)p->n)]);
            } else {
                double u = rng_uniform(&r), x;
                if (p->kind == P_LOGUNIFORM) x = exp(log(p->lo) + u * (log(p->hi) - log(p->lo)));
                else if (p->kind == P_INT) x = floor(p->lo + u * (p->hi - p->lo + 1));
                else x = p->lo + u * (p->hi - p->lo);
                format_value(p, x, v, 128);
            }
        }
    }
    return n;
}

/* ---- state file ---- */

static int write_state(const sweep *s, const trial *t, int n) {
    char path[700], tmp[720];
    snprintf(path, sizeof path, "%s/state.tsv", s->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    fprintf(f, "# seersweep state: %s (%d trials)\ntrial\tstatus\trung\tepochs\truns\tmetric", s->path, n);
    for (int i = 0; i < s->np; i++) fprintf(f, "\t%s", s->p[i].key);
    fprintf(f, "\terror\n");
    for (int k = 0; k < n; k++) {
        const trial *x = &t[k];
        fprintf(f, "%d\t%s\t%d\t%d\t%d\t%.10g", k, STATUS[x->status], x->rung, x->epochs, x->runs, x->metric);
        for (int i = 0; i < s->np; i++) fprintf(f, "\t%s", x->values[i]);
        fprintf(f, "\t%s\n", x->error);
    }
    int bad = ferror(f) | (fflush(f) != 0);
    bad |= fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    return bad || rename(tmp, path) != 0 ? -1 : 0;
}

/* Reads back a state written for the same trials (same parameter values); returns the number
 * of trials restored, -1 when the file belongs to another sweep definition. */
static int read_state(const sweep *s, trial *t, int n) {
    char path[700];
    snprintf(path, sizeof path, "%s/state.tsv", s->dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[8192];
    int restored = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strncmp(line, "trial\t", 6)) continue;
        char *save = NULL, *tok[MAX_PARAMS + 8];
        int nt = 0;
        line[strcspn(line, "\n")] = 0;
        for (char *p = strtok_r(line, "\t", &save); p && nt < MAX_PARAMS + 8; p = strtok_r(NULL, "\t", &save))
            tok[nt++] = p;
        if (nt < 6 + s->np) continue;
        int k = atoi(tok[0]);
        if (k < 0 || k >= n) {
            fclose(f);
            return -1;
        }
        for (int i = 0; i < s->np; i++)
            if (strcmp(tok[6 + i], t[k].values[i]) != 0) {
                fclose(f);
                return -1;
            }
        trial *x = &t[k];
        for (int st = 0; st < 5; st++)
            if (!strcmp(tok[1], STATUS[st])) x->status = st;
        if (x->status == T_RUNNING) x->status = T_PENDING; // in flight when the sweep stopped
        x->rung = atoi(tok[2]), x->epochs = atoi(tok[3]), x->runs = atoi(tok[4]);
        x->metric = strtod(tok[5], NULL);
        if (nt > 6 + s->np) snprintf(x->error, sizeof x->error, "%s", tok[6 + s->np]);
        restored++;
    }
    fclose(f);
    return restored;
}

/* ---- the metric, from a run's summary.json ---- */

/* The metric must be a number summary.json holds: a top-level figure, or SPLIT.LABEL.FIELD with a
 * label the base config trains ("all" lets any label through). */
static void check_metric(const char *path, const char *metric, const char *labels) {
    static const char *const top[] = {"mean_val_mape", "mean_test_mape", "best_val_loss",
                                      "train_mean_val_mape", "train_seconds"};
    static const char *const fields[] = {"mape", "rmspe", "within5", "within10", "spearman", "kendall"};
    for (size_t i = 0; i < sizeof top / sizeof *top; i++)
        if (!strcmp(metric, top[i])) return;
    const char *dot = strchr(metric, '.'), *dot2 = strrchr(metric, '.');
    int ok = dot && dot2 > dot && (!strncmp(metric, "val.", 4) || !strncmp(metric, "test.", 5));
    int field = 0;
    for (size_t i = 0; ok && i < sizeof fields / sizeof *fields; i++) field |= !strcmp(dot2 + 1, fields[i]);
    if (ok && field) {
        char label[128];
        snprintf(label, sizeof label, "%.*s", (int)(dot2 - dot - 1), dot + 1);
        if (!strcmp(labels, "all")) return;
        char list[2048];
        int n = snprintf(list, sizeof list, ",");
        for (const char *c = labels; *c && n < (int)sizeof list - 2; c++)
            if (*c != ' ' && *c != '\t') list[n++] = *c;
        list[n++] = ',', list[n] = 0;
        char want[140];
        snprintf(want, sizeof want, ",%s,", label);
        if (strstr(list, want)) return;
        seer_die("%s: [sweep] metric = %s: '%s' is not one of the base config's labels (%s)", path,
                 metric, label, labels);
    }
    seer_die("%s: [sweep] metric = %s: use mean_val_mape, mean_test_mape, best_val_loss, "
             "train_mean_val_mape, train_seconds, or val.LABEL.FIELD / test.LABEL.FIELD (FIELD: "
             "mape, rmspe, within5, within10, spearman, kendall)", path, metric);
}

static double json_number_after(const char *text, const char *key) {
    char pat[256];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p) return NAN;
    char *end;
    double v = strtod(p + strlen(pat), &end);
    return end == p + strlen(pat) ? NAN : v; // null (nothing scored) is no number
}

static double read_metric(const char *run_dir, const char *metric) {
    char path[800];
    snprintf(path, sizeof path, "%s/summary.json", run_dir);
    size_t len;
    char *text = seer_read_file(path, &len, NULL);
    if (!text) return NAN;
    double v;
    const char *dot = strchr(metric, '.');
    if (!dot) v = json_number_after(text, metric);
    else { // split.LABEL.FIELD: find the split's object, then the label's, then the field
        char split[32], label[128], field[32];
        const char *dot2 = strrchr(metric, '.');
        snprintf(split, sizeof split, "%.*s", (int)(dot - metric), metric);
        snprintf(label, sizeof label, "%.*s", (int)(dot2 - dot - 1), dot + 1);
        snprintf(field, sizeof field, "%s", dot2 + 1);
        char pat[200];
        snprintf(pat, sizeof pat, "\"%s\":{", split);
        const char *p = strstr(text, pat);
        snprintf(pat, sizeof pat, "\"%s\":{", label);
        p = p ? strstr(p, pat) : NULL;
        v = p ? json_number_after(p, field) : NAN;
    }
    free(text);
    return v;
}

/* ---- running trials ---- */

static void trial_dir(const sweep *s, int k, char *out, size_t len) {
    snprintf(out, len, "%s/trial_%03d", s->dir, k);
}

/* Starts seertrain for trial k up to `epochs`: a fresh run from trial.ini, or a resume. */
static pid_t launch(const sweep *s, const trial *t, int k, int epochs, int resume) {
    char dir[700], log[760], stop[64];
    trial_dir(s, k, dir, sizeof dir);
    snprintf(log, sizeof log, "%s/seertrain.log", dir);
    snprintf(stop, sizeof stop, "train.stop_epoch=%d", epochs);
    char ini[760];
    snprintf(ini, sizeof ini, "%s/trial.ini", dir);
    (void)t;
    // On a machine with several GPUs, trial k trains on GPU k mod their count (unless the user
    // placed the sweep with CUDA_VISIBLE_DEVICES). Counting them starts CUDA here; the child execs
    // seertrain, so nothing CUDA crosses the fork.
    int gpus = 0;
#ifdef SEER_HAVE_CUDA
    if (!getenv("CUDA_VISIBLE_DEVICES")) gpus = cuda_device_count();
#endif
    fflush(stdout);
    pid_t pid = fork();
    if (pid != 0) return pid;
    // child: dies with the sweep (so a killed sweep leaves no orphan writing to the folder)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (gpus > 1) {
        char dev[16];
        snprintf(dev, sizeof dev, "%d", k % gpus);
        setenv("CUDA_VISIBLE_DEVICES", dev, 1);
    }
    FILE *f = fopen(log, "a");
    if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
    }
    // no plots per trial and rung (the sweep draws its own)
    if (resume) execl(s->seertrain, s->seertrain, "--resume", dir, "--quiet", "--set", stop, "--set",
                      "output.plot=0", (char *)NULL);
    else execl(s->seertrain, s->seertrain, ini, "--quiet", "--set", stop, "--set", "output.plot=0",
               (char *)NULL);
    fprintf(stderr, "seersweep: cannot run %s: %s\n", s->seertrain, strerror(errno));
    _exit(127);
}

/* The last non-empty line of a trial's log (its error message). */
static void last_line(const char *path, char *out, size_t len) {
    size_t n;
    char *text = seer_read_file(path, &n, NULL);
    out[0] = 0;
    if (!text) return;
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' ')) text[--n] = 0;
    char *p = strrchr(text, '\n');
    snprintf(out, len, "%s", p ? p + 1 : text);
    for (char *c = out; *c; c++)
        if (*c == '\t') *c = ' ';
    free(text);
}

/* Writes trial k's folder and trial.ini: the base config, [set], the trial's values, the sweep's
 * epochs, threads, device and run folder. Returns -1 (error in the trial) on a bad value. */
static int prepare_trial(const sweep *s, trial *x, int k, int max_epochs) {
    char dir[700];
    trial_dir(s, k, dir, sizeof dir);
    seer_config cfg;
    seer_err err;
    if (seer_mkdir_p(dir, &err)) {
        snprintf(x->error, sizeof x->error, "%s", err.msg);
        return -1;
    }
    config_defaults(&cfg);
    int rc = config_load(&cfg, s->base, &err);
    for (int i = 0; !rc && i < s->n_sets; i++) rc = config_set(&cfg, s->sets[i], &err);
    for (int i = 0; !rc && i < s->np; i++) {
        char a[300];
        snprintf(a, sizeof a, "%s=%s", s->p[i].key, x->values[i]);
        rc = config_set(&cfg, a, &err);
    }
    char a[300], run[64];
    snprintf(run, sizeof run, "trial_%03d", k);
    const char *fixed[5];
    char f0[64], f1[64], f2[760], f3[96];
    snprintf(f0, sizeof f0, "train.epochs=%d", max_epochs);
    snprintf(f1, sizeof f1, "train.threads=%ld", s->threads);
    snprintf(f2, sizeof f2, "output.dir=%s", s->dir);
    snprintf(f3, sizeof f3, "output.run=%s", run);
    fixed[0] = f0, fixed[1] = f1, fixed[2] = f2, fixed[3] = f3, fixed[4] = "backend.device=cpu";
    for (int i = 0; !rc && i < 5; i++) rc = config_set(&cfg, fixed[i], &err);
    if (!rc) rc = config_validate(&cfg, &err);
    if (rc) {
        snprintf(x->error, sizeof x->error, "%s", err.msg);
        for (char *c = x->error; *c; c++)
            if (*c == '\t' || *c == '\n') *c = ' ';
        config_free(&cfg);
        return -1;
    }
    char *text = config_to_string(&cfg);
    snprintf(a, sizeof a, "%s/trial.ini", dir);
    FILE *f = fopen(a, "w");
    if (f) {
        fprintf(f, "; seersweep %s, trial %d\n%s", s->path, k, text);
        fclose(f);
    }
    free(text);
    config_free(&cfg);
    return 0;
}

/* Runs every pending trial of the current rung to `epochs`, workers at a time. */
static int run_rung(const sweep *s, trial *t, int n, int rung, int epochs, int max_epochs) {
    int running = 0, next = 0;
    seer_progress prog;
    int todo = 0;
    for (int k = 0; k < n; k++) todo += t[k].status == T_PENDING && t[k].rung == rung;
    char label[64];
    snprintf(label, sizeof label, "rung %d (%d epochs)", rung, epochs);
    progress_begin(&prog, label, todo);
    int finished = 0;
    while (!g_stop) {
        while (running < s->workers && next < n) {
            trial *x = &t[next];
            int k = next++;
            if (x->status != T_PENDING || x->rung != rung) continue;
            int resume = 0;
            char dir[700], ck[760];
            trial_dir(s, k, dir, sizeof dir);
            snprintf(ck, sizeof ck, "%s/last.ckpt", dir);
            if (access(ck, R_OK) == 0) resume = 1;
            else if (prepare_trial(s, x, k, max_epochs)) {
                x->status = T_FAILED;
                write_state(s, t, n);
                finished++;
                continue;
            }
            x->pid = launch(s, x, k, epochs, resume);
            x->status = T_RUNNING;
            x->runs++;
            running++;
            write_state(s, t, n);
        }
        if (running == 0) break;
        int st;
        pid_t pid = waitpid(-1, &st, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int k = 0; k < n; k++) {
            trial *x = &t[k];
            if (x->status != T_RUNNING || x->pid != pid) continue;
            running--, finished++;
            char dir[700], log[760];
            trial_dir(s, k, dir, sizeof dir);
            snprintf(log, sizeof log, "%s/seertrain.log", dir);
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
                x->metric = read_metric(dir, s->metric);
                x->epochs = epochs;
                x->status = T_DONE;
                if (isnan(x->metric))
                    snprintf(x->error, sizeof x->error, "no metric %s in %s/summary.json", s->metric, dir);
            } else if (!g_stop) {
                x->status = T_FAILED;
                last_line(log, x->error, sizeof x->error);
                if (!x->error[0]) snprintf(x->error, sizeof x->error, "seertrain exited with status %d", st);
            } else {
                x->status = T_PENDING; // interrupted: rerun on resume
            }
            write_state(s, t, n);
        }
        char extra[64];
        snprintf(extra, sizeof extra, "%d running", running);
        progress_update(&prog, finished, extra);
    }
    progress_end(&prog);
    if (g_stop) { // stop the children and leave the state resumable
        for (int k = 0; k < n; k++)
            if (t[k].status == T_RUNNING) {
                kill(t[k].pid, SIGTERM);
                waitpid(t[k].pid, NULL, 0);
                t[k].status = T_PENDING;
            }
        write_state(s, t, n);
        return -1;
    }
    return 0;
}

static int cmp_idx_ctx_dir = 0;
static const trial *cmp_idx_ctx = NULL;
static int cmp_idx(const void *a, const void *b) {
    const trial *x = &cmp_idx_ctx[*(const int *)a], *y = &cmp_idx_ctx[*(const int *)b];
    int has_x = !isnan(x->metric) && x->status != T_FAILED, has_y = !isnan(y->metric) && y->status != T_FAILED;
    if (has_x != has_y) return has_y - has_x;
    if (x->epochs != y->epochs) return y->epochs - x->epochs; // further rungs first
    if (!has_x) return *(const int *)a - *(const int *)b;
    double d = cmp_idx_ctx_dir ? y->metric - x->metric : x->metric - y->metric;
    return d < 0 ? -1 : d > 0 ? 1 : *(const int *)a - *(const int *)b;
}

static void sort_trials(const sweep *s, const trial *t, int n, int *order) {
    for (int k = 0; k < n; k++) order[k] = k;
    cmp_idx_ctx = t, cmp_idx_ctx_dir = !strcmp(s->direction, "max");
    qsort(order, (size_t)n, sizeof *order, cmp_idx);
}

static void report(const sweep *s, const trial *t, int n, int stopped_early) {
    int *order = seer_malloc(sizeof(int) * (size_t)n);
    sort_trials(s, t, n, order);
    char path[700];
    snprintf(path, sizeof path, "%s/results.csv", s->dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "rank,trial,status,epochs,%s", s->metric);
        for (int i = 0; i < s->np; i++) fprintf(f, ",%s", s->p[i].key);
        fprintf(f, ",run_dir,error\n");
        for (int r = 0; r < n; r++) {
            const trial *x = &t[order[r]];
            fprintf(f, "%d,%d,%s,%d,%.6g", r + 1, order[r], STATUS[x->status], x->epochs, x->metric);
            for (int i = 0; i < s->np; i++) fprintf(f, ",%s", x->values[i]);
            char dir[700];
            trial_dir(s, order[r], dir, sizeof dir);
            fprintf(f, ",%s,\"%s\"\n", dir, x->error);
        }
        fclose(f);
    }
    printf("\n%-5s %-6s %-8s %6s %14s", "rank", "trial", "status", "epochs", s->metric);
    for (int i = 0; i < s->np; i++) printf(" %14.14s", s->p[i].key);
    printf("\n");
    for (int r = 0; r < n; r++) {
        const trial *x = &t[order[r]];
        printf("%-5d %-6d %-8s %6d %14.6g", r + 1, order[r], STATUS[x->status], x->epochs, x->metric);
        for (int i = 0; i < s->np; i++) printf(" %14.14s", x->values[i]);
        if (x->status == T_FAILED) printf("  %s", x->error);
        printf("\n");
    }
    int done = 0, failed = 0;
    for (int k = 0; k < n; k++) done += t[k].status == T_DONE, failed += t[k].status == T_FAILED;
    printf("%d trials: %d finished, %d stopped early by successive halving, %d failed; results in %s\n",
           n, done, stopped_early, failed, path);
    const trial *best = &t[order[0]];
    if (best->status == T_DONE && !isnan(best->metric)) {
        char dir[700], src[760], dst[700];
        trial_dir(s, order[0], dir, sizeof dir);
        snprintf(src, sizeof src, "%s/trial.ini", dir);
        snprintf(dst, sizeof dst, "%s/best.ini", s->dir);
        size_t len;
        char *text = seer_read_file(src, &len, NULL);
        FILE *o = text ? fopen(dst, "w") : NULL;
        if (o) {
            // the trial's config with its final epochs; run folder renamed so it does not clash
            fprintf(o, "; best trial %d of %s: %s = %.6g after %d epochs\n", order[0], s->path,
                    s->metric, best->metric, best->epochs);
            char *save = NULL;
            for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
                if (!strncmp(ln, "; seersweep", 11)) continue;
                if (!strncmp(ln, "run = ", 6)) fprintf(o, "run = best_trial_%03d\n", order[0]);
                else if (!strncmp(ln, "epochs = ", 9)) fprintf(o, "epochs = %ld\n", s->max_epochs);
                else if (!strncmp(ln, "stop_epoch = ", 13)) fprintf(o, "stop_epoch = %d\n", best->epochs < s->max_epochs ? best->epochs : 0);
                else fprintf(o, "%s\n", ln);
            }
            fclose(o);
            printf("best: trial %d, %s = %.6g; its config: %s (seertrain %s reproduces it)\n", order[0],
                   s->metric, best->metric, dst, dst);
        }
        free(text);
    }
    free(order);
}

int main(int argc, char **argv) {
    static sweep s;
    static trial t[MAX_TRIALS];
    const char *path = NULL;
    long workers = -1, threads = -1;
    int plot = 1;
    snprintf(s.seertrain, sizeof s.seertrain, "%s", "");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if ((!strcmp(argv[i], "--workers") || !strcmp(argv[i], "--threads")) && i + 1 < argc) {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);
            if (*end || end == argv[i + 1] || v < 1) {
                fprintf(stderr, "seersweep: error: %s %s: a positive count\n", argv[i], argv[i + 1]);
                return 2;
            }
            *(!strcmp(argv[i], "--workers") ? &workers : &threads) = v;
            i++;
        }
        else if (!strcmp(argv[i], "--seertrain") && i + 1 < argc) snprintf(s.seertrain, sizeof s.seertrain, "%s", argv[++i]);
        else if (!strcmp(argv[i], "--no-plot")) plot = 0;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "seersweep: error: unknown option %s (see --help)\n", argv[i]);
            return 2;
        } else path = argv[i];
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    // defaults, then the file
    snprintf(s.path, sizeof s.path, "%s", path);
    snprintf(s.dir, sizeof s.dir, "checkpoints/sweeps");
    snprintf(s.metric, sizeof s.metric, "mean_val_mape");
    snprintf(s.direction, sizeof s.direction, "min");
    s.seed = 1, s.trials = 8, s.workers = 0, s.threads = 1, s.min_epochs = 1, s.eta = 3, s.asha = 1;
    {
        const char *b = strrchr(path, '/');
        snprintf(s.name, sizeof s.name, "%s", b ? b + 1 : path);
        char *dot = strrchr(s.name, '.');
        if (dot && dot != s.name) *dot = 0;
    }
    FILE *f = fopen(path, "r");
    if (!f) seer_die("%s: cannot open: %s", path, strerror(errno));
    s.f = f;
    int rc = ini_parse_stream(sweep_reader, &s, on_ini, &s);
    fclose(f);
    if (s.err[0]) seer_die("%s", s.err);
    if (rc > 0) seer_die("%s:%d: not valid INI", path, rc);
    if (!s.base[0]) seer_die("%s: [sweep] base = CONFIG.ini is missing (the config every trial starts from)", path);
    if (strcmp(s.direction, "min") && strcmp(s.direction, "max"))
        seer_die("%s: [sweep] direction = %s: use min or max", path, s.direction);
    if (s.eta < 2) seer_die("%s: [sweep] eta = %ld: must be >= 2", path, s.eta);
    if (s.workers < 0 || s.threads < 1 || s.trials < 1)
        seer_die("%s: [sweep] workers (%ld) must be 0 (the cores / threads) or more, threads (%ld) "
                 "and trials (%ld) 1 or more", path, s.workers, s.threads, s.trials);

    if (s.min_epochs < 1) seer_die("%s: [sweep] min_epochs = %ld: must be >= 1", path, s.min_epochs);
    if (workers > 0) s.workers = workers;
    if (threads > 0) s.threads = threads;
    if (s.threads < 1) s.threads = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (s.workers <= 0) s.workers = cores / s.threads > 0 ? cores / s.threads : 1;
    // the base config must load; its epochs are the default last rung
    seer_config base;
    seer_err err;
    config_defaults(&base);
    if (config_load(&base, s.base, &err)) seer_die("%s (the sweep's base config)", err.msg);
    for (int i = 0; i < s.n_sets; i++)
        if (config_set(&base, s.sets[i], &err)) seer_die("%s: [set] %s", path, err.msg);
    if (s.max_epochs <= 0) s.max_epochs = base.train_epochs;
    // every swept key takes its first value (a misspelt key would fail every trial), and the
    // metric names a number summary.json has (a misspelt one would score every trial NaN)
    for (int i = 0; i < s.np; i++) {
        char set[700], first[64];
        if (s.p[i].kind == P_GRID || s.p[i].kind == P_CHOICE) snprintf(first, sizeof first, "%s", s.p[i].values[0]);
        else snprintf(first, sizeof first, s.p[i].kind == P_INT ? "%.0f" : "%.17g", s.p[i].lo);
        snprintf(set, sizeof set, "%s=%s", s.p[i].key, first);
        if (config_set(&base, set, &err)) seer_die("%s: [params] %s", path, err.msg);
    }
    check_metric(path, s.metric, base.data_labels);
    config_free(&base);
    if (s.min_epochs > s.max_epochs) s.min_epochs = s.max_epochs;
    if (!s.seertrain[0]) { // next to this program, else on PATH
        char self[512];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n > 0) {
            self[n] = 0;
            char *slash = strrchr(self, '/');
            if (slash) *slash = 0;
            snprintf(s.seertrain, sizeof s.seertrain, "%s/seertrain", self);
        }
        if (access(s.seertrain, X_OK) != 0) snprintf(s.seertrain, sizeof s.seertrain, "seertrain");
    }
    char dir[700];
    snprintf(dir, sizeof dir, "%s/%s", s.dir, s.name);
    snprintf(s.dir, sizeof s.dir, "%s", dir);
    seer_err derr;
    if (seer_mkdir_p(s.dir, &derr)) seer_die("%s", derr.msg);

    int n = make_trials(&s, t);
    if (n < 0) seer_die("%s: more than %d trials", path, MAX_TRIALS);
    int restored = read_state(&s, t, n);
    if (restored < 0)
        seer_die("%s/state.tsv belongs to another sweep definition (its trials differ): remove the "
                 "folder or set [sweep] name", s.dir);
    // rungs
    int rungs[32], nr = 0;
    if (s.asha)
        for (long e = s.min_epochs; nr < 31; e *= s.eta) {
            if (e >= s.max_epochs) break;
            rungs[nr++] = (int)e;
        }
    rungs[nr++] = (int)s.max_epochs;
    printf("seersweep: %d trials (%d resumed) of %s, %d rung(s) of", n, restored, s.base, nr);
    for (int r = 0; r < nr; r++) printf(" %d", rungs[r]);
    printf(" epochs, %ld worker(s) x %ld thread(s), folder %s\n", s.workers, s.threads, s.dir);
    fflush(stdout);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    write_state(&s, t, n);
    int stopped_early = 0;
    for (int r = 0; r < nr; r++) {
        if (run_rung(&s, t, n, r, rungs[r], (int)s.max_epochs)) {
            fprintf(stderr, "seersweep: interrupted; run the same command again to resume\n");
            return 130;
        }
        if (r + 1 == nr) break;
        int promoted = 0; // already promoted (a resumed sweep): decided once per rung
        for (int k = 0; k < n; k++) promoted |= t[k].rung > r;
        if (promoted) continue;
        // promote the best 1/eta of the trials that finished this rung (at least one)
        static int ids[MAX_TRIALS];
        int m = 0;
        for (int k = 0; k < n; k++)
            if (t[k].rung == r && (t[k].status == T_DONE || t[k].status == T_STOPPED)) ids[m++] = k;
        int keep = (int)((m + s.eta - 1) / s.eta);
        cmp_idx_ctx = t, cmp_idx_ctx_dir = !strcmp(s.direction, "max");
        qsort(ids, (size_t)m, sizeof *ids, cmp_idx);
        for (int i = 0; i < m; i++) {
            trial *x = &t[ids[i]];
            if (i < keep && !isnan(x->metric)) x->status = T_PENDING, x->rung = r + 1;
            else x->status = T_STOPPED;
        }
        write_state(&s, t, n);
    }
    for (int k = 0; k < n; k++) stopped_early += t[k].status == T_STOPPED;
    report(&s, t, n, stopped_early);
    if (plot) {
        char args[2600], what[1200];
        snprintf(args, sizeof args, "'%s/results.csv' '%s/plot.png'", s.dir, s.dir);
        snprintf(what, sizeof what, "%s/plot.png", s.dir);
        seer_plot("sweep_plot.py", args, what, stdout);
    }
    return 0;
}
