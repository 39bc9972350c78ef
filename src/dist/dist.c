/* dist: see dist.h. */
#define _GNU_SOURCE
#include "dist.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist/dist_plugin.h"

static struct {
    int rank, ranks, local_rank;
    const seer_dist_plugin_t *p;
    double timeout;
    atomic_llong since_ms; // start of the collective in progress, 0 when none
    const char *_Atomic what;
    const char *_Atomic phase;
    pthread_t watchdog;
} D = {.ranks = 1, .what = "", .phase = "start-up"};

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int dist_rank(void) { return D.rank; }
int dist_ranks(void) { return D.ranks; }
int dist_local_rank(void) { return D.local_rank; }
const char *dist_library(void) { return D.p ? D.p->name : "none"; }
void dist_phase(const char *what) { D.phase = what; }

/* A collective that has waited past the timeout: another rank is stuck or gone. Exiting (not
 * MPI_Abort, which is not safe from a second thread) is enough: the launcher ends the job when a
 * rank exits before MPI_Finalize. */
static void *watchdog_main(void *arg) {
    (void)arg;
    for (;;) {
        usleep(200000);
        long long t0 = atomic_load(&D.since_ms);
        if (t0 && (double)(now_ms() - t0) > D.timeout * 1000.0) {
            fprintf(stderr, "seer: error: rank %d/%d: %s (%s) did not complete within %.0f s "
                            "([dist] timeout): another rank stopped responding; ending the job\n",
                    D.rank, D.ranks, D.what, D.phase, D.timeout);
            fflush(stderr);
            _exit(3);
        }
    }
    return NULL;
}

static void die_hook(void) { dist_abort(1); }

/* Launched by mpirun / srun: the size the launcher announces (0 when none). */
static int launcher_size(void) {
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE",
                                 "SLURM_STEP_NUM_TASKS", "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (v && atoi(v) > 0) return atoi(v);
    }
    return getenv("PMIX_RANK") || getenv("PMI_RANK") ? 1 : 0;
}

static void *load_plugin(char *tried, size_t len) {
    char cand[3][PATH_MAX + 32];
    int n = 0;
    const char *env = getenv("SEER_DIST_PLUGIN");
    if (env && *env) {
        snprintf(cand[n++], sizeof cand[0], "%s", env);
    } else {
        char exe[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        if (k > 0) {
            exe[k] = 0;
            char *slash = strrchr(exe, '/');
            if (slash) *slash = 0;
            snprintf(cand[n++], sizeof cand[0], "%s/libseer_mpi.so", exe);
            snprintf(cand[n++], sizeof cand[0], "%s/../lib/libseer_mpi.so", exe);
        }
        snprintf(cand[n++], sizeof cand[0], "libseer_mpi.so");
    }
    tried[0] = 0;
    for (int i = 0; i < n; i++) {
        // RTLD_GLOBAL: Open MPI loads its own components with dlopen and needs libmpi's symbols
        void *h = dlopen(cand[i], RTLD_NOW | RTLD_GLOBAL);
        if (h) return h;
        size_t used = strlen(tried);
        snprintf(tried + used, len - used, "%s%s", used ? "; " : "", dlerror());
    }
    return NULL;
}

int dist_init(const char *mode, double timeout_s, seer_err *err) {
    int hint = launcher_size();
    if (!strcmp(mode, "none")) {
        if (hint > 1)
            return seer_fail(err, "[dist] backend = none, but a launcher started %d ranks: set "
                                  "backend = auto (or mpi), or run one process", hint);
        return 0;
    }
    if (!strcmp(mode, "auto") && hint == 0) return 0;
    char tried[2048];
    void *h = load_plugin(tried, sizeof tried);
    if (!h)
        return seer_fail(err, "[dist] backend = %s%s: cannot load the MPI plugin libseer_mpi.so "
                              "(%s); build Seer with MPI (Debian: libopenmpi-dev) or set "
                              "SEER_DIST_PLUGIN=/path/to/libseer_mpi.so", mode,
                         hint ? " under mpirun/srun" : "", tried);
    seer_dist_plugin_fn get = (seer_dist_plugin_fn)dlsym(h, "seer_dist_plugin");
    const seer_dist_plugin_t *p = get ? get() : NULL;
    if (!p || p->abi != SEER_DIST_PLUGIN_ABI)
        return seer_fail(err, "libseer_mpi.so: not a Seer MPI plugin of ABI %d (rebuild it with "
                              "this seertrain)", SEER_DIST_PLUGIN_ABI);
    char msg[256] = "";
    if (p->init(&D.rank, &D.ranks, &D.local_rank, msg, sizeof msg))
        return seer_fail(err, "MPI start-up failed: %s", msg);
    D.p = p;
    D.timeout = timeout_s;
    if (D.ranks > 1) {
        snprintf(seer_err_prefix, sizeof seer_err_prefix, "rank %d/%d: ", D.rank, D.ranks);
        seer_die_hook = die_hook;
    }
    if (D.ranks > 1 && timeout_s > 0 && pthread_create(&D.watchdog, NULL, watchdog_main, NULL) == 0)
        pthread_detach(D.watchdog);
    return 0;
}

void dist_finalize(void) {
    if (!D.p) return;
    atomic_store(&D.since_ms, 0);
    D.timeout = 1e30; // the watchdog thread lives on until exit; it no longer fires
    D.p->finalize();
    seer_die_hook = NULL;
}

_Noreturn void dist_abort(int code) {
    fflush(stdout), fflush(stderr);
    if (D.p && D.ranks > 1) D.p->abort(code);
    exit(code);
}

static void collective(const char *what, int rc) {
    atomic_store(&D.since_ms, 0);
    if (rc) {
        fprintf(stderr, "seer: error: rank %d/%d: MPI %s failed (%s)\n", D.rank, D.ranks, what, D.phase);
        dist_abort(1);
    }
}

static void begin(const char *what) {
    D.what = what;
    atomic_store(&D.since_ms, now_ms());
}

void dist_sum_f32(float *x, int64_t n) {
    if (D.ranks < 2) return;
    begin("all-reduce");
    collective("all-reduce", D.p->allreduce_sum(x, n, DIST_F32));
}

void dist_sum_f64(double *x, int64_t n) {
    if (D.ranks < 2) return;
    begin("all-reduce");
    collective("all-reduce", D.p->allreduce_sum(x, n, DIST_F64));
}

void dist_sum_i64(int64_t *x, int64_t n) {
    if (D.ranks < 2) return;
    begin("all-reduce");
    collective("all-reduce", D.p->allreduce_sum(x, n, DIST_I64));
}

void dist_bcast(void *buf, size_t bytes, int root) {
    if (D.ranks < 2) return;
    begin("broadcast");
    collective("broadcast", D.p->bcast(buf, (int64_t)bytes, root));
}

void dist_barrier(void) {
    if (D.ranks < 2) return;
    begin("barrier");
    collective("barrier", D.p->barrier());
}
