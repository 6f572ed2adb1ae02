"""The Python binding on an int8 KV cache kernel (issue 37): int8 codes as np.int8 arrays and their
f32 scales, written in place; out against an fp64 NumPy reference on the stored (decoded) cache, the
appended codes against a NumPy quantizer. Usage: test_binding_kv_quant.py LIBRARY.so (the runtime
from $ATTNC_RUNTIME)."""
import sys

import numpy as np

import attnc
import checks
import reference

LIBRARY = sys.argv[1]
INT8 = "attn_core_h2_kv2_d16_f32_causal_kvc_kvi8"
lib = attnc.Library(LIBRARY)


def quantized(x):
    """int8 of each head vector (last axis): scale = max|x| / 127 in fp32, codes rounded half to even."""
    x = np.asarray(x, np.float32)
    scale = (np.abs(x).max(axis=-1) / np.float32(127)).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1))[..., None]
    codes = np.where(scale[..., None] > 0, np.clip(np.rint(x / safe), -127, 127), 0).astype(np.int8)
    return codes, scale


def test_int8_cache_codes_and_scales_in_place():
    kernel = lib[INT8]
    assert [(a.name, a.dtype) for a in kernel.args[3:7]] == [
        ("k_cache", "i8"), ("v_cache", "i8"), ("k_scale", "f32"), ("v_scale", "f32")], kernel.args
    rng = np.random.default_rng(37)
    batch, seq_q, smax, cached = 2, 3, 9, (2, 5)
    inputs = {
        "q": rng.standard_normal((batch, seq_q, 2, 16)).astype(np.float32),
        "k_new": rng.standard_normal((batch, seq_q, 2, 16)).astype(np.float32),
        "v_new": rng.standard_normal((batch, seq_q, 2, 16)).astype(np.float32),
        "k_cache": rng.integers(-127, 128, (batch, smax, 2, 16)).astype(np.int8),
        "v_cache": rng.integers(-127, 128, (batch, smax, 2, 16)).astype(np.int8),
        "k_scale": rng.uniform(0.005, 0.03, (batch, smax, 2)).astype(np.float32),
        "v_scale": rng.uniform(0.005, 0.03, (batch, smax, 2)).astype(np.float32),
        "cache_seqlens": np.array(cached, dtype=np.int32),
    }
    before = {name: inputs[name].copy() for name in ("k_cache", "v_cache", "k_scale", "v_scale")}
    got = kernel.run(**inputs)
    for b, length in enumerate(cached):
        keys = length + seq_q
        for name, new in (("k", "k_new"), ("v", "v_new")):
            codes, scale = quantized(inputs[new][b])
            assert np.array_equal(inputs[name + "_cache"][b, length:keys], codes)
            assert np.array_equal(inputs[name + "_scale"][b, length:keys], scale)
            # Every other slot as it was.
            for part in ("_cache", "_scale"):
                assert np.array_equal(inputs[name + part][b, :length], before[name + part][b, :length])
                assert np.array_equal(inputs[name + part][b, keys:], before[name + part][b, keys:])
        k = inputs["k_cache"][b:b + 1, :keys] * inputs["k_scale"][b:b + 1, :keys, :, None].astype(np.float64)
        v = inputs["v_cache"][b:b + 1, :keys] * inputs["v_scale"][b:b + 1, :keys, :, None].astype(np.float64)
        keep = np.tril(np.ones((seq_q, keys), bool), keys - seq_q)[None, None]
        out, _ = reference.attention(inputs["q"][b:b + 1], k, v, keep, 0.25)
        assert np.abs(got["out"][b] - out[0]).max() < 2e-5, np.abs(got["out"][b] - out[0]).max()


def test_int8_cache_refuses_a_float_cache():
    inputs = {"q": np.zeros((1, 1, 2, 16), np.float32), "k_new": np.zeros((1, 1, 2, 16), np.float32),
              "v_new": np.zeros((1, 1, 2, 16), np.float32), "k_cache": np.zeros((1, 4, 2, 16), np.float32),
              "v_cache": np.zeros((1, 4, 2, 16), np.int8), "k_scale": np.zeros((1, 4, 2), np.float32),
              "v_scale": np.zeros((1, 4, 2), np.float32), "cache_seqlens": np.zeros(1, np.int32)}
    e = checks.raises(attnc.DTypeError, lib[INT8].run, **inputs)
    assert "'k_cache'" in e.message and "i8" in e.message, e.message


checks.run(globals())
