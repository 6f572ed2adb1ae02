"""Issue 33's backward rows: attnc's backward kernel against its forward and PyTorch's, paired.

Every round reads the fp32 FMA peak (bench/fma_peak.cpp), then times, in an order that rotates
from round to round, W1 (B1 H12 S1024 D64, none and causal; fp32 and bf16) as attnc's forward
(lse=true) and backward (backward=true) kernels (attn-run --bench), and PyTorch's CPU
scaled_dot_product_attention backward on the same inputs (its autograd backward alone: the graph
kept, backward called again), where PyTorch is importable; else NumPy's unfused backward in
fp32 (the floor peer). attnc's gradients are checked against an fp64 NumPy backward on the first
round. The backward's FLOPs are counted as 2.5x the forward's (5 matrix products).

Usage: backward_paired.py BUILD_DIR   Environment: THREADS (2), ROUNDS (5), RUNS (5 calls per timing)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
SHAPE = (1, 1024, 12, 64)
FORWARD_FLOP = 4 * SHAPE[0] * SHAPE[2] * SHAPE[1] * SHAPE[1] * SHAPE[3]  # QK^T and P.V, no mask


def to_bf16_bits(a):
    bits = a.astype(np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


def reference_backward(q, k, v, dout, causal):
    """dq, dk, dv of sum(out * dout) in fp64, with NumPy (B, S, H, D layout)."""
    q, k, v, dout = (x.astype(np.float64) for x in (q, k, v, dout))
    scale = 1 / np.sqrt(q.shape[-1])
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    do = np.einsum("bqhd->bhqd", dout)
    dv = np.einsum("bhqk,bhqd->bkhd", p, do)
    dp = np.einsum("bhqd,bkhd->bhqk", do, v)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    return (np.einsum("bhqk,bkhd->bqhd", ds, k) * scale, np.einsum("bhqk,bqhd->bkhd", ds, q) * scale, dv)


def numpy_backward_f32(q, k, v, dout, causal):
    """The unfused backward in fp32: the floor peer where PyTorch is missing."""
    scale = np.float32(1 / np.sqrt(q.shape[-1]))
    s = np.einsum("bqhd,bkhd->bhqk", q, k, optimize=True) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], dtype=bool)), s, np.float32(-np.inf))
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    do = np.ascontiguousarray(np.einsum("bqhd->bhqd", dout))
    np.einsum("bhqk,bhqd->bkhd", p, do, optimize=True)
    dp = np.einsum("bhqd,bkhd->bhqk", do, v, optimize=True)
    ds = p * (dp - (p * dp).sum(-1, keepdims=True))
    np.einsum("bhqk,bkhd->bqhd", ds, k, optimize=True)
    np.einsum("bhqk,bqhd->bkhd", ds, q, optimize=True)


def torch_backward_timer(inputs, dout, causal, bf16, threads, runs):
    """Median ms of PyTorch SDPA's backward alone, or None without PyTorch."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(threads)
    dtype = torch.bfloat16 if bf16 else torch.float32
    q, k, v = (torch.tensor(inputs[n]).to(dtype).transpose(1, 2).contiguous().requires_grad_() for n in "qkv")
    grad = torch.tensor(dout).to(dtype).transpose(1, 2).contiguous()
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out.backward(grad, retain_graph=True)  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out.backward(grad, retain_graph=True)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def attn_run(build, library, kernel, arrays, outputs, threads, runs):
    command = [os.path.join(build, "tools", "attn-run"), library, "--kernel", kernel,
               *sum((["--input", f"{n}={p}"] for n, p in arrays.items()), []),
               *sum((["--output", f"{n}={p}"] for n, p in outputs.items()), []),
               "--threads", str(threads), "--bench", "--json", "--runs", str(runs)]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)["median_ms"]


def main():
    build = os.path.abspath(sys.argv[1])
    threads, rounds, runs = (int(os.environ.get(n, d)) for n, d in (("THREADS", 2), ("ROUNDS", 5), ("RUNS", 5)))
    work = tempfile.mkdtemp(prefix="backward_paired_")
    fma = os.path.join(work, "fma_peak")
    subprocess.run(["c++", "-O3", "-march=native", "-std=c++17", "-pthread", os.path.join(BENCH, "fma_peak.cpp"),
                    "-o", fma], check=True)
    workloads = [(causal, dtype) for causal in (False, True) for dtype in ("f32", "bf16")]
    specs = []
    for causal, dtype in workloads:
        base = f"heads=12 head_dim=64{' mask=causal' if causal else ''} dtype={dtype}"
        specs += [base + " lse=true", base + " backward=true"]
    subprocess.run([os.path.join(build, "tools", "attnc"), "gen", *sum((["--spec", s] for s in specs), []),
                    "--target", "host", "--shared", "--basename", "w1", "-o", work], check=True, capture_output=True)
    library = os.path.join(work, "w1.so")
    rng = np.random.default_rng(1)
    inputs = {n: rng.standard_normal(SHAPE).astype(np.float32) for n in ("q", "k", "v", "dout")}
    path = {}
    for n, a in inputs.items():
        path[n, "f32"] = os.path.join(work, f"{n}.npy")
        path[n, "bf16"] = os.path.join(work, f"{n}_bf16.npy")
        np.save(path[n, "f32"], a)
        np.save(path[n, "bf16"], to_bf16_bits(a))
    rows = {}
    have_torch = True
    for r in range(rounds):
        fma_peak = json.loads(subprocess.run([fma, str(threads)], capture_output=True, text=True,
                                             check=True).stdout)["fma_peak_gflops"]
        order = workloads[r % len(workloads):] + workloads[:r % len(workloads)]
        for causal, dtype in order:
            kernel = f"attn_core_h12_kv12_d64_{dtype}{'_causal' if causal else ''}"
            qkv = {n: path[n, dtype] for n in "qkv"}
            out, lse = os.path.join(work, "out.npy"), os.path.join(work, "lse.npy")
            forward_ms = attn_run(build, library, kernel + "_lse", qkv, {"out": out, "lse": lse}, threads, runs)
            grads = {g: os.path.join(work, f"{g}.npy") for g in ("dq", "dk", "dv")}
            backward_ms = attn_run(build, library, kernel + "_bwd",
                                   {**qkv, "out": out, "lse": lse, "dout": path["dout", dtype]}, grads, threads, runs)
            if r == 0:
                source = {n: (from_bf16_bits(to_bf16_bits(a)) if dtype == "bf16" else a) for n, a in inputs.items()}
                exact = reference_backward(source["q"], source["k"], source["v"], source["dout"], causal)
                for g, want in zip(("dq", "dk", "dv"), exact):
                    got = np.load(grads[g])
                    got = from_bf16_bits(got) if got.dtype == np.uint16 else got
                    error = float(np.abs(got - want).max() / np.abs(want).max())
                    if error > (2e-2 if dtype == "bf16" else 1e-4):
                        sys.exit(f"wrong gradient: {g} W1 {dtype}{' causal' if causal else ''}: "
                                 f"max error {error:.3g} of the largest")
            peer = torch_backward_timer(inputs, inputs["dout"], causal, dtype == "bf16", threads, runs)
            if peer is None:
                have_torch = False
                start = time.perf_counter()
                numpy_backward_f32(inputs["q"], inputs["k"], inputs["v"], inputs["dout"], causal)
                peer = (time.perf_counter() - start) * 1e3
            rows.setdefault((causal, dtype), []).append((forward_ms, backward_ms, peer, fma_peak))
    peer_name = "PyTorch SDPA backward" if have_torch else "NumPy unfused fp32 backward (PyTorch missing)"
    print(f"W1 B1 H12 S1024 D64, {threads} threads, {rounds} rounds of {runs} calls; medians over rounds; "
          f"peer: {peer_name}")
    print("| workload | dtype | forward ms | backward ms | backward / forward | % FMA peak | peer ms | "
          "attnc vs peer |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for causal, dtype in workloads:
        t = rows[(causal, dtype)]
        flop = 2.5 * FORWARD_FLOP / (2 if causal else 1)
        fwd, bwd, peer = (statistics.median(x[i] for x in t) for i in range(3))
        ratio = statistics.median(x[1] / x[0] for x in t)
        pct = statistics.median(100 * flop / (x[1] * 1e-3) / (x[3] * 1e9) for x in t)
        speed = statistics.median(x[2] / x[1] for x in t)
        print(f"| W1 {'causal' if causal else 'none'} | {dtype} | {fwd:.2f} | {bwd:.2f} | {ratio:.2f} | {pct:.1f}% | "
              f"{peer:.2f} | {speed:.2f}x |")
    print(f"FMA peak (median of rounds): {statistics.median(x[3] for t in rows.values() for x in t):.1f} GFLOP/s")


if __name__ == "__main__":
    main()
