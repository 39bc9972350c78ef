/* test_oom: libseeronnx and libseer return SEER_ERR_NOMEM when memory runs out, never end their
 * host (they used to exit through seer_malloc). For each of several address-space limits a little
 * above what the process holds, a child process loads an ONNX model and a .seer model under that
 * limit: each call must come back (OK, NOMEM or another error) and the child exit normally; at
 * least one limit must produce NOMEM (so the path is exercised).
 *   test_oom NET.onnx MODEL.seer */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "seer/seer.h"
#include "seer/seer_onnx.h"

static long vm_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0;
    if (f && fscanf(f, "%ld", &pages) != 1) pages = 0;
    if (f) fclose(f);
    return pages * sysconf(_SC_PAGESIZE);
}

/* a child's exit code: 20, + 10 when the ONNX load ran out of memory (+ 5 more when inside Seer's
 * own allocator, the path that used to exit), + 1 when the .seer load did (seer_die's exit(1) is
 * none of these) */
static int child(const char *onnx, const char *model, long headroom) {
    char err[512];
    seer_onnx_graph *g = NULL;
    seer_model *m = NULL;
    // cap the address space, fill it, then free `headroom` bytes back: what the loads may use
    struct rlimit r = {(rlim_t)(vm_bytes() + (64 << 20)), (rlim_t)(vm_bytes() + (64 << 20))};
    setrlimit(RLIMIT_AS, &r);
    enum { MAXP = 1 << 16 };
    static void *big[MAXP], *small[MAXP];
    int nb = 0, ns = 0;
    while (nb < MAXP && (big[nb] = malloc(32768))) nb++;
    while (ns < MAXP && (small[ns] = malloc(64))) ns++;
    for (long freed = 0; freed < headroom && nb > 0; freed += 32768) free(big[--nb]);
    seer_status a = seer_onnx_load(onnx, 1, 0, &g, err, sizeof err);
    if (a == SEER_ERR_NOMEM && !strstr(err, "out of memory")) return 99;
    int trapped = a == SEER_ERR_NOMEM && strstr(err, "allocating") != NULL; // seer_malloc's path
    seer_status b = seer_load(model, &m, err, sizeof err);
    if (b == SEER_ERR_NOMEM && !strstr(err, "out of memory")) return 98;
    return 20 + 10 * (a == SEER_ERR_NOMEM) + 5 * trapped + (b == SEER_ERR_NOMEM);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_oom NET.onnx MODEL.seer\n");
        return 2;
    }
    int fails = 0, nomem = 0, trapped = 0;
    for (long kb = 32; kb <= 16 * 1024; kb = kb * 21 / 20 + 1) {
        pid_t pid = fork();
        if (pid == 0) _exit(child(argv[1], argv[2], kb * 1024));
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) < 20 || WEXITSTATUS(st) > 36) {
            printf("FAIL: headroom %ld KB: the child %s %d (a library ended its host)\n", kb,
                   WIFEXITED(st) ? "exited with" : "died of signal",
                   WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            fails++;
            continue;
        }
        int code = WEXITSTATUS(st) - 20;
        nomem += code > 0, trapped += code >= 15;
        printf("  headroom %6ld KB: ONNX load %s, .seer load %s\n", kb,
               code >= 15 ? "out of memory (Seer's allocator)" : code >= 10 ? "out of memory" : "ok",
               code % 5 ? "out of memory" : "ok");
    }
    if (!nomem || !trapped)
        printf("FAIL: no limit made a load run out of memory inside Seer's allocator (the test did "
               "not test)\n"), fails++;
    printf("test_oom: %s\n", fails ? "FAILED" : "out of memory returns an error, never exits");
    return fails != 0;
}
