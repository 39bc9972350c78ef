"""Seer's container format (src/common/container.h: checkpoints, .seer exports, reference dumps)
in Python: its CRC-32C, a writer, and an in-place edit of one int64 key (header checksum redone).
Plain Python, no dependencies."""
import struct

_TABLE = []


def crc32c(data):
    """CRC-32C (Castagnoli), as src/common/container.c computes it."""
    if not _TABLE:
        for i in range(256):
            c = i
            for _ in range(8):
                c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
            _TABLE.append(c)
    crc = 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


KV_STR, KV_I64, KV_F64, KV_I64ARR, KV_F64ARR, KV_U64ARR, KV_STRARR = 1, 2, 3, 4, 5, 6, 7


def set_i64(path, key, value):
    """Sets the int64 key of the container at path and rewrites its header checksum."""
    b = bytearray(open(path, "rb").read())
    n_kv, n_t = struct.unpack_from("<QQ", b, 16)
    pos, at = 32, None

    def u64():
        nonlocal pos
        v = struct.unpack_from("<Q", b, pos)[0]
        pos += 8
        return v

    for _ in range(n_kv):
        n = u64()
        k = bytes(b[pos:pos + n]).decode()
        pos += n
        typ = struct.unpack_from("<I", b, pos)[0]
        pos += 4
        if typ == KV_STR:
            n = u64()
            pos += n
        elif typ in (KV_I64, KV_F64):
            if k == key and typ == KV_I64:
                at = pos
            pos += 8
        elif typ in (KV_I64ARR, KV_F64ARR, KV_U64ARR):
            n = u64()
            pos += 8 * n
        elif typ == KV_STRARR:
            for _ in range(u64()):
                n = u64()
                pos += n
        else:
            raise ValueError("%s: unknown kv type %d" % (path, typ))
    for _ in range(n_t):
        n = u64()  # name
        pos += n
        ndim = struct.unpack_from("<II", b, pos)[1]
        pos += 8 + 8 * ndim + 8 + 4  # dtype, ndim, dims, offset, crc
    if at is None:
        raise KeyError("%s: no int64 key %s" % (path, key))
    struct.pack_into("<q", b, at, value)
    struct.pack_into("<I", b, pos, crc32c(bytes(b[:pos])))
    open(path, "wb").write(bytes(b))
