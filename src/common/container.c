/* common: the typed container (see container.h). */
#define _POSIX_C_SOURCE 200809L
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t ctr_dtype_size(int dtype) {
    switch (dtype) {
    case DT_F32: return 4;
    case DT_F16: return 2;
    case DT_I8: return 1;
    case DT_I64: return 8;
    case DT_F64: return 8;
    default: return 0;
    }
}

void ctr_init(seer_container *c, const char magic[8], uint32_t version) {
    memset(c, 0, sizeof *c);
    memcpy(c->magic, magic, 8);
    c->version = version;
}

static void free_kv(ctr_kv *kv) {
    if (kv->type == KV_STRARR && kv->data)
        for (int64_t i = 0; i < kv->n; i++) free(((char **)kv->data)[i]);
    free(kv->data);
    free(kv->key);
}

void ctr_free(seer_container *c) {
    for (int i = 0; i < c->n_kv; i++) free_kv(&c->kv[i]);
    for (int i = 0; i < c->n_t; i++) free(c->t[i].name);
    free(c->kv);
    free(c->t);
    free(c->file);
    memset(c, 0, sizeof *c);
}

static ctr_kv *new_kv(seer_container *c, const char *key, int type) {
    if (c->n_kv == c->cap_kv) {
        c->cap_kv = c->cap_kv ? 2 * c->cap_kv : 32;
        c->kv = seer_realloc(c->kv, sizeof(ctr_kv) * (size_t)c->cap_kv);
    }
    ctr_kv *kv = &c->kv[c->n_kv++];
    memset(kv, 0, sizeof *kv);
    kv->key = seer_strdup(key);
    kv->type = type;
    return kv;
}

void ctr_add_str(seer_container *c, const char *key, const char *s) {
    ctr_kv *kv = new_kv(c, key, KV_STR);
    kv->data = seer_strdup(s);
    kv->n = (int64_t)strlen(s);
}

void ctr_add_i64(seer_container *c, const char *key, int64_t v) { ctr_add_arr(c, key, KV_I64, &v, 1); }
void ctr_add_f64(seer_container *c, const char *key, double v) { ctr_add_arr(c, key, KV_F64, &v, 1); }

void ctr_add_arr(seer_container *c, const char *key, int type, const void *items, int64_t n) {
    ctr_kv *kv = new_kv(c, key, type);
    kv->n = n;
    kv->data = seer_malloc((size_t)(n ? n : 1) * 8);
    if (n) memcpy(kv->data, items, (size_t)n * 8);
}

void ctr_add_strs(seer_container *c, const char *key, char *const *s, int64_t n) {
    ctr_kv *kv = new_kv(c, key, KV_STRARR);
    kv->n = n;
    char **d = seer_calloc((size_t)(n ? n : 1), sizeof(char *));
    for (int64_t i = 0; i < n; i++) d[i] = seer_strdup(s[i]);
    kv->data = d;
}

void ctr_add_tensor(seer_container *c, const char *name, int dtype, int ndim,
                    const int64_t *dims, const void *data) {
    SEER_ASSERT(ndim >= 1 && ndim <= 4 && ctr_dtype_size(dtype) > 0);
    if (c->n_t == c->cap_t) {
        c->cap_t = c->cap_t ? 2 * c->cap_t : 64;
        c->t = seer_realloc(c->t, sizeof(ctr_tensor) * (size_t)c->cap_t);
    }
    ctr_tensor *t = &c->t[c->n_t++];
    memset(t, 0, sizeof *t);
    t->name = seer_strdup(name);
    t->dtype = dtype, t->ndim = ndim;
    uint64_t n = 1;
    for (int i = 0; i < ndim; i++) t->dims[i] = dims[i], n *= (uint64_t)dims[i];
    t->nbytes = n * ctr_dtype_size(dtype);
    t->data = data;
}

/* A growable byte buffer for the header. */
typedef struct {
    uint8_t *p;
    size_t n, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        while (b->n + n > b->cap) b->cap = b->cap ? 2 * b->cap : 4096;
        b->p = seer_realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_u32(bytes *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(bytes *b, uint64_t v) { put(b, &v, 8); }
static void put_str(bytes *b, const char *s, size_t n) {
    put_u64(b, n);
    put(b, s, n);
}

#ifdef SEER_FUZZING
#define FUZZING 1
#else
#define FUZZING 0
#endif

static uint64_t align64(uint64_t x) { return (x + 63) & ~(uint64_t)63; }

/* CRC-32C, reflected polynomial 0x82F63B78, one table lookup per byte. */
uint32_t ctr_crc32c(uint32_t crc, const void *p, size_t n) {
    static uint32_t table[256];
    static int ready; // filling twice from two threads writes the same values
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const uint8_t *b = p;
    crc = ~crc;
    for (size_t i = 0; i < n; i++) crc = table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* The header (magic .. its checksum, padded to 64 bytes); the tensors' data follows it. */
static bytes header(const seer_container *c) {
    bytes h = {0};
    put(&h, c->magic, 8);
    put_u32(&h, c->version);
    put_u32(&h, CTR_CRC);
    put_u64(&h, (uint64_t)c->n_kv);
    put_u64(&h, (uint64_t)c->n_t);
    for (int i = 0; i < c->n_kv; i++) {
        const ctr_kv *kv = &c->kv[i];
        put_str(&h, kv->key, strlen(kv->key));
        put_u32(&h, (uint32_t)kv->type);
        if (kv->type == KV_STR) put_str(&h, kv->data, (size_t)kv->n);
        else if (kv->type == KV_I64 || kv->type == KV_F64) put(&h, kv->data, 8);
        else if (kv->type == KV_STRARR) {
            put_u64(&h, (uint64_t)kv->n);
            for (int64_t j = 0; j < kv->n; j++) {
                const char *s = ((char **)kv->data)[j];
                put_str(&h, s, strlen(s));
            }
        } else {
            put_u64(&h, (uint64_t)kv->n);
            put(&h, kv->data, (size_t)kv->n * 8);
        }
    }
    uint64_t off = 0;
    for (int i = 0; i < c->n_t; i++) {
        const ctr_tensor *t = &c->t[i];
        put_str(&h, t->name, strlen(t->name));
        put_u32(&h, (uint32_t)t->dtype);
        put_u32(&h, (uint32_t)t->ndim);
        for (int d = 0; d < t->ndim; d++) put_u64(&h, (uint64_t)t->dims[d]);
        put_u64(&h, off);
        put_u32(&h, t->nbytes ? ctr_crc32c(0, t->data, t->nbytes) : 0);
        off = align64(off + t->nbytes);
    }
    put_u32(&h, ctr_crc32c(0, h.p, h.n));
    static const uint8_t zeros[64] = {0};
    put(&h, zeros, align64(h.n) - h.n);
    return h;
}

void *ctr_write_mem(const seer_container *c, size_t *len) {
    bytes h = header(c);
    size_t n = h.n;
    for (int i = 0; i < c->n_t; i++) n = i + 1 < c->n_t ? align64(n + c->t[i].nbytes) : n + c->t[i].nbytes;
    uint8_t *out = seer_calloc(n ? n : 1, 1);
    memcpy(out, h.p, h.n);
    size_t at = h.n;
    for (int i = 0; i < c->n_t; i++) {
        if (c->t[i].nbytes) memcpy(out + at, c->t[i].data, c->t[i].nbytes);
        at = i + 1 < c->n_t ? align64(at + c->t[i].nbytes) : at + c->t[i].nbytes;
    }
    free(h.p);
    *len = n;
    return out;
}

int ctr_write(const seer_container *c, const char *path, seer_err *err) {
    static const uint8_t zeros[64] = {0};
    bytes h = header(c);
    size_t len = strlen(path);
    char *tmp = seer_malloc(len + 16);
    snprintf(tmp, len + 16, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        free(h.p), free(tmp);
        return seer_fail(err, "%s: cannot create: %s", path, strerror(errno));
    }
    FILE *f = fdopen(fd, "wb");
    int bad = fwrite(h.p, 1, h.n, f) != h.n;
    for (int i = 0; i < c->n_t && !bad; i++) {
        const ctr_tensor *t = &c->t[i];
        bad |= t->nbytes && fwrite(t->data, 1, t->nbytes, f) != t->nbytes;
        // pad to the next tensor's aligned offset; the file ends with the last tensor's data
        size_t pad = i + 1 < c->n_t ? align64(t->nbytes) - t->nbytes : 0;
        bad |= fwrite(zeros, 1, pad, f) != pad;
    }
    bad |= fflush(f) != 0;
    bad |= fsync(fd) != 0;
    bad |= fclose(f) != 0;
    free(h.p);
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        free(tmp);
        return seer_fail(err, "%s: write failed: %s", path, strerror(e));
    }
    free(tmp);
    return 0;
}

/* Bounds-checked cursor over the loaded file. */
typedef struct {
    const uint8_t *p;
    size_t n, pos;
    const char *origin;
    seer_err *err;
    int bad;
} cursor;

static int need(cursor *r, uint64_t n, const char *what) {
    if (r->bad) return -1;
    if (n > r->n - r->pos) {
        r->bad = 1;
        return seer_fail(r->err, "%s: truncated or corrupt: %s at byte %zu needs %llu bytes, "
                                 "file has %zu", r->origin, what, r->pos, (unsigned long long)n, r->n);
    }
    return 0;
}
static uint64_t get_u64(cursor *r, const char *what) {
    uint64_t v = 0;
    if (need(r, 8, what) == 0) memcpy(&v, r->p + r->pos, 8), r->pos += 8;
    return v;
}
static uint32_t get_u32(cursor *r, const char *what) {
    uint32_t v = 0;
    if (need(r, 4, what) == 0) memcpy(&v, r->p + r->pos, 4), r->pos += 4;
    return v;
}
/* The reader never exits: an allocation that fails (all are bounded by the file size) fails the
 * read with a message, so libseer can return it to its caller. */
static void *r_alloc(cursor *r, size_t n) {
    if (r->bad) return NULL;
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        r->bad = 1;
        seer_fail(r->err, "%s: out of memory reading the file (%zu bytes)", r->origin, n);
    }
    return p;
}

static char *get_str(cursor *r, const char *what) {
    uint64_t n = get_u64(r, what);
    if (need(r, n, what)) return NULL;
    char *s = r_alloc(r, (size_t)n + 1);
    if (!s) return NULL;
    memcpy(s, r->p + r->pos, (size_t)n);
    s[n] = 0;
    r->pos += (size_t)n;
    return s;
}

uint32_t ctr_image_version(const void *buf, size_t len) {
    cursor r = {.p = buf, .n = len, .pos = 8, .origin = "", .err = NULL};
    return len >= 12 ? get_u32(&r, "version") : 0;
}

static int parse(seer_container *c, const char *origin, const char magic[8], uint32_t max_version,
                 seer_err *err) {
    cursor r = {.p = c->file, .n = c->file_len, .origin = origin, .err = err};
    if (need(&r, 32, "header")) return -1;
    if (memcmp(c->file, magic, 8) != 0)
        return seer_fail(err, "%s: wrong magic (not a %.8s file)", origin, magic);
    memcpy(c->magic, magic, 8);
    r.pos = 8;
    c->version = get_u32(&r, "version");
    uint32_t flags = get_u32(&r, "flags");
    if (c->version < 1 || c->version > max_version)
        return seer_fail(err, "%s: format version %u is not supported (this build reads up to %u)",
                         origin, c->version, max_version);
    if (!(flags & CTR_CRC))
        return seer_fail(err, "%s: format version %u has no checksums (written by Seer before 0.3), "
                              "so its contents cannot be trusted: export it again (seerexport) from "
                              "its checkpoint, or retrain with this build", origin, c->version);
    uint64_t n_kv = get_u64(&r, "kv count"), n_t = get_u64(&r, "tensor count");
    // every kv takes at least 12 bytes and every tensor at least 24: reject absurd counts early
    if (n_kv > (r.n - r.pos) / 12 || n_t > (r.n - r.pos) / 24)
        return seer_fail(err, "%s: corrupt header: %llu keys / %llu tensors cannot fit in %zu bytes",
                         origin, (unsigned long long)n_kv, (unsigned long long)n_t, r.n);
    c->kv = r_alloc(&r, sizeof(ctr_kv) * (size_t)n_kv);
    c->t = r_alloc(&r, sizeof(ctr_tensor) * (size_t)n_t);
    c->cap_kv = (int)n_kv, c->cap_t = (int)n_t;
    for (uint64_t i = 0; i < n_kv && !r.bad; i++) {
        char *key = get_str(&r, "key");
        if (!key) break;
        ctr_kv *kv = &c->kv[c->n_kv++];
        kv->key = key;
        uint32_t type = get_u32(&r, "kv type");
        kv->type = (int)type;
        if (r.bad) break;
        if (type == KV_STR) {
            kv->data = get_str(&r, "string value");
            kv->n = kv->data ? (int64_t)strlen(kv->data) : 0;
        } else if (type == KV_I64 || type == KV_F64) {
            if (need(&r, 8, "scalar value")) break;
            kv->n = 1;
            if (!(kv->data = r_alloc(&r, 8))) break;
            memcpy(kv->data, r.p + r.pos, 8);
            r.pos += 8;
        } else if (type == KV_I64ARR || type == KV_F64ARR || type == KV_U64ARR) {
            uint64_t n = get_u64(&r, "array length");
            if (r.bad || n > (r.n - r.pos) / 8) {
                if (!r.bad) seer_fail(err, "%s: key %s: array of %llu items runs past the end (truncated or corrupt)",
                                      origin, kv->key, (unsigned long long)n);
                r.bad = 1;
                break;
            }
            if (!(kv->data = r_alloc(&r, (size_t)(n ? n : 1) * 8))) break;
            kv->n = (int64_t)n;
            memcpy(kv->data, r.p + r.pos, (size_t)n * 8);
            r.pos += (size_t)n * 8;
        } else if (type == KV_STRARR) {
            uint64_t n = get_u64(&r, "array length");
            if (r.bad || n > (r.n - r.pos) / 8) {
                if (!r.bad) seer_fail(err, "%s: key %s: %llu strings cannot fit in the file (truncated or corrupt)",
                                      origin, kv->key, (unsigned long long)n);
                r.bad = 1;
                break;
            }
            char **s = r_alloc(&r, (size_t)(n ? n : 1) * sizeof(char *));
            if (!(kv->data = s)) break;
            for (uint64_t j = 0; j < n && !r.bad; j++, kv->n++) s[j] = get_str(&r, "string item");
            if (r.bad) break;
        } else {
            seer_fail(err, "%s: key %s: unknown value type %u", origin, kv->key, type);
            return -1;
        }
    }
    if (r.bad) return -1;
    for (uint64_t i = 0; i < n_t && !r.bad; i++) {
        char *name = get_str(&r, "tensor name");
        if (!name) break;
        ctr_tensor *t = &c->t[c->n_t++];
        t->name = name;
        t->dtype = (int)get_u32(&r, "dtype");
        t->ndim = (int)get_u32(&r, "ndim");
        if (r.bad) break;
        if (ctr_dtype_size(t->dtype) == 0 || t->ndim < 1 || t->ndim > 4)
            return seer_fail(err, "%s: tensor %s: bad dtype %d or rank %d", origin, name, t->dtype,
                             t->ndim);
        uint64_t count = 1;
        for (int d = 0; d < t->ndim; d++) {
            uint64_t v = get_u64(&r, "tensor dims");
            if (v > ((uint64_t)1 << 40) || (v && count > UINT64_MAX / 16 / v))
                return seer_fail(err, "%s: tensor %s: dimension %llu overflows", origin, name,
                                 (unsigned long long)v);
            t->dims[d] = (int64_t)v;
            count *= v;
        }
        t->offset = get_u64(&r, "tensor offset");
        t->crc = get_u32(&r, "tensor checksum");
        t->nbytes = count * ctr_dtype_size(t->dtype);
    }
    if (r.bad) return -1;
    size_t header_end = r.pos;
    uint32_t want = get_u32(&r, "header checksum");
    if (r.bad) return -1;
    // (a fuzzing build skips the two checksum comparisons, so that mutations reach the parser)
    if (ctr_crc32c(0, c->file, header_end) != want && !FUZZING)
        return seer_fail(err, "%s: header checksum mismatch: the file is corrupt (a changed byte in "
                              "its first %zu bytes)", origin, header_end);
    uint64_t data_start = align64(r.pos);
    for (int i = 0; i < c->n_t; i++) {
        ctr_tensor *t = &c->t[i];
        if (data_start > r.n || t->offset % 64 || t->offset > r.n - data_start ||
            t->nbytes > r.n - data_start - t->offset)
            return seer_fail(err, "%s: tensor %s: data (offset %llu, %llu bytes) lies past the end "
                                  "of the file (%zu bytes): truncated or corrupt",
                             origin, t->name, (unsigned long long)t->offset,
                             (unsigned long long)t->nbytes, r.n);
        t->data = c->file + data_start + t->offset;
        if (ctr_crc32c(0, t->data, t->nbytes) != t->crc && !FUZZING)
            return seer_fail(err, "%s: tensor %s: checksum mismatch: its data is corrupt", origin,
                             t->name);
    }
    return 0;
}

int ctr_read_mem(seer_container *c, const void *buf, size_t len, const char *origin,
                 const char magic[8], uint32_t max_version, seer_err *err) {
    memset(c, 0, sizeof *c);
    // 64-byte aligned copy so tensor data can be used in place
    c->file = aligned_alloc(64, (len + 64) & ~(size_t)63);
    if (!c->file) return seer_fail(err, "%s: out of memory (%zu bytes)", origin, len);
    memcpy(c->file, buf, len);
    c->file_len = len;
    if (parse(c, origin, magic, max_version, err)) {
        ctr_free(c);
        return -1;
    }
    return 0;
}

int ctr_read(seer_container *c, const char *path, const char magic[8], uint32_t max_version,
             seer_err *err) {
    size_t len;
    char *buf = seer_read_file(path, &len, err);
    if (!buf) return -1;
    int rc = ctr_read_mem(c, buf, len, path, magic, max_version, err);
    free(buf);
    return rc;
}

const ctr_kv *ctr_find(const seer_container *c, const char *key) {
    for (int i = 0; i < c->n_kv; i++)
        if (strcmp(c->kv[i].key, key) == 0) return &c->kv[i];
    return NULL;
}

const ctr_kv *ctr_get(const seer_container *c, const char *key, int type, const char *origin,
                      seer_err *err) {
    const ctr_kv *kv = ctr_find(c, key);
    if (!kv) {
        seer_fail(err, "%s: missing key %s", origin, key);
        return NULL;
    }
    if (kv->type == type) return kv;
    seer_fail(err, "%s: key %s has type %d, expected %d", origin, key, kv->type, type);
    return NULL;
}

const ctr_tensor *ctr_tensor_find(const seer_container *c, const char *name) {
    for (int i = 0; i < c->n_t; i++)
        if (strcmp(c->t[i].name, name) == 0) return &c->t[i];
    return NULL;
}

void ctr_copy(const seer_container *c, const char *skip, const char *skip2, seer_container *o) {
    ctr_init(o, c->magic, c->version);
    for (int i = 0; i < c->n_kv; i++) {
        const ctr_kv *kv = &c->kv[i];
        if (!strcmp(kv->key, skip) || !strcmp(kv->key, skip2)) continue;
        switch (kv->type) {
        case KV_STR: ctr_add_str(o, kv->key, kv->data); break;
        case KV_I64: ctr_add_i64(o, kv->key, *(const int64_t *)kv->data); break;
        case KV_F64: ctr_add_f64(o, kv->key, *(const double *)kv->data); break;
        case KV_STRARR: ctr_add_strs(o, kv->key, kv->data, kv->n); break;
        default: ctr_add_arr(o, kv->key, kv->type, kv->data, kv->n); break;
        }
    }
    for (int i = 0; i < c->n_t; i++)
        ctr_add_tensor(o, c->t[i].name, c->t[i].dtype, c->t[i].ndim, c->t[i].dims, c->t[i].data);
}
