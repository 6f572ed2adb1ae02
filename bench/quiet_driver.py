"""Keeps the benchmark driver's own NumPy single-threaded. Import before numpy.

The driver computes fp64 references between timed runs. With OpenBLAS's default threads, those
workers spin for a while after each call and take CPU from the child being timed next: a 14.4 ms
attnc call measured 20 ms right after a reference. Children get their own thread counts
(pinned_env), so only the driver is affected.
"""
import os

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_name] = "1"
