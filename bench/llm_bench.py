"""make bench, issue 24's rows: LLM inference through a KV cache, with fused RoPE, against peers.

Workloads (Llama-3-8B's attention: H32 KVH8 D128, causal, fp32):
- decode, B in {1, 8, 32} x cache lengths {1024, 8192, 32768} (a step whose keys and values
  take 8 GiB or more is left out: the driver holds the cache twice, contiguous and paged, on a
  machine of 24 GiB). Each is judged as a share of the DRAM read bandwidth (bench/read_bandwidth)
  measured right before it: bytes = B * Lk * KVH * (D + Dv) * 4, each KV head read once.
- chunked prefill: Sq = 512 appended to an 8192-token cache, as a share of the fp32 FMA peak
  (bench/fma_peak, all cores) measured right before it.
- RoPE fused vs not: the same kernels with rope=neox, on every decode shape, the prefill chunk, and
  W1's shape without a cache (B1 H12 S1024 D64, none and causal).
- Cache storage (decode, contiguous): the same step on a bf16 cache (dtype=bf16: every tensor bf16),
  an int8 one and an fp8_e4m3 one (kv_dtype; q and out f32), the inputs quantized by
  bench/llm_quant.py and the references taken over the decoded caches; bytes count what each reads
  (codes, and int8's per-token scales).
attnc's rows: contiguous cache, paged (P = 16 and 128, pages shuffled), contiguous with RoPE, timed
by bench/llm_run.cpp through the runtime's C ABI. Peers, each in its own process on the same inputs:
ONNX Runtime's GroupQueryAttention (its KV cache, written in place; with and without its rotary)
and the unfused NumPy path. Every output is checked against fp64 (bench/llm_reference.py).

Usage: llm_bench.py BUILD_DIR
Environment: THREADS (2), BENCH_RUNS (10; calls fill at least measure.WINDOW_MS; over 10 GFLOP
half, at least 3, after one warm-up call), BENCH_QUICK=1
(B1 and B8 at 1024 and 8192 only, 3 runs), BENCH_LLM_SHAPES=decode,prefill,w1 (which groups),
BENCH_LLM_DECODE=8x8192,32x8192 (only those B x Lk of the decode grid),
BENCH_LLM_TARGET (native: this CPU's variant only, the one the host dispatch set would pick here,
generated in a quarter of the time; host for the whole set), BENCH_LLM_ROUNDS (3; BENCH_QUICK 1):
rounds of attnc's kernels per workload, alternating their order, each after its own reading of
the limit (medians of the rounds; ratios between attnc's kernels are medians of per-round ratios).
Writes BUILD/bench/llm.json and llm.md.
"""
import quiet_driver  # noqa: F401  (first: before numpy)
import datetime
import json
import os
import shutil
import sys
from dataclasses import dataclass

import numpy as np

import kernels
from implementations import importable, run_process
from limits import BENCH_DIR, busy_fraction, compile_helper, machine_info, run_json
from llm_quant import cache_bytes, cache_inputs
from llm_reference import cache_reference, plain_reference
from llm_summary import summary
from measure import TOLERANCE, TOLERANCES, WINDOW_MS, calls_for_window, check

H, KVH, D = 32, 8, 128
GIB = 1 << 30
MAX_KV_BYTES = 8 * GIB  # a decode step's K and V at or beyond this are left out
BATCHES, CACHE_LENGTHS = (1, 8, 32), (1024, 8192, 32768)
BIG_FLOPS = 10e9  # workloads above: half the runs (at least 3) and one warm-up call, as run_bench.py


@dataclass(frozen=True)
class Workload:
    kind: str        # decode, prefill (through a cache) or w1 (no cache)
    batch: int
    seq_q: int
    cache_len: int   # tokens in the cache before the call (w1: 0)
    heads: int = H
    kv_heads: int = KVH
    head_dim: int = D
    causal: bool = True

    @property
    def keys(self):
        """Lk: the keys each query row's sequence holds after the call (w1: Sk = Sq)."""
        return self.cache_len + self.seq_q

    @property
    def label(self):
        if self.kind == "w1":
            return f"W1 B{self.batch} H{self.heads} S{self.seq_q} D{self.head_dim} {'causal' if self.causal else 'none'}"
        return (f"{self.kind} B{self.batch} H{self.heads} KVH{self.kv_heads} Sq{self.seq_q} Lk{self.keys} "
                f"D{self.head_dim}")

    def spec(self, cache, rope, storage="f32"):
        """cache: contiguous, paged(P) or None; rope: bool; storage: f32, bf16, int8 or fp8."""
        text = f"heads={self.heads} kv_heads={self.kv_heads} head_dim={self.head_dim} " \
               f"mask={'causal' if self.causal else 'none'}"
        text += {"f32": "", "bf16": " dtype=bf16", "int8": " kv_dtype=int8", "fp8": " kv_dtype=fp8_e4m3"}[storage]
        return text + (f" kv_cache={cache}" if cache else "") + (" rope=neox" if rope else "")

    def kv_bytes(self, storage="f32"):
        return cache_bytes(self.batch, self.keys, self.kv_heads, self.head_dim, storage)

    def flops(self):
        """4 B H D per kept (query, key) pair."""
        if self.causal:
            pairs = sum(min(self.keys, self.cache_len + i + 1) for i in range(self.seq_q)) if self.kind != "w1" \
                else self.seq_q * (self.seq_q + 1) // 2
        else:
            pairs = self.seq_q * self.keys
        return 4 * self.batch * self.heads * self.head_dim * pairs

    def make_inputs(self, seed):
        rng = np.random.default_rng(seed)

        def normal(*shape):
            return rng.standard_normal(shape, dtype=np.float32)
        if self.kind == "w1":
            return {n: normal(self.batch, self.seq_q, self.heads, self.head_dim) for n in ("q", "k", "v")}
        return {"q": normal(self.batch, self.seq_q, self.heads, self.head_dim),
                "k_new": normal(self.batch, self.seq_q, self.kv_heads, self.head_dim),
                "v_new": normal(self.batch, self.seq_q, self.kv_heads, self.head_dim),
                # The cache fits the call exactly (Smax = Lk); the slots the call writes hold noise.
                "k_cache": normal(self.batch, self.keys, self.kv_heads, self.head_dim),
                "v_cache": normal(self.batch, self.keys, self.kv_heads, self.head_dim)}


def plan(quick, groups, decode_shapes=None):
    """decode_shapes: {(B, Lk)} to keep of the decode grid, or None for all."""
    chosen = []
    if "decode" in groups:
        for b in BATCHES[:2] if quick else BATCHES:
            for sk in CACHE_LENGTHS[:2] if quick else CACHE_LENGTHS:
                w = Workload("decode", b, 1, sk - 1)
                if w.kv_bytes() < MAX_KV_BYTES and (decode_shapes is None or (b, sk) in decode_shapes):
                    chosen.append(w)
    if "prefill" in groups:
        chosen.append(Workload("prefill", 1, 512, 8192))
    if "w1" in groups:
        chosen += [Workload("w1", 1, 1024, 0, heads=12, kv_heads=12, head_dim=64, causal=c) for c in (False, True)]
    return chosen


# (row name, cache, rope) of attnc's kernels for a workload with a cache; W1 has no cache.
# attnc-core: the plain core kernel on the same keys (the cache's k and v with the new tokens in
# place), what the cache costs over the attention alone.
# Decode also on bf16, int8 and fp8 caches: (row name, cache, rope, storage).
CACHE_VARIANTS = (("attnc", "contiguous", False), ("attnc-paged16", "paged(16)", False),
                  ("attnc-paged128", "paged(128)", False), ("attnc-rope", "contiguous", True),
                  ("attnc-core", None, False))
W1_VARIANTS = (("attnc", None, False), ("attnc-rope", None, True))
STORAGE_VARIANTS = (("attnc-bf16", "contiguous", False, "bf16"), ("attnc-int8", "contiguous", False, "int8"),
                    ("attnc-fp8", "contiguous", False, "fp8"))
# Each storage row's time against: the bf16 cache against f32's, the 8-bit caches against bf16's.
STORAGE_AGAINST = {"attnc-bf16": "attnc", "attnc-int8": "attnc-bf16", "attnc-fp8": "attnc-bf16"}
# llama.cpp's attention (decode only): (its peer's KV argument, the storage its bytes are counted
# in, the attnc row it is judged against). Flash attention on its f16 and q8_0 caches, and its
# graph without flash attention on an f16 cache (V transposed).
LLAMACPP_CACHES = {"llamacpp-f16": ("f16", "f16", "attnc-bf16"), "llamacpp-q8_0": ("q8_0", "q8_0", "attnc-int8"),
                   "llamacpp-f16-nofa": ("f16-nofa", "f16", "attnc-bf16")}


def variants(workload):
    """(row name, cache, rope, storage) of attnc's kernels for the workload."""
    if workload.kind == "w1":
        return tuple(v + ("f32",) for v in W1_VARIANTS)
    plain = tuple(v + ("f32",) for v in CACHE_VARIANTS)
    return plain + STORAGE_VARIANTS if workload.kind == "decode" else plain


class Runner:
    """Runs attnc's kernels (llm_run) and the peers on one workload's inputs."""

    def __init__(self, build, out_dir, threads, env):
        self.build, self.threads, self.env = build, threads, env
        runtime = os.path.join(build, "runtime", "libattnc_runtime.a")
        self.driver = compile_helper("llm_run.cpp", os.path.join(out_dir, "llm_run"),
                                     ["-I", os.path.join(BENCH_DIR, "..", "runtime", "include"), runtime, "-ldl"])
        self.ids = {}
        missing = importable(["onnxruntime", "onnx"])
        self.ort_skipped = f"{missing} not installed" if missing else None
        self.llamacpp_skipped = "llama_cpp (llama-cpp-python) not installed" if importable(["llama_cpp"]) else None

    def attnc(self, library, workload, cache, rope, storage, folder, out_path, warmup, runs):
        spec = workload.spec(cache, rope, storage)
        folder = folder if storage == "f32" else os.path.join(folder, storage)
        if spec not in self.ids:
            self.ids[spec] = kernels.kernel_id(self.build, spec)
        return run_process([self.driver, library, self.ids[spec], folder, out_path, str(self.threads), str(warmup),
                            str(runs), str(workload.cache_len)], self.env)

    def peer(self, script, workload, rope, folder, out_path, warmup, runs, extra=()):
        return run_process([sys.executable, os.path.join(BENCH_DIR, script), folder, out_path, str(self.threads),
                            str(warmup), str(runs), str(workload.cache_len), str(int(rope)), *extra], self.env)

    def implementations(self, library, workload):
        """[(row name, rope, run(folder, out_path, warmup, runs))] for the workload."""
        rows = [(name, rope, lambda f, o, w, r, c=cache, rp=rope, st=storage:
                 self.attnc(library, workload, c, rp, st, f, o, w, r))
                for name, cache, rope, storage in variants(workload)]
        if workload.kind == "w1":
            return rows
        for rope in (False, True):
            suffix = "-rope" if rope else ""
            if self.ort_skipped:
                rows.append((f"onnxruntime-gqa{suffix}", rope, lambda *_, why=self.ort_skipped: {"skipped": why}))
            else:
                rows.append((f"onnxruntime-gqa{suffix}", rope,
                             lambda f, o, w, r, rp=rope: self.peer("gqa_peer.py", workload, rp, f, o, w, r)))
        rows.append(("numpy-unfused", False,
                     lambda f, o, w, r: self.peer("unfused_cache_peer.py", workload, False, f, o, w, r)))
        if workload.kind == "decode":
            for name, (kv, _, _) in LLAMACPP_CACHES.items():
                if self.llamacpp_skipped:
                    rows.append((name, False, lambda *_, why=self.llamacpp_skipped: {"skipped": why}))
                else:
                    rows.append((name, False, lambda f, o, w, r, kv=kv:
                                 self.peer("llamacpp_peer.py", workload, False, f, o, w, r, (kv,))))
        return rows


def reference(workload, arrays, rope):
    if workload.kind == "w1":
        return plain_reference(arrays["q"], arrays["k"], arrays["v"], workload.causal, rope)
    return cache_reference(arrays["q"], arrays["k_new"], arrays["v_new"], arrays["k_cache"], arrays["v_cache"],
                           workload.cache_len, rope)


def measure_workload(runner, library, workload, folder, seed, runs, warmup, limit, rounds):
    """The rows of one workload: every implementation timed on the same inputs and checked.
    attnc's kernels run in `rounds` rounds, in alternating order, each round after a fresh reading
    of the limit; their medians, fractions of the limit and ratios are medians over the rounds
    (the ratios of kernels timed back to back). The peers run once, after the first round."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    arrays = workload.make_inputs(seed)
    for name, array in arrays.items():
        np.save(os.path.join(folder, name + ".npy"), array)
    refs = {rope: reference(workload, arrays, rope) for rope in (False, True)}
    storage_of = {v[0]: v[3] for v in variants(workload)}
    for storage in sorted(set(storage_of.values()) - {"f32"}):
        files, seen = cache_inputs(arrays, storage)
        os.makedirs(os.path.join(folder, storage))
        for name, array in files.items():
            np.save(os.path.join(folder, storage, name + ".npy"), array)
        refs[storage] = reference(workload, seen, False)
        del files, seen
    del arrays
    implementations = runner.implementations(library, workload)
    own = [i for i in implementations if i[0].startswith("attnc")]
    results, samples, readings, calls = {}, {}, [], {}

    def timed(name, rope, run):
        out_path = os.path.join(folder, f"out_{name}.npy")
        result = run(folder, out_path, warmup, calls.get(name, runs))
        if name not in calls and "median_ms" in result:
            calls[name] = calls_for_window(result["median_ms"], runs)
            if calls[name] > runs:
                result = run(folder, out_path, warmup, calls[name])
        if name not in results and "self_check" in result:  # checked by the peer on what it read
            result["check"] = tuple(result["self_check"])
        elif name not in results and "median_ms" in result:  # the first output is checked
            storage = storage_of.get(name, "f32")
            ref = refs[storage] if storage != "f32" else refs[rope]
            result["check"] = check(np.load(out_path), ref, TOLERANCES["bf16"] if storage == "bf16" else TOLERANCE)
        if "median_ms" in result:
            samples.setdefault(name, []).append(result["median_ms"])
        results.setdefault(name, result)

    limit_name = None
    for round_index in range(rounds):
        limit_name, reading = limit()
        readings.append(reading)
        for name, rope, run in own if round_index % 2 == 0 else own[::-1]:
            timed(name, rope, run)
        if round_index == 0:
            for name, rope, run in implementations:
                if not name.startswith("attnc"):
                    timed(name, rope, run)
    rows = []
    for name, rope, _ in implementations:
        result = results[name]
        row = {"workload": workload.label, "kind": workload.kind, "impl": name, "rope": rope,
               "batch": workload.batch, "seq_q": workload.seq_q, "keys": workload.keys, "limit": limit_name,
               "limit_value": float(np.median(readings)) if limit_name else None, "flops": workload.flops(),
               "storage": storage_of.get(name, "f32"), "kv_bytes": workload.kv_bytes(storage_of.get(name, "f32"))}
        if name in LLAMACPP_CACHES:
            row.update(storage=LLAMACPP_CACHES[name][1], kv_bytes=workload.kv_bytes(LLAMACPP_CACHES[name][1]))
        if "median_ms" not in result:
            row.update(status="skipped" if "skipped" in result else "error",
                       message=result.get("skipped") or result.get("error"))
            rows.append(row)
            continue
        err, tolerance, ok = result["check"]
        row.update({k: result[k] for k in ("min_ms", "runs", "version", "variant") if k in result})
        row.update(median_ms=float(np.median(samples[name])), round_ms=samples[name], max_abs_err=err,
                   tolerance=tolerance, status="ok" if ok else "wrong")
        row["gflops"] = workload.flops() / (row["median_ms"] * 1e6)
        row["kv_gbps"] = row["kv_bytes"] / (row["median_ms"] * 1e6)
        if limit_name:
            # per round against that round's reading (peers: their one time against the first)
            rates = [(row["kv_bytes"] if limit_name == "read" else workload.flops()) / (ms * 1e6)
                     for ms in samples[name]]
            row["pct_limit"] = 100 * float(np.median([r / l for r, l in zip(rates, readings)]))
        rows.append(row)
    for r in rows:
        # paged and peers against attnc's contiguous kernel; RoPE rows against their own no-RoPE row.
        against = {"attnc-rope": "attnc", "onnxruntime-gqa-rope": "onnxruntime-gqa",
                   **STORAGE_AGAINST, **{n: a for n, (_, _, a) in LLAMACPP_CACHES.items()}}.get(r["impl"], "attnc")
        if "median_ms" not in r or r["impl"] == "attnc" or against not in samples:
            continue
        pairs = list(zip(samples[r["impl"]], samples[against]))
        r["ratio"] = float(np.median([a / b for a, b in pairs])) if r["impl"].startswith("attnc") \
            else r["median_ms"] / float(np.median(samples[against]))
        r["ratio_to"] = against
    shutil.rmtree(folder, ignore_errors=True)
    return rows


def table(rows):
    lines = ["| workload | impl | median ms | GB/s (K+V) | GFLOP/s | % of limit | ratio | max err |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if "median_ms" not in r:
            lines.append(f"| {r['workload']} | {r['impl']} | {r['status']}: {r['message'][:80]} | | | | | |")
            continue
        pct = f"{r['pct_limit']:.1f}% {r['limit']}" if "pct_limit" in r else "-"
        ratio = f"{r['ratio']:.2f} vs {r['ratio_to']}" if "ratio" in r else "-"
        gbps = f"{r['kv_gbps']:.1f}" if r["kind"] != "w1" else "-"
        lines.append(f"| {r['workload']} | {r['impl']} | {r['median_ms']:.3f} | {gbps} | {r['gflops']:.1f} | {pct} | "
                     f"{ratio} | {r['max_abs_err']:.2g}{'' if r['status'] == 'ok' else ' WRONG'} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: llm_bench.py BUILD_DIR")
    build = os.path.abspath(sys.argv[1])
    quick = os.environ.get("BENCH_QUICK", "0") == "1"
    threads = int(os.environ.get("THREADS", "2"))
    runs = int(os.environ.get("BENCH_RUNS", "3" if quick else "10"))
    warmup = 1 if quick else 3
    groups = os.environ.get("BENCH_LLM_SHAPES", "decode,prefill,w1").split(",")
    target = os.environ.get("BENCH_LLM_TARGET", "native")
    rounds = int(os.environ.get("BENCH_LLM_ROUNDS", "1" if quick else "3"))
    env = dict(os.environ)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "HL_NUM_THREADS"):
        env[name] = str(threads)
    out_dir = os.path.join(build, "bench")
    os.makedirs(out_dir, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    busy_before = busy_fraction()
    decode = os.environ.get("BENCH_LLM_DECODE")
    workloads = plan(quick, groups, {tuple(int(n) for n in shape.split("x")) for shape in decode.split(",")}
                     if decode else None)
    specs = sorted({w.spec(cache, rope, storage) for w in workloads for _, cache, rope, storage in variants(w)})
    library, seconds = kernels.generate(build, specs, os.path.join(out_dir, "kernels_llm"), target)
    print(f"llm kernels: {len(specs)} specs, " + (f"generated in {seconds:.1f} s" if seconds else "reused"), flush=True)
    runner = Runner(build, out_dir, threads, env)
    fma = compile_helper("fma_peak.cpp", os.path.join(out_dir, "fma_peak"))
    bandwidth = compile_helper("read_bandwidth.cpp", os.path.join(out_dir, "read_bandwidth"))
    machine = machine_info()
    print(f"machine: {machine['model_name']}, {machine['nproc']} cores; {threads} threads, {runs} runs, "
          f"{rounds} rounds; "
          f"other jobs kept {100 * busy_before:.0f}% of the CPUs busy before the run", flush=True)

    def limit_for(w):
        if w.kind == "decode":
            return lambda: ("read", run_json([bandwidth, str(threads), "1024"])["read_gbps"])
        if w.kind == "prefill":
            return lambda: ("fma", run_json([fma, str(os.cpu_count())])["fma_peak_gflops"])
        return lambda: (None, None)

    rows = []
    for seed, w in enumerate(workloads):
        big = w.flops() > BIG_FLOPS  # the prefill chunk: seconds a call on a busy machine
        got = measure_workload(runner, library, w, os.path.join(out_dir, "llm_data"), seed,
                               max(3, runs // 2) if big else runs, 1 if big else warmup, limit_for(w), rounds)
        reading = got[0]["limit_value"]
        print(f"  {w.label}" + (f" ({got[0]['limit']} {reading:.1f})" if reading else "") + ": " +
              ", ".join(f"{r['impl']} {r['median_ms']:.2f} ms" if "median_ms" in r else f"{r['impl']} {r['status']}"
                        for r in got), flush=True)
        rows += got
    busy_after = busy_fraction()
    text = table(rows) + "\n\n" + summary(rows)
    print("\n" + text)
    print(f"\n% of limit: decode K+V bytes / time over the read bandwidth measured just before (GB/s, {threads} "
          f"threads); prefill GFLOP/s over the FMA peak (all cores) measured just before. ratio: the row's median "
          f"over the named row's (paged, peers: over attnc's contiguous kernel; -rope rows over the same "
          f"implementation without RoPE). Other jobs' CPU share: {100 * busy_before:.0f}% before, "
          f"{100 * busy_after:.0f}% after.")
    failures = [f"{r['impl']} on {r['workload']}: {r.get('message') or r.get('max_abs_err')}" for r in rows
                if r["status"] == "wrong" or (r["status"] == "error" and r["impl"].startswith("attnc"))]
    with open(os.path.join(out_dir, "llm.json"), "w") as f:
        json.dump({"started": started.isoformat(timespec="seconds"), "threads": threads, "runs": runs, "rounds": rounds,
                   "window_ms": WINDOW_MS, "machine": machine, "busy_before": busy_before, "busy_after": busy_after,
                   "specs": specs, "gen_seconds": seconds, "rows": rows, "failures": failures}, f, indent=1)
    with open(os.path.join(out_dir, "llm.md"), "w") as f:
        f.write(text + "\n")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
