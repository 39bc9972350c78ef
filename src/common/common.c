/* common: errors, checked allocation, the seeded generator, timing and progress lines. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

// Names in messages come from untrusted files: a line break or an escape sequence in one must not
// split the one-line error or reach the terminal, so control bytes become '?'.
static void one_line(char *s) {
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

int seer_fail(seer_err *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        one_line(err->msg);
    }
    return -1;
}

char seer_err_prefix[48];
void (*seer_die_hook)(void);
int seer_stderr_fd = STDERR_FILENO;

void seer_die(const char *fmt, ...) {
    // one write, so a launcher interleaving the ranks' output keeps the line whole
    char line[SEER_ERR_LEN + 128];
    int n = snprintf(line, sizeof line, "seer: error: %s", seer_err_prefix);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    one_line(line);
    strcat(line, "\n");
    fflush(stdout);
    fflush(stderr);
    if (write(seer_stderr_fd, line, strlen(line)) < 0) fputs(line, stderr);
    if (seer_die_hook) seer_die_hook();
    exit(1);
}

SEER_TLS jmp_buf *seer_oom_trap;
SEER_TLS char seer_oom_msg[128];

static _Noreturn void out_of_memory(double bytes) {
    snprintf(seer_oom_msg, sizeof seer_oom_msg, "out of memory allocating %.0f bytes", bytes);
    if (seer_oom_trap) longjmp(*seer_oom_trap, 1);
    seer_die("%s", seer_oom_msg);
}

void *seer_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) out_of_memory((double)n);
    return p;
}

void *seer_calloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) out_of_memory((double)count * (double)size);
    return p;
}

void *seer_realloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) out_of_memory((double)n);
    return q;
}

char *seer_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = seer_malloc(n);
    memcpy(d, s, n);
    return d;
}

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rng_seed(seer_rng *r, uint64_t seed) {
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next_u64(seer_rng *r) {
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

double rng_uniform(seer_rng *r) { return (double)(rng_next_u64(r) >> 11) * 0x1.0p-53; }

double rng_normal(seer_rng *r) {
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

uint64_t rng_below(seer_rng *r, uint64_t n) {
    SEER_ASSERT(n > 0);
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = rng_next_u64(r);
    while (x >= limit);
    return x % n;
}

void rng_shuffle_i64(seer_rng *r, int64_t *a, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)rng_below(r, (uint64_t)i + 1);
        int64_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

double seer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void progress_begin(seer_progress *p, const char *label, int64_t total) {
    p->label = label;
    p->total = total;
    p->t0 = p->last = seer_now();
    p->tty = isatty(STDERR_FILENO);
}

void progress_update(seer_progress *p, int64_t done, const char *extra) {
    if (!p->tty) return;
    double now = seer_now();
    if (done < p->total && now - p->last < 0.1) return;
    p->last = now;
    double el = now - p->t0, rate = el > 0 ? (double)done / el : 0.0;
    double eta = rate > 0 ? (double)(p->total - done) / rate : 0.0;
    int width = 24, fill = p->total > 0 ? (int)(width * done / p->total) : width;
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r%s [%s] %lld/%lld %.1f/s ETA %.0fs %s\033[K", p->label, bar,
            (long long)done, (long long)p->total, rate, eta, extra ? extra : "");
    fflush(stderr);
}

void progress_end(seer_progress *p) {
    if (p->tty) fputs("\r\033[K", stderr);
}

char *seer_read_file(const char *path, size_t *len, seer_err *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        seer_fail(err, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    // Out of memory is an error here, not an exit: libseer loads models through this.
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *b2 = realloc(buf, (cap *= 2) + 1);
            if (!b2) free(buf);
            buf = b2;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        seer_fail(err, buf ? "%s: read error" : "%s: out of memory reading the file", path);
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

int seer_mkdir_p(const char *path, seer_err *err) {
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return seer_fail(err, "%.100s...: folder path too long", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) && errno != EEXIST) goto fail;
            *p = '/';
        }
    if (mkdir(buf, 0755) && errno != EEXIST) goto fail;
    return 0;
fail:
    return seer_fail(err, "%s: cannot create the folder: %s", buf, strerror(errno));
}

int seer_split_list(const char *s, char ***out, int max) {
    char **v = seer_calloc((size_t)max + 1, sizeof(char *));
    char *copy = seer_strdup(s), *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ", ", &save); tok && n < max; tok = strtok_r(NULL, ", ", &save))
        v[n++] = seer_strdup(tok);
    free(copy);
    *out = v;
    return n;
}
