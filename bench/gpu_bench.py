"""attnc's CUDA kernels against PyTorch scaled_dot_product_attention on the same inputs.

fp32 rows, and bf16 / f16 rows (attnc's 16-bit storage, fp32 compute) against SDPA in the same
dtype on the same rounded inputs.

Run by tools/gpu_check.sh on a machine with an NVIDIA GPU, from the bundle it built elsewhere:
attn-run times each kernel through the runtime with host tensors, so its times include copying
q, k, v to the device and out back (device tensors are not in the ABI yet). The copies of the
same bytes are timed here with PyTorch (pageable host memory, as attn-run's) and subtracted for
an estimate of the kernel time; both numbers are reported. Writes gpu_bench.json and
gpu_bench.md into --out.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

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


def load_out(path, dtype):
    """attn-run's out.npy as float32: f16 as '<f2', bf16 as its '<u2' bit patterns."""
    out = np.load(path)
    if dtype == "bf16":
        return (out.astype(np.uint32) << 16).view(np.float32)
    return out.astype(np.float32)


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


def host_copy_ms(host_arrays, out_shape, dtype):
    """Pageable host -> device copies of the inputs and device -> host of the output, in dtype."""
    tensors = [torch.from_numpy(a).to(dtype) for a in host_arrays]
    out = torch.empty(out_shape, dtype=dtype, device="cuda")
    out_host = torch.empty(out_shape, dtype=dtype)

    def copies():
        for t in tensors:
            t.to("cuda")
        out_host.copy_(out)

    return cuda_ms(copies, warmup=1, runs=5)


def sdpa(q, k, v, causal, heads, kv_heads):
    # [B, S, H, D] -> [B, H, S, D]; GQA by repeating kv heads where enable_gqa is missing.
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
    if kv_heads != heads:
        kt = kt.repeat_interleave(heads // kv_heads, dim=1)
        vt = vt.repeat_interleave(heads // kv_heads, dim=1)
    return lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)


def run_case(bundle, tmp, case, hbm):
    name, b, h, kvh, sq, sk, d, causal, dtype = case
    torch_dtype = TORCH_DTYPES[dtype]
    rng = np.random.default_rng(0)
    q = rng.standard_normal((b, sq, h, d), dtype=np.float32)
    k = rng.standard_normal((b, sk, kvh, d), dtype=np.float32)
    v = rng.standard_normal((b, sk, kvh, d), dtype=np.float32)
    paths = {}
    for n, a in (("q", q), ("k", k), ("v", v)):
        paths[n] = os.path.join(tmp, n + ".npy")
        np.save(paths[n], a)
    out_path = os.path.join(tmp, "out.npy")
    lib = os.path.join(bundle, "kernels", "gpu_bench.so")
    kid = kernel_id(h, kvh, d, causal, dtype)
    base = [os.path.join(bundle, "bin", "attn-run"), lib, "--kernel", kid] + [
        a for n in ("q", "k", "v") for a in ("--input", f"{n}={paths[n]}")]
    env = dict(os.environ, ATTN_DEVICE="cuda")
    result = {"case": name, "batch": b, "heads": h, "kv_heads": kvh, "seq_q": sq, "seq_k": sk,
              "head_dim": d, "causal": causal, "dtype": dtype, "kernel": kid}
    check = subprocess.run(base + ["--output", f"out={out_path}"], capture_output=True, text=True, env=env)
    if check.returncode != 0:
        result["error"] = check.stderr.strip()[-500:]
        return result
    bench = subprocess.run(base + ["--bench", "--json", "--warmup", "1", "--runs", "5"],
                           capture_output=True, text=True, env=env)
    if bench.returncode != 0:
        result["error"] = bench.stderr.strip()[-500:]
        return result
    ours = json.loads(bench.stdout.strip().splitlines()[-1])
    result["attnc_variant"] = ours["variant"]
    result["attnc_call_ms"] = ours["median_ms"]
    copy_ms = host_copy_ms([q, k, v], (b, sq, h, d), torch_dtype)
    result["host_copies_ms"] = copy_ms
    kernel_ms = max(ours["median_ms"] - copy_ms, 1e-3)
    result["attnc_kernel_ms_est"] = kernel_ms
    # Where the copies are most of the call, the difference is mostly noise.
    result["estimate_reliable"] = copy_ms < 0.5 * ours["median_ms"]

    qd, kd, vd = (torch.from_numpy(a).cuda() for a in (q, k, v))
    # Bottom-right causal alignment equals PyTorch's top-left one when Sq == Sk (the cases here).
    fn = sdpa(qd, kd, vd, causal, h, kvh)
    # SDPA in the case's dtype, on the inputs rounded as attn-run rounds them (nearest even).
    same = fn if dtype == "f32" else sdpa(*(x.to(torch_dtype) for x in (qd, kd, vd)), causal, h, kvh)
    expected = same().transpose(1, 2).float().cpu().numpy()
    got = load_out(out_path, dtype)
    result["max_abs_diff_vs_sdpa"] = float(np.abs(got - expected).max())
    result["sdpa_fp32_ms"] = cuda_ms(fn)
    result["speedup_vs_sdpa_fp32"] = result["sdpa_fp32_ms"] / kernel_ms
    result["sdpa_same_dtype_ms"] = result["sdpa_fp32_ms"] if dtype == "f32" else cuda_ms(same)
    result["speedup_vs_sdpa_same_dtype"] = result["sdpa_same_dtype_ms"] / kernel_ms
    for dtype in (torch.bfloat16, torch.float16):
        low = sdpa(*(x.to(dtype) for x in (qd, kd, vd)), causal, h, kvh)
        result[f"sdpa_{str(dtype).split('.')[-1]}_ms"] = cuda_ms(low)
    if sq == 1:
        read_bytes = (k.nbytes + v.nbytes) * torch.empty((), dtype=torch_dtype).element_size() // 4
        result["attnc_read_gbs_est"] = read_bytes / (kernel_ms * 1e6)
        result["fraction_of_hbm_copy"] = result["attnc_read_gbs_est"] / hbm
    return result


def markdown(results, hbm, device):
    lines = [f"# attnc CUDA vs PyTorch SDPA ({device})", "",
             f"HBM copy bandwidth in this run: {hbm:.0f} GB/s. attnc times are attn-run calls with host tensors "
             "minus PyTorch's time for the same host<->device copies (an estimate; the call itself is listed).", "",
             "SDPA/attnc compares SDPA in the row's dtype (attnc's bf16 and f16 rows store 16 bits and "
             "compute in fp32; max diff is against SDPA in the same dtype).", "",
             "| case | dtype | attnc call ms | copies ms | attnc kernel ms (est.) | SDPA same dtype ms | SDPA/attnc | "
             "SDPA fp32 ms | SDPA bf16 ms | SDPA f16 ms | max diff | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['dtype']} | error | | | | | | | | | {r['error'][:120]} |")
            continue
        note = "" if r["estimate_reliable"] else "copies are most of the call: estimate unreliable; "
        if "fraction_of_hbm_copy" in r:
            note += f"{r['attnc_read_gbs_est']:.0f} GB/s read, {100 * r['fraction_of_hbm_copy']:.1f}% of the copy"
        lines.append(
            f"| {r['case']} | {r['dtype']} | {r['attnc_call_ms']:.2f} | {r['host_copies_ms']:.2f} | "
            f"{r['attnc_kernel_ms_est']:.2f} | {r['sdpa_same_dtype_ms']:.2f} | {r['speedup_vs_sdpa_same_dtype']:.3f} | "
            f"{r['sdpa_fp32_ms']:.2f} | {r['sdpa_bfloat16_ms']:.2f} | "
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
    results = []
    started = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            t0 = time.time()
            results.append(run_case(args.bundle, tmp, case, hbm))
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
