"""The quantized KV caches' formats (docs/DSL.md), written independently of attnc for the LLM bench:
int8 codes with one f32 scale per token and KV head, OCP FP8 E4M3 bytes with one f32 scale per
tensor, and bf16 rounding; each with its decoding, so the references attend over what the kernels
read."""
import numpy as np

E4M3_MAX = 448.0


def int8_quantize(x):
    """x [..., D] f32 -> (codes int8 [..., D], scales f32 [...]): scale = max |x| / 127 over the
    last dim, code = x / scale rounded to nearest even, clamped to [-127, 127]; all-zero rows
    store scale 0 and codes 0."""
    x = np.asarray(x, dtype=np.float32)
    scales = (np.abs(x).max(axis=-1) / np.float32(127)).astype(np.float32)
    safe = np.where(scales > 0, scales, np.float32(1))[..., None]
    codes = np.clip(np.rint(x / safe), -127, 127).astype(np.int8)
    return codes, scales


def int8_decode(codes, scales):
    return codes.astype(np.float32) * scales[..., None]


def _e4m3_positive_values():
    """The values of codes 0x00..0x7E (increasing): bias 7, subnormals below exponent 1."""
    codes = np.arange(0x7F)
    exponent, mantissa = codes >> 3, codes & 7
    normal = (1 + mantissa / 8.0) * 2.0 ** (exponent - 7)
    subnormal = (mantissa / 8.0) * 2.0 ** -6
    return np.where(exponent == 0, subnormal, normal)


_E4M3 = _e4m3_positive_values()


def e4m3_encode(x, scale):
    """x / scale (f32) as E4M3 bytes, rounded to nearest even and saturated to +-448 (the harness's
    inputs are finite)."""
    y = (np.asarray(x, dtype=np.float32) / np.float32(scale)).astype(np.float64)
    a = np.minimum(np.abs(y), E4M3_MAX)
    upper = np.clip(np.searchsorted(_E4M3, a), 1, len(_E4M3) - 1)
    lower = upper - 1
    below, above = a - _E4M3[lower], _E4M3[upper] - a
    take_upper = (above < below) | ((above == below) & (upper % 2 == 0))
    codes = np.where(take_upper, upper, lower).astype(np.uint8)
    return np.where(np.signbit(y) & (codes > 0), codes | 0x80, codes).astype(np.uint8)


def e4m3_decode(codes, scale):
    magnitude = _E4M3[codes & 0x7F].astype(np.float32)
    return np.where(codes & 0x80, -magnitude, magnitude).astype(np.float32) * np.float32(scale)


def bf16_round(x):
    """f32 -> the nearest bf16 (ties to even), as f32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def cache_inputs(arrays, storage):
    """A decode call's inputs in `storage` (bf16, int8 or fp8): (files to save, the arrays the
    fp64 reference takes: q, k_new, v_new, k_cache, v_cache as the kernel reads them)."""
    names = ("q", "k_new", "v_new", "k_cache", "v_cache")
    if storage == "bf16":
        rounded = {n: bf16_round(arrays[n]) for n in names}
        return rounded, rounded
    files = {n: arrays[n] for n in ("q", "k_new", "v_new")}
    seen = dict(files)
    for kv in ("k", "v"):
        new, cache = arrays[f"{kv}_new"], arrays[f"{kv}_cache"]
        if storage == "int8":
            codes, scales = int8_quantize(cache)
            files[f"{kv}_cache"], files[f"{kv}_scale"] = codes, scales
            seen[f"{kv}_cache"] = int8_decode(codes, scales)
            seen[f"{kv}_new"] = int8_decode(*int8_quantize(new))
        else:
            scale = np.float32(max(np.abs(cache).max(), np.abs(new).max()) / E4M3_MAX)
            files[f"{kv}_cache"], files[f"{kv}_scale"] = e4m3_encode(cache, scale), np.array(scale, np.float32)
            seen[f"{kv}_cache"] = e4m3_decode(files[f"{kv}_cache"], scale)
            seen[f"{kv}_new"] = e4m3_decode(e4m3_encode(new, scale), scale)
    return files, seen


def cache_bytes(batch, keys, kv_heads, head_dim, storage):
    """The bytes a decode step reads from its cache: K and V rows, plus int8's per-token scales."""
    rows = batch * keys * kv_heads * 2
    if storage == "q8_0":  # llama.cpp's blocks: 32 codes and an f16 scale in 34 bytes
        return rows * head_dim // 32 * 34
    per_element = {"f32": 4, "bf16": 2, "f16": 2, "int8": 1, "fp8": 1}[storage]
    return rows * head_dim * per_element + (rows * 4 if storage == "int8" else 0)
