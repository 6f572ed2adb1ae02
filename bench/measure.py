"""Times one workload with every implementation on the same inputs and checks each output against fp64.

The block form (W6): attnc runs its block kernel; each peer runs its core on q, k, v projected by
NumPy in fp32, its output goes through NumPy's output projection, and its time is the core's
median plus the projections' medians (projection_peer.py, timed in its own process).

bf16 / f16 workloads: the inputs are rounded to the dtype and the fp64 reference is computed on
the rounded values, so a row's error is what its own arithmetic and output rounding add; each row
is checked with the tolerance of the type its implementation stores tensors in.
"""
import math
import os
import shutil
import sys

import numpy as np

from limits import BENCH_DIR, run_json
from reference import block_reference, core_reference, project_out, project_qkv
from workloads import DTYPE_BYTES

TOLERANCE = 1e-4  # on max |out - fp64|, relative to max(1, max |fp64|)
# Outputs stored in 16 bits: four units of their rounding (bf16 2^-8, f16 2^-11). bf16 kernels
# also round P (and the block's q, k, v) to bf16 before the dot products that take them.
TOLERANCES = {"f32": TOLERANCE, "bf16": 4 * 2.0**-8, "f16": 4 * 2.0**-11}
# A timing's calls span at least this long: ten calls of a 10 ms kernel are 100 ms, which one
# busy moment on a shared host can cover whole (W1 causal, 12-04 01:25: median 17.8 ms of ten
# calls whose fastest took 10.2), while fma_peak's readings take about 0.3 s each.
WINDOW_MS = 300.0
MAX_WINDOW_CALLS = 100


def calls_for_window(median_ms, at_least):
    """Calls that fill WINDOW_MS at median_ms (at most MAX_WINDOW_CALLS), and never fewer than at_least."""
    if not median_ms or median_ms <= 0:
        return at_least
    return max(at_least, min(MAX_WINDOW_CALLS, math.ceil(WINDOW_MS / median_ms)))


def save_inputs(folder, arrays):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, array in arrays.items():
        np.save(os.path.join(folder, name + ".npy"), array)


def check(out, ref, relative=TOLERANCE):
    """(max |out - ref|, tolerance, ok)."""
    tolerance = relative * max(1.0, float(np.abs(ref).max()))
    if out.shape != ref.shape:
        return float("inf"), tolerance, False
    err = float(np.abs(out - ref).max())
    return err, tolerance, bool(np.isfinite(out).all() and err <= tolerance)


def row_for(workload, impl, result, limits):
    storage = impl.storage(workload)
    row = {"workload": workload.label, "name": workload.name, "impl": impl.name, "batch": workload.batch,
           "heads": workload.heads, "seq_q": workload.seq_q, "seq_k": workload.seq_k,
           "head_dim": workload.head_dim, "mask": workload.mask, "block": workload.block,
           "dtype": workload.dtype, "storage": storage, "flops": workload.flops()}
    if "skipped" in result or "error" in result:
        row["status"] = "skipped" if "skipped" in result else "error"
        row["message"] = result.get("skipped") or result.get("error")
        return row
    row.update({key: result[key] for key in ("median_ms", "min_ms", "runs", "version", "projection_ms",
                                             "max_abs_err", "tolerance", "status") if key in result})
    row["gflops"] = workload.flops() / (row["median_ms"] * 1e6)
    row["pct_fma_peak"] = 100 * row["gflops"] / limits["fma_peak_gflops"]
    if storage == "bf16" and limits.get("bf16_peak_gflops"):  # what a bf16 kernel is judged against
        row["pct_bf16_peak"] = 100 * row["gflops"] / limits["bf16_peak_gflops"]
    if workload.seq_q == 1:  # decode: bound by reading K and V, counted in the implementation's type
        row["kv_gbps"] = workload.kv_bytes(DTYPE_BYTES[storage]) / (row["median_ms"] * 1e6)
        row["pct_read"] = 100 * row["kv_gbps"] / limits["read_gbps"]
    return row


def measure(workload, implementations, data_dir, settings, env, limits, seed):
    """Returns one row per implementation; rows with status 'wrong' carry the error found."""
    runs = settings.runs_for(workload)
    arrays = workload.make_inputs(seed)
    save_inputs(data_dir, arrays)
    causal = workload.mask == "causal"
    core_dir = data_dir
    if workload.block:
        ref = block_reference(arrays["x"], arrays["w_qkv"], arrays["b_qkv"], arrays["w_o"], arrays["b_o"],
                              workload.heads, causal)
        core_dir = os.path.join(data_dir, "core")
        q, k, v = project_qkv(arrays["x"], arrays["w_qkv"], arrays["b_qkv"], workload.heads, np.float32)
        save_inputs(core_dir, {"q": q, "k": k, "v": v})
        projection = run_json([sys.executable, os.path.join(BENCH_DIR, "projection_peer.py"), data_dir,
                               str(workload.heads), str(settings.warmup), str(runs)], env)
    else:
        ref = core_reference(arrays["q"], arrays["k"], arrays["v"], causal)
    rows = []
    for impl in implementations:
        out_path = os.path.join(data_dir, f"out_{impl.name}.npy")
        composed = workload.block and not impl.runs_block
        result = impl.run(workload, core_dir if composed else data_dir, out_path, settings.warmup, runs)
        window_runs = runs if settings.quick else calls_for_window(result.get("median_ms"), runs)
        if window_runs > runs:
            result = impl.run(workload, core_dir if composed else data_dir, out_path, settings.warmup, window_runs)
        if "median_ms" in result:
            out = np.load(out_path)
            if composed:
                out = project_out(out, arrays["w_o"], arrays["b_o"], np.float32)
                result["projection_ms"] = projection["in_ms"] + projection["out_ms"]
                result["median_ms"] += result["projection_ms"]
                result["min_ms"] += result["projection_ms"]
            err, tolerance, ok = check(out, ref, TOLERANCES[impl.storage(workload)])
            result.update(max_abs_err=err, tolerance=tolerance, status="ok" if ok else "wrong")
        rows.append(row_for(workload, impl, result, limits))
    attnc_ms = next((r["median_ms"] for r in rows if r["impl"] == "attnc" and "median_ms" in r), None)
    for row in rows:
        if row["impl"] != "attnc" and attnc_ms and "median_ms" in row:
            row["ratio"] = row["median_ms"] / attnc_ms
    return rows
