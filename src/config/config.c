/* config: parsing, validation, help and echo, all driven by SEER_CONFIG_KEYS (config.h). */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { T_STR, T_INT, T_DBL, T_ENUM };
#define T_OF_STR T_STR
#define T_OF_INT T_INT
#define T_OF_DBL T_DBL
#define T_OF_ENUM T_ENUM

typedef struct {
    const char *section, *key, *def, *choices, *help;
    int type;
    size_t offset;
} key_info;

static const key_info KEYS[CFG_NKEYS] = {
#define X(sec, k, type, def, choices, help)                                                        \
    {#sec, #k, def, choices, help, T_OF_##type, offsetof(seer_config, sec##_##k)},
    SEER_CONFIG_KEYS(X)
#undef X
};

static const char *type_name(int t) {
    return t == T_STR || t == T_ENUM ? "string" : t == T_INT ? "int" : "float";
}

static int find_key(const char *section, const char *key) {
    for (int i = 0; i < CFG_NKEYS; i++)
        if (strcmp(KEYS[i].section, section) == 0 && strcmp(KEYS[i].key, key) == 0) return i;
    return -1;
}

static int known_section(const char *section) {
    for (int i = 0; i < CFG_NKEYS; i++)
        if (strcmp(KEYS[i].section, section) == 0) return 1;
    return 0;
}

/* The position of v in "a|b|c", or -1. */
static int choice_index(const char *choices, const char *v) {
    size_t n = strlen(v);
    int i = 0;
    for (const char *p = choices; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, v, n) == 0) return i;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

/* Choices per ENUM key and their length that config_choice names (model.target has 9: a table of
 * 8 once named the ninth NULL, so a checkpoint of a roofline_dw run stored "target = (null)"). */
#define CHOICES_MAX 32
#define CHOICE_LEN 64
const char *config_choice(int key, int value) {
    static char names[CFG_NKEYS][CHOICES_MAX][CHOICE_LEN];
    if (key < 0 || key >= CFG_NKEYS || !KEYS[key].choices || value < 0 || value >= CHOICES_MAX) return NULL;
    const char *p = KEYS[key].choices;
    for (int i = 0; i < value; i++) {
        p = strchr(p, '|');
        if (!p) return NULL;
        p++;
    }
    if (!names[key][value][0]) { // the tables are constant: filling them twice writes the same
        size_t len = strcspn(p, "|");
        if (len >= CHOICE_LEN) return NULL; // never silently cut: test_config names every value
        snprintf(names[key][value], sizeof names[key][value], "%.*s", (int)len, p);
    }
    return names[key][value];
}

/* Sets key i from text; where names the origin ("file:line" or "--set"). */
static int set_value(seer_config *c, int i, const char *value, const char *where, seer_err *err) {
    const key_info *k = &KEYS[i];
    char *field = (char *)c + k->offset;
    if (k->type == T_ENUM) {
        int v = choice_index(k->choices, value);
        if (v < 0)
            return seer_fail(err, "%s: [%s] %s = '%s': must be one of %s", where, k->section,
                             k->key, value, k->choices);
        *(int *)field = v;
        return 0;
    }
    if (k->type == T_STR) {
        if (k->choices && choice_index(k->choices, value) < 0)
            return seer_fail(err, "%s: [%s] %s = '%s': must be one of %s", where, k->section,
                             k->key, value, k->choices);
        char **s = (char **)field;
        free(*s);
        *s = seer_strdup(value);
        return 0;
    }
    char *end;
    errno = 0;
    if (k->type == T_INT) {
        long long v = strtoll(value, &end, 10);
        if (errno || end == value || *end)
            return seer_fail(err, "%s: [%s] %s = '%s': not an integer (%s)", where, k->section,
                             k->key, value, k->help);
        *(int64_t *)field = v;
    } else {
        double v = strtod(value, &end);
        if (errno || end == value || *end || !isfinite(v))
            return seer_fail(err, "%s: [%s] %s = '%s': not a finite number (%s)", where,
                             k->section, k->key, value, k->help);
        *(double *)field = v;
    }
    return 0;
}

void config_defaults(seer_config *c) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < CFG_NKEYS; i++)
        if (set_value(c, i, KEYS[i].def, "default", NULL)) seer_die("bad default for %s", KEYS[i].key);
}

void config_free(seer_config *c) {
    for (int i = 0; i < CFG_NKEYS; i++)
        if (KEYS[i].type == T_STR) {
            char **s = (char **)((char *)c + KEYS[i].offset);
            free(*s);
            *s = NULL;
        }
}

typedef struct {
    seer_config *c;
    const char *origin;
    int line;
    int failed;
    seer_err *err;
    const char *text; // for string parsing
    size_t pos;
    FILE *f;
    int seen[CFG_NKEYS]; // the line that set each key in this text (a key may appear once)
} parse_ctx;

static int handler(void *user, const char *section, const char *name, const char *value) {
    parse_ctx *p = user;
    if (p->failed) return 1; // keep the first error only
    char where[600];
    snprintf(where, sizeof where, "%s:%d", p->origin, p->line);
    if (!known_section(section)) {
        p->failed = 1;
        seer_fail(p->err, "%s: unknown section [%s] (sections: data, model, train, output, "
                          "backend; see seertrain --help-config)", where, section);
        return 1;
    }
    int i = find_key(section, name);
    if (i < 0) {
        p->failed = 1;
        seer_fail(p->err, "%s: unknown key '%s' in [%s] (see seertrain --help-config)", where,
                  name, section);
        return 1;
    }
    if (p->seen[i]) {
        p->failed = 1;
        seer_fail(p->err, "%s: [%s] %s is set twice (first at line %d): keep one", where, section,
                  name, p->seen[i]);
        return 1;
    }
    if (set_value(p->c, i, value, where, p->err)) {
        p->failed = 1;
        return 1;
    }
    p->c->line[i] = p->seen[i] = p->line;
    return 1;
}

/* inih reads through this so the handler knows the current line number. A line longer than
 * inih's buffer is an error here: inih would parse its tail as a line of its own. */
static char *reader(char *buf, int size, void *stream) {
    parse_ctx *p = stream;
    char *r;
    int whole;
    if (p->failed) return NULL;
    if (p->f) {
        r = fgets(buf, size, p->f);
        whole = !r || strchr(buf, '\n') || feof(p->f);
    } else {
        if (!p->text[p->pos]) return NULL;
        const char *nl = strchr(p->text + p->pos, '\n');
        size_t len = nl ? (size_t)(nl - (p->text + p->pos)) + 1 : strlen(p->text + p->pos);
        whole = len < (size_t)size;
        if (len >= (size_t)size) len = (size_t)size - 1;
        memcpy(buf, p->text + p->pos, len);
        buf[len] = 0;
        p->pos += len;
        r = buf;
    }
    if (r) p->line++;
    if (r && !whole) {
        p->failed = 1;
        seer_fail(p->err, "%s:%d: line longer than %d characters (comments and values included): "
                          "shorten it", p->origin, p->line, size - 2);
        return NULL;
    }
    return r;
}

static int parse(parse_ctx *p) {
    int rc = ini_parse_stream(reader, p, handler, p);
    if (p->failed) return -1;
    if (rc != 0)
        return seer_fail(p->err, "%s:%d: syntax error (expected [section] or key = value)",
                         p->origin, rc > 0 ? rc : p->line);
    return 0;
}

int config_load(seer_config *c, const char *path, seer_err *err) {
    FILE *f = fopen(path, "r");
    if (!f) return seer_fail(err, "%s: cannot open config: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return seer_fail(err, "%s: is a folder, not a config file (give an .ini file, e.g. "
                              "configs/multi.ini)", path);
    }
    snprintf(c->file, sizeof c->file, "%s", path);
    parse_ctx p = {.c = c, .origin = path, .err = err, .f = f};
    int rc = parse(&p);
    fclose(f);
    return rc;
}

int config_load_string(seer_config *c, const char *text, const char *origin, seer_err *err) {
    parse_ctx p = {.c = c, .origin = origin, .err = err, .text = text};
    return parse(&p);
}

int config_set(seer_config *c, const char *assignment, seer_err *err) {
    const char *dot = strchr(assignment, '.'), *eq = strchr(assignment, '=');
    if (!dot || !eq || dot > eq)
        return seer_fail(err, "--set %s: expected section.key=value (e.g. --set train.lr=3e-4)",
                         assignment);
    char section[64], key[64];
    snprintf(section, sizeof section, "%.*s", (int)(dot - assignment), assignment);
    snprintf(key, sizeof key, "%.*s", (int)(eq - dot - 1), dot + 1);
    int i = find_key(section, key);
    if (i < 0)
        return seer_fail(err, "--set %s: unknown key [%s] %s (see seertrain --help-config)",
                         assignment, section, key);
    char where[160];
    snprintf(where, sizeof where, "--set %s.%s", section, key);
    if (set_value(c, i, eq + 1, where, err)) return -1;
    c->line[i] = 0;
    return 0;
}

const char *config_where(const seer_config *c, int key, char *buf, size_t len) {
    if (c->line[key] > 0)
        snprintf(buf, len, "%s:%d", c->file, c->line[key]);
    else
        snprintf(buf, len, "%s", c->file[0] ? c->file : "config");
    return buf;
}

int config_validate(const seer_config *c, seer_err *err) {
    char w[600];
#define REQUIRE(cond, key, fmt, ...)                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            config_where(c, CFG_KEY_##key, w, sizeof w);                                           \
            return seer_fail(err, "%s: " fmt, w, __VA_ARGS__);                                     \
        }                                                                                          \
    } while (0)
    REQUIRE(c->data_train_frac > 0 && c->data_train_frac < 1, data_train_frac,
            "[data] train_frac = %g: must be in (0, 1)", c->data_train_frac);
    REQUIRE(c->data_val_frac >= 0 && c->data_train_frac + c->data_val_frac < 1, data_val_frac,
            "[data] val_frac = %g: train_frac + val_frac must be below 1", c->data_val_frac);
    REQUIRE(c->data_train_count > 0, data_train_count, "[data] train_count = %lld: must be > 0",
            (long long)c->data_train_count);
    REQUIRE(c->data_val_count >= 0, data_val_count, "[data] val_count = %lld: must be >= 0",
            (long long)c->data_val_count);
    REQUIRE(c->data_limit >= 0, data_limit, "[data] limit = %lld: must be >= 0",
            (long long)c->data_limit);
    REQUIRE(c->model_hidden >= 1 && c->model_hidden <= 4096, model_hidden,
            "[model] hidden = %lld: must be in 1..4096", (long long)c->model_hidden);
    REQUIRE(c->model_op_embed >= 1 && c->model_op_embed <= 1024, model_op_embed,
            "[model] op_embed = %lld: must be in 1..1024", (long long)c->model_op_embed);
    REQUIRE(c->model_blocks >= 1 && c->model_blocks <= 8, model_blocks,
            "[model] blocks = %lld: must be in 1..8", (long long)c->model_blocks);
    REQUIRE(c->model_head_hidden >= 0 && c->model_head_hidden <= 4096, model_head_hidden,
            "[model] head_hidden = %lld: must be in 0..4096", (long long)c->model_head_hidden);
    REQUIRE(c->dist_timeout >= 0, dist_timeout, "[dist] timeout = %g: must be >= 0 (0 = no limit)",
            c->dist_timeout);
    {
        int rank, step, used = 0;
        char kind[16] = "";
        const char *f = c->dist_inject_failure;
        REQUIRE(!f[0] || (sscanf(f, "%d:%d:%15[a-z]%n", &rank, &step, kind, &used) == 3 &&
                          !f[used] && rank >= 0 && step >= 1 &&
                          (!strcmp(kind, "error") || !strcmp(kind, "oom") ||
                           !strcmp(kind, "crash") || !strcmp(kind, "hang"))),
                dist_inject_failure, "[dist] inject_failure = '%s': expected RANK:STEP:KIND with "
                "STEP >= 1 and KIND error|oom|crash|hang", f);
    }
    REQUIRE(c->train_epochs >= 1, train_epochs, "[train] epochs = %lld: must be >= 1",
            (long long)c->train_epochs);
    REQUIRE(c->train_batch_size >= 1, train_batch_size, "[train] batch_size = %lld: must be >= 1",
            (long long)c->train_batch_size);
    REQUIRE(c->train_eval_batch_size >= 1, train_eval_batch_size,
            "[train] eval_batch_size = %lld: must be >= 1", (long long)c->train_eval_batch_size);
    REQUIRE(c->train_lr > 0, train_lr, "[train] lr = %g: must be > 0", c->train_lr);
    REQUIRE(c->train_weight_decay >= 0, train_weight_decay, "[train] weight_decay = %g: must be >= 0",
            c->train_weight_decay);
    REQUIRE(c->train_beta1 >= 0 && c->train_beta1 < 1, train_beta1,
            "[train] beta1 = %g: must be in [0, 1)", c->train_beta1);
    REQUIRE(c->train_beta2 >= 0 && c->train_beta2 < 1, train_beta2,
            "[train] beta2 = %g: must be in [0, 1)", c->train_beta2);
    REQUIRE(c->train_eps > 0, train_eps, "[train] eps = %g: must be > 0", c->train_eps);
    REQUIRE(c->train_plateau_factor > 0 && c->train_plateau_factor < 1, train_plateau_factor,
            "[train] plateau_factor = %g: must be in (0, 1)", c->train_plateau_factor);
    REQUIRE(c->train_plateau_patience >= 0, train_plateau_patience,
            "[train] plateau_patience = %lld: must be >= 0", (long long)c->train_plateau_patience);
    REQUIRE(c->train_min_lr >= 0, train_min_lr, "[train] min_lr = %g: must be >= 0", c->train_min_lr);
    REQUIRE(c->train_grad_clip >= 0, train_grad_clip, "[train] grad_clip = %g: must be >= 0",
            c->train_grad_clip);
    REQUIRE(c->train_early_stop >= 0, train_early_stop, "[train] early_stop = %lld: must be >= 0",
            (long long)c->train_early_stop);
    REQUIRE(c->train_max_steps >= 0, train_max_steps, "[train] max_steps = %lld: must be >= 0",
            (long long)c->train_max_steps);
    REQUIRE(c->train_stop_epoch >= 0, train_stop_epoch, "[train] stop_epoch = %lld: must be >= 0",
            (long long)c->train_stop_epoch);
    REQUIRE(c->train_threads >= 0 && c->train_threads <= 1024, train_threads,
            "[train] threads = %lld: must be in 0..1024", (long long)c->train_threads);
    REQUIRE(!strchr(c->output_run, '/') && strcmp(c->output_run, ".") && strcmp(c->output_run, ".."),
            output_run, "[output] run = '%s': a folder name inside output.dir (no '/', not . or ..)",
            c->output_run);
    REQUIRE(c->output_save_every >= 0, output_save_every, "[output] save_every = %lld: must be >= 0",
            (long long)c->output_save_every);
#undef REQUIRE
    return 0;
}

char *config_to_string(const seer_config *c) {
    size_t cap = 4096, n = 0;
    char *s = seer_malloc(cap);
    const char *last = "";
    for (int i = 0; i < CFG_NKEYS; i++) {
        const key_info *k = &KEYS[i];
        const char *field = (const char *)c + k->offset;
        char val[512];
        if (k->type == T_STR)
            snprintf(val, sizeof val, "%s", *(char *const *)field);
        else if (k->type == T_ENUM)
            snprintf(val, sizeof val, "%s", config_choice(i, *(const int *)field));
        else if (k->type == T_INT)
            snprintf(val, sizeof val, "%lld", (long long)*(const int64_t *)field);
        else
            snprintf(val, sizeof val, "%.17g", *(const double *)field);
        char line[800];
        int len = snprintf(line, sizeof line, "%s%s%s%s = %s\n",
                           strcmp(last, k->section) ? (n ? "\n[" : "[") : "",
                           strcmp(last, k->section) ? k->section : "",
                           strcmp(last, k->section) ? "]\n" : "", k->key, val);
        last = k->section;
        while (n + (size_t)len + 1 > cap) s = seer_realloc(s, cap *= 2);
        memcpy(s + n, line, (size_t)len + 1);
        n += (size_t)len;
    }
    return s;
}

void config_help(FILE *f, int markdown) {
    const char *last = "";
    if (markdown) fputs("| key | type | default | meaning |\n| --- | --- | --- | --- |\n", f);
    for (int i = 0; i < CFG_NKEYS; i++) {
        const key_info *k = &KEYS[i];
        if (markdown) {
            char choices[256] = "";
            if (k->choices) { // a '|' would split the table cell
                size_t n = 0;
                for (const char *c = k->choices; *c && n + 4 < sizeof choices; c++)
                    n += (size_t)snprintf(choices + n, sizeof choices - n, "%s",
                                          *c == '|' ? " / " : (char[2]){*c, 0});
            }
            fprintf(f, "| `%s.%s` | %s%s%s | `%s` | %s |\n", k->section, k->key,
                    type_name(k->type), k->choices ? ": " : "", choices, k->def, k->help);
            continue;
        }
        if (strcmp(last, k->section)) fprintf(f, "%s[%s]\n", i ? "\n" : "", k->section);
        last = k->section;
        fprintf(f, "  %-18s %-6s default %-18s %s%s%s%s\n", k->key, type_name(k->type),
                k->def[0] ? k->def : "''", k->help, k->choices ? " (" : "",
                k->choices ? k->choices : "", k->choices ? ")" : "");
    }
}
