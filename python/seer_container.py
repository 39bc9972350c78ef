"""Seer's container format (src/common/container.h: checkpoints, .seer exports, reference dumps)
in Python: its CRC-32C, a writer, and in-place edits of one key's value or name (header checksum
redone).
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
    _edit(path, key, KV_I64, None, "<q", value)


def set_f64_item(path, key, index, value):
    """Sets item index of the float64 array key and rewrites the header checksum."""
    _edit(path, key, KV_F64ARR, index, "<d", value)


def rename_key(path, key, new):
    """Renames a key (any type) to a name of the same length and rewrites the header checksum:
    a file as a writer that never knew the key would have written it, for the tests."""
    if len(new) != len(key):
        raise ValueError("rename_key: %s and %s differ in length" % (key, new))
    _edit(path, key, None, None, None, new)


def _edit(path, key, want, index, fmt, value):
    """Sets the value of key (of type want) or, with want None, renames it to value."""
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
        if want is None and k == key:
            at = pos
        pos += n
        typ = struct.unpack_from("<I", b, pos)[0]
        pos += 4
        if typ == KV_STR:
            n = u64()
            pos += n
        elif typ in (KV_I64, KV_F64):
            if k == key and typ == want:
                at = pos
            pos += 8
        elif typ in (KV_I64ARR, KV_F64ARR, KV_U64ARR):
            n = u64()
            if k == key and typ == want and 0 <= index < n:
                at = pos + 8 * index
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
        kind = "" if want is None else "int64 " if want == KV_I64 else "float64 array "
        raise KeyError("%s: no %skey %s%s" % (path, kind, key, "" if index is None else "[%d]" % index))
    if want is None:
        b[at:at + len(value)] = value.encode()
    else:
        struct.pack_into(fmt, b, at, value)
    struct.pack_into("<I", b, pos, crc32c(bytes(b[:pos])))
    open(path, "wb").write(bytes(b))
