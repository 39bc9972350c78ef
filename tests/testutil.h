/* tests: tiny helpers. Every check prints what failed and the test exits non-zero at the end. */
#ifndef SEER_TESTUTIL_H
#define SEER_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            test_failures++;                                                                       \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static inline int test_finish(const char *name) {
    if (test_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

/* |a - b| <= rtol * max(|a|, |b|) + atol */
static inline int close_enough(double a, double b, double rtol, double atol) {
    return fabs(a - b) <= rtol * fmax(fabs(a), fabs(b)) + atol;
}

#endif
