"""Issue 36's Intel rows: bf16 on AMX tiles against attnc's fp32 kernel, paired, with the limits read beside.

Every round reads the fp32 FMA peak (bench/fma_peak.cpp) and the AMX bf16 tile peak
(bench/amx_peak.cpp), then times, in an order that rotates from round to round, W1 (B1 H12 S1024
D64, none and causal) as attnc's fp32 kernel, its bf16 kernel (the host set's best variant: AMX
tiles on an AMX CPU) and the same bf16 kernel capped at ATTN_MAX_ISA=avx512 (the Skylake class
variant: bf16 converted to fp32). Outputs are checked against fp64 on the first round. Prints the
medians of the per-round times and ratios, and the fractions of the peaks read in the same round.

Usage: amx_paired.py BUILD_DIR   Environment: THREADS (2), ROUNDS (5), RUNS (10 calls per timing)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
SHAPE = (1, 1024, 12, 64)
FLOP = 4 * SHAPE[0] * SHAPE[2] * SHAPE[1] * SHAPE[1] * SHAPE[3]  # QK^T and P.V, no mask


def build_peak(source, folder):
    binary = os.path.join(folder, source.replace(".cpp", ""))
    subprocess.run(["c++", "-O3", "-march=native", "-std=c++17", "-pthread", os.path.join(BENCH, source), "-o",
                    binary], check=True)
    return binary


def peak(binary, key, threads):
    return json.loads(subprocess.run([binary, str(threads)], capture_output=True, text=True, check=True).stdout)[key]


def to_bf16_bits(a):
    bits = a.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def reference(q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhqk,bkhd->bqhd", p / p.sum(-1, keepdims=True), v)


def main():
    build = os.path.abspath(sys.argv[1])
    threads, rounds, runs = (int(os.environ.get(n, d)) for n, d in (("THREADS", 2), ("ROUNDS", 5), ("RUNS", 10)))
    work = tempfile.mkdtemp(prefix="amx_paired_")
    fma, amx = build_peak("fma_peak.cpp", work), build_peak("amx_peak.cpp", work)
    specs = [f"heads=12 head_dim=64{m}{d}" for m in ("", " mask=causal") for d in ("", " dtype=bf16")]
    subprocess.run([os.path.join(build, "tools", "attnc"), "gen", *sum((["--spec", s] for s in specs), []),
                    "--target", "host", "--shared", "--basename", "w1", "-o", work], check=True, capture_output=True)
    rng = np.random.default_rng(1)
    inputs = {n: rng.standard_normal(SHAPE).astype(np.float32) for n in ("q", "k", "v")}
    for n, a in inputs.items():
        np.save(os.path.join(work, f"{n}.npy"), a)
        np.save(os.path.join(work, f"{n}_bf16.npy"), to_bf16_bits(a))
    rounded = {n: from_bf16_bits(to_bf16_bits(a)) for n, a in inputs.items()}
    kinds = [("fp32", "f32", "", None), ("bf16", "bf16", "_bf16", None), ("bf16 avx512 cap", "bf16", "_bf16", "avx512")]
    rows = {}
    for r in range(rounds):
        limits = {"fma": peak(fma, "fma_peak_gflops", threads), "amx": peak(amx, "amx_peak_gflops", threads)}
        for causal in (False, True):
            order = kinds[r % 3:] + kinds[:r % 3]
            for name, dtype, suffix, cap in order:
                kernel = f"attn_core_h12_kv12_d64_{dtype}{'_causal' if causal else ''}"
                out = os.path.join(work, "out.npy")
                command = [os.path.join(build, "tools", "attn-run"), os.path.join(work, "w1.so"), "--kernel", kernel,
                           *sum((["--input", f"{n}={os.path.join(work, n + suffix + '.npy')}"] for n in "qkv"), []),
                           "--output", f"out={out}", "--threads", str(threads), "--bench", "--json", "--runs", str(runs)]
                if cap:
                    command += ["--max-isa", cap]
                result = json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
                if r == 0:
                    got = np.load(out)
                    got = from_bf16_bits(got) if got.dtype == np.uint16 else got
                    source = rounded if dtype == "bf16" else inputs
                    ref = reference(source["q"], source["k"], source["v"], causal)
                    error = float(np.abs(got - ref).max())
                    if error > (2e-2 if dtype == "bf16" else 1e-4):
                        sys.exit(f"wrong result: {name} W1{' causal' if causal else ''}: max error {error:.3g}")
                rows.setdefault((causal, name), []).append((result["median_ms"], limits))
    print(f"W1 B1 H12 S1024 D64, {threads} threads, {rounds} rounds of {runs} calls; medians over rounds")
    print("| workload | kernel | ms | vs fp32 kernel | % FMA peak | % AMX tile peak |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for causal in (False, True):
        fp32 = rows[(causal, "fp32")]
        flop = FLOP / (2 if causal else 1)
        for name, *_ in kinds:
            timings = rows[(causal, name)]
            ms = statistics.median(t for t, _ in timings)
            speedup = statistics.median(f[0] / t[0] for f, t in zip(fp32, timings))
            fma_pct = statistics.median(100 * flop / (t * 1e-3) / (lim["fma"] * 1e9) for t, lim in timings)
            amx_pct = (statistics.median(100 * flop / (t * 1e-3) / (lim["amx"] * 1e9) for t, lim in timings)
                       if all(lim["amx"] for _, lim in timings) else None)
            print(f"| W1 {'causal' if causal else 'none'} | {name} | {ms:.2f} | {speedup:.2f}x | {fma_pct:.1f}% | "
                  f"{'-' if amx_pct is None or name == 'fp32' else f'{amx_pct:.1f}%'} |")
    limits = [lim for _, lim in rows[(False, "fp32")]]
    print(f"limits (median of rounds): FMA peak {statistics.median(l['fma'] for l in limits):.1f} GFLOP/s, "
          f"AMX bf16 tile peak {statistics.median(l['amx'] or 0 for l in limits):.1f} GFLOP/s")


if __name__ == "__main__":
    main()
