"""attnc's CUDA kernels against PyTorch scaled_dot_product_attention on the same inputs.

fp32 rows, and bf16 / f16 rows (attnc's 16-bit storage, fp32 compute) against SDPA in the same
dtype on the same inputs.

Run by tools/gpu_check.sh on a machine with an NVIDIA GPU, from the bundle it built elsewhere: the
kernels are called through the Python binding (python/attnc, the bundle's libattnc_runtime.so) on
PyTorch CUDA tensors passed as device tensors (no copies), in PyTorch's context and on its stream,
and timed with CUDA events like SDPA in the same process. Writes gpu_bench.json and gpu_bench.md
into --out.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

import attnc

# (name, batch, heads, kv_heads, seq_q, seq_k, head_dim, causal, dtype): the shapes, and
# a few of them in bf16 and f16 (tools/gpu_check.sh's bench_specs build the same kernels).
CASES = [
    ("prefill D64", 8, 16, 16, 4096, 4096, 64, False, "f32"),
    ("prefill D64 causal", 8, 16, 16, 4096, 4096, 64, True, "f32"),
    ("prefill D128", 8, 16, 16, 4096, 4096, 128, False, "f32"),
    ("prefill D128 causal", 8, 16, 16, 4096, 4096, 128, True, "f32"),
    ("decode", 64, 32, 8, 1, 8192, 128, False, "f32"),
    ("prefill D128 causal bf16", 8, 16, 16, 4096, 4096, 128, True, "bf16"),
    ("prefill D128 causal f16", 8, 16, 16, 4096, 4096, 128, True, "f16"),
    ("decode bf16", 64, 32, 8, 1, 8192, 128, False, "bf16"),
]

TORCH_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def kernel_id(heads, kv_heads, head_dim, causal, dtype):
    return f"attn_core_h{heads}_kv{kv_heads}_d{head_dim}_{dtype}" + ("_causal" if causal else "")


def cuda_ms(fn, warmup=3, runs=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    return float(np.median(times))


def hbm_bandwidth():
    """GB/s of a device-to-device copy of 1 GiB (read + write counted)."""
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    ms = cuda_ms(lambda: dst.copy_(src))
    return 2 * src.numel() * 4 / (ms * 1e6)


def sdpa(q, k, v, causal, heads, kv_heads):
    # [B, S, H, D] -> [B, H, S, D]; GQA by repeating kv heads where enable_gqa is missing.
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    if kv_heads != heads:
        kt = kt.repeat_interleave(heads // kv_heads, dim=1)
        vt = vt.repeat_interleave(heads // kv_heads, dim=1)
    return lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)


def device(t):
    """What attnc takes for a CUDA tensor: bf16 as its bits (PyTorch has no array interface for it)."""
    return t.view(torch.int16) if t.dtype == torch.bfloat16 else t


def run_case(library, case, hbm):
    name, b, h, kvh, sq, sk, d, causal, dtype = case
    torch_dtype = TORCH_DTYPES[dtype]
    generator = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(shape, device="cuda", generator=generator)
               for shape in ((b, sq, h, d), (b, sk, kvh, d), (b, sk, kvh, d)))
    stored = [x.to(torch_dtype) for x in (q, k, v)]  # attnc's storage: the same rounded inputs as SDPA's
    out = torch.empty((b, sq, h, d), device="cuda", dtype=torch_dtype)
    kid = kernel_id(h, kvh, d, causal, dtype)
    result = {"case": name, "batch": b, "heads": h, "kv_heads": kvh, "seq_q": sq, "seq_k": sk,
              "head_dim": d, "causal": causal, "dtype": dtype, "kernel": kid}
    try:
        call, _ = library[kid].bind(q=device(stored[0]), k=device(stored[1]), v=device(stored[2]), out=device(out))
        call()
        torch.cuda.synchronize()
        result["attnc_ms"] = cuda_ms(call)
    except attnc.AttnError as e:
        result["error"] = str(e)[-500:]
        return result
    # Bottom-right causal alignment equals PyTorch's top-left one when Sq == Sk (the cases here).
    fn = sdpa(q, k, v, causal, h, kvh)
    same = fn if dtype == "f32" else sdpa(*stored, causal, h, kvh)
    expected = same().transpose(1, 2).float()
    result["max_abs_diff_vs_sdpa"] = float((out.float() - expected).abs().max())
    result["sdpa_fp32_ms"] = cuda_ms(fn)
    result["speedup_vs_sdpa_fp32"] = result["sdpa_fp32_ms"] / result["attnc_ms"]
    result["sdpa_same_dtype_ms"] = result["sdpa_fp32_ms"] if dtype == "f32" else cuda_ms(same)
    result["speedup_vs_sdpa_same_dtype"] = result["sdpa_same_dtype_ms"] / result["attnc_ms"]
    for low in (torch.bfloat16, torch.float16):
        result[f"sdpa_{str(low).split('.')[-1]}_ms"] = cuda_ms(sdpa(*(x.to(low) for x in (q, k, v)), causal, h, kvh))
    if sq == 1:
        read_bytes = sum(x.numel() * x.element_size() for x in stored[1:])
        result["attnc_read_gbs"] = read_bytes / (result["attnc_ms"] * 1e6)
        result["fraction_of_hbm_copy"] = result["attnc_read_gbs"] / hbm
    return result


def markdown(results, hbm, device_name):
    lines = [f"# attnc CUDA vs PyTorch SDPA ({device_name})", "",
             f"HBM copy bandwidth in this run: {hbm:.0f} GB/s. attnc times are attn_run calls on PyTorch CUDA "
             "tensors (device tensors, no copies), CUDA events around each, median of 10.", "",
             "SDPA/attnc compares SDPA in the row's dtype (attnc's bf16 and f16 rows store 16 bits and "
             "compute in fp32; max diff is against SDPA in the same dtype).", "",
             "| case | dtype | attnc ms | SDPA same dtype ms | SDPA/attnc | SDPA fp32 ms | SDPA bf16 ms | "
             "SDPA f16 ms | max diff | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['dtype']} | error | | | | | | | {r['error'][:120]} |")
            continue
        note = ""
        if "fraction_of_hbm_copy" in r:
            note = f"{r['attnc_read_gbs']:.0f} GB/s read, {100 * r['fraction_of_hbm_copy']:.1f}% of the copy"
        lines.append(
            f"| {r['case']} | {r['dtype']} | {r['attnc_ms']:.2f} | {r['sdpa_same_dtype_ms']:.2f} | "
            f"{r['speedup_vs_sdpa_same_dtype']:.3f} | {r['sdpa_fp32_ms']:.2f} | {r['sdpa_bfloat16_ms']:.2f} | "
            f"{r['sdpa_float16_ms']:.2f} | {r['max_abs_diff_vs_sdpa']:.2e} | {note} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("gpu_bench: PyTorch sees no CUDA device", file=sys.stderr)
        return 3
    device = torch.cuda.get_device_name(0)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 against fp32
    hbm = hbm_bandwidth()
    library = attnc.Library(os.path.join(args.bundle, "kernels", "gpu_bench.so"))
    results = []
    started = time.time()
    for case in CASES:
        t0 = time.time()
        results.append(run_case(library, case, hbm))
        results[-1]["wall_s"] = time.time() - t0
        print(json.dumps(results[-1]), flush=True)
    report = {"device": device, "torch": torch.__version__, "hbm_copy_gbs": hbm, "results": results,
              "wall_s": time.time() - started}
    with open(os.path.join(args.out, "gpu_bench.json"), "w") as f:
        json.dump(report, f, indent=2)
    with open(os.path.join(args.out, "gpu_bench.md"), "w") as f:
        f.write(markdown(results, hbm, device))
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
