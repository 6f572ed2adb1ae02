"""The example's Python safetensors reader (minilm_weights.parse_safetensors, which attn-inspect
uses too) on the malformed files of safetensors_test.cpp and issue 32's: every one a ValueError
naming its problem, never another exception or a silent read. Usage: test_safetensors_python.py
(examples/minilm on PYTHONPATH)."""
import json
import struct
import sys

import numpy as np

import minilm_weights

failures = []


def file_bytes(header, data=b""):
    text = header if isinstance(header, str) else json.dumps(header)
    return struct.pack("<Q", len(text.encode())) + text.encode() + data


def tensor(name, dtype, shape, offsets):
    return f'"{name}": {{"dtype": "{dtype}", "shape": {shape}, "data_offsets": {offsets}}}'


def refused(what, blob, part):
    """blob must be refused with a ValueError whose message holds part."""
    try:
        minilm_weights.parse_safetensors(blob, "synthetic")
    except ValueError as e:
        if part not in str(e):
            failures.append(f"{what}: {e!r} lacks {part!r}")
        return
    except Exception as e:  # noqa: BLE001 (the point: any other exception is a failure)
        failures.append(f"{what}: raised {type(e).__name__}: {e}")
        return
    failures.append(f"{what}: accepted")


# a: F32 [2,3] = 0.5 i; h: F16 [4]; b: BF16 [2] = 1.5, -inf; d: F64 [1] = 0.1; ids: I64 [2].
GOOD_HEADER = ('{"__metadata__": {"format": "pt"}, ' + tensor("a", "F32", "[2, 3]", "[0, 24]") + ", " +
               tensor("h", "F16", "[4]", "[24, 32]") + ", " + tensor("b", "BF16", "[2]", "[32, 36]") + ", " +
               tensor("d", "F64", "[1]", "[36, 44]") + ", " + tensor("ids", "I64", "[2]", "[44, 60]") + "}   ")
GOOD_DATA = (np.arange(6, dtype="<f4") * 0.5).tobytes() + np.array([1, -2, 65504, 2**-24], "<f2").tobytes() + \
    np.array([0x3FC0, 0xFF80], "<u2").tobytes() + np.array([0.1], "<f8").tobytes() + \
    np.array([7, -1], "<i8").tobytes()
EIGHT = bytes(8)


def test_good_file():
    t = minilm_weights.parse_safetensors(file_bytes(GOOD_HEADER, GOOD_DATA), "synthetic")
    assert list(t) == ["a", "h", "b", "d", "ids"], list(t)
    assert np.array_equal(t["a"], np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5)
    assert np.array_equal(t["h"], np.array([1, -2, 65504, 2**-24], np.float16))
    assert t["b"].dtype == np.float32 and t["b"][0] == 1.5 and t["b"][1] == -np.inf
    assert t["d"][0] == 0.1 and list(t["ids"]) == [7, -1]


def test_truncated_anywhere():
    whole = file_bytes(GOOD_HEADER, GOOD_DATA)
    head = 8 + len(GOOD_HEADER)
    for keep in (0, 5, 8, 20, head - 1, head, head + 30, len(whole) - 1):
        refused(f"cut at {keep}", whole[:keep], "truncated")


def test_altered_headers():
    refused("not JSON", file_bytes(GOOD_HEADER.replace(":", ";", 1), GOOD_DATA), "not valid JSON")
    refused("an array", file_bytes("[1, 2]"), "not a JSON object")
    refused("no offsets", file_bytes('{"a": {"dtype": "F32", "shape": [1]}}', bytes(4)), "needs a string dtype")
    refused("negative dim", file_bytes("{" + tensor("a", "F32", "[-1]", "[0, 4]") + "}", bytes(4)),
            "not a non-negative integer")
    refused("float dim", file_bytes("{" + tensor("a", "F32", "[1.5]", "[0, 4]") + "}", bytes(4)),
            "not a non-negative integer")
    refused("bool dim", file_bytes("{" + tensor("a", "F32", "[true]", "[0, 4]") + "}", bytes(4)),
            "not a non-negative integer")
    refused("one offset", file_bytes("{" + tensor("a", "F32", "[1]", "[0]") + "}", bytes(4)), "exactly two")
    refused("metadata", file_bytes('{"__metadata__": {"n": 1}}'), "__metadata__")
    refused("duplicate name", file_bytes("{" + tensor("a", "F32", "[1]", "[0, 4]") + ", " +
                                         tensor("a", "F32", "[1]", "[0, 4]") + "}", bytes(4)), "appears twice")
    flipped = bytearray(file_bytes(GOOD_HEADER, GOOD_DATA))
    flipped[6] = 1
    refused("header length over 100 MB", bytes(flipped), "100 MB")
    # Issue 32: what used to escape as KeyError, TypeError, AttributeError, RecursionError.
    refused("entry not an object", file_bytes('{"a": 5}', bytes(4)), "needs a string dtype")
    refused("shape not an array", file_bytes('{"a": {"dtype": "F32", "shape": 5, "data_offsets": [0, 4]}}',
                                             bytes(4)), "needs a string dtype")
    refused("dtype not a string", file_bytes('{"a": {"dtype": 4, "shape": [1], "data_offsets": [0, 4]}}',
                                             bytes(4)), "needs a string dtype")
    refused("nested 100000 deep", file_bytes("[" * 100000 + "]" * 100000), "not valid JSON")
    raw = b'{"a\xff": 1}'
    refused("not UTF-8", struct.pack("<Q", len(raw)) + raw, "not valid JSON")


def test_dtypes_and_shapes_against_byte_ranges():
    refused("unknown dtype", file_bytes("{" + tensor("a", "F8_E4M3", "[4]", "[0, 4]") + "}", bytes(4)),
            "unknown dtype")
    refused("lower-case dtype", file_bytes("{" + tensor("a", "f32", "[1]", "[0, 4]") + "}", bytes(4)),
            "unknown dtype")
    refused("two F32 in 4 bytes", file_bytes("{" + tensor("a", "F32", "[2]", "[0, 4]") + "}", bytes(4)),
            "needs 8 bytes")
    refused("F16 in 4 bytes", file_bytes("{" + tensor("a", "F16", "[1]", "[0, 4]") + "}", bytes(4)), "needs 2")
    # Issue 32: products that wrapped 2^64 in the C++ reader, and an overflow in np.prod here.
    refused("F64 [2^61 + 1]", file_bytes("{" + tensor("a", "F64", "[2305843009213693953]", "[0, 8]") + "}", EIGHT),
            "needs 18446744073709551624 bytes")
    refused("F32 [2^31, 2^31]", file_bytes("{" + tensor("a", "F32", "[2147483648, 2147483648]", "[0, 0]") + ", " +
                                           tensor("b", "F64", "[1]", "[0, 8]") + "}", EIGHT), "needs")
    refused("dim past int64", file_bytes("{" + tensor("a", "U8", "[99999999999999999999999]", "[0, 8]") + "}",
                                         EIGHT), "needs")


def test_offsets():
    def pair(b_offsets):
        return "{" + tensor("a", "F32", "[1]", "[0, 4]") + ", " + tensor("b", "F32", "[1]", b_offsets) + "}"
    refused("overlap", file_bytes(pair("[2, 6]"), EIGHT), "overlap")
    refused("same range", file_bytes(pair("[0, 4]"), EIGHT), "overlap")
    refused("backwards", file_bytes("{" + tensor("a", "F32", "[0]", "[4, 0]") + "}", EIGHT), "run backwards")
    refused("hole", file_bytes("{" + tensor("a", "F32", "[1]", "[4, 8]") + "}", EIGHT), "belong to no tensor")
    refused("tail", file_bytes("{" + tensor("a", "F32", "[1]", "[0, 4]") + "}", EIGHT), "belong to no tensor")
    refused("past the end", file_bytes("{" + tensor("a", "F32", "[1]", "[8, 12]") + "}", EIGHT), "truncated")
    # Issue 32: negative offsets read the file's last bytes through Python's slicing.
    refused("[-8, -4]", file_bytes("{" + tensor("a", "F32", "[1]", "[-8, -4]") + "}", EIGHT),
            "two non-negative integers")


for name, test in list(globals().items()):
    if name.startswith("test_"):
        test()
print("\n".join(failures) or "every malformed file refused with a ValueError naming it")
sys.exit(min(len(failures), 100))
