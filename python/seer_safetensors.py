"""A strict reader of the safetensors format (numpy only), for Seer's exports.

    tensors, metadata = read("model.safetensors")

The rules (https://github.com/huggingface/safetensors, "Format"): 8 bytes little-endian u64 N,
then N bytes of a UTF-8 JSON object (may be padded with trailing spaces), then the byte buffer.
Every entry but "__metadata__" is {"dtype", "shape", "data_offsets": [begin, end]} with offsets
relative to the buffer; the byte length must equal the shape's element count times the dtype's
size, the entries must tile the buffer exactly (no holes, no overlaps, nothing after), and
"__metadata__" maps strings to strings. read() raises ValueError naming the broken rule.
"""
import json
import struct

import numpy as np

DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
          "I32": np.int32, "I16": np.int16, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_}


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("%s: shorter than the 8-byte header length" % path)
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError("%s: header length %d runs past the end (%d bytes)" % (path, n, len(data)))
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError("%s: header is not UTF-8 JSON: %s" % (path, e))
    if not isinstance(header, dict):
        raise ValueError("%s: header is not a JSON object" % path)
    buf = memoryview(data)[8 + n:]
    meta = header.pop("__metadata__", {})
    if not isinstance(meta, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise ValueError("%s: __metadata__ must map strings to strings" % path)
    spans, tensors = [], {}
    for name, e in header.items():
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise ValueError("%s: tensor %s: needs exactly dtype, shape, data_offsets" % (path, name))
        if e["dtype"] not in DTYPES:
            raise ValueError("%s: tensor %s: unknown dtype %r" % (path, name, e["dtype"]))
        shape, off = e["shape"], e["data_offsets"]
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
            raise ValueError("%s: tensor %s: bad shape %r" % (path, name, shape))
        if not (isinstance(off, list) and len(off) == 2 and all(isinstance(o, int) for o in off)
                and 0 <= off[0] <= off[1] <= len(buf)):
            raise ValueError("%s: tensor %s: offsets %r outside the %d-byte buffer" % (path, name, off, len(buf)))
        dt = np.dtype(DTYPES[e["dtype"]])
        if off[1] - off[0] != int(np.prod(shape, dtype=np.int64)) * dt.itemsize:
            raise ValueError("%s: tensor %s: %d bytes for shape %r of %s" % (path, name, off[1] - off[0], shape, e["dtype"]))
        spans.append((off[0], off[1], name))
        tensors[name] = np.frombuffer(buf[off[0]:off[1]], dtype=dt.newbyteorder("<")).reshape(shape)
    pos = 0
    for b, e, name in sorted(spans):
        if b != pos:
            raise ValueError("%s: tensor %s starts at %d, expected %d (a hole or an overlap)" % (path, name, b, pos))
        pos = e
    if pos != len(buf):
        raise ValueError("%s: %d bytes after the last tensor" % (path, len(buf) - pos))
    return tensors, meta
