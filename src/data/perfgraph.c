/* PerfGraph HDF5 reading, validation and writing (format version 1, see DESIGN.md).
 *
 * Every hid_t is closed on every path; HDF5's own error stack printing is switched off and each
 * failure becomes one seer_err line with the file and the dataset path. */
#define _POSIX_C_SOURCE 200809L
#include "perfgraph.h"

#include <fcntl.h>
#include <hdf5.h>
#include <lz4.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Before the first HDF5 call of the process: no error stack printing, and no HDF5 cleanup at exit
 * (a file whose close failed on a full disk made that cleanup crash inside exit(); Seer closes
 * every file it writes itself, through a temporary name, so nothing depends on it). */
static void h5_quiet(void) {
    static int done;
    if (!done) H5dont_atexit(), done = 1;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

/* libhdf5 1.10 trusts a file's metadata: a damaged datatype message or string heap can make
 * H5Dread copy from past its buffers and crash, or loop for ever inside the heap (found by
 * flipping bytes of small PerfGraph files: tests/data/hostile/h5/libhdf5_*). While a reader below
 * runs, SIGSEGV, SIGBUS and SIGABRT (glibc's malloc checks catching the heap it damaged) print one
 * error line naming the file and the dataset and exit 1 instead of dumping core; the string reads
 * (small: names, labels, attributes) run under an alarm of 60 s (SEER_H5_STRING_TIMEOUT=seconds:
 * the hostile tests' shorter one) that does the same. Readers run on one thread. */
static char guard_line[SEER_ERR_LEN + 64], guard_hang[160];
static const char *guard_dset = "/"; // what is being read: a literal of this file
static int guard_depth, guard_stderr = -1; // a copy of stderr while fd 2 is muted
static unsigned guard_secs;
#define GUARD_NSIG 4
static struct sigaction guard_old[GUARD_NSIG];
static const int guard_sigs[GUARD_NSIG] = {SIGSEGV, SIGBUS, SIGABRT, SIGALRM};

static void guard_handler(int sig) {
    static const char crash[] = ": the HDF5 library crashed reading it: the file is damaged (rebuild "
                                "or copy it again; if it is sound, this is a bug in Seer or libhdf5)\n";
    const char *tail = sig == SIGALRM ? guard_hang : crash;
    int fd = guard_stderr >= 0 ? guard_stderr : STDERR_FILENO;
    if (write(fd, guard_line, strlen(guard_line)) < 0 || write(fd, guard_dset, strlen(guard_dset)) < 0 ||
        write(fd, tail, strlen(tail)) < 0)
        _exit(1);
    _exit(1);
}

static void guard_begin(const char *path) {
    if (guard_depth++) return;
    seer_err e; // seer_fail keeps a hostile path on one line
    seer_fail(&e, "%s: ", path);
    snprintf(guard_line, sizeof guard_line, "seer: error: %s%s", seer_err_prefix, e.msg);
    guard_dset = "/";
    const char *env = getenv("SEER_H5_STRING_TIMEOUT");
    guard_secs = env && atoi(env) > 0 ? (unsigned)atoi(env) : 60;
    snprintf(guard_hang, sizeof guard_hang, ": the HDF5 library did not finish reading these strings in %u s: "
             "the file is damaged (rebuild or copy it again)\n", guard_secs);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = guard_handler;
    sigemptyset(&sa.sa_mask);
    for (int k = 0; k < GUARD_NSIG; k++) sigaction(guard_sigs[k], &sa, &guard_old[k]);
}

/* Under AddressSanitizer its reports must reach stderr: nothing is muted there. */
#if defined(__SANITIZE_ADDRESS__)
#define GUARD_MUTE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GUARD_MUTE 0
#endif
#endif
#ifndef GUARD_MUTE
#define GUARD_MUTE 1
#endif

/* Around a string read: the alarm on (1) or off (0). From the first string read to the reader's
 * end fd 2 goes to /dev/null: libhdf5 reading a damaged string heap can damage the process's own
 * heap, and glibc then aborts at some later free() with a line of its own ("free(): invalid
 * pointer"); the handler, and seer_die, write to the real stderr (guard_stderr). Not under
 * AddressSanitizer, which reports such a fault itself (GUARD_MUTE). */
static void guard_strings(int on) {
    if (GUARD_MUTE && on && guard_stderr < 0 && guard_depth > 0) { // guard_end unmutes
        int null = open("/dev/null", O_WRONLY);
        guard_stderr = null >= 0 ? dup(STDERR_FILENO) : -1;
        if (guard_stderr >= 0) dup2(null, STDERR_FILENO), seer_stderr_fd = guard_stderr;
        if (null >= 0) close(null);
    }
    alarm(on ? guard_secs : 0);
}

static void guard_unmute(void) {
    if (guard_stderr < 0) return;
    dup2(guard_stderr, STDERR_FILENO);
    close(guard_stderr);
    guard_stderr = -1, seer_stderr_fd = STDERR_FILENO;
}

static int guard_end(int rc) {
    if (--guard_depth == 0) {
        guard_unmute();
        for (int k = 0; k < GUARD_NSIG; k++) sigaction(guard_sigs[k], &guard_old[k], NULL);
    }
    return rc;
}

/* Shape of a dataset: rank and dims (up to 2). Returns -1 with err when missing. */
static int h5_shape(hid_t f, const char *path, const char *dset, int *rank, hsize_t dims[2],
                    seer_err *err) {
    guard_dset = dset;
    if (H5Lexists(f, dset, H5P_DEFAULT) <= 0)
        return seer_fail(err, "%s: %s: missing dataset (is this a PerfGraph file? see "
                              "datasets/FORMAT.md)", path, dset);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    if (d < 0) return seer_fail(err, "%s: %s: cannot open dataset", path, dset);
    hid_t s = H5Dget_space(d);
    int r = s >= 0 ? H5Sget_simple_extent_ndims(s) : -1;
    int ok = r >= 1 && r <= 2;
    dims[0] = dims[1] = 1;
    if (ok) H5Sget_simple_extent_dims(s, dims, NULL);
    if (s >= 0) H5Sclose(s);
    // the declared size against what the file stores, before anything is sized from it (a few
    // forged header bytes must not cost gigabytes). A chunked dataset must hold every chunk its
    // extent needs (seerconvert writes them all); compressed data stores far less than it
    // declares, so only a gap no filter explains is refused: deflate packs at most about 1032
    // to 1 and LZ4 255 to 1, and a dataset whose values repeat gets close (NAS-Bench-201's edge
    // features: 119 to 1), so filtered data may declare 1100 times what it stores, unfiltered 64
    hid_t t = H5Dget_type(d);
    double esz = t >= 0 ? (double)H5Tget_size(t) : 1, stored = (double)H5Dget_storage_size(d);
    if (t >= 0) H5Tclose(t);
    double declared = (double)dims[0] * (double)dims[1] * esz, ratio = 64;
    hsize_t have = 0, need = 0;
    hid_t pl = H5Dget_create_plist(d);
    if (ok && pl >= 0 && H5Pget_layout(pl) == H5D_CHUNKED) {
        hsize_t cd[2] = {1, 1};
        if (H5Pget_chunk(pl, r, cd) == r && cd[0] && (r < 2 || cd[1])) {
            need = (dims[0] + cd[0] - 1) / cd[0] * (r == 2 ? (dims[1] + cd[1] - 1) / cd[1] : 1);
            if (H5Dget_num_chunks(d, H5S_ALL, &have) < 0) have = need; // not countable: size rule only
        }
        if (H5Pget_nfilters(pl) > 0) ratio = 1100;
    }
    if (pl >= 0) H5Pclose(pl);
    H5Dclose(d);
    if (!ok) return seer_fail(err, "%s: %s: expected a 1-D or 2-D dataset, found rank %d", path,
                              dset, r);
    if (have < need)
        return seer_fail(err, "%s: %s: declares %.0f x %.0f values in %.0f chunks but the file "
                              "stores %.0f of them: truncated or forged (rebuild or copy the file "
                              "again)", path, dset, (double)dims[0], (double)dims[1], (double)need,
                         (double)have);
    if (declared > ratio * stored + (double)(64 << 20))
        return seer_fail(err, "%s: %s: declares %.0f x %.0f values (%.0f MB) but the file stores "
                              "%.1f MB of them: truncated or forged", path, dset, (double)dims[0],
                         (double)dims[1], declared / 1e6, stored / 1e6);
    *rank = r;
    return 0;
}

/* A dataset written with a filter this HDF5 cannot load (LZ4 without its plugin): one clear line. */
static int h5_filters_missing(hid_t d, const char *path, const char *dset, seer_err *err) {
    hid_t pl = H5Dget_create_plist(d);
    int n = pl >= 0 ? H5Pget_nfilters(pl) : 0, rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        unsigned flags, cd[8];
        size_t ncd = 8;
        char name[64] = "";
        H5Z_filter_t id = H5Pget_filter2(pl, (unsigned)i, &flags, &ncd, cd, sizeof name, name, NULL);
        if (id >= 0 && H5Zfilter_avail(id) <= 0)
            rc = seer_fail(err, "%s: %s is compressed with HDF5 filter %d (%s), which is not "
                                "installed: %s", path, dset, (int)id, *name ? name : "unnamed",
                           id == PG_LZ4_FILTER ? "install Debian's hdf5-filter-plugin"
                                               : "install that filter's HDF5 plugin");
    }
    if (pl >= 0) H5Pclose(pl);
    return rc;
}

/* Big-endian integers of the LZ4 filter's framing. */
static uint64_t be_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}
static uint32_t be_u32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Fletcher-32 as HDF5's checksum filter computes it: s1 the sum of the bytes read as big-endian
 * 16-bit words (an odd last byte as the high half of one), s2 the sum of s1 after each word, both
 * kept modulo 65535 by folding carries back in (x -> (x & 0xffff) + (x >> 16)), so each ends as 0
 * when its plain sum is 0 and as ((sum - 1) mod 65535) + 1 otherwise; s2 in the high half. The
 * filter stores it in the chunk's last 4 bytes, little-endian (test_perfgraph reads HDF5's).
 * Computed on plain sums here: blocks of 128 words, whose sum and weighted sum fit 32 bits (a loop
 * of fixed length that -O2 vectorises: 10 GB/s against 1.9 for the word-by-word loop), carried in
 * 64 bits (under 2^51 for 512 KiB chunks), folded at the end. */
#define F32_BLOCK 128
static uint32_t f32_fold(uint64_t x) { return x ? (uint32_t)((x - 1) % 65535 + 1) : 0; }

static uint32_t fletcher32(const unsigned char *p, size_t n) {
    uint64_t a = 0, b = 0; // a: the sum of the words so far; b: the sum of a after each word
    size_t words = n / 2, w0 = 0;
    for (; w0 + F32_BLOCK <= words; w0 += F32_BLOCK) {
        const unsigned char *q = p + 2 * w0;
        uint32_t bs = 0, bw = 0; // the block's sum, and its words weighted 128, 127, ..., 1
        for (uint32_t i = 0; i < F32_BLOCK; i++) {
            uint32_t w = (uint32_t)q[2 * i] << 8 | q[2 * i + 1];
            bs += w, bw += (F32_BLOCK - i) * w;
        }
        b += (uint64_t)F32_BLOCK * a + bw, a += bs;
    }
    for (; w0 < words; w0++) a += (uint32_t)p[2 * w0] << 8 | p[2 * w0 + 1], b += a;
    if (n % 2) a += (uint64_t)p[n - 1] << 8, b += a;
    return f32_fold(b) << 16 | f32_fold(a);
}

/* 0 when a stored chunk's last 4 bytes hold the Fletcher-32 of the rest (little-endian). */
static int fletcher32_check(const unsigned char *c, size_t n) {
    if (n < 4) return -1;
    uint32_t stored = (uint32_t)c[n - 4] | (uint32_t)c[n - 3] << 8 | (uint32_t)c[n - 2] << 16 |
                      (uint32_t)c[n - 1] << 24;
    return fletcher32(c, n - 4) == stored ? 0 : -1;
}

/* One chunk as HDF5's LZ4 filter (32004) frames it: the original size (8 bytes), the block size
 * (4), then per block its compressed size (4) and bytes, stored raw where LZ4 saved nothing.
 * Decoded into out (exactly want bytes); 0 on success. */
static int lz4_chunk_decode(const unsigned char *in, size_t n, unsigned char *out, size_t want) {
    if (n < 12 || be_u64(in) != want) return -1;
    size_t block = be_u32(in + 8), pos = 12, done = 0;
    if (block == 0) return want ? -1 : 0;
    while (done < want) {
        size_t b = want - done < block ? want - done : block;
        if (pos + 4 > n) return -1;
        size_t c = be_u32(in + pos);
        pos += 4;
        if (c > n - pos) return -1;
        if (c == b) memcpy(out + done, in + pos, b);
        else if (LZ4_decompress_safe((const char *)in + pos, (char *)out + done, (int)c, (int)b) != (int)b)
            return -1;
        pos += c, done += b;
    }
    return 0;
}

/* Rows [r0, r0 + rows) of an LZ4-compressed dataset read as raw chunks (H5Dread_chunk) and decoded
 * in parallel straight into buf: HDF5 decodes one chunk at a time through its plugin into a cache
 * and copies out, 2.3x slower than reading the file uncompressed; this is what makes LZ4 files
 * read as fast as plain ones (benchmarks/bench_h5). The pipeline is LZ4 alone (files written
 * before checksums) or LZ4 then Fletcher-32, whose checksum is verified here before decoding.
 * 1 when the dataset is not one this handles (not chunked by whole rows, another filter, a type
 * conversion): the caller uses H5Dread; -1 a chunk that does not decode, -2 one that fails its
 * checksum. */
static int h5_read_lz4_rows(hid_t d, hid_t mem_type, int64_t w, int64_t r0, int64_t rows,
                            void *buf) {
    hid_t pl = H5Dget_create_plist(d), ft = H5Dget_type(d);
    hsize_t chunk[2] = {0, 0};
    unsigned flags, cd[4];
    size_t ncd = 4;
    int nf = pl >= 0 ? H5Pget_nfilters(pl) : 0;
    int ok = pl >= 0 && ft >= 0 && H5Pget_layout(pl) == H5D_CHUNKED && (nf == 1 || nf == 2) &&
             H5Pget_filter2(pl, 0, &flags, &ncd, cd, 0, NULL, NULL) == PG_LZ4_FILTER &&
             H5Tequal(ft, mem_type) > 0;
    ncd = 4;
    if (ok && nf == 2) ok = H5Pget_filter2(pl, 1, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_FLETCHER32;
    int sum = nf == 2; // chunks end with a checksum
    int rank = ok ? H5Pget_chunk(pl, 2, chunk) : 0;
    size_t elem = ft >= 0 ? H5Tget_size(ft) : 0;
    if (pl >= 0) H5Pclose(pl);
    if (ft >= 0) H5Tclose(ft);
    if (!ok || rank < 1 || chunk[0] < 1 || (rank == 2 && (int64_t)chunk[1] != w)) return 1;
    int64_t crow = (int64_t)chunk[0], c0 = r0 / crow, c1 = (r0 + rows - 1) / crow, nc = c1 - c0 + 1;
    size_t row_bytes = (size_t)w * elem, chunk_bytes = (size_t)crow * row_bytes;
    unsigned char **comp = seer_calloc((size_t)nc, sizeof *comp);
    size_t *len = seer_calloc((size_t)nc, sizeof *len);
    uint32_t *mask = seer_calloc((size_t)nc, sizeof *mask);
    int rc = 0;
    for (int64_t k = 0; k < nc && !rc; k++) { // HDF5 itself is not thread-safe: read serially
        hsize_t off[2] = {(hsize_t)((c0 + k) * crow), 0}, nb = 0;
        if (H5Dget_chunk_storage_size(d, off, &nb) < 0 || nb == 0) rc = -1;
        else {
            comp[k] = seer_malloc((size_t)nb), len[k] = (size_t)nb;
            if (H5Dread_chunk(d, H5P_DEFAULT, off, &mask[k], comp[k]) < 0) rc = -1;
        }
    }
    int bad = 0, damaged = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : bad, damaged) if (!rc && nc > 1)
    for (int64_t k = 0; k < nc; k++) {
        if (rc) continue;
        int64_t first = (c0 + k) * crow, lo = first > r0 ? first : r0;
        int64_t hi = first + crow < r0 + rows ? first + crow : r0 + rows;
        int whole = lo == first && hi == first + crow; // the chunk lies inside [r0, r0 + rows)
        unsigned char *dst = (unsigned char *)buf + (size_t)(lo - r0) * row_bytes;
        unsigned char *tmp = whole ? dst : malloc(chunk_bytes);
        if (!tmp) {
            bad |= 1;
            continue;
        }
        size_t n = len[k];
        if (sum && !(mask[k] & 2)) { // the checksum filter ran on this chunk: verify, then drop it
            if (fletcher32_check(comp[k], n)) damaged |= 1;
            n = n >= 4 ? n - 4 : 0;
        }
        if (damaged) {
            // nothing more to decode: the read fails
        } else if (mask[k] & 1) { // the LZ4 filter was skipped for this chunk: stored raw
            if (n != chunk_bytes) bad |= 1;
            else memcpy(tmp, comp[k], chunk_bytes);
        } else if (lz4_chunk_decode(comp[k], n, tmp, chunk_bytes)) {
            bad |= 1;
        }
        if (!whole) {
            memcpy(dst, tmp + (size_t)(lo - first) * row_bytes, (size_t)(hi - lo) * row_bytes);
            free(tmp);
        }
    }
    for (int64_t k = 0; k < nc; k++) free(comp[k]);
    free(comp), free(len), free(mask);
    return damaged ? -2 : rc || bad ? -1 : 0;
}

/* 1 when the dataset's chunks carry Fletcher-32 checksums. */
static int h5_has_checksum(hid_t d) {
    hid_t pl = H5Dget_create_plist(d);
    unsigned flags, cd[4];
    size_t ncd = 4;
    int has = pl >= 0 &&
              H5Pget_filter_by_id2(pl, H5Z_FILTER_FLETCHER32, &flags, &ncd, cd, 0, NULL, NULL) >= 0;
    if (pl >= 0) H5Pclose(pl);
    return has;
}

int pg_checksummed(const char *path) {
    h5_quiet();
    if (H5Fis_hdf5(path) <= 0) return -1;
    guard_begin(path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return guard_end(-1);
    hid_t d = H5Lexists(f, "/node/x", H5P_DEFAULT) > 0 ? H5Dopen2(f, "/node/x", H5P_DEFAULT) : -1;
    int rc = d >= 0 ? h5_has_checksum(d) : -1;
    if (d >= 0) H5Dclose(d);
    H5Fclose(f);
    return guard_end(rc);
}

/* Reads rows [r0, r0 + rows) of a numeric dataset of total_rows x cols (cols < 0: 1-D) with one
 * hyperslab, converted to mem_type, into a new buffer; counts the read in st (may be NULL). */
static void *h5_read_rows(hid_t f, const char *path, const char *dset, hid_t mem_type, size_t elem,
                          int64_t total_rows, int64_t cols, int64_t r0, int64_t rows, int which,
                          pg_read_stats *st, seer_err *err) {
    int rank;
    hsize_t dims[2];
    if (h5_shape(f, path, dset, &rank, dims, err)) return NULL;
    int64_t got_cols = rank == 2 ? (int64_t)dims[1] : 1;
    if ((int64_t)dims[0] != total_rows || (cols >= 0 && got_cols != cols) || (cols < 0 && rank != 1)) {
        seer_fail(err, "%s: %s: shape (%lld, %lld), expected (%lld, %lld)", path, dset,
                  (long long)dims[0], (long long)got_cols, (long long)total_rows,
                  (long long)(cols < 0 ? 1 : cols));
        return NULL;
    }
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    hid_t ftype = H5Dget_type(d);
    H5T_class_t cls = H5Tget_class(ftype);
    H5Tclose(ftype);
    H5T_class_t want = H5Tget_class(mem_type);
    if (cls != want) {
        H5Dclose(d);
        seer_fail(err, "%s: %s: wrong element type (expected %s)", path, dset,
                  want == H5T_FLOAT ? "float32" : "an integer type");
        return NULL;
    }
    int64_t w = cols < 0 ? 1 : cols;
    void *buf = seer_malloc((size_t)(rows * w) * elem);
    herr_t status = 0;
    if (rows * w > 0) {
        hsize_t start[2] = {(hsize_t)r0, 0}, count[2] = {(hsize_t)rows, (hsize_t)w};
        hid_t fs = H5Dget_space(d), ms = H5Screate_simple(rank, count, NULL);
        // LZ4 chunks decoded here (no plugin needed); anything else through HDF5's filters
        int fast = h5_read_lz4_rows(d, mem_type, w, r0, rows, buf);
        if (fast == 1 && h5_filters_missing(d, path, dset, err)) {
            H5Sclose(ms), H5Sclose(fs), H5Dclose(d), free(buf);
            return NULL;
        }
        status = fast < 0 ? -1 : fast == 0 ? 0 : H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
        if (fast == 1 && status >= 0) status = H5Dread(d, mem_type, ms, fs, H5P_DEFAULT, buf);
        H5Sclose(ms), H5Sclose(fs);
        if (st) {
            if (st->rows[which] == 0) st->first[which] = r0;
            st->rows[which] += rows, st->reads++;
        }
    }
    int summed = status < 0 && h5_has_checksum(d);
    H5Dclose(d);
    if (status < 0) {
        free(buf);
        if (summed)
            seer_fail(err, "%s: %s: the file is damaged: a stored chunk fails its checksum or does "
                           "not decompress; rebuild it (scripts/setup.sh, seerconvert) or copy it again",
                      path, dset);
        else
            seer_fail(err, "%s: %s: read failed (file truncated or damaged?)", path, dset);
        return NULL;
    }
    return buf;
}

/* Reads a whole numeric dataset of the expected shape. */
static void *h5_read_num(hid_t f, const char *path, const char *dset, hid_t mem_type, size_t elem,
                         int64_t rows, int64_t cols, seer_err *err) {
    return h5_read_rows(f, path, dset, mem_type, elem, rows, cols, 0, rows, 0, NULL, err);
}

/* Reads a 1-D string dataset (variable or fixed length). */
/* The Fletcher-32 of n strings joined, each with its terminating NUL: what checksummed files
 * store in a string dataset's "fletcher32" attribute (HDF5's filter cannot reach the variable-length
 * strings themselves, which live in the file's global heap). */
static uint32_t strings_sum(char *const *s, int64_t n) {
    size_t len = 0;
    for (int64_t i = 0; i < n; i++) len += strlen(s[i]) + 1;
    unsigned char *buf = seer_malloc(len + 1), *p = buf;
    for (int64_t i = 0; i < n; i++) {
        size_t k = strlen(s[i]) + 1;
        memcpy(p, s[i], k), p += k;
    }
    uint32_t sum = fletcher32(buf, len);
    free(buf);
    return sum;
}

static char **h5_read_strings(hid_t f, const char *path, const char *dset, int64_t *count,
                              seer_err *err) {
    int rank;
    hsize_t dims[2];
    if (h5_shape(f, path, dset, &rank, dims, err)) return NULL;
    if (rank != 1) {
        seer_fail(err, "%s: %s: expected a 1-D string dataset", path, dset);
        return NULL;
    }
    int64_t n = (int64_t)dims[0];
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    hid_t ftype = H5Dget_type(d);
    char **out = seer_calloc((size_t)n + 1, sizeof *out);
    int bad = H5Tget_class(ftype) != H5T_STRING;
    if (!bad && H5Tis_variable_str(ftype) > 0) {
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        H5Tset_cset(mt, H5Tget_cset(ftype));
        char **tmp = seer_calloc((size_t)n + 1, sizeof *tmp);
        guard_strings(1);
        bad = n && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp) < 0;
        guard_strings(0);
        if (!bad) {
            hid_t sp = H5Dget_space(d);
            for (int64_t i = 0; i < n; i++) out[i] = seer_strdup(tmp[i] ? tmp[i] : "");
            if (n) H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, tmp);
            H5Sclose(sp);
        }
        free(tmp);
        H5Tclose(mt);
    } else if (!bad) {
        size_t w = H5Tget_size(ftype);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, w);
        H5Tset_cset(mt, H5Tget_cset(ftype));
        char *tmp = seer_calloc((size_t)n * w + 1, 1);
        bad = n && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp) < 0;
        for (int64_t i = 0; !bad && i < n; i++) {
            out[i] = seer_calloc(w + 1, 1);
            memcpy(out[i], tmp + (size_t)i * w, w);
        }
        free(tmp);
        H5Tclose(mt);
    }
    H5Tclose(ftype);
    // checksummed files: the strings as written (a name or a feature's can change silently in a
    // damaged heap)
    unsigned stored = 0;
    int summed = !bad && H5Aexists(d, "fletcher32") > 0, sum_ok = 1;
    if (summed) {
        hid_t a = H5Aopen(d, "fletcher32", H5P_DEFAULT);
        sum_ok = a >= 0 && H5Aread(a, H5T_NATIVE_UINT, &stored) >= 0 && strings_sum(out, n) == stored;
        if (a >= 0) H5Aclose(a);
    }
    H5Dclose(d);
    if (bad || !sum_ok) {
        for (int64_t i = 0; i < n; i++) free(out[i]);
        free(out);
        if (!sum_ok)
            seer_fail(err, "%s: %s: the file is damaged: its strings fail their checksum; rebuild it "
                           "(scripts/setup.sh, seerconvert) or copy it again", path, dset);
        else
            seer_fail(err, "%s: %s: cannot read as strings", path, dset);
        return NULL;
    }
    *count = n;
    return out;
}

static char *h5_read_attr_str(hid_t f, const char *name) {
    guard_dset = "/ (attributes)";
    if (H5Aexists(f, name) <= 0) return NULL;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    char *out = NULL;
    if (H5Tget_class(t) == H5T_STRING) {
        if (H5Tis_variable_str(t) > 0) {
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(t));
            char *s = NULL;
            guard_strings(1);
            herr_t st = H5Aread(a, mt, &s);
            guard_strings(0);
            if (st >= 0 && s) {
                out = seer_strdup(s);
                H5free_memory(s);
            }
            H5Tclose(mt);
        } else {
            size_t w = H5Tget_size(t);
            out = seer_calloc(w + 1, 1);
            if (H5Aread(a, t, out) < 0) {
                free(out);
                out = NULL;
            }
        }
    }
    H5Tclose(t);
    H5Aclose(a);
    return out;
}

static int h5_read_attr_i64(hid_t f, const char *name, int64_t *v) {
    guard_dset = "/ (attributes)";
    if (H5Aexists(f, name) <= 0) return -1;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    int ok = H5Tget_class(t) == H5T_INTEGER && H5Aread(a, H5T_NATIVE_INT64, v) >= 0;
    H5Tclose(t);
    H5Aclose(a);
    return ok ? 0 : -1;
}

/* A per-graph string dataset (/graph/name, /graph/family) of exactly G entries. */
static char **graph_strings(hid_t f, const char *path, const char *dset, int64_t G, seer_err *err) {
    int64_t n = 0;
    char **s = h5_read_strings(f, path, dset, &n, err);
    if (s && n != G) {
        for (int64_t g = 0; g < n; g++) free(s[g]);
        free(s), s = NULL;
        seer_fail(err, "%s: %s: %lld entries for %lld graphs", path, dset, (long long)n, (long long)G);
    }
    return s;
}

static void free_strings(char **s) {
    if (!s) return;
    for (char **p = s; *p; p++) free(*p);
    free(s);
}

void pg_free(pg_dataset *ds) {
    for (int k = 0; k < 2; k++) {
        char **s = k ? ds->family : ds->name;
        if (s)
            for (int64_t i = 0; i < ds->G; i++) free(s[i]);
        free(s);
    }
    free(ds->node_ptr);
    free(ds->edge_ptr);
    free(ds->group);
    free(ds->node_x);
    free(ds->node_op);
    free(ds->edge_index);
    free(ds->edge_x);
    free(ds->global_x);
    free(ds->label_y);
    free_strings(ds->node_features);
    free_strings(ds->edge_features);
    free_strings(ds->global_features);
    free_strings(ds->op_types);
    free_strings(ds->labels);
    free(ds->source);
    free(ds->device);
    memset(ds, 0, sizeof *ds);
}

int pg_find_name(char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

static const char *gname(const pg_dataset *ds, int64_t g) { // g local
    return ds->name && ds->name[g] ? ds->name[g] : "?";
}

static int check_finite(const float *x, int64_t rows, int w, const int64_t *ptr, int64_t G,
                        const pg_dataset *ds, const char *path, const char *dset,
                        char *const *cols, seer_err *err) {
    int64_t g = 0;
    for (int64_t r = 0; r < rows; r++) {
        for (int c = 0; c < w; c++) {
            if (isfinite(x[r * w + c])) continue;
            if (ptr)
                while (g < G && ptr[g + 1] <= r) g++;
            else
                g = r;
            return seer_fail(err, "%s: %s: graph %lld (%s), %s %lld, column %d (%s): non-finite "
                             "value %g; features must be finite (fix the converter's input)",
                             path, dset, (long long)(ds->g0 + g), gname(ds, g),
                             ptr ? (ptr == ds->node_ptr ? "node" : "edge") : "row",
                             (long long)(ptr ? r - ptr[g] : 0), c,
                             cols ? cols[c] : "?", (double)x[r * w + c]);
        }
    }
    return 0;
}

static int check_ptr(const int64_t *ptr, int64_t G, int64_t total, const char *path,
                     const char *dset, seer_err *err) {
    if (ptr[0] != 0) return seer_fail(err, "%s: %s: first offset is %lld, must be 0", path, dset,
                                      (long long)ptr[0]);
    for (int64_t g = 0; g < G; g++)
        if (ptr[g + 1] < ptr[g])
            return seer_fail(err, "%s: %s: offsets not monotone at graph %lld (%lld then %lld)",
                             path, dset, (long long)g, (long long)ptr[g], (long long)ptr[g + 1]);
    if (ptr[G] != total)
        return seer_fail(err, "%s: %s: last offset %lld does not match the %lld rows stored", path,
                         dset, (long long)ptr[G], (long long)total);
    return 0;
}

int pg_validate(const pg_dataset *ds, const char *path, seer_err *err) {
    if (check_ptr(ds->node_ptr, ds->G, ds->N, path, "/graph/node_ptr", err)) return -1;
    if (check_ptr(ds->edge_ptr, ds->G, ds->E, path, "/graph/edge_ptr", err)) return -1;
    for (int64_t g = 0; g < ds->G; g++) {
        int64_t nn = ds->node_ptr[g + 1] - ds->node_ptr[g];
        for (int64_t e = ds->edge_ptr[g]; e < ds->edge_ptr[g + 1]; e++) {
            int32_t s = ds->edge_index[2 * e], d = ds->edge_index[2 * e + 1];
            if (s < 0 || s >= nn || d < 0 || d >= nn)
                return seer_fail(err, "%s: /edge/index: graph %lld (%s), edge %lld: (%d, %d) is "
                                 "outside the graph's %lld nodes (ids are local to each graph)",
                                 path, (long long)(ds->g0 + g), gname(ds, g),
                                 (long long)(e - ds->edge_ptr[g]), s, d, (long long)nn);
        }
    }
    for (int64_t n = 0, g = 0; n < ds->N; n++) {
        if (ds->node_op[n] >= 0 && ds->node_op[n] < ds->n_ops) continue;
        while (g < ds->G && ds->node_ptr[g + 1] <= n) g++;
        return seer_fail(err, "%s: /node/op: graph %lld (%s), node %lld: op id %d outside "
                         "/schema/op_types (%d entries)", path, (long long)(ds->g0 + g), gname(ds, g),
                         (long long)(n - ds->node_ptr[g]), ds->node_op[n], ds->n_ops);
    }
    if (check_finite(ds->node_x, ds->N, ds->Fn, ds->node_ptr, ds->G, ds, path, "/node/x",
                     ds->node_features, err) ||
        check_finite(ds->edge_x, ds->E, ds->Fe, ds->edge_ptr, ds->G, ds, path, "/edge/x",
                     ds->edge_features, err) ||
        check_finite(ds->global_x, ds->G, ds->Fg, NULL, ds->G, ds, path, "/global/x",
                     ds->global_features, err))
        return -1;
    for (int64_t g = 0; g < ds->G; g++)
        for (int m = 0; m < ds->M; m++) {
            float y = ds->label_y[g * ds->M + m];
            if (isnan(y)) continue;
            if (!isfinite(y) || y <= 0)
                return seer_fail(err, "%s: /label/y: graph %lld (%s), label %s: value %g; labels "
                                 "must be positive and finite (write NaN for 'not measured')",
                                 path, (long long)(ds->g0 + g), gname(ds, g), ds->labels[m], (double)y);
        }
    return 0;
}

/* Opens a PerfGraph file after checking that it is HDF5 with the format and version attributes. */
static int pg_open(const char *path, hid_t *out, seer_err *err) {
    h5_quiet();
    FILE *probe = fopen(path, "rb");
    if (!probe) return seer_fail(err, "%s: cannot open dataset file (check [data] path; build "
                                      "the default one with scripts/datasets/nb201_build.py)", path);
    fclose(probe);
    if (H5Fis_hdf5(path) <= 0)
        return seer_fail(err, "%s: not an HDF5 file (or truncated/damaged)", path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return seer_fail(err, "%s: cannot open as HDF5 (truncated or damaged?)", path);
    int64_t version = 0;
    char *fmt = h5_read_attr_str(f, "format");
    int rc = 0;
    if (!fmt || strcmp(fmt, "seer-perfgraph") != 0)
        rc = seer_fail(err, "%s: /: attribute format is %s%s%s, expected \"seer-perfgraph\"", path,
                       fmt ? "\"" : "", fmt ? fmt : "missing", fmt ? "\"" : "");
    else if (h5_read_attr_i64(f, "version", &version) || version != PG_VERSION)
        rc = seer_fail(err, "%s: /: format version %lld is not supported (this build reads "
                            "version %d)", path, (long long)version, PG_VERSION);
    free(fmt);
    if (rc) H5Fclose(f);
    else *out = f;
    return rc;
}

void pg_index_free(pg_index *ix) {
    for (int k = 0; k < 2; k++) {
        char **s = k ? ix->family : ix->name;
        if (s)
            for (int64_t g = 0; g < ix->G_file; g++) free(s[g]);
        free(s);
    }
    free(ix->node_ptr), free(ix->edge_ptr), free(ix->group);
    for (int k = 0; k < ix->n_parts; k++) pg_index_free(&ix->parts[k]), free(ix->part_paths[k]);
    free(ix->parts), free(ix->part_paths);
    memset(ix, 0, sizeof *ix);
}

static int read_index(const char *path, pg_index *ix, seer_err *err) {
    memset(ix, 0, sizeof *ix);
    hid_t f;
    if (pg_open(path, &f, err)) return -1;
    int rc = -1, rank;
    hsize_t dims[2];
    if (h5_shape(f, path, "/graph/node_ptr", &rank, dims, err)) goto done;
    if (rank != 1 || dims[0] < 1) {
        seer_fail(err, "%s: /graph/node_ptr: expected a 1-D dataset of G+1 offsets", path);
        goto done;
    }
    ix->G = ix->G_file = (int64_t)dims[0] - 1;
    if (!(ix->node_ptr = h5_read_num(f, path, "/graph/node_ptr", H5T_NATIVE_INT64, 8, ix->G + 1,
                                     -1, err)) ||
        !(ix->edge_ptr = h5_read_num(f, path, "/graph/edge_ptr", H5T_NATIVE_INT64, 8, ix->G + 1,
                                     -1, err)) ||
        !(ix->group = h5_read_num(f, path, "/graph/group", H5T_NATIVE_INT64, 8, ix->G, -1, err)))
        goto done;
    if (!(ix->name = graph_strings(f, path, "/graph/name", ix->G, err)) ||
        (H5Lexists(f, "/graph/family", H5P_DEFAULT) > 0 && // optional: each graph's family
         !(ix->family = graph_strings(f, path, "/graph/family", ix->G, err))))
        goto done;
    if (h5_shape(f, path, "/node/x", &rank, dims, err)) goto done;
    ix->N = (int64_t)dims[0];
    if (h5_shape(f, path, "/edge/index", &rank, dims, err)) goto done;
    ix->E = (int64_t)dims[0];
    if (check_ptr(ix->node_ptr, ix->G, ix->N, path, "/graph/node_ptr", err) ||
        check_ptr(ix->edge_ptr, ix->G, ix->E, path, "/graph/edge_ptr", err))
        goto done;
    rc = 0;
done:
    H5Fclose(f);
    if (rc) pg_index_free(ix);
    return rc;
}

int pg_read_index(const char *path, pg_index *ix, seer_err *err) {
    guard_begin(path);
    return guard_end(read_index(path, ix, err));
}

void pg_index_limit(pg_index *ix, int64_t n) {
    if (n > 0 && n < ix->G) ix->G = n;
}

void pg_shard(const pg_index *ix, int rank, int ranks, int64_t *lo, int64_t *hi) {
    int64_t N = ix->node_ptr[ix->G];
    int64_t b[2];
    for (int k = 0; k < 2; k++) {
        int r = rank + k;
        if (r >= ranks) { b[k] = ix->G; continue; }
        // the first graph boundary at or after r/ranks of the nodes
        int64_t target = (int64_t)((double)N * r / ranks + 0.5), a = 0, z = ix->G;
        while (a < z) {
            int64_t mid = a + (z - a) / 2;
            if (ix->node_ptr[mid] < target) a = mid + 1;
            else z = mid;
        }
        b[k] = a;
    }
    *lo = b[0], *hi = b[1];
}

static int read_range(const char *path, const pg_index *ix, int64_t lo, int64_t hi, pg_dataset *ds,
                      pg_read_stats *st, seer_err *err) {
    memset(ds, 0, sizeof *ds);
    if (st) memset(st, 0, sizeof *st);
    SEER_ASSERT(lo >= 0 && lo <= hi && hi <= ix->G);
    hid_t f;
    if (pg_open(path, &f, err)) return -1;
    int rc = -1;
    int64_t n = 0;
    ds->source = h5_read_attr_str(f, "source");
    ds->device = h5_read_attr_str(f, "device");
    if (!(ds->node_features = h5_read_strings(f, path, "/schema/node_features", &n, err))) goto done;
    ds->Fn = (int)n;
    if (!(ds->edge_features = h5_read_strings(f, path, "/schema/edge_features", &n, err))) goto done;
    ds->Fe = (int)n;
    if (!(ds->global_features = h5_read_strings(f, path, "/schema/global_features", &n, err)))
        goto done;
    ds->Fg = (int)n;
    if (!(ds->op_types = h5_read_strings(f, path, "/schema/op_types", &n, err))) goto done;
    ds->n_ops = (int)n;
    if (!(ds->labels = h5_read_strings(f, path, "/schema/labels", &n, err))) goto done;
    ds->M = (int)n;
    {   // a name twice would make two columns indistinguishable (a label picked by name)
        char *const *lists[5] = {ds->node_features, ds->edge_features, ds->global_features,
                                 ds->op_types, ds->labels};
        static const char *const where[5] = {"node_features", "edge_features", "global_features",
                                             "op_types", "labels"};
        int counts[5] = {ds->Fn, ds->Fe, ds->Fg, ds->n_ops, ds->M};
        for (int k = 0; k < 5; k++)
            for (int i = 0; i < counts[k]; i++)
                for (int j = 0; j < i; j++)
                    if (!strcmp(lists[k][i], lists[k][j])) {
                        seer_fail(err, "%s: /schema/%s: '%s' is listed twice (entries %d and %d); "
                                       "names must be unique", path, where[k], lists[k][i], j, i);
                        goto done;
                    }
    }

    // the index of the slice, rebased to its first node and edge
    int64_t G = hi - lo, n0 = ix->node_ptr[lo], e0 = ix->edge_ptr[lo];
    ds->G = G, ds->g0 = lo;
    ds->N = ix->node_ptr[hi] - n0, ds->E = ix->edge_ptr[hi] - e0;
    ds->node_ptr = seer_malloc(sizeof(int64_t) * (size_t)(G + 1));
    ds->edge_ptr = seer_malloc(sizeof(int64_t) * (size_t)(G + 1));
    ds->group = seer_malloc(sizeof(int64_t) * (size_t)(G ? G : 1));
    ds->name = seer_calloc((size_t)G + 1, sizeof(char *));
    for (int64_t g = 0; g <= G; g++)
        ds->node_ptr[g] = ix->node_ptr[lo + g] - n0, ds->edge_ptr[g] = ix->edge_ptr[lo + g] - e0;
    for (int64_t g = 0; g < G; g++)
        ds->group[g] = ix->group[lo + g], ds->name[g] = seer_strdup(ix->name[lo + g]);
    if (ix->family) {
        ds->family = seer_calloc((size_t)G + 1, sizeof(char *));
        for (int64_t g = 0; g < G; g++) ds->family[g] = seer_strdup(ix->family[lo + g]);
    }
    int64_t G_all = ix->G_file;
    if (!(ds->node_x = h5_read_rows(f, path, "/node/x", H5T_NATIVE_FLOAT, 4, ix->N, ds->Fn, n0,
                                    ds->N, PG_RD_NODE_X, st, err)) ||
        !(ds->node_op = h5_read_rows(f, path, "/node/op", H5T_NATIVE_INT32, 4, ix->N, -1, n0,
                                     ds->N, PG_RD_NODE_OP, st, err)) ||
        !(ds->edge_index = h5_read_rows(f, path, "/edge/index", H5T_NATIVE_INT32, 4, ix->E, 2, e0,
                                        ds->E, PG_RD_EDGE_INDEX, st, err)) ||
        !(ds->edge_x = h5_read_rows(f, path, "/edge/x", H5T_NATIVE_FLOAT, 4, ix->E, ds->Fe, e0,
                                    ds->E, PG_RD_EDGE_X, st, err)) ||
        !(ds->global_x = h5_read_rows(f, path, "/global/x", H5T_NATIVE_FLOAT, 4, G_all, ds->Fg, lo,
                                      G, PG_RD_GLOBAL_X, st, err)) ||
        !(ds->label_y = h5_read_rows(f, path, "/label/y", H5T_NATIVE_FLOAT, 4, G_all, ds->M, lo, G,
                                     PG_RD_LABEL_Y, st, err)))
        goto done;
    rc = pg_validate(ds, path, err);
done:
    H5Fclose(f);
    if (rc) pg_free(ds);
    return rc;
}

int pg_read_range(const char *path, const pg_index *ix, int64_t lo, int64_t hi, pg_dataset *ds,
                  pg_read_stats *st, seer_err *err) {
    guard_begin(path);
    return guard_end(read_range(path, ix, lo, hi, ds, st, err));
}

int pg_read(const char *path, pg_dataset *ds, seer_err *err) {
    pg_index ix;
    memset(ds, 0, sizeof *ds);
    if (pg_read_index(path, &ix, err)) return -1;
    int rc = pg_read_range(path, &ix, 0, ix.G, ds, NULL, err);
    pg_index_free(&ix);
    return rc;
}

int pg_read_label_names(const char *path, char ***names, int *M, seer_err *err) {
    h5_quiet();
    if (H5Fis_hdf5(path) <= 0) return seer_fail(err, "%s: not an HDF5 file (or missing, truncated)", path);
    guard_begin(path);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return guard_end(seer_fail(err, "%s: cannot open as HDF5", path));
    int64_t n = 0;
    *names = h5_read_strings(f, path, "/schema/labels", &n, err);
    H5Fclose(f);
    *M = (int)n;
    return guard_end(*names ? 0 : -1);
}

/* level > 0: chunks of about PG_CHUNK_BYTES (whole rows), byte shuffle, then deflate at that
 * level; PG_LZ4: the same chunks, LZ4 without the shuffle (it made these arrays larger and slower
 * to read); PG_SUM_ONLY: the same chunks, not compressed. Every chunked array ends its pipeline
 * with HDF5's Fletcher-32 checksum, so a damaged byte of its data is refused on reading instead of
 * read as a wrong value. Readers need nothing different (HDF5 undoes the filters and verifies the
 * checksums, hyperslabs read whole chunks). */
#define PG_SUM_ONLY (-2)
#define PG_CHUNK_BYTES (512 * 1024)
static size_t chunk_bytes = PG_CHUNK_BYTES;
static int write_sums = 1;

int pg_write_checksums(int on) {
    int prev = write_sums;
    write_sums = on;
    return prev;
}

int pg_lz4_available(void) {
    h5_quiet();
    return H5Zfilter_avail(PG_LZ4_FILTER) > 0;
}

size_t pg_chunk_bytes(size_t bytes) {
    size_t prev = chunk_bytes;
    chunk_bytes = bytes ? bytes : PG_CHUNK_BYTES;
    return prev;
}
// The groups above dset, made here with no creation times (intermediate groups HDF5 makes itself
// would carry them): a dataset written twice from the same data is the same bytes.
static void h5_make_parents(hid_t f, const char *dset) {
    char path[256];
    if (strlen(dset) >= sizeof path) return; // HDF5 makes them then, with times
    snprintf(path, sizeof path, "%s", dset);
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_obj_track_times(gcpl, 0);
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = 0;
        if (H5Lexists(f, path, H5P_DEFAULT) <= 0) {
            hid_t g = H5Gcreate2(f, path, H5P_DEFAULT, gcpl, H5P_DEFAULT);
            if (g >= 0) H5Gclose(g);
        }
        *p = '/';
    }
    H5Pclose(gcpl);
}
static int h5_write_num_level(hid_t f, const char *dset, hid_t file_type, hid_t mem_type,
                              const void *buf, int64_t rows, int64_t cols, int level) {
    hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
    int rank = cols > 0 ? 2 : 1;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    H5Pset_obj_track_times(dcpl, 0); // no creation times: the same data, the same bytes
    h5_make_parents(f, dset);
    size_t row_bytes = H5Tget_size(file_type) * (size_t)(cols > 0 ? cols : 1);
    if (level != 0 && rows > 0 && row_bytes > 0) {
        hsize_t chunk[2] = {(hsize_t)(chunk_bytes / row_bytes), (hsize_t)(cols > 0 ? cols : 1)};
        if (chunk[0] < 1) chunk[0] = 1;
        if (chunk[0] > (hsize_t)rows) chunk[0] = (hsize_t)rows;
        H5Pset_chunk(dcpl, rank, chunk);
        if (level == PG_LZ4) {
            H5Pset_filter(dcpl, PG_LZ4_FILTER, H5Z_FLAG_MANDATORY, 0, NULL);
        } else if (level != PG_SUM_ONLY) {
            H5Pset_shuffle(dcpl);
            H5Pset_deflate(dcpl, (unsigned)level);
        }
        if (write_sums) H5Pset_fletcher32(dcpl);
    }
    hid_t s = H5Screate_simple(rank, dims, NULL);
    hid_t d = H5Dcreate2(f, dset, file_type, s, lcpl, dcpl, H5P_DEFAULT);
    int ok = d >= 0 && (rows * (cols > 0 ? cols : 1) == 0 ||
                        H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
    if (d >= 0) H5Dclose(d);
    H5Sclose(s);
    H5Pclose(lcpl), H5Pclose(dcpl);
    return ok ? 0 : -1;
}

static int h5_write_num(hid_t f, const char *dset, hid_t file_type, hid_t mem_type,
                        const void *buf, int64_t rows, int64_t cols) {
    return h5_write_num_level(f, dset, file_type, mem_type, buf, rows, cols, 0);
}

/* sum: with the "fletcher32" attribute (strings_sum) that checksummed files carry. */
static int h5_write_strings(hid_t f, const char *dset, char *const *s, int64_t n, int sum) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    int rc = h5_write_num(f, dset, t, t, s, n, 0);
    H5Tclose(t);
    if (!rc && sum) {
        unsigned v = strings_sum(s, n);
        hid_t d = H5Dopen2(f, dset, H5P_DEFAULT), sp = H5Screate(H5S_SCALAR);
        hid_t a = d >= 0 ? H5Acreate2(d, "fletcher32", H5T_STD_U32LE, sp, H5P_DEFAULT, H5P_DEFAULT) : -1;
        rc = a >= 0 && H5Awrite(a, H5T_NATIVE_UINT, &v) >= 0 ? 0 : -1;
        if (a >= 0) H5Aclose(a);
        if (d >= 0) H5Dclose(d);
        H5Sclose(sp);
    }
    return rc;
}

static int h5_write_attr_str(hid_t f, const char *name, const char *v) {
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    int ok = a >= 0 && H5Awrite(a, t, &v) >= 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(s);
    H5Tclose(t);
    return ok ? 0 : -1;
}

int pg_write(const char *path, const pg_dataset *ds, seer_err *err) {
    return pg_write_level(path, ds, 0, err);
}

int pg_write_level(const char *path, const pg_dataset *ds, int level, seer_err *err) {
    if ((level < 0 || level > 9) && level != PG_LZ4)
        return seer_fail(err, "%s: compression level %d: use 0 (none) to 9, or LZ4", path, level);
    h5_quiet();
    if (level == PG_LZ4 && !pg_lz4_available())
        return seer_fail(err, "%s: the HDF5 LZ4 filter (%d) is not installed: install Debian's "
                              "hdf5-filter-plugin, or write deflate (level 1 to 9)",
                         path, PG_LZ4_FILTER);
    size_t len = strlen(path);
    char *tmp = seer_malloc(len + 8);
    snprintf(tmp, len + 8, "%s.tmp", path);
    // checksummed files: the HDF5 1.8 file format, whose superblock, object headers and indexes
    // carry checksums of their own (readable by HDF5 1.8 and later, h5py included)
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (level && write_sums) H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_obj_track_times(fcpl, 0);
    hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl);
    H5Pclose(fcpl);
    H5Pclose(fapl);
    if (f < 0) {
        free(tmp);
        return seer_fail(err, "%s: cannot create file (does the folder exist?)", path);
    }
    int64_t one = PG_VERSION;
    hid_t s = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(f, "version", H5T_STD_I64LE, s, H5P_DEFAULT, H5P_DEFAULT);
    int bad = a < 0 || H5Awrite(a, H5T_NATIVE_INT64, &one) < 0;
    if (a >= 0) H5Aclose(a);
    H5Sclose(s);
    bad |= h5_write_attr_str(f, "format", "seer-perfgraph");
    bad |= h5_write_attr_str(f, "source", ds->source ? ds->source : "");
    bad |= h5_write_attr_str(f, "device", ds->device ? ds->device : "");
    int sums = level && write_sums;
    int small = sums ? PG_SUM_ONLY : 0; // index arrays: checksummed, not compressed
    bad |= h5_write_num_level(f, "/graph/node_ptr", H5T_STD_I64LE, H5T_NATIVE_INT64, ds->node_ptr,
                              ds->G + 1, 0, small);
    bad |= h5_write_num_level(f, "/graph/edge_ptr", H5T_STD_I64LE, H5T_NATIVE_INT64, ds->edge_ptr,
                              ds->G + 1, 0, small);
    bad |= h5_write_strings(f, "/graph/name", ds->name, ds->G, sums);
    if (ds->family) bad |= h5_write_strings(f, "/graph/family", ds->family, ds->G, sums);
    bad |= h5_write_num_level(f, "/graph/group", H5T_STD_I64LE, H5T_NATIVE_INT64, ds->group, ds->G, 0,
                              small);
    bad |= h5_write_num_level(f, "/node/x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, ds->node_x, ds->N, ds->Fn,
                              level);
    bad |= h5_write_num_level(f, "/node/op", H5T_STD_I32LE, H5T_NATIVE_INT32, ds->node_op, ds->N, 0,
                              level);
    bad |= h5_write_num_level(f, "/edge/index", H5T_STD_I32LE, H5T_NATIVE_INT32, ds->edge_index, ds->E,
                              2, level);
    bad |= h5_write_num_level(f, "/edge/x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, ds->edge_x, ds->E, ds->Fe,
                              level);
    bad |= h5_write_num_level(f, "/global/x", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, ds->global_x, ds->G,
                              ds->Fg, level);
    bad |= h5_write_num_level(f, "/label/y", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, ds->label_y, ds->G, ds->M,
                              level);
    bad |= h5_write_strings(f, "/schema/node_features", ds->node_features, ds->Fn, sums);
    bad |= h5_write_strings(f, "/schema/edge_features", ds->edge_features, ds->Fe, sums);
    bad |= h5_write_strings(f, "/schema/global_features", ds->global_features, ds->Fg, sums);
    bad |= h5_write_strings(f, "/schema/op_types", ds->op_types, ds->n_ops, sums);
    bad |= h5_write_strings(f, "/schema/labels", ds->labels, ds->M, sums);
    bad |= H5Fclose(f) < 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        free(tmp);
        return seer_fail(err, "%s: write failed (disk full or permissions?)", path);
    }
    free(tmp);
    return 0;
}

/* ---- several files as one dataset ---- */

int pg_read_index_paths(const char *paths, pg_index *ix, seer_err *err) {
    char **p = NULL;
    int n = seer_split_list(paths, &p, 64);
    if (n <= 1) {
        int rc = pg_read_index(n ? p[0] : paths, ix, err);
        for (int k = 0; k < n; k++) free(p[k]);
        free(p);
        return rc;
    }
    memset(ix, 0, sizeof *ix);
    ix->n_parts = n, ix->part_paths = p;
    ix->parts = seer_calloc((size_t)n, sizeof(pg_index));
    int64_t G = 0, N = 0, E = 0;
    for (int k = 0; k < n; k++) {
        if (pg_read_index(p[k], &ix->parts[k], err)) {
            pg_index_free(ix);
            return -1;
        }
        G += ix->parts[k].G_file;
    }
    ix->node_ptr = seer_malloc(sizeof(int64_t) * (size_t)(G + 1));
    ix->edge_ptr = seer_malloc(sizeof(int64_t) * (size_t)(G + 1));
    ix->group = seer_malloc(sizeof(int64_t) * (size_t)(G ? G : 1));
    ix->name = seer_calloc((size_t)G + 1, sizeof(char *));
    ix->family = seer_calloc((size_t)G + 1, sizeof(char *));
    int64_t g = 0;
    for (int k = 0; k < n; k++) {
        const pg_index *q = &ix->parts[k];
        char stem[256]; // the file's name without folder and extension: the family of its graphs
        const char *base = strrchr(p[k], '/') ? strrchr(p[k], '/') + 1 : p[k];
        snprintf(stem, sizeof stem, "%s", base);
        if (strrchr(stem, '.')) *strrchr(stem, '.') = 0;
        for (int64_t i = 0; i < q->G_file; i++, g++) {
            ix->node_ptr[g] = N + q->node_ptr[i], ix->edge_ptr[g] = E + q->edge_ptr[i];
            ix->group[g] = q->group[i] + ((int64_t)k << 40);
            ix->name[g] = seer_strdup(q->name[i]);
            ix->family[g] = seer_strdup(q->family ? q->family[i] : stem);
        }
        N += q->node_ptr[q->G_file], E += q->edge_ptr[q->G_file];
    }
    ix->node_ptr[G] = N, ix->edge_ptr[G] = E;
    ix->G = ix->G_file = G, ix->N = N, ix->E = E;
    return 0;
}

static int same_names(char *const *a, char *const *b, int n) {
    for (int i = 0; i < n; i++)
        if (strcmp(a[i], b[i])) return 0;
    return 1;
}

int pg_read_range_paths(const char *paths, const pg_index *ix, int64_t lo, int64_t hi,
                        pg_dataset *ds, pg_read_stats *st, seer_err *err) {
    if (!ix->n_parts) return pg_read_range(paths, ix, lo, hi, ds, st, err);
    memset(ds, 0, sizeof *ds);
    if (st) memset(st, 0, sizeof *st);
    pg_dataset *part = seer_calloc((size_t)ix->n_parts, sizeof(pg_dataset));
    int np = 0, rc = -1;
    int64_t g0 = 0;
    for (int k = 0; k < ix->n_parts; g0 += ix->parts[k].G_file, k++) {
        int64_t a = lo > g0 ? lo : g0, b = hi < g0 + ix->parts[k].G_file ? hi : g0 + ix->parts[k].G_file;
        if (a >= b) continue;
        pg_read_stats ps;
        if (pg_read_range(ix->part_paths[k], &ix->parts[k], a - g0, b - g0, &part[np], &ps, err)) goto done;
        const pg_dataset *x = &part[0], *y = &part[np];
        // operator tables may differ by operators appended later (ids never move): one must be a
        // prefix of the other, and the dataset takes the longer
        int n_ops = x->n_ops < y->n_ops ? x->n_ops : y->n_ops;
        if (x->Fn != y->Fn || x->Fe != y->Fe || x->Fg != y->Fg || x->M != y->M ||
            !same_names(x->node_features, y->node_features, x->Fn) ||
            !same_names(x->edge_features, y->edge_features, x->Fe) ||
            !same_names(x->global_features, y->global_features, x->Fg) ||
            !same_names(x->op_types, y->op_types, n_ops) || !same_names(x->labels, y->labels, x->M)) {
            seer_fail(err, "%s: its schema (features, operator types or labels) differs from %s's: "
                           "the files of one [data] path must share one", ix->part_paths[k],
                      ix->part_paths[0]);
            np++;
            goto done;
        }
        if (st) {
            st->reads += ps.reads;
            for (int r = 0; r < PG_RD_N; r++) st->rows[r] += ps.rows[r];
        }
        np++;
    }
    // one dataset: the schema of the first part (the longest operator table), the rows of all
    pg_dataset *x = &part[0];
    for (int i = 1; i < np; i++)
        if (part[i].n_ops > x->n_ops) {
            char **t = x->op_types;
            int n = x->n_ops;
            x->op_types = part[i].op_types, x->n_ops = part[i].n_ops;
            part[i].op_types = t, part[i].n_ops = n;
        }
    int64_t G = 0, N = 0, E = 0;
    for (int i = 0; i < np; i++) G += part[i].G, N += part[i].N, E += part[i].E;
    *ds = (pg_dataset){.G = G, .N = N, .E = E, .g0 = lo, .Fn = x->Fn, .Fe = x->Fe, .Fg = x->Fg,
                       .M = x->M, .n_ops = x->n_ops, .node_features = x->node_features,
                       .edge_features = x->edge_features, .global_features = x->global_features,
                       .op_types = x->op_types, .labels = x->labels, .source = x->source,
                       .device = x->device};
    x->node_features = x->edge_features = x->global_features = x->op_types = x->labels = NULL;
    x->source = x->device = NULL;
    ds->node_ptr = seer_malloc(sizeof(int64_t) * (size_t)(G + 1));
    ds->edge_ptr = seer_malloc(sizeof(int64_t) * (size_t)(G + 1));
    ds->group = seer_malloc(sizeof(int64_t) * (size_t)(G ? G : 1));
    ds->name = seer_calloc((size_t)G + 1, sizeof(char *));
    ds->family = seer_calloc((size_t)G + 1, sizeof(char *));
    ds->node_x = seer_malloc(sizeof(float) * (size_t)(N * ds->Fn + 1));
    ds->node_op = seer_malloc(sizeof(int32_t) * (size_t)(N + 1));
    ds->edge_index = seer_malloc(sizeof(int32_t) * (size_t)(2 * E + 1));
    ds->edge_x = seer_malloc(sizeof(float) * (size_t)(E * ds->Fe + 1));
    ds->global_x = seer_malloc(sizeof(float) * (size_t)(G * ds->Fg + 1));
    ds->label_y = seer_malloc(sizeof(float) * (size_t)(G * ds->M + 1));
    int64_t g = 0, n = 0, e = 0;
    ds->node_ptr[0] = ds->edge_ptr[0] = 0;
    for (int i = 0; i < np; i++) {
        const pg_dataset *y = &part[i];
        for (int64_t j = 0; j < y->G; j++, g++) {
            ds->node_ptr[g + 1] = n + y->node_ptr[j + 1], ds->edge_ptr[g + 1] = e + y->edge_ptr[j + 1];
            ds->group[g] = ix->group[lo + g];
            ds->name[g] = seer_strdup(y->name[j]);
            ds->family[g] = seer_strdup(ix->family[lo + g]);
        }
        memcpy(ds->node_x + n * ds->Fn, y->node_x, sizeof(float) * (size_t)(y->N * ds->Fn));
        memcpy(ds->node_op + n, y->node_op, sizeof(int32_t) * (size_t)y->N);
        memcpy(ds->edge_index + 2 * e, y->edge_index, sizeof(int32_t) * (size_t)(2 * y->E));
        memcpy(ds->edge_x + e * ds->Fe, y->edge_x, sizeof(float) * (size_t)(y->E * ds->Fe));
        memcpy(ds->global_x + (g - y->G) * ds->Fg, y->global_x, sizeof(float) * (size_t)(y->G * ds->Fg));
        memcpy(ds->label_y + (g - y->G) * ds->M, y->label_y, sizeof(float) * (size_t)(y->G * ds->M));
        n += y->N, e += y->E;
    }
    rc = 0;
done:
    for (int i = 0; i < np; i++) pg_free(&part[i]);
    free(part);
    return rc;
}
