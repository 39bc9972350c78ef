/* tests: tiny helpers. Every check prints what failed and the test exits non-zero at the end. */
#ifndef SEER_TESTUTIL_H
#define SEER_TESTUTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A test that cannot run here (no GPU): exit status 77, which ctest reports as skipped
 * (SKIP_RETURN_CODE). With SEER_REQUIRE_GPU=1 (scripts/device-check.sh sets it on the GPU
 * machine) a skip is a failure: status 1. */
#define TEST_SKIP_CODE 77
static inline int test_skip(const char *name, const char *why) {
    const char *req = getenv("SEER_REQUIRE_GPU");
    if (req && !strcmp(req, "1")) {
        fprintf(stderr, "%s: FAIL: %s, and SEER_REQUIRE_GPU=1 says this machine must run it\n",
                name, why);
        return 1;
    }
    printf("%s: SKIP (%s)\n", name, why);
    return TEST_SKIP_CODE;
}

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
