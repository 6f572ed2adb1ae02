"""The fp64 NumPy reference every benchmarked output is checked against, computed in query blocks.

core_reference: the core form (docs/DSL.md), mask none or causal (bottom-right aligned).
block_reference: the block form with fused QKV and biases (nn.Linear weights), mask none or causal.
"""
import numpy as np

SCORE_BYTES = 256 << 20  # fp64 scores held at once, per query block


def core_reference(q, k, v, causal):
    """q: [B,Sq,H,D], k: [B,Sk,KVH,D], v: [B,Sk,KVH,Dv] -> out [B,Sq,H,Dv] float64."""
    b, sq, h, d = q.shape
    sk, kvh = k.shape[1], k.shape[2]
    q64 = q.astype(np.float64).transpose(0, 2, 1, 3) / np.sqrt(d)                      # [B,H,Sq,D]
    k64 = np.repeat(k.astype(np.float64), h // kvh, axis=2).transpose(0, 2, 3, 1)      # [B,H,D,Sk]
    v64 = np.repeat(v.astype(np.float64), h // kvh, axis=2).transpose(0, 2, 1, 3)      # [B,H,Sk,Dv]
    k64, v64 = np.ascontiguousarray(k64), np.ascontiguousarray(v64)
    out = np.empty((b, h, sq, v.shape[3]))
    rows = max(1, SCORE_BYTES // (8 * b * h * sk))
    for q0 in range(0, sq, rows):
        q1 = min(sq, q0 + rows)
        # Causal: the block's last query sees keys below q1 + Sk - Sq; later keys are never kept.
        k_end = min(sk, q1 + sk - sq) if causal else sk
        s = np.ascontiguousarray(q64[:, :, q0:q1]) @ k64[..., :k_end]
        if causal:
            keep = np.arange(k_end)[None, :] <= np.arange(q0, q1)[:, None] + (sk - sq)
            s = np.where(keep, s, -np.inf)
        s -= s.max(axis=-1, keepdims=True)
        np.exp(s, out=s)
        s /= s.sum(axis=-1, keepdims=True)
        out[:, :, q0:q1] = s @ v64[:, :, :k_end]
    return out.transpose(0, 2, 1, 3)


def project_qkv(x, w_qkv, b_qkv, heads, dtype):
    """x: [B,S,M] -> q, k, v [B,S,H,M/H] in dtype (y = x W^T + b)."""
    b, s, m = x.shape
    qkv = x.astype(dtype, copy=False) @ w_qkv.astype(dtype, copy=False).T + b_qkv.astype(dtype, copy=False)
    return tuple(np.ascontiguousarray(part.reshape(b, s, heads, m // heads)) for part in np.split(qkv, 3, axis=-1))


def project_out(o, w_o, b_o, dtype):
    """o: [B,S,H,Dv] -> [B,S,M] in dtype."""
    b, s = o.shape[:2]
    merged = o.reshape(b, s, -1).astype(dtype, copy=False)
    return merged @ w_o.astype(dtype, copy=False).T + b_o.astype(dtype, copy=False)


def block_reference(x, w_qkv, b_qkv, w_o, b_o, heads, causal):
    q, k, v = project_qkv(x, w_qkv, b_qkv, heads, np.float64)
    return project_out(core_reference(q, k, v, causal), w_o, b_o, np.float64)
