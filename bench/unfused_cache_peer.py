"""The unfused NumPy path through a KV cache: RoPE (optional) in NumPy, the new keys and values
written into the cache, then per batch entry and KV head one sgemm for the whole query group's
scores, a softmax and one sgemm with V (OpenBLAS, fp32). Causal rows (Sq > 1) mask the keys after
their position. The cache is kept [B,KVH,Smax,D] (converted from the harness's [B,Smax,KVH,D]
before timing), so that each head's keys are one contiguous matrix for the sgemm: with the NHD
layout NumPy copies every strided head out first (13.5 s instead of ~0.3 s a call at B8 Lk32768).
Usage: unfused_cache_peer.py IN_DIR OUT.npy THREADS WARMUP RUNS CACHE_LEN ROPE(0|1); prints JSON.
"""
import sys

import numpy as np

from llm_reference import rope_neox
from peer_common import PeerArgs, time_and_report


def step(q, k_new, v_new, k_cache, v_cache, cache_len, rope):
    """q [B,Sq,H,D], k_new/v_new [B,Sq,KVH,D], caches [B,KVH,Smax,D] (written) -> out [B,Sq,H,D]."""
    b, sq, h, d = q.shape
    kvh = k_new.shape[2]
    group, lk = h // kvh, cache_len + sq
    positions = np.arange(cache_len, lk)
    if rope:
        q, k_new = rope_neox(q, positions), rope_neox(k_new, positions)
    k_cache[:, :, cache_len:lk], v_cache[:, :, cache_len:lk] = k_new.transpose(0, 2, 1, 3), v_new.transpose(0, 2, 1, 3)
    keep = np.arange(lk)[None, :] <= positions[:, None]
    scale = np.float32(1.0 / np.sqrt(d))
    out = np.empty((b, sq, h, v_new.shape[3]), np.float32)
    for bi in range(b):
        for g in range(kvh):
            rows = (q[bi, :, g * group:(g + 1) * group] * scale).reshape(sq * group, d)
            s = (rows @ k_cache[bi, g, :lk].T).reshape(sq, group, lk)
            if sq > 1:
                s = np.where(keep[:, None, :], s, np.float32(-np.inf))
            s -= s.max(axis=-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(axis=-1, keepdims=True)
            # One [Sq*G, Lk] x [Lk, Dv] sgemm: a [Sq, G, Lk] operand would be Sq small products.
            out[bi, :, g * group:(g + 1) * group] = (s.reshape(sq * group, lk) @ v_cache[bi, g, :lk]).reshape(
                sq, group, -1)
    return out


def main():
    if len(sys.argv) != 8:
        sys.exit("usage: unfused_cache_peer.py IN_DIR OUT.npy THREADS WARMUP RUNS CACHE_LEN ROPE")
    args = PeerArgs(sys.argv[:3] + ["causal"] + sys.argv[3:6])
    cache_len, rope = int(sys.argv[6]), sys.argv[7] == "1"
    q, k_new, v_new = (np.load(f"{args.folder}/{name}.npy") for name in ("q", "k_new", "v_new"))
    k_cache, v_cache = (np.ascontiguousarray(np.load(f"{args.folder}/{name}.npy").transpose(0, 2, 1, 3))
                        for name in ("k_cache", "v_cache"))
    time_and_report(args, lambda: step(q, k_new, v_new, k_cache, v_cache, cache_len, rope))


if __name__ == "__main__":
    main()
