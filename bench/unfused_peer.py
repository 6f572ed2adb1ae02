"""The classic unfused attention on NumPy/OpenBLAS: per (batch, head), QK^T (sgemm), softmax, PV (sgemm).

Long sequences go in blocks of query rows, so the score matrix held at once stays at most
QUERY_BLOCK x Sk per head. Causal computes every score and masks it (k <= q + Sk - Sq), as the
classic implementation does. Threads: OPENBLAS_NUM_THREADS, set by the caller.
Usage: unfused_peer.py IN_DIR OUT.npy none|causal THREADS WARMUP RUNS (see peer_common.py)
"""
import sys

import numpy as np

from peer_common import PeerArgs, causal_keep, time_and_report

QUERY_BLOCK = 1024


def attention(q, k, v, causal):
    """q: [B,Sq,H,D], k: [B,Sk,KVH,D], v: [B,Sk,KVH,Dv] -> [B,Sq,H,Dv], all float32."""
    b, sq, h, d = q.shape
    sk, kvh = k.shape[1], k.shape[2]
    scale = np.float32(1.0 / np.sqrt(d))
    out = np.empty((b, sq, h, v.shape[3]), np.float32)
    keep = causal_keep(sq, sk) if causal else None
    for bi in range(b):
        for hi in range(h):
            k_head, v_head = k[bi, :, hi * kvh // h, :], v[bi, :, hi * kvh // h, :]
            for q0 in range(0, sq, QUERY_BLOCK):
                q1 = min(sq, q0 + QUERY_BLOCK)
                s = (q[bi, q0:q1, hi, :] * scale) @ k_head.T
                if causal:
                    s = np.where(keep[q0:q1], s, np.float32(-np.inf))
                s -= s.max(axis=1, keepdims=True)
                np.exp(s, out=s)
                s /= s.sum(axis=1, keepdims=True)
                out[bi, q0:q1, hi, :] = s @ v_head
    return out


def main():
    args = PeerArgs(sys.argv)
    q, k, v = args.load_qkv()
    time_and_report(args, lambda: attention(q, k, v, args.causal))


if __name__ == "__main__":
    main()
