"""llama.cpp's CPU attention for a decode step: ggml_flash_attn_ext (the op llama.cpp's decoder
runs with flash attention on, its CPU default) over a KV cache of f16 or q8_0 (llama.cpp's
--cache-type-k/v q8_0: blocks of 32 int8 codes with one f16 scale each), or with KV f16-nofa its
graph without flash attention (ggml_mul_mat K.Q, ggml_soft_max_ext, ggml_mul_mat with its
transposed f16 V cache), called through ctypes in the ggml libraries that llama-cpp-python's
wheel (built here from its PyPI sdist) ships.

The cache is laid out as llama.cpp keeps it, [B, tokens, KVH * D] per tensor, and read through a
strided view per KV head, with f32 accumulation asked for (ggml_prec_set_acc), as llama.cpp's
graph does. It holds cache_len cached tokens and the step's new one, written before timing
(llama.cpp copies new keys into its cache in an op of their own; for one token that copy is
noise beside the read of the cache). No mask (one query attends every cached key). ggml's own
threads: ggml_graph_compute_with_ctx with THREADS.
The output is checked here against fp64 attention over the cache as stored (its f16 values, or
its q8_0 codes times their scales): ggml rounds q to the cache's vec-dot type (f16, or q8_0)
too, so the tolerance is that of the stored type (f16: 4 units of 2^-11; q8_0: 4 units of 2^-8).
Usage: llamacpp_peer.py IN_DIR OUT.npy THREADS WARMUP RUNS CACHE_LEN ROPE KV(f16|q8_0|f16-nofa); prints
JSON ({"skipped": ...} without llama_cpp, with RoPE or with more than one query).
"""
import ctypes
import glob
import json
import os
import sys
import time

import numpy as np

from peer_common import skip

GGML_TYPE = {"f32": 0, "f16": 1, "q8_0": 8}
GGML_PREC_F32 = 10
QK8_0 = 32  # q8_0 block: an f16 scale, then 32 int8 codes (34 bytes)
TOLERANCE = {"f16": 4 * 2.0**-11, "q8_0": 4 * 2.0**-8}


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def load_ggml():
    """(ggml, ggml-cpu, version) from the installed llama_cpp package; exits with a skip."""
    import importlib.metadata
    import importlib.util
    found = importlib.util.find_spec("llama_cpp")  # located, not imported: only its libraries are used
    if found is None or not found.origin:
        skip("llama_cpp (llama-cpp-python) not installed")
    lib_dir = os.path.join(os.path.dirname(found.origin), "lib")
    libs = {}
    for name in ("ggml-base", "ggml-cpu", "ggml"):
        found = sorted(glob.glob(os.path.join(lib_dir, f"lib{name}.so*")))
        if not found:
            skip(f"lib{name}.so not found in {lib_dir}")
        libs[name] = ctypes.CDLL(found[0], mode=ctypes.RTLD_GLOBAL)
    base, cpu = libs["ggml-base"], libs["ggml-cpu"]
    p, i64, sz = ctypes.c_void_p, ctypes.c_int64, ctypes.c_size_t
    signatures = [
        (base, "ggml_init", p, [InitParams]),
        (base, "ggml_free", None, [p]),
        (base, "ggml_new_tensor_4d", p, [p, ctypes.c_int, i64, i64, i64, i64]),
        (base, "ggml_view_4d", p, [p, p, i64, i64, i64, i64, sz, sz, sz, sz]),
        (base, "ggml_get_data", p, [p]),
        (base, "ggml_row_size", sz, [ctypes.c_int, i64]),
        (base, "ggml_flash_attn_ext", p, [p, p, p, p, p, ctypes.c_float, ctypes.c_float, ctypes.c_float]),
        (base, "ggml_new_graph", p, [p]),
        (base, "ggml_build_forward_expand", None, [p, p]),
        (base, "ggml_quantize_chunk", sz, [ctypes.c_int, p, p, i64, i64, i64, p]),
        (base, "ggml_prec_set_acc", ctypes.c_bool, [p, ctypes.c_int]),
        (base, "ggml_mul_mat", p, [p, p, p]),
        (base, "ggml_soft_max_ext", p, [p, p, p, ctypes.c_float, ctypes.c_float]),
        (cpu, "ggml_cpu_init", None, []),
        (cpu, "ggml_graph_compute_with_ctx", ctypes.c_int, [p, p, ctypes.c_int]),
    ]
    for lib, name, restype, argtypes in signatures:
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = restype, argtypes
    return base, cpu, f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')}"


def store(base, tensor, array):
    ctypes.memmove(base.ggml_get_data(tensor), array.ctypes.data, array.nbytes)


def cache_tensor(base, ctx, keys, kv):
    """keys [B, L, KVH, D] f32 -> (the [KVH * D, L, B] cache tensor of type kv, what it holds as f64)."""
    b, length, kvh, d = keys.shape
    tensor = base.ggml_new_tensor_4d(ctx, GGML_TYPE[kv], kvh * d, length, b, 1)
    if kv == "f16":
        half = keys.astype(np.float16)
        store(base, tensor, np.ascontiguousarray(half))
        return tensor, half.astype(np.float64)
    rows = np.ascontiguousarray(keys, dtype=np.float32).reshape(-1, d)
    base.ggml_quantize_chunk(GGML_TYPE[kv], rows.ctypes.data, base.ggml_get_data(tensor), 0, rows.shape[0], d, None)
    # Read the blocks back: [f16 scale][32 x int8] each.
    raw = np.ctypeslib.as_array(ctypes.cast(base.ggml_get_data(tensor), ctypes.POINTER(ctypes.c_uint8)),
                                shape=(rows.size // QK8_0 * 34,))
    blocks = raw.reshape(-1, 34)
    scales = blocks[:, :2].copy().view(np.float16).astype(np.float64)
    codes = blocks[:, 2:].copy().view(np.int8).astype(np.float64)
    return tensor, (codes * scales).reshape(keys.shape)


def transposed_values(base, ctx, values):
    """values [B, L, KVH, D] f32 -> (an f16 [L, KVH * D, B] tensor: llama.cpp's V cache without flash
    attention, each (head, dim) row holding every token; its [n_kv, D, KVH, B] view; the values
    as stored, f64 [B, L, KVH, D])."""
    b, length, kvh, d = values.shape
    half = values.astype(np.float16)
    tensor = base.ggml_new_tensor_4d(ctx, GGML_TYPE["f16"], length, kvh * d, b, 1)
    store(base, tensor, np.ascontiguousarray(half.transpose(0, 2, 3, 1)))
    row = base.ggml_row_size(GGML_TYPE["f16"], length)
    view = base.ggml_view_4d(ctx, tensor, length, d, kvh, b, row, row * d, row * d * kvh, 0)
    return view, half.astype(np.float64)


def head_view(base, ctx, cache, b, length, kvh, d, kv):
    """[D, L, KVH, B] view of a [KVH * D, L, B] cache: llama.cpp's per-head view of its cache."""
    token = base.ggml_row_size(GGML_TYPE[kv], kvh * d)
    return base.ggml_view_4d(ctx, cache, d, length, kvh, b, token, base.ggml_row_size(GGML_TYPE[kv], d),
                             token * length, 0)


def main():
    if len(sys.argv) != 9:
        sys.exit("usage: llamacpp_peer.py IN_DIR OUT.npy THREADS WARMUP RUNS CACHE_LEN ROPE f16|q8_0|f16-nofa")
    folder, out_path = sys.argv[1], sys.argv[2]
    threads, warmup, runs, cache_len, rotary = (int(a) for a in sys.argv[3:8])
    kv = sys.argv[8]
    if kv not in ("f16", "q8_0", "f16-nofa"):
        sys.exit(f"KV must be f16, q8_0 or f16-nofa, not {kv}")
    flash = kv != "f16-nofa"
    kv = kv.split("-")[0]
    if rotary:
        skip("RoPE not run (llama.cpp rotates in a separate op)")
    q = np.load(f"{folder}/q.npy")
    b, sq, h, d = q.shape
    if sq != 1:
        skip("decode steps only (one query)")
    base, cpu, version = load_ggml()
    cpu.ggml_cpu_init()
    k_new, v_new = np.load(f"{folder}/k_new.npy"), np.load(f"{folder}/v_new.npy")
    kvh = k_new.shape[2]
    length = cache_len + sq
    keys = np.concatenate([np.load(f"{folder}/k_cache.npy", mmap_mode="r")[:, :cache_len], k_new], axis=1)
    values = np.concatenate([np.load(f"{folder}/v_cache.npy", mmap_mode="r")[:, :cache_len], v_new], axis=1)
    cache_bytes = 2 * base.ggml_row_size(GGML_TYPE[kv], kvh * d) * length * b
    # The caches, the query, and the scores and probabilities (f32 and their f16 copy) of the graph
    # without flash attention, with room for ggml's objects and work buffer.
    scores_bytes = 4 * b * h * sq * length
    ctx = base.ggml_init(InitParams(cache_bytes + q.nbytes * 2 + 4 * scores_bytes + (256 << 20), None, False))
    if not ctx:
        skip("ggml_init failed (memory)")
    k_cache, k_seen = cache_tensor(base, ctx, keys, kv)
    if flash:
        v_cache, v_seen = cache_tensor(base, ctx, values, kv)
    else:
        v_view, v_seen = transposed_values(base, ctx, values)
    del keys, values
    query = base.ggml_new_tensor_4d(ctx, GGML_TYPE["f32"], d, h, sq, b)  # [B, Sq, H, D] in memory
    store(base, query, np.ascontiguousarray(q, dtype=np.float32))
    q_view = base.ggml_view_4d(ctx, query, d, sq, h, b, 4 * h * d, 4 * d, 4 * h * d * sq, 0)
    k_view = head_view(base, ctx, k_cache, b, length, kvh, d, kv)
    if flash:
        out = base.ggml_flash_attn_ext(ctx, q_view, k_view, head_view(base, ctx, v_cache, b, length, kvh, d, kv),
                                       None, 1.0 / np.sqrt(d), 0.0, 0.0)
        base.ggml_prec_set_acc(out, GGML_PREC_F32)  # as llama.cpp's graph asks: f32 accumulation
    else:
        # llama.cpp's graph without flash attention: K.Q, a softmax, then V^T.P, f32 accumulation.
        # Its result [D, Sq, H, B] is, for one query, [B, Sq, H, D] in memory.
        scores = base.ggml_mul_mat(ctx, k_view, q_view)
        base.ggml_prec_set_acc(scores, GGML_PREC_F32)
        probs = base.ggml_soft_max_ext(ctx, scores, None, 1.0 / np.sqrt(d), 0.0)
        out = base.ggml_mul_mat(ctx, v_view, probs)
    graph = base.ggml_new_graph(ctx)
    base.ggml_build_forward_expand(graph, out)
    for _ in range(warmup):
        cpu.ggml_graph_compute_with_ctx(ctx, graph, threads)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        status = cpu.ggml_graph_compute_with_ctx(ctx, graph, threads)
        times.append((time.perf_counter() - start) * 1e3)
        if status != 0:
            skip(f"ggml_graph_compute_with_ctx returned {status}")
    # The result is [D, H, Sq, B]: in memory [B, Sq, H, D].
    result = np.ctypeslib.as_array(ctypes.cast(base.ggml_get_data(out), ctypes.POINTER(ctypes.c_float)),
                                   shape=(b, sq, h, d)).copy()
    np.save(out_path, result)
    # fp64 attention over batch 0's cache as stored (query head n reads KV head n // (H / KVH)).
    group = h // kvh
    scores = np.einsum("hd,lhd->hl", q[0, 0].astype(np.float64),
                       np.repeat(k_seen[0], group, axis=1)) / np.sqrt(d)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    ref = np.einsum("hl,lhd->hd", weights, np.repeat(v_seen[0], group, axis=1))
    err = float(np.abs(result[0, 0] - ref).max())
    tolerance = TOLERANCE[kv] * max(1.0, float(np.abs(ref).max()))
    base.ggml_free(ctx)
    version += " (ggml_flash_attn_ext)" if flash else " (ggml_mul_mat, ggml_soft_max_ext)"
    print(json.dumps({"median_ms": float(np.median(times)), "min_ms": float(np.min(times)), "runs": runs,
                      "threads": threads, "version": version, "self_check": [err, tolerance, err <= tolerance]}))


if __name__ == "__main__":
    main()
