/* PerfGraph HDF5: a round trip that must return every array bit for bit, and each malformed
 * file refused with the expected message (truncated file, not HDF5, wrong widths, edge id out
 * of its graph, non-monotone offsets, NaN feature, bad label, wrong version, missing dataset). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>

#include "data/perfgraph.h"
#include "data/prep.h"
#include "testgraphs.h"
#include "testutil.h"

static char dir[512];

static void same_dataset(const pg_dataset *a, const pg_dataset *b) {
    CHECK(a->G == b->G && a->N == b->N && a->E == b->E, "counts differ");
    CHECK(a->Fn == b->Fn && a->Fe == b->Fe && a->Fg == b->Fg && a->M == b->M && a->n_ops == b->n_ops,
          "widths differ");
    if (test_failures) return;
    CHECK(!memcmp(a->node_ptr, b->node_ptr, 8 * (size_t)(a->G + 1)), "node_ptr");
    CHECK(!memcmp(a->edge_ptr, b->edge_ptr, 8 * (size_t)(a->G + 1)), "edge_ptr");
    CHECK(!memcmp(a->group, b->group, 8 * (size_t)a->G), "group");
    CHECK(!memcmp(a->node_x, b->node_x, 4 * (size_t)(a->N * a->Fn)), "node_x");
    CHECK(!memcmp(a->node_op, b->node_op, 4 * (size_t)a->N), "node_op");
    CHECK(!memcmp(a->edge_index, b->edge_index, 8 * (size_t)a->E), "edge_index");
    CHECK(!memcmp(a->edge_x, b->edge_x, 4 * (size_t)(a->E * a->Fe)), "edge_x");
    CHECK(!memcmp(a->global_x, b->global_x, 4 * (size_t)(a->G * a->Fg)), "global_x");
    CHECK(!memcmp(a->label_y, b->label_y, 4 * (size_t)(a->G * a->M)), "label_y (NaN included)");
    for (int64_t g = 0; g < a->G; g++) CHECK(!strcmp(a->name[g], b->name[g]), "name %lld", (long long)g);
    for (int i = 0; i < a->Fn; i++) CHECK(!strcmp(a->node_features[i], b->node_features[i]), "schema");
    for (int i = 0; i < a->M; i++) CHECK(!strcmp(a->labels[i], b->labels[i]), "labels");
    CHECK(!strcmp(a->source, b->source), "source attribute");
}

/* Writes ds (possibly corrupted by the caller), reads it back, expects failure with `want` in
 * the message. */
static void expect_refused(const char *what, const pg_dataset *ds, const char *want) {
    char path[600];
    snprintf(path, sizeof path, "%s/bad.h5", dir);
    seer_err err;
    CHECK(pg_write(path, ds, &err) == 0, "%s: write: %s", what, err.msg);
    pg_dataset back;
    err.msg[0] = 0;
    int rc = pg_read(path, &back, &err);
    CHECK(rc != 0, "%s: a bad file was accepted", what);
    if (rc == 0) pg_free(&back);
    CHECK(strstr(err.msg, want) && strstr(err.msg, path), "%s: message '%s' lacks '%s' or the path",
          what, err.msg, want);
    printf("  refused %-26s %s\n", what, err.msg);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/seer_test_pg_%d", (int)getpid());
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    if (system(cmd) != 0) return 1;
    pg_dataset ds, back;
    seer_err err;
    tg_build(&ds, 8, 4, 3, 2, 2, 3);
    char path[600];
    snprintf(path, sizeof path, "%s/ok.h5", dir);
    CHECK(pg_write(path, &ds, &err) == 0, "write: %s", err.msg);
    CHECK(pg_read(path, &back, &err) == 0, "read: %s", err.msg);
    if (!test_failures) {
        same_dataset(&ds, &back);
        pg_free(&back);
    }
    // the same data written again a second later is the same bytes (no creation times in the
    // file): a dataset's checksum says whether it changed (train_cpu_predictor.sh --keep)
    {
        char once[640], again[640], cmp[1400];
        snprintf(once, sizeof once, "%s/ok_once.h5", dir);
        snprintf(again, sizeof again, "%s/ok_again.h5", dir);
        int keep_sums = pg_write_checksums(1); // the HDF5 1.8 format: headers with times by default
        CHECK(pg_write_level(once, &ds, 6, &err) == 0, "write: %s", err.msg);
        sleep(1);
        CHECK(pg_write_level(again, &ds, 6, &err) == 0, "write: %s", err.msg);
        pg_write_checksums(keep_sums);
        snprintf(cmp, sizeof cmp, "cmp -s %s %s", once, again);
        CHECK(system(cmp) == 0, "%s and %s: the same data written twice differ in their bytes", once, again);
    }
    // chunked + shuffle + deflate and chunked + LZ4 (seerconvert --compress 6|lz4), in one chunk
    // per array and in many (64-byte chunks: ranges that start and end inside chunks, read by
    // LZ4's parallel chunk decoder): the same data through every reader
    CHECK(pg_write_level(path, &ds, 10, &err) != 0 && strstr(err.msg, "0 (none) to 9"),
          "level 10 was accepted");
    // cfg 4: LZ4 in small chunks without the checksums, as files written before them are
    for (int cfg = 0; cfg < 5; cfg++) {
        int level = cfg % 2 || cfg == 4 ? PG_LZ4 : 6, sums = cfg < 4;
        size_t keep_chunk = pg_chunk_bytes(cfg >= 2 ? 64 : 0);
        int keep_sums = pg_write_checksums(sums);
        char zpath[640];
        snprintf(zpath, sizeof zpath, "%s/ok_z%d.h5", dir, cfg);
        CHECK(pg_write_level(zpath, &ds, level, &err) == 0, "compressed write (%d): %s", cfg, err.msg);
        pg_chunk_bytes(keep_chunk);
        pg_write_checksums(keep_sums);
        hid_t f = H5Fopen(zpath, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, "/node/x", H5P_DEFAULT);
        hid_t pl = H5Dget_create_plist(d);
        hsize_t cdims[2] = {0, 0};
        H5Pget_chunk(pl, 2, cdims);
        int nf = H5Pget_nfilters(pl);
        unsigned fl, cd[8];
        size_t ncd = 8;
        H5Z_filter_t last = nf > 0 ? H5Pget_filter2(pl, (unsigned)nf - 1, &fl, &ncd, cd, 0, NULL, NULL) : -1;
        CHECK(nf == (level == PG_LZ4 ? 1 : 2) + sums && H5Pget_layout(pl) == H5D_CHUNKED &&
                  (last == H5Z_FILTER_FLETCHER32) == sums && (cfg < 2 || (int64_t)cdims[0] * 4 < ds.N),
              "/node/x (%d): %d filters (last %d), layout %d, chunks of %llu rows: not chunked and "
              "filtered as asked", cfg, nf, (int)last, (int)H5Pget_layout(pl), (unsigned long long)cdims[0]);
        H5Pclose(pl), H5Dclose(d);
        // the index arrays: checksummed chunks too (contiguous without the checksums)
        d = H5Dopen2(f, "/graph/node_ptr", H5P_DEFAULT), pl = H5Dget_create_plist(d);
        CHECK((H5Pget_layout(pl) == H5D_CHUNKED && H5Pget_nfilters(pl) == 1) == sums,
              "/graph/node_ptr (%d): layout %d, %d filters", cfg, (int)H5Pget_layout(pl),
              H5Pget_nfilters(pl));
        H5Pclose(pl), H5Dclose(d);
        // Seer's own LZ4 decoder and checksum against HDF5's plugin and filter, where installed
        if (level == PG_LZ4 && pg_lz4_available()) {
            float *x = malloc(sizeof(float) * (size_t)(ds.N * ds.Fn));
            d = H5Dopen2(f, "/node/x", H5P_DEFAULT);
            CHECK(x && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) >= 0 &&
                      !memcmp(x, ds.node_x, sizeof(float) * (size_t)(ds.N * ds.Fn)),
                  "/node/x (%d): HDF5's own read differs from what was written", cfg);
            H5Dclose(d);
            free(x);
        }
        H5Fclose(f);
        CHECK(pg_read(zpath, &back, &err) == 0, "compressed read: %s", err.msg);
        if (!test_failures) {
            same_dataset(&ds, &back);
            pg_free(&back);
        }
        pg_index zx;
        pg_dataset a, b;
        pg_read_stats st;
        CHECK(pg_read_index(zpath, &zx, &err) == 0, "compressed index: %s", err.msg);
        if (!test_failures) {
            int64_t lo = 3, hi = zx.G - 2;
            CHECK(pg_read_range(zpath, &zx, lo, hi, &a, &st, &err) == 0 &&
                      pg_read_range(path, &zx, lo, hi, &b, &st, &err) == 0, "range: %s", err.msg);
            if (!test_failures) {
                CHECK(a.N == b.N && !memcmp(a.node_x, b.node_x, sizeof(float) * (size_t)(a.N * a.Fn)) &&
                          !memcmp(a.edge_index, b.edge_index, sizeof(int32_t) * (size_t)(2 * a.E)) &&
                          !memcmp(a.global_x, b.global_x, sizeof(float) * (size_t)(a.G * a.Fg)),
                      "a range of the compressed file differs from the uncompressed one");
                pg_free(&a), pg_free(&b);
            }
            pg_index_free(&zx);
        }
    }

    // the reads above went through Seer's own Fletcher-32 (LZ4 chunks): it met HDF5's on chunks of
    // more than one 128-word block (ok_z1) and on chunks of odd length (ok_z3)
    for (int cfg = 1; cfg <= 3; cfg += 2) {
        char zpath[640];
        snprintf(zpath, sizeof zpath, "%s/ok_z%d.h5", dir, cfg);
        hid_t f = H5Fopen(zpath, H5F_ACC_RDONLY, H5P_DEFAULT);
        hsize_t nchunks = 0, largest = 0, odd = 0;
        static const char *const arrays[] = {"/node/x", "/node/op", "/edge/x", "/edge/index", "/global/x",
                                             "/label/y"};
        for (int a = 0; a < 6; a++) {
            hid_t d = H5Dopen2(f, arrays[a], H5P_DEFAULT), sp = H5Dget_space(d);
            hsize_t nc = 0;
            H5Dget_num_chunks(d, sp, &nc);
            for (hsize_t k = 0; k < nc; k++) {
                hsize_t off[2], size = 0;
                unsigned mask;
                haddr_t addr;
                H5Dget_chunk_info(d, sp, k, off, &mask, &addr, &size);
                if (size > largest) largest = size;
                odd += size % 2;
            }
            nchunks += nc;
            H5Sclose(sp), H5Dclose(d);
        }
        H5Fclose(f);
        CHECK(cfg == 1 ? largest > 2 * 2 * 128 + 4 : odd > 0,
              "ok_z%d: %llu chunks, largest %llu bytes, %llu of odd length: the checksum's paths "
              "were not all exercised", cfg, (unsigned long long)nchunks, (unsigned long long)largest,
              (unsigned long long)odd);
    }

    // damaged chunks: one error naming the file and the array, never a crash, never wrong values.
    // A byte in the middle of a chunk's compressed data decodes into other numbers without a
    // checksum; with one it is refused (the LZ4 chunks by Seer's decoder, deflate by HDF5's
    // filter). Without checksums (cfg 4) only a damaged LZ4 frame header is caught.
    {
        static const struct {
            int cfg;
            const char *dset, *what, *want;
            int at_header;
        } dmg[] = {
            {3, "/node/x", "LZ4 chunk, data byte", "checksum", 0},
            {1, "/label/y", "LZ4 chunk, data byte", "checksum", 0},
            {2, "/edge/x", "deflate chunk, data byte", "checksum", 0},
            {0, "/graph/node_ptr", "index chunk, data byte", "checksum", 0},
            {4, "/node/x", "unsummed LZ4 chunk, header", "/node/x", 1},
        };
        for (size_t i = 0; i < sizeof dmg / sizeof dmg[0]; i++) {
            char zpath[640];
            snprintf(zpath, sizeof zpath, "%s/ok_z%d.h5", dir, dmg[i].cfg);
            hid_t f = H5Fopen(zpath, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, dmg[i].dset, H5P_DEFAULT);
            hid_t sp = H5Dget_space(d);
            hsize_t off[2], nchunks = 0;
            unsigned mask;
            haddr_t addr = 0;
            hsize_t size = 0;
            H5Dget_num_chunks(d, sp, &nchunks);
            H5Dget_chunk_info(d, sp, nchunks > 1 ? 1 : 0, off, &mask, &addr, &size);
            H5Sclose(sp), H5Dclose(d), H5Fclose(f);
            long at = (long)addr + (dmg[i].at_header ? 4 : (long)size / 2);
            FILE *fp = fopen(zpath, "r+b");
            int c = fp && fseek(fp, at, SEEK_SET) == 0 ? fgetc(fp) : EOF;
            CHECK(c != EOF && size > 12 && fseek(fp, at, SEEK_SET) == 0 && fputc(c ^ 0x5a, fp) != EOF,
                  "could not damage %s of %s", dmg[i].dset, zpath);
            if (fp) fclose(fp);
            int rc = pg_read(zpath, &back, &err);
            if (rc == 0) pg_free(&back);
            CHECK(rc != 0 && strstr(err.msg, dmg[i].dset) && strstr(err.msg, zpath) &&
                      strstr(err.msg, dmg[i].want),
                  "a damaged %s of %s was read (or refused without naming it): %s", dmg[i].what,
                  dmg[i].dset, rc ? err.msg : "read");
            printf("  refused %-30s %s\n", dmg[i].what, err.msg);
        }
    }

    // sharded reads: R contiguous shards balanced by nodes, one hyperslab per dataset covering
    // exactly the shard's rows, data equal to the slice of the whole file
    for (int R = 1; R <= 3; R++) {
        pg_index ix;
        CHECK(pg_read_index(path, &ix, &err) == 0, "index: %s", err.msg);
        if (test_failures) break;
        int64_t next = 0, rows_sum[PG_RD_N] = {0};
        for (int r = 0; r < R; r++) {
            int64_t lo, hi;
            pg_shard(&ix, r, R, &lo, &hi);
            CHECK(lo == next && hi >= lo, "R=%d rank %d: shard [%lld, %lld) does not follow %lld", R,
                  r, (long long)lo, (long long)hi, (long long)next);
            next = hi;
            pg_dataset sh;
            pg_read_stats st;
            CHECK(pg_read_range(path, &ix, lo, hi, &sh, &st, &err) == 0, "range: %s", err.msg);
            if (test_failures) break;
            int64_t n0 = ds.node_ptr[lo], e0 = ds.edge_ptr[lo];
            int64_t want_first[PG_RD_N] = {n0, n0, e0, e0, lo, lo};
            int64_t want_rows[PG_RD_N] = {sh.N, sh.N, sh.E, sh.E, hi - lo, hi - lo};
            int64_t want_reads = 0;
            for (int k = 0; k < PG_RD_N; k++) {
                want_reads += want_rows[k] > 0;
                rows_sum[k] += st.rows[k];
                CHECK(st.rows[k] == want_rows[k] && (!st.rows[k] || st.first[k] == want_first[k]),
                      "R=%d rank %d dataset %d: read rows %lld from %lld, shard has %lld from %lld",
                      R, r, k, (long long)st.rows[k], (long long)st.first[k],
                      (long long)want_rows[k], (long long)want_first[k]);
            }
            CHECK(st.reads == want_reads, "R=%d rank %d: %lld hyperslab reads, expected %lld", R, r,
                  (long long)st.reads, (long long)want_reads);
            CHECK(sh.g0 == lo && sh.G == hi - lo, "shard placement");
            CHECK(!memcmp(sh.node_x, ds.node_x + n0 * ds.Fn, 4 * (size_t)(sh.N * ds.Fn)) &&
                      !memcmp(sh.edge_index, ds.edge_index + 2 * e0, 8 * (size_t)sh.E) &&
                      !memcmp(sh.label_y, ds.label_y + lo * ds.M, 4 * (size_t)((hi - lo) * ds.M)),
                  "R=%d rank %d: shard data differs from the whole file's slice", R, r);
            for (int64_t g = 0; g <= sh.G; g++)
                CHECK(sh.node_ptr[g] == ds.node_ptr[lo + g] - n0, "rebased node_ptr");
            pg_free(&sh);
        }
        CHECK(next == ds.G, "R=%d: shards end at %lld of %lld graphs", R, (long long)next, (long long)ds.G);
        CHECK(rows_sum[PG_RD_NODE_X] == ds.N && rows_sum[PG_RD_EDGE_X] == ds.E &&
                  rows_sum[PG_RD_LABEL_Y] == ds.G, "R=%d: the shards' rows do not add up to the file", R);
        pg_index_free(&ix);
    }

    // truncated file
    {
        FILE *f = fopen(path, "rb");
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = seer_malloc((size_t)n);
        CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n, "read back");
        fclose(f);
        char tpath[600];
        snprintf(tpath, sizeof tpath, "%s/trunc.h5", dir);
        f = fopen(tpath, "wb");
        fwrite(buf, 1, (size_t)n / 2, f);
        fclose(f);
        CHECK(pg_read(tpath, &back, &err) != 0, "truncated file accepted");
        CHECK(strstr(err.msg, tpath) != NULL, "truncated: %s", err.msg);
        printf("  refused %-26s %s\n", "truncated file", err.msg);
        snprintf(tpath, sizeof tpath, "%s/text.h5", dir);
        f = fopen(tpath, "wb");
        fputs("node,edge\n1,2\n", f);
        fclose(f);
        CHECK(pg_read(tpath, &back, &err) != 0 && strstr(err.msg, "not an HDF5 file"), "text file: %s", err.msg);
        printf("  refused %-26s %s\n", "not HDF5", err.msg);
        CHECK(pg_read("/nonexistent/x.h5", &back, &err) != 0 && strstr(err.msg, "cannot open"),
              "missing file: %s", err.msg);
        free(buf);
    }
    // several files as one dataset: an operator table may have operators appended (the ids of
    // the others never move), and the dataset takes the longer; any other difference is refused
    {
        char p1[600], p2[600], both[1300];
        snprintf(p1, sizeof p1, "%s/ops3.h5", dir), snprintf(p2, sizeof p2, "%s/ops4.h5", dir);
        snprintf(both, sizeof both, "%s,%s", p1, p2);
        char **ops3 = ds.op_types, **ops4 = tg_names("op", 4);
        free(ops4[3]), ops4[3] = seer_strdup("Equal");
        CHECK(pg_write(p1, &ds, &err) == 0, "write: %s", err.msg);
        ds.op_types = ops4, ds.n_ops = 4;
        CHECK(pg_write(p2, &ds, &err) == 0, "write: %s", err.msg);
        pg_index ix;
        pg_dataset m;
        CHECK(pg_read_index_paths(both, &ix, &err) == 0, "index of two files: %s", err.msg);
        if (!test_failures) {
            CHECK(pg_read_range_paths(both, &ix, 0, ix.G, &m, NULL, &err) == 0, "read two files: %s", err.msg);
            if (!test_failures) {
                CHECK(m.G == 2 * ds.G && m.n_ops == 4 && !strcmp(m.op_types[3], "Equal") &&
                          !strcmp(m.op_types[0], ops3[0]),
                      "merged op table: %d entries", m.n_ops);
                pg_free(&m);
            }
            pg_index_free(&ix);
        }
        free(ops4[1]), ops4[1] = seer_strdup("Renamed"); // not a prefix: refused
        CHECK(pg_write(p2, &ds, &err) == 0, "write: %s", err.msg);
        CHECK(pg_read_index_paths(both, &ix, &err) == 0, "index: %s", err.msg);
        if (!test_failures) {
            CHECK(pg_read_range_paths(both, &ix, 0, ix.G, &m, NULL, &err) != 0 &&
                      strstr(err.msg, "operator types or labels) differs"),
                  "a renamed operator was accepted: %s", err.msg);
            printf("  refused %-26s %s\n", "other operator table", err.msg);
            pg_index_free(&ix);
        }
        for (int i = 0; i < 4; i++) free(ops4[i]);
        free(ops4);
        ds.op_types = ops3, ds.n_ops = 3;
    }
    // edge id outside its graph (graph 0 has 6 nodes)
    ds.edge_index[1] = 6;
    expect_refused("edge id out of graph", &ds, "outside the graph's 6 nodes");
    ds.edge_index[1] = 2;
    // non-monotone offsets
    int64_t keep = ds.node_ptr[2];
    ds.node_ptr[2] = ds.node_ptr[1] - 1;
    expect_refused("non-monotone node_ptr", &ds, "not monotone at graph 1");
    ds.node_ptr[2] = keep;
    // NaN feature in graph 3
    int64_t row = ds.node_ptr[3] + 2;
    ds.node_x[row * ds.Fn + 1] = NAN;
    expect_refused("NaN node feature", &ds, "graph 3 (g3)");
    ds.node_x[row * ds.Fn + 1] = 0.5f;
    // widths against /schema, format version, a missing dataset: edit a good file in place
    {
        char p2[600];
        snprintf(p2, sizeof p2, "%s/edit.h5", dir);
        CHECK(pg_write(p2, &ds, &err) == 0, "write: %s", err.msg);
        hid_t f = H5Fopen(p2, H5F_ACC_RDWR, H5P_DEFAULT);
        H5Ldelete(f, "/node/x", H5P_DEFAULT);
        hsize_t dims[2] = {(hsize_t)ds.N, (hsize_t)ds.Fn - 1};
        hid_t sp = H5Screate_simple(2, dims, NULL);
        hid_t d = H5Dcreate2(f, "/node/x", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ds.node_x);
        H5Dclose(d), H5Sclose(sp), H5Fclose(f);
        CHECK(pg_read(p2, &back, &err) != 0 && strstr(err.msg, "/node/x: shape"), "narrow node/x: %s", err.msg);
        printf("  refused %-26s %s\n", "wrong feature width", err.msg);

        CHECK(pg_write(p2, &ds, &err) == 0, "write: %s", err.msg);
        f = H5Fopen(p2, H5F_ACC_RDWR, H5P_DEFAULT);
        int64_t v2 = 2;
        hid_t at = H5Aopen(f, "version", H5P_DEFAULT);
        H5Awrite(at, H5T_NATIVE_INT64, &v2);
        H5Aclose(at), H5Fclose(f);
        CHECK(pg_read(p2, &back, &err) != 0 && strstr(err.msg, "version 2 is not supported"), "version: %s", err.msg);
        printf("  refused %-26s %s\n", "future version", err.msg);

        CHECK(pg_write(p2, &ds, &err) == 0, "write: %s", err.msg);
        f = H5Fopen(p2, H5F_ACC_RDWR, H5P_DEFAULT);
        H5Ldelete(f, "/edge/x", H5P_DEFAULT);
        H5Fclose(f);
        CHECK(pg_read(p2, &back, &err) != 0 && strstr(err.msg, "/edge/x: missing dataset"), "missing: %s", err.msg);
        printf("  refused %-26s %s\n", "missing dataset", err.msg);
    }
    // wrong label value
    float ky = ds.label_y[0];
    ds.label_y[0] = -1.0f;
    expect_refused("negative label", &ds, "labels must be positive");
    ds.label_y[0] = ky;
    // op id outside the schema
    ds.node_op[0] = 7;
    expect_refused("op id out of schema", &ds, "outside /schema/op_types");
    ds.node_op[0] = 0;

    // splits: seeded, by counts and fractions, groups kept together
    int8_t *w1 = seer_malloc((size_t)ds.G), *w2 = seer_malloc((size_t)ds.G);
    CHECK(split_assign(ds.G, ds.group, 0, 0.5, 0.25, 0, 0, 9, w1, &err) == 0, "%s", err.msg);
    CHECK(split_assign(ds.G, ds.group, 0, 0.5, 0.25, 0, 0, 9, w2, &err) == 0, "%s", err.msg);
    CHECK(!memcmp(w1, w2, (size_t)ds.G), "split not deterministic");
    for (int64_t g = 0; g + 1 < ds.G; g++)
        if (ds.group[g] == ds.group[g + 1]) CHECK(w1[g] == w1[g + 1], "group %lld split apart", (long long)ds.group[g]);
    CHECK(split_assign(ds.G, ds.group, 1, 0, 0, 6, 3, 9, w1, &err) == 0, "%s", err.msg);
    int64_t cnt[3] = {0};
    for (int64_t g = 0; g < ds.G; g++) cnt[w1[g]]++;
    CHECK(cnt[0] >= 6 && cnt[0] <= 7 && cnt[1] >= 3 && cnt[1] <= 4, "counts split %lld/%lld/%lld",
          (long long)cnt[0], (long long)cnt[1], (long long)cnt[2]);
    CHECK(split_assign(ds.G, ds.group, 1, 0, 0, 12, 3, 9, w1, &err) != 0 && strstr(err.msg, "leaves no test"),
          "over-large counts accepted: %s", err.msg);
    free(w1), free(w2);

    pg_free(&ds);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) return 1;
    return test_finish("test_perfgraph");
}
