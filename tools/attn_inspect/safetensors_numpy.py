"""A small safetensors reader in NumPy (attn-inspect's own, for the MiniLM weights): an 8-byte
little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, then the data."""
import json
import struct

import numpy as np

_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4", "U8": "u1"}


def read_safetensors(path):
    """{name: array} of every tensor in the file (read-only views of one buffer), checked against
    the file's size; ValueError names what is wrong."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: {len(blob)} bytes, too short for a safetensors header")
    (header_size,) = struct.unpack("<Q", blob[:8])
    if header_size > len(blob) - 8:
        raise ValueError(f"{path}: header of {header_size} bytes past the end of the file")
    header = json.loads(blob[8:8 + header_size])
    data = memoryview(blob)[8 + header_size:]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has dtype {entry['dtype']}, not one this reader knows")
        begin, end = entry["data_offsets"]
        count = int(np.prod(entry["shape"], dtype=np.int64))
        if not 0 <= begin <= end <= len(data) or end - begin != count * np.dtype(dtype).itemsize:
            raise ValueError(f"{path}: tensor {name} has offsets [{begin}, {end}) that do not fit its "
                             f"shape {entry['shape']} or the file")
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(entry["shape"])
    return tensors
