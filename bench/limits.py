"""The machine and its limits: CPU model and flags, FMA and bf16 dot-product peaks, sgemm GFLOP/s,
DRAM read bandwidth."""
import json
import os
import subprocess
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))


def compile_helper(source, binary, extra_flags=()):
    """Builds bench/SOURCE with c++ -O3 -march=native; returns the binary's path."""
    subprocess.run(["c++", "-O3", "-march=native", "-std=c++17", "-pthread", os.path.join(BENCH_DIR, source),
                    "-o", binary, *extra_flags], check=True)
    return binary


def machine_info():
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    fields = dict(line.split(":", 1) for line in lscpu.splitlines() if ":" in line)
    flags = fields.get("Flags", "").split()
    return {"model_name": fields.get("Model name", "unknown").strip(), "nproc": os.cpu_count(),
            "avx2": "avx2" in flags, "fma": "fma" in flags, "avx512f": "avx512f" in flags,
            "avx512_bf16": "avx512_bf16" in flags,
            "l3_cache": fields.get("L3 cache", "unknown").strip()}


def busy_fraction(seconds=2.0):
    """The share of all CPUs busy over SECONDS while the harness sleeps: other jobs (/proc/stat)."""
    def idle_and_total():
        with open("/proc/stat") as stat:
            ticks = [int(t) for t in stat.readline().split()[1:9]]  # user .. steal
        return ticks[3] + ticks[4], sum(ticks)  # idle + iowait
    idle_before, total_before = idle_and_total()
    time.sleep(seconds)
    idle_after, total_after = idle_and_total()
    return 1.0 - (idle_after - idle_before) / max(1, total_after - total_before)


def run_json(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"{command[0]} failed: {result.stderr.strip()}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def bf16_peak(out_dir, cores):
    """The vdpbf16ps peak on one core and on all: {"bf16_peak_gflops": ..., ...} or {"skipped": why}."""
    try:
        binary = compile_helper("bf16_peak.cpp", os.path.join(out_dir, "bf16_peak"))
    except subprocess.CalledProcessError:
        return {"skipped": "bf16_peak.cpp did not build (a compiler without avx512bf16)"}
    return run_json([binary, str(cores)])


def measure_limits(out_dir, threads, env):
    """The FMA and bf16 peaks on all cores; sgemm and read bandwidth with THREADS threads (env pins BLAS's)."""
    fma = compile_helper("fma_peak.cpp", os.path.join(out_dir, "fma_peak"))
    bandwidth = compile_helper("read_bandwidth.cpp", os.path.join(out_dir, "read_bandwidth"))
    cores = os.cpu_count()
    limits = {"fma_peak_threads": cores, "fma_peak_gflops": run_json([fma, str(cores)])["fma_peak_gflops"]}
    bf16 = bf16_peak(out_dir, cores)
    limits["bf16_peak_gflops"] = bf16.get("bf16_peak_gflops")
    limits["bf16_peak_gflops_1t"] = bf16.get("bf16_peak_gflops_1t")
    if "skipped" in bf16:
        limits["bf16_peak_skipped"] = bf16["skipped"]
    sgemm = run_json([sys.executable, os.path.join(BENCH_DIR, "sgemm_peak.py")], env)
    limits["sgemm_gflops"] = sgemm["sgemm_gflops"]
    limits["blas"] = sgemm["blas"]
    limits["read_gbps"] = run_json([bandwidth, str(threads), "1024"])["read_gbps"]
    return limits
