/* bench_h5: PerfGraph files written contiguous against chunked + shuffle + deflate (the
 * seerconvert --compress levels): file size, write time, and the read time of what the trainer
 * does (pg_read_index then one pg_read_range of every graph), best of R reads, with the file in
 * the page cache (what repeated training runs see) and, as root, cold (the page cache dropped
 * before each read: what the first run after a reboot or on a network disk sees).
 *   bench_h5 DATA.h5 WORKDIR [LEVELS (default 0,1,4)] [REPEATS (3)]
 * A level ending in -nosum (lz4-nosum, 1-nosum) is written without the Fletcher-32 checksums
 * compressed files carry since 2026-12-02, as files written before them are. */
#define _DEFAULT_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/perfgraph.h"

/* Drops the page cache (root only); 0 when it did. */
static int drop_cache(void) {
    sync();
    FILE *f = fopen("/proc/sys/vm/drop_caches", "w");
    if (!f) return -1;
    int ok = fputs("1", f) >= 0;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

static double read_once(const char *path) {
    seer_err err;
    pg_index ix;
    pg_dataset ds;
    pg_read_stats st;
    double t0 = seer_now();
    if (pg_read_index(path, &ix, &err) || pg_read_range(path, &ix, 0, ix.G, &ds, &st, &err))
        seer_die("%s", err.msg);
    double t = seer_now() - t0;
    pg_free(&ds);
    pg_index_free(&ix);
    return t;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: bench_h5 DATA.h5 WORKDIR [LEVELS] [REPEATS]\n");
        return 2;
    }
    const char *levels = argc > 3 ? argv[3] : "0,1,4";
    int reps = argc > 4 ? atoi(argv[4]) : 3;
    seer_err err;
    pg_dataset ds;
    if (pg_read(argv[1], &ds, &err)) seer_die("%s", err.msg);
    printf("%s: %lld graphs, %lld nodes, %lld edges\n", argv[1], (long long)ds.G, (long long)ds.N,
           (long long)ds.E);
    printf("%-6s %10s %8s %9s %9s %7s %9s %7s\n", "level", "MB", "ratio", "write s", "read s",
           "vs 0", "cold s", "vs 0");
    double base_mb = 0, base_read = 0, base_cold = 0;
    for (const char *p = levels; *p;) {
        // a level ending in "-nosum": written without the checksums (as before they were added)
        size_t len = strcspn(p, ",");
        int nosum = len > 6 && !strncmp(p + len - 6, "-nosum", 6);
        int level = strncmp(p, "lz4", 3) ? atoi(p) : PG_LZ4;
        char out[1200], name[16];
        if (level == PG_LZ4) snprintf(name, sizeof name, "lz4%s", nosum ? "-nosum" : "");
        else snprintf(name, sizeof name, "%d%s", level, nosum ? "-nosum" : "");
        pg_write_checksums(!nosum);
        snprintf(out, sizeof out, "%s/bench_level_%s.h5", argv[2], name);
        double t0 = seer_now();
        if (pg_write_level(out, &ds, level, &err)) seer_die("%s", err.msg);
        double wt = seer_now() - t0, best = 1e30, cold = 1e30;
        for (int r = 0; r < reps; r++) {
            double t = read_once(out);
            if (t < best) best = t;
        }
        for (int r = 0; r < reps; r++) {
            if (drop_cache()) {
                cold = -1;
                break;
            }
            double t = read_once(out);
            if (t < cold) cold = t;
        }
        struct stat sb;
        double mb = stat(out, &sb) == 0 ? (double)sb.st_size / (1 << 20) : 0;
        if (level == 0 || base_mb == 0) base_mb = mb, base_read = best, base_cold = cold;
        if (cold < 0)
            printf("%-6s %10.1f %8.3f %9.2f %9.3f %6.2fx %9s\n", name, mb, mb / base_mb, wt, best,
                   best / base_read, "(not root)");
        else
            printf("%-6s %10.1f %8.3f %9.2f %9.3f %6.2fx %9.3f %6.2fx\n", name, mb, mb / base_mb,
                   wt, best, best / base_read, cold, cold / base_cold);
        remove(out);
        p += strcspn(p, ",");
        p += *p == ',';
    }
    pg_free(&ds);
    return 0;
}
