"""NumPy's BLAS sgemm speed (2048 x 2048 x 2048, float32) and which BLAS it is; prints JSON.

Run with OPENBLAS_NUM_THREADS set to the thread count to measure.
Usage: sgemm_peak.py [RUNS]
"""
import ctypes
import glob
import json
import os
import sys
import time

import numpy as np


def blas_info():
    """The BLAS numpy was built with, and the core OpenBLAS picked at run time where it says."""
    config = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    info = {"name": config.get("name"), "version": config.get("version"),
            "configuration": config.get("openblas configuration"),
            "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "unset")}
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "libscipy_openblas*.so"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for symbol in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename"):
            if hasattr(lib, symbol):
                getattr(lib, symbol).restype = ctypes.c_char_p
                info["runtime_core"] = getattr(lib, symbol)().decode()
    return info


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    n = 2048
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    a @ b
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    gflops = 2 * n ** 3 / float(np.median(times)) * 1e-9
    print(json.dumps({"sgemm_gflops": round(gflops, 1), "n": n, "runs": runs,
                      "threads": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": blas_info()}))


if __name__ == "__main__":
    main()
