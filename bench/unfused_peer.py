"""The classic unfused attention on NumPy/OpenBLAS: per head, QK^T (sgemm), softmax, PV (sgemm).

Reads q, k, v .npy files, times the median of several runs, writes the output for checking.
Usage: unfused_peer.py DIR causal|none RUNS
"""
import json
import sys
import time

import numpy as np


def attention(q, k, v, causal):
    b, sq, h, d = q.shape
    sk = k.shape[1]
    scale = np.float32(1.0 / np.sqrt(d))
    out = np.empty((b, sq, h, v.shape[3]), np.float32)
    if causal:
        keep = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)
    for bi in range(b):
        for hi in range(h):
            s = (q[bi, :, hi, :] * scale) @ k[bi, :, hi, :].T
            if causal:
                s = np.where(keep, s, np.float32(-np.inf))
            s -= s.max(axis=1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(axis=1, keepdims=True)
            out[bi, :, hi, :] = s @ v[bi, :, hi, :]
    return out


def main():
    folder, mask, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    q, k, v = (np.load(f"{folder}/{n}.npy") for n in ("q", "k", "v"))
    out = attention(q, k, v, mask == "causal")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        attention(q, k, v, mask == "causal")
        times.append((time.perf_counter() - start) * 1e3)
    np.save(f"{folder}/peer_out.npy", out)
    print(json.dumps({"peer": "numpy-openblas-unfused", "median_ms": float(np.median(times))}))


if __name__ == "__main__":
    main()
