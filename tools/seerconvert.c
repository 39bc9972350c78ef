/* seerconvert: ONNX models to PerfGraph.
 *   seerconvert NET.onnx [--batch N] [--fuse] [--allow-unknown] [--shapes]
 *   seerconvert --manifest MANIFEST.csv -o OUT.h5 [--threads N] [--fuse] [--allow-unknown]
 * See --help. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/perfgraph.h"
#include "onnx/onnx_graph.h"
#include "onnx/perfgraph_build.h"

/* --compress: the deflate level, or PG_LZ4, pg_write_level gets (data/perfgraph.h); the default
 * is LZ4 where HDF5's LZ4 plugin is installed (compress_asked: the user chose). */
static int compress_level = PG_LZ4, compress_asked = 0;

/* Writes ds with the chosen codec (LZ4 by default, uncompressed with a note without its plugin). */
static void write_dataset(const char *out, const pg_dataset *ds) {
    seer_err err;
    if (compress_level == PG_LZ4 && !compress_asked && !pg_lz4_available()) {
        fprintf(stderr, "seerconvert: note: HDF5's LZ4 filter is not installed (Debian: "
                        "hdf5-filter-plugin): writing %s uncompressed\n", out);
        compress_level = 0;
    }
    if (pg_write_level(out, ds, compress_level, &err)) seer_die("%s", err.msg);
}

/* --repack: a PerfGraph file rewritten with another codec, the data unchanged. */
static int repack(const char *in, const char *out) {
    seer_err err;
    pg_dataset ds;
    if (!strcmp(in, out)) seer_die("--repack %s -o %s: write to another file", in, out);
    if (pg_read(in, &ds, &err)) seer_die("%s", err.msg);
    write_dataset(out, &ds);
    printf("wrote %s: %lld graphs from %s (%s)\n", out, (long long)ds.G, in,
           compress_level == PG_LZ4 ? "LZ4" : compress_level ? "deflate" : "uncompressed");
    pg_free(&ds);
    return 0;
}

/* --check: every file read whole (every array, checksum and check of datasets/FORMAT.md), one line
 * each; 1 when any fails. */
static int check_files(int n, char **paths) {
    int bad = 0;
    for (int k = 0; k < n; k++) {
        seer_err err;
        pg_dataset ds;
        double t0 = seer_now();
        if (pg_read(paths[k], &ds, &err)) {
            fprintf(stderr, "seer: error: %s\n", err.msg);
            bad = 1;
            continue;
        }
        int sums = pg_checksummed(paths[k]);
        printf("%s: ok: %lld graphs, %lld nodes, %lld edges, %d labels, read and checked in %.2f s; %s\n",
               paths[k], (long long)ds.G, (long long)ds.N, (long long)ds.E, ds.M, seer_now() - t0,
               sums == 1 ? "checksums verified"
                         : "no checksums (uncompressed, or written before them): damaged values could "
                           "pass unseen; seerconvert --repack IN -o OUT adds them");
        pg_free(&ds);
    }
    return bad;
}

static void usage(FILE *f) {
    fputs("usage: seerconvert NET.onnx [--batch N] [--fuse] [--allow-unknown] [--shapes]\n"
          "       seerconvert --manifest MANIFEST.csv -o OUT.h5 [--threads N] [--fuse] [--allow-unknown]\n"
          "                   [--compress 0..9|lz4]\n"
          "       seerconvert --repack IN.h5 -o OUT.h5 [--compress 0..9|lz4]\n"
          "                   [--source TEXT] [--device TEXT]\n"
          "       seerconvert --check DATA.h5 [DATA.h5 ...]\n\n"
          "One model: infers every tensor's shape and prints a summary (ONNX nodes, operators,\n"
          "edges, parameters, FLOPs, bytes, the ten costliest operators). --shapes prints every\n"
          "tensor's shape instead (name<TAB>d0xd1x...).\n\n"
          "Manifest: a CSV whose header is  onnx,batch,name,group[,family],<label>,...  (label names end in\n"
          "their unit, e.g. latency_ms); each row is one graph: an ONNX path (relative to the\n"
          "manifest's folder), the batch size, a name, a group id (graphs of one architecture share\n"
          "it), optionally its family (the search space: nb201, fbnet, space/vgg, ...; written to\n"
          "/graph/family) and the measured labels (empty or nan = not measured). Writes a PerfGraph HDF5 file\n"
          "(datasets/FORMAT.md), converting on all cores.\n\n"
          "  --batch N        leading dimension of every graph input (default: the model's, or 1)\n"
          "  --fuse           fold BatchNormalization and activations into the preceding Conv/Gemm\n"
          "  --allow-unknown  treat unsupported operators as elementwise (counted and reported)\n"
          "  --threads N      conversion threads (default: all cores)\n"
          "  --compress C     lz4 (the default: chunked and LZ4-compressed, 7 to 16x smaller and read\n"
          "                   faster than uncompressed; needs HDF5's LZ4 plugin, Debian's\n"
          "                   hdf5-filter-plugin, else the file is written uncompressed with a note),\n"
          "                   0 (uncompressed), or a deflate level 1 to 9 (shuffled first: 6 to 7x\n"
          "                   smaller, read 4x slower). Readers read them all; benchmarks/RESULTS.md.\n"
          "                   lz4 and deflate files carry HDF5 Fletcher-32 checksums (a damaged byte\n"
          "                   is refused on reading, not read as a wrong value); 0 has none\n"
          "  --check          read each PerfGraph file whole: every array, checksum and format check\n"
          "                   (datasets/FORMAT.md); one line each, exit 1 if any fails\n"
          "  --repack IN.h5   rewrite a PerfGraph file with the --compress codec (lz4 by default), data\n"
          "                   unchanged: an older, uncompressed dataset made small without reconverting\n"
          "FLOPs count a multiply-add as 2; MACs are the multiply-adds of Conv, Gemm and MatMul.\n",
          f);
}

static void fmt_shape(const ox_tensor *t, char *buf, size_t len) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < t->rank && k + 24 < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? "x" : "", (long long)t->dims[i]);
    if (t->rank == 0) snprintf(buf, len, "scalar");
}


typedef struct {
    const ox_graph *g;
    const pgb_graph *p;
} sort_ctx;
static sort_ctx g_sort;
static int cmp_ops(const void *a, const void *b) {
    double fa = g_sort.g->n[g_sort.p->node_of[*(const int *)a]].flops;
    double fb = g_sort.g->n[g_sort.p->node_of[*(const int *)b]].flops;
    return (fa < fb) - (fa > fb);
}

static int convert_one(const char *path, int64_t batch, int fuse, int allow_unknown, int shapes) {
    ox_graph g;
    seer_err err;
    if (ox_load(path, batch, allow_unknown, &g, &err)) seer_die("%s", err.msg);
    char buf[256];
    if (shapes) {
        for (int i = 0; i < g.n_t; i++) {
            if (!g.t[i].known) continue;
            fmt_shape(&g.t[i], buf, sizeof buf);
            printf("%s\t%s\n", g.t[i].name, buf);
        }
        ox_free(&g);
        return 0;
    }
    pgb_graph p;
    pgb_build(&g, fuse, &p);
    printf("%s: opset %d, batch %lld\n", path, g.opset, (long long)(g.batch > 0 ? g.batch : 1));
    printf("  ONNX nodes %d: %lld operators, %d folded (constants, shape arithmetic)%s", p.n_onnx_nodes,
           (long long)p.V, p.n_folded, fuse ? "" : "\n");
    if (fuse) printf(", %d fused into Conv/Gemm (unfused: %lld operators)\n", p.n_fused, (long long)(p.V + p.n_fused));
    if (p.n_unknown) printf("  warning: %d unsupported operators treated as elementwise\n", p.n_unknown);
    if (p.n_deep_window)
        printf("  note: %d operators slide a window over 3 or more spatial dimensions; the node features "
               "describe two (the others count only through FLOPs and bytes)\n", p.n_deep_window);
    printf("  edges %lld\n  parameters %.0f (%.2f M)\n  FLOPs %.4g G (MACs %.4g G)\n"
           "  memory traffic %.2f MB, weights %.2f MB\n",
           (long long)p.E, p.params, p.params / 1e6, p.flops / 1e9, p.macs / 1e9, p.bytes / 1e6,
           p.weight_bytes / 1e6);
    int *idx = malloc(sizeof(int) * (size_t)(p.V + 1));
    for (int i = 0; i < p.V; i++) idx[i] = i;
    g_sort = (sort_ctx){&g, &p};
    qsort(idx, (size_t)p.V, sizeof(int), cmp_ops);
    printf("  costliest operators:\n    %-32s %-20s %10s %7s %s\n", "name", "op", "GFLOPs", "share", "output");
    for (int k = 0; k < p.V && k < 10; k++) {
        const ox_node *n = &g.n[p.node_of[idx[k]]];
        if (n->n_out && n->out[0] >= 0) fmt_shape(&g.t[n->out[0]], buf, sizeof buf);
        printf("    %-32.32s %-20s %10.4f %6.2f%% %s\n", n->name, n->op_type, n->flops / 1e9,
               p.flops > 0 ? 100 * n->flops / p.flops : 0, buf);
    }
    free(idx);
    pgb_free(&p);
    ox_free(&g);
    return 0;
}

/* ---- manifest ---- */
typedef struct {
    char *path, *name, *family;
    int64_t batch, group, line;
    float *labels;
} row;

static int split_csv(char *line, char **f, int max) {
    int n = 0;
    for (char *p = line;; p++) {
        if (n == max) return -1;
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p = 0;
    }
    for (int i = 0; i < n; i++) {
        size_t l = strlen(f[i]);
        while (l && (f[i][l - 1] == '\n' || f[i][l - 1] == '\r' || f[i][l - 1] == ' ')) f[i][--l] = 0;
        while (*f[i] == ' ') f[i]++;
    }
    return n;
}

static int convert_manifest(const char *mpath, const char *out, int fuse, int allow_unknown,
                            int threads, const char *source, const char *device) {
    FILE *f = fopen(mpath, "r");
    if (!f) seer_die("%s: cannot open manifest: %s", mpath, strerror(errno));
    char dir[1024] = ".";
    const char *slash = strrchr(mpath, '/');
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - mpath), mpath);
    size_t cap = 1 << 16;
    char *line = malloc(cap);
    char *fields[256];
    if (!fgets(line, (int)cap, f)) seer_die("%s:1: empty manifest (expected a header onnx,batch,name,group,<labels>)", mpath);
    int nf = split_csv(line, fields, 256);
    if (nf < 4 || strcmp(fields[0], "onnx") || strcmp(fields[1], "batch") || strcmp(fields[2], "name") ||
        strcmp(fields[3], "group"))
        seer_die("%s:1: the header must start with onnx,batch,name,group (then label columns)", mpath);
    int fam = nf > 4 && !strcmp(fields[4], "family"); // optional: the family of each graph
    int L = 4 + fam, M = nf - L;
    char **labels = calloc((size_t)M + 1, sizeof(char *));
    for (int m = 0; m < M; m++) {
        if (!*fields[L + m]) seer_die("%s:1: label column %d has no name", mpath, m + 1);
        labels[m] = seer_strdup(fields[L + m]);
    }
    row *rows = NULL;
    int64_t n = 0, rcap = 0;
    for (int64_t lineno = 2; fgets(line, (int)cap, f); lineno++) {
        if (line[0] == '\n' || line[0] == '#') continue;
        if (strchr(line, '"')) seer_die("%s:%lld: quoted fields are not supported", mpath, (long long)lineno);
        int k = split_csv(line, fields, 256);
        if (k != nf) seer_die("%s:%lld: %d fields, the header has %d", mpath, (long long)lineno, k, nf);
        if (n == rcap) rows = realloc(rows, sizeof(row) * (size_t)(rcap = rcap ? 2 * rcap : 1024));
        row *r = &rows[n++];
        r->line = lineno;
        char *end;
        r->batch = strtoll(fields[1], &end, 10);
        if (*end || r->batch < 1) seer_die("%s:%lld: batch '%s' is not a positive integer", mpath, (long long)lineno, fields[1]);
        r->group = strtoll(fields[3], &end, 10);
        if (*end || !*fields[3]) seer_die("%s:%lld: group '%s' is not an integer", mpath, (long long)lineno, fields[3]);
        if (!*fields[0]) seer_die("%s:%lld: empty ONNX path", mpath, (long long)lineno);
        size_t pl = strlen(dir) + strlen(fields[0]) + 2;
        r->path = malloc(pl);
        if (fields[0][0] == '/') snprintf(r->path, pl, "%s", fields[0]);
        else snprintf(r->path, pl, "%s/%s", dir, fields[0]);
        r->name = seer_strdup(fields[2]);
        r->family = fam ? seer_strdup(fields[4]) : NULL;
        if (fam && !*fields[4]) seer_die("%s:%lld: empty family", mpath, (long long)lineno);
        r->labels = malloc(sizeof(float) * (size_t)(M + 1));
        for (int m = 0; m < M; m++) {
            const char *v = fields[L + m];
            if (!*v || !strcmp(v, "nan") || !strcmp(v, "NaN")) {
                r->labels[m] = NAN;
                continue;
            }
            double x = strtod(v, &end);
            if (*end || !isfinite(x) || x <= 0)
                seer_die("%s:%lld: label %s = '%s': must be a positive number, or empty/nan for not measured",
                         mpath, (long long)lineno, labels[m], v);
            r->labels[m] = (float)x;
        }
    }
    fclose(f);
    free(line);
    if (n == 0) seer_die("%s: no rows", mpath);
    pgb_graph *pg = calloc((size_t)n, sizeof(pgb_graph));
    char **errs = calloc((size_t)n, sizeof(char *));
    int64_t done = 0;
    seer_progress prog;
    progress_begin(&prog, "seerconvert", n);
    double t0 = seer_now();
    if (threads > 0) omp_set_num_threads(threads);
#pragma omp parallel for schedule(dynamic, 8)
    for (int64_t i = 0; i < n; i++) {
        ox_graph g;
        seer_err err;
        if (ox_load(rows[i].path, rows[i].batch, allow_unknown, &g, &err)) {
            errs[i] = seer_strdup(err.msg);
        } else {
            pgb_build(&g, fuse, &pg[i]);
            ox_free(&g);
        }
#pragma omp critical
        progress_update(&prog, ++done, NULL);
    }
    progress_end(&prog);
    double secs = seer_now() - t0;
    for (int64_t i = 0; i < n; i++)
        if (errs[i]) seer_die("%s:%lld: %s", mpath, (long long)rows[i].line, errs[i]);
    int n_ops;
    const char *const *ops = ox_op_names(&n_ops);
    pg_dataset ds = {.G = n, .Fn = PGB_NODE_F, .Fe = PGB_EDGE_F, .Fg = PGB_GLOBAL_F, .M = M, .n_ops = n_ops};
    ds.node_ptr = calloc((size_t)n + 1, 8), ds.edge_ptr = calloc((size_t)n + 1, 8);
    for (int64_t i = 0; i < n; i++) {
        ds.node_ptr[i + 1] = ds.node_ptr[i] + pg[i].V;
        ds.edge_ptr[i + 1] = ds.edge_ptr[i] + pg[i].E;
    }
    ds.N = ds.node_ptr[n], ds.E = ds.edge_ptr[n];
    ds.node_x = malloc(sizeof(float) * (size_t)(ds.N * PGB_NODE_F) + 1);
    ds.node_op = malloc(sizeof(int32_t) * (size_t)ds.N + 1);
    ds.edge_index = malloc(sizeof(int32_t) * 2 * (size_t)ds.E + 1);
    ds.edge_x = malloc(sizeof(float) * (size_t)(ds.E * PGB_EDGE_F) + 1);
    ds.global_x = malloc(sizeof(float) * (size_t)(n * PGB_GLOBAL_F));
    ds.label_y = malloc(sizeof(float) * (size_t)(n * (M ? M : 1)));
    ds.group = malloc(sizeof(int64_t) * (size_t)n);
    ds.name = calloc((size_t)n + 1, sizeof(char *));
    ds.family = rows[0].family ? calloc((size_t)n + 1, sizeof(char *)) : NULL;
    int64_t unknown = 0, fused = 0;
    for (int64_t i = 0; i < n; i++) {
        memcpy(ds.node_x + ds.node_ptr[i] * PGB_NODE_F, pg[i].xn, sizeof(float) * (size_t)(pg[i].V * PGB_NODE_F));
        memcpy(ds.node_op + ds.node_ptr[i], pg[i].op, sizeof(int32_t) * (size_t)pg[i].V);
        memcpy(ds.edge_index + 2 * ds.edge_ptr[i], pg[i].edge, sizeof(int32_t) * 2 * (size_t)pg[i].E);
        memcpy(ds.edge_x + ds.edge_ptr[i] * PGB_EDGE_F, pg[i].xe, sizeof(float) * (size_t)(pg[i].E * PGB_EDGE_F));
        memcpy(ds.global_x + i * PGB_GLOBAL_F, pg[i].xg, sizeof pg[i].xg);
        memcpy(ds.label_y + i * M, rows[i].labels, sizeof(float) * (size_t)M);
        ds.group[i] = rows[i].group;
        ds.name[i] = rows[i].name;
        if (ds.family) ds.family[i] = rows[i].family;
        unknown += pg[i].n_unknown, fused += pg[i].n_fused;
    }
    ds.node_features = (char **)pgb_node_feature_names();
    ds.edge_features = (char **)pgb_edge_feature_names();
    ds.global_features = (char **)pgb_global_feature_names();
    ds.op_types = (char **)ops;
    ds.labels = labels;
    ds.source = (char *)(source ? source : mpath);
    ds.device = (char *)(device ? device : "");
    seer_err err;
    if (pg_validate(&ds, out, &err)) seer_die("%s", err.msg);
    write_dataset(out, &ds);
    printf("wrote %s: %lld graphs, %lld nodes, %lld edges, %d labels; %.1f s, %.0f ONNX files/s%s\n",
           out, (long long)n, (long long)ds.N, (long long)ds.E, M, secs, (double)n / secs,
           fuse ? " (fused view)" : "");
    if (unknown) printf("warning: %lld unsupported operators treated as elementwise\n", (long long)unknown);
    (void)fused;
    for (int64_t i = 0; i < n; i++)
        pgb_free(&pg[i]), free(rows[i].path), free(rows[i].name), free(rows[i].family), free(rows[i].labels);
    free(pg), free(errs), free(rows);
    free(ds.node_ptr), free(ds.edge_ptr), free(ds.node_x), free(ds.node_op), free(ds.edge_index);
    free(ds.edge_x), free(ds.global_x), free(ds.label_y), free(ds.group), free(ds.name), free(ds.family);
    for (int m = 0; m < M; m++) free(labels[m]);
    free(labels);
    return 0;
}

int main(int argc, char **argv) {
    const char *input = NULL, *manifest = NULL, *out = NULL, *source = NULL, *device = NULL;
    const char *repack_in = NULL;
    char *end_level;
    int64_t batch = 0;
    int fuse = 0, allow_unknown = 0, shapes = 0, threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--batch") && more) {
            char *end;
            batch = strtoll(argv[++i], &end, 10);
            if (*end || batch < 1) seer_die("--batch %s: must be a positive integer", argv[i]);
        } else if (!strcmp(a, "--manifest") && more) {
            manifest = argv[++i];
        } else if (!strcmp(a, "--check")) {
            if (i + 1 >= argc) seer_die("--check needs one or more PerfGraph files");
            return check_files(argc - i - 1, argv + i + 1);
        } else if (!strcmp(a, "--repack") && more) {
            repack_in = argv[++i];
        } else if ((!strcmp(a, "-o") || !strcmp(a, "--out")) && more) {
            out = argv[++i];
        } else if (!strcmp(a, "--compress") && more) {
            compress_asked = 1;
            if (!strcmp(argv[++i], "lz4")) compress_level = PG_LZ4;
            else if ((compress_level = (int)strtol(argv[i], &end_level, 10)), *end_level ||
                     compress_level < 0 || compress_level > 9)
                seer_die("--compress %s: give lz4, or a deflate level from 0 (none) to 9", argv[i]);
        } else if (!strcmp(a, "--threads") && more) {
            threads = atoi(argv[++i]);
        } else if (!strcmp(a, "--source") && more) {
            source = argv[++i];
        } else if (!strcmp(a, "--device") && more) {
            device = argv[++i];
        } else if (!strcmp(a, "--fuse")) {
            fuse = 1;
        } else if (!strcmp(a, "--allow-unknown")) {
            allow_unknown = 1;
        } else if (!strcmp(a, "--shapes")) {
            shapes = 1;
        } else if (a[0] == '-') {
            fprintf(stderr, "seerconvert: unknown or incomplete option '%s' (see --help)\n", a);
            return 2;
        } else if (!input) {
            input = a;
        } else {
            fprintf(stderr, "seerconvert: unexpected argument '%s' (see --help)\n", a);
            return 2;
        }
    }
    if (repack_in) {
        if (!out) seer_die("--repack needs -o OUT.h5");
        return repack(repack_in, out);
    }
    if (manifest) {
        if (!out) seer_die("--manifest needs -o OUT.h5");
        return convert_manifest(manifest, out, fuse, allow_unknown, threads, source, device);
    }
    if (!input) {
        usage(stderr);
        return 2;
    }
    return convert_one(input, batch, fuse, allow_unknown, shapes);
}
