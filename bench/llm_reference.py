"""Issue 24's fp64 references in NumPy: neox RoPE at fp32 angles and attention through a KV cache.

rope_angles: position * theta^(-2i/rope_dim), computed in float32 as docs/DSL.md says the kernels
do; the rotation itself runs in the caller's dtype (float64 for the reference, float32 for peers).
cache_reference: the kernel's contract (flash_attn_with_kvcache): k_new, v_new go into the
cache at cache_len .. cache_len+Sq-1, query i sits at position cache_len + i and attends causally
over the cache_len + Sq keys; with RoPE, q and k_new are rotated at their positions (the cache
holds rotated keys already).
"""
import numpy as np


def rope_angles(positions, rope_dim, theta=10000.0):
    """[len(positions), rope_dim/2] float32 angles."""
    pairs = np.arange(rope_dim // 2, dtype=np.float32)
    inv_freq = np.power(np.float32(theta), -np.float32(2.0) * pairs / np.float32(rope_dim)).astype(np.float32)
    return np.asarray(positions, dtype=np.float32)[:, None] * inv_freq[None, :]


def rope_neox(x, positions, theta=10000.0):
    """x [B,S,heads,D] rotated at positions [S] (neox: i pairs with i + D/2), in x's dtype."""
    d = x.shape[-1]
    angles = rope_angles(positions, d, theta).astype(x.dtype)[None, :, None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    first, second = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def cache_reference(q, k_new, v_new, k_cache, v_cache, cache_len, rope):
    """q [B,Sq,H,D], k_new/v_new [B,Sq,KVH,D], caches [B,Smax,KVH,D] -> out [B,Sq,H,D] float64.
    One batch entry and KV head at a time, so that the fp64 copies stay small."""
    b, sq, h, d = q.shape
    kvh = k_new.shape[2]
    group = h // kvh
    positions = np.arange(cache_len, cache_len + sq)
    q64, k_new64 = q.astype(np.float64), k_new.astype(np.float64)
    if rope:
        q64, k_new64 = rope_neox(q64, positions), rope_neox(k_new64, positions)
    lk = cache_len + sq
    keep = np.arange(lk)[None, :] <= positions[:, None]  # [Sq, Lk]
    out = np.empty((b, sq, h, v_new.shape[3]))
    for bi in range(b):
        for g in range(kvh):
            k = np.concatenate([k_cache[bi, :cache_len, g].astype(np.float64), k_new64[bi, :, g]])  # [Lk, D]
            v = np.concatenate([v_cache[bi, :cache_len, g].astype(np.float64), v_new[bi, :, g].astype(np.float64)])
            rows = q64[bi, :, g * group:(g + 1) * group].reshape(sq * group, d) / np.sqrt(d)  # [Sq*G, D]
            s = (rows @ k.T).reshape(sq, group, lk)
            s = np.where(keep[:, None, :], s, -np.inf)
            s -= s.max(axis=-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(axis=-1, keepdims=True)
            out[bi, :, g * group:(g + 1) * group] = s @ v
    return out


def plain_reference(q, k, v, causal, rope):
    """The core form without a cache (W1): rows at their bottom-right positions, RoPE optional."""
    b, sq, h, d = q.shape
    sk = k.shape[1]
    if rope:
        q = rope_neox(q.astype(np.float64), np.arange(sk - sq, sk))
        k = rope_neox(k.astype(np.float64), np.arange(sk))
    from reference import core_reference
    return core_reference(q, k, v, causal)
