"""An fp64 NumPy reference of the kernel contract (docs/DSL.md), for the binding's tests: masks given
as boolean keep arrays, so the reference knows nothing of the DSL."""
import numpy as np


def attention(q, k, v, keep, scale):
    """q [B,Sq,H,D], k [B,Sk,KVH,D], v [B,Sk,KVH,Dv], keep [B,H,Sq,Sk] bool -> out [B,Sq,H,Dv] and
    probs [B,H,Sq,Sk], in float64; rows with no kept key give zeros."""
    q, k, v = (np.asarray(t, dtype=np.float64) for t in (q, k, v))
    group = q.shape[2] // k.shape[2]
    k = np.repeat(k, group, axis=2)
    v = np.repeat(v, group, axis=2)
    scores = np.einsum("bihd,bjhd->bhij", q, k) * scale
    scores = np.where(keep, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    any_kept = keep.any(axis=-1, keepdims=True)
    weights = np.where(keep, np.exp(scores - np.where(any_kept, row_max, 0.0)), 0.0)
    sums = weights.sum(axis=-1, keepdims=True)
    probs = np.where(any_kept, weights / np.where(any_kept, sums, 1.0), 0.0)
    out = np.einsum("bhij,bjhd->bihd", probs, v)
    return out, probs


def causal_padding_keep(batch, heads, seq_q, seq_k, key_lengths):
    """causal & padding, bottom-right aligned: query i sits at key position i + Lk - Sq."""
    keep = np.zeros((batch, heads, seq_q, seq_k), dtype=bool)
    for b in range(batch):
        length = int(key_lengths[b])
        i = np.arange(seq_q)[:, None] + length - seq_q
        j = np.arange(seq_k)[None, :]
        keep[b, :] = (j <= i) & (j < length)
    return keep
