"""The block form's projections on NumPy/OpenBLAS sgemm, timed for the peers' composed GPT-2 block.

Times x W_qkv^T + b_qkv (split into q, k, v) and o W_o^T + b_o on the block's inputs; every peer's
block time is these two medians plus its core time. Threads: OPENBLAS_NUM_THREADS.
Usage: projection_peer.py IN_DIR HEADS WARMUP RUNS   (IN_DIR holds x, w_qkv, b_qkv, w_o, b_o)
"""
import json
import sys
import time

import numpy as np

from reference import project_out, project_qkv


def median_ms(call, warmup, runs):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def main():
    folder, heads, warmup, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    x, w_qkv, b_qkv, w_o, b_o = (np.load(f"{folder}/{n}.npy") for n in ("x", "w_qkv", "b_qkv", "w_o", "b_o"))
    q, _, _ = project_qkv(x, w_qkv, b_qkv, heads, np.float32)
    print(json.dumps({"in_ms": median_ms(lambda: project_qkv(x, w_qkv, b_qkv, heads, np.float32), warmup, runs),
                      "out_ms": median_ms(lambda: project_out(q, w_o, b_o, np.float32), warmup, runs)}))


if __name__ == "__main__":
    main()
