/* common: the typed container behind checkpoints (and the .seer export): magic, version, typed
 * key/value metadata, a tensor table, 64-byte aligned little-endian data (GGUF's layout).
 *
 *   magic[8] u32 version u32 flags u64 n_kv u64 n_tensors
 *   kv:     u64 key_len, key, u32 type, value
 *           (STR: u64 len + bytes; I64/F64: 8 bytes; *ARR: u64 count + items, STRARR items as STR)
 *   tensor: u64 name_len, name, u32 dtype, u32 ndim, u64 dims[ndim], u64 offset (from data start),
 *           u32 CRC-32C of its data
 *   u32 CRC-32C of every header byte before it
 *   zero padding to a multiple of 64, then the data, each tensor 64-byte aligned.
 * flags bit CTR_CRC says the CRCs are there; every file written now has it, and the reader refuses
 * a file without it (written before checksums existed) with a message saying how to remake it.
 * The reader loads the file, checks the header's CRC, bounds-checks every count, length and
 * offset against the file size before it trusts or allocates anything, and checks each tensor's
 * CRC; the writer goes through a temporary file, fsync and rename, so a crash never leaves a
 * half-written file under the final name. */
#ifndef SEER_CONTAINER_H
#define SEER_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

enum { KV_STR = 1, KV_I64 = 2, KV_F64 = 3, KV_I64ARR = 4, KV_F64ARR = 5, KV_U64ARR = 6, KV_STRARR = 7 };
enum { DT_F32 = 0, DT_F16 = 1, DT_I8 = 2, DT_I64 = 3, DT_F64 = 4 };
enum { CTR_CRC = 1 }; // flags

/* Checkpoints (src/train/ckpt.c): version 2 added the CRC-32C checksums. */
#define CKPT_MAGIC "SEERCKPT"
#define CKPT_VERSION 2

/* CRC-32C (Castagnoli) of n bytes, continuing from crc (0 to start). */
uint32_t ctr_crc32c(uint32_t crc, const void *p, size_t n);

typedef struct {
    char *key;
    int type;
    int64_t n;   // bytes for STR, items for arrays, 1 for scalars
    void *data;  // STR: char* (NUL-terminated); arrays: items; STRARR: char**
} ctr_kv;

typedef struct {
    char *name;
    int dtype, ndim;
    int64_t dims[4];
    uint64_t offset, nbytes;
    uint32_t crc;     // reader: the CRC-32C stored for its data
    const void *data; // writer: caller's buffer; reader: points into the loaded file
} ctr_tensor;

typedef struct {
    char magic[8];
    uint32_t version;
    ctr_kv *kv;
    int n_kv, cap_kv;
    ctr_tensor *t;
    int n_t, cap_t;
    uint8_t *file; // reader: the whole file
    size_t file_len;
} seer_container;

void ctr_init(seer_container *c, const char magic[8], uint32_t version);
void ctr_free(seer_container *c);

void ctr_add_str(seer_container *c, const char *key, const char *s);
void ctr_add_i64(seer_container *c, const char *key, int64_t v);
void ctr_add_f64(seer_container *c, const char *key, double v);
void ctr_add_arr(seer_container *c, const char *key, int type, const void *items, int64_t n);
void ctr_add_strs(seer_container *c, const char *key, char *const *s, int64_t n);
/* The tensor data is referenced, not copied: keep it alive until ctr_write. */
void ctr_add_tensor(seer_container *c, const char *name, int dtype, int ndim,
                    const int64_t *dims, const void *data);

/* o = a new container with c's magic, version, keys (but skip and skip2) and tensors (whose data
 * stay c's: c must outlive o's writing). */
void ctr_copy(const seer_container *c, const char *skip, const char *skip2, seer_container *o);

int ctr_write(const seer_container *c, const char *path, seer_err *err);
/* The same bytes ctr_write puts in a file, in a new buffer (*len its size; the caller frees). */
void *ctr_write_mem(const seer_container *c, size_t *len);
/* Reads and checks the file; expects the magic and at most max_version. */
int ctr_read(seer_container *c, const char *path, const char magic[8], uint32_t max_version,
             seer_err *err);
/* Same from a memory buffer (copied). */
int ctr_read_mem(seer_container *c, const void *buf, size_t len, const char *origin,
                 const char magic[8], uint32_t max_version, seer_err *err);

/* The format version in a container image's header (0 when buf is too short to hold one); the
 * image is not checked. */
uint32_t ctr_image_version(const void *buf, size_t len);

/* Lookups; return NULL (and fill err naming origin and key) when missing or of another type. */
const ctr_kv *ctr_get(const seer_container *c, const char *key, int type, const char *origin,
                      seer_err *err);
/* The key's entry of any type, or NULL (optional keys). */
const ctr_kv *ctr_find(const seer_container *c, const char *key);
const ctr_tensor *ctr_tensor_find(const seer_container *c, const char *name);

size_t ctr_dtype_size(int dtype);

#endif
