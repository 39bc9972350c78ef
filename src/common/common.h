/* common: errors, checked allocation, the seeded generator, timing and progress lines.
 *
 * Errors from untrusted input travel as a seer_err (one line naming the file, the place and a
 * hint); tools print it and exit non-zero. Broken invariants stop the program through SEER_ASSERT,
 * which stays on in release builds. */
#ifndef SEER_COMMON_H
#define SEER_COMMON_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SEER_ERR_LEN 1024

typedef struct {
    char msg[SEER_ERR_LEN];
} seer_err;

/* Formats the message into err (when err is not NULL) and returns -1, so callers can write
 * `return seer_fail(err, "...")`. */
int seer_fail(seer_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "seer: error: <prefix><msg>" to stderr, calls the hook when set (a parallel job sets
 * both: the prefix names the rank, the hook ends every rank), and exits with status 1. */
#ifdef __cplusplus // the CUDA backend's .cu files include this header
#define SEER_NORETURN [[noreturn]]
#else
#define SEER_NORETURN _Noreturn
#endif
SEER_NORETURN void seer_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern char seer_err_prefix[48];
/* Where seer_die writes its line: stderr, or a copy of it while a reader has muted fd 2 (the
 * PerfGraph readers do around libhdf5's string reads, data/perfgraph.c). */
extern int seer_stderr_fd;
extern void (*seer_die_hook)(void);

#define SEER_ASSERT(cond)                                                                     \
    do {                                                                                      \
        if (!(cond)) seer_die("internal error: %s (%s:%d)", #cond, __FILE__, __LINE__);       \
    } while (0)

/* Out of memory inside a library call: the entry points of libseer and libseeronnx, which must
 * return an error rather than end their host, point seer_oom_trap at a jmp_buf of theirs; the
 * allocators below then longjmp there (message in seer_oom_msg) instead of exiting. What the call
 * had allocated by then is leaked: the host lives on with an error, not a partial result. */
// initial-exec: a few bytes of static TLS, so libseer.so needs no __tls_get_addr (no ld.so dependency)
#define SEER_TLS __thread __attribute__((tls_model("initial-exec")))
extern SEER_TLS jmp_buf *seer_oom_trap;
extern SEER_TLS char seer_oom_msg[128];

void *seer_malloc(size_t n);
void *seer_calloc(size_t count, size_t size);
void *seer_realloc(void *p, size_t n);
char *seer_strdup(const char *s);

/* xoshiro256** (Blackman & Vigna), seeded through splitmix64. The state is four words so a
 * checkpoint can store and restore it exactly. */
typedef struct {
    uint64_t s[4];
} seer_rng;

void rng_seed(seer_rng *r, uint64_t seed);
uint64_t rng_next_u64(seer_rng *r);
double rng_uniform(seer_rng *r);              /* [0, 1) with 53 random bits */
double rng_normal(seer_rng *r);               /* Box-Muller, one value per call */
uint64_t rng_below(seer_rng *r, uint64_t n);  /* uniform in [0, n), unbiased */
void rng_shuffle_i64(seer_rng *r, int64_t *a, int64_t n);

double seer_now(void); /* monotonic seconds */

/* A progress line: a bar with rate and ETA when stderr is a terminal, nothing otherwise (callers
 * print one plain line per epoch themselves). */
typedef struct {
    const char *label;
    int64_t total;
    double t0, last;
    int tty;
} seer_progress;

void progress_begin(seer_progress *p, const char *label, int64_t total);
void progress_update(seer_progress *p, int64_t done, const char *extra);
void progress_end(seer_progress *p);

/* Creates a folder and its parents (as mkdir -p); fails naming the part it could not create. */
int seer_mkdir_p(const char *path, seer_err *err);

/* Runs /usr/bin/python3 on the script SCRIPT in scripts/ with ARGS of the source tree (plot.c); prints "plot: WHAT" or
 * why it was not drawn to msg; 0 when drawn. Not in libseer. */
int seer_plot(const char *script, const char *args, const char *what, FILE *msg);

/* Splits a list ("a,b c": commas and spaces) into at most max new strings; returns the count
 * (the caller frees each and the array). */
int seer_split_list(const char *s, char ***out, int max);

/* Reads a whole file; returns NULL and fills err when it cannot. */
char *seer_read_file(const char *path, size_t *len, seer_err *err);

#endif
