"""ONNX Runtime's com.microsoft GroupQueryAttention on the CPU: a decode step or a prefill chunk
through its KV cache, optionally with its rotary embedding.

The cache is a [B,KVH,Smax,D] buffer (the op's BNSH layout; transposed from the harness's NHD
arrays before timing) bound as both past_key and present_key with an IOBinding, so each call
writes the new keys in place and copies no cache, as ONNX Runtime GenAI runs it. seqlens_k =
cache_len + Sq - 1, total_sequence_length = cache_len + Sq. Rotary: do_rotary=1, not interleaved
(neox), cos/sin caches from the fp32 angles of llm_reference.rope_angles. The op is causal.
Usage: gqa_peer.py IN_DIR OUT.npy THREADS WARMUP RUNS CACHE_LEN ROPE(0|1); prints JSON
({"skipped": ...} when onnxruntime or onnx is missing, or where the op refuses the shape).
"""
import json
import sys

import numpy as np

from llm_reference import rope_angles
from peer_common import skip


def model(onnx, heads, kv_heads, rotary):
    helper, f32 = onnx.helper, onnx.TensorProto.FLOAT
    inputs = ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length"]
    inputs += ["cos_cache", "sin_cache"] if rotary else []
    node = helper.make_node("GroupQueryAttention", inputs, ["output", "present_key", "present_value"],
                            domain="com.microsoft", num_heads=heads, kv_num_heads=kv_heads, do_rotary=int(rotary),
                            rotary_interleaved=0)
    graph_inputs = [helper.make_tensor_value_info(name, f32, ["B", "S", None]) for name in ("query", "key", "value")]
    graph_inputs += [helper.make_tensor_value_info(name, f32, ["B", kv_heads, "M", None])
                     for name in ("past_key", "past_value")]
    graph_inputs += [helper.make_tensor_value_info("seqlens_k", onnx.TensorProto.INT32, ["B"]),
                     helper.make_tensor_value_info("total_sequence_length", onnx.TensorProto.INT32, [])]
    graph_inputs += [helper.make_tensor_value_info(name, f32, ["M", None]) for name in ("cos_cache", "sin_cache")
                     ] if rotary else []
    outputs = [helper.make_tensor_value_info(name, f32, None) for name in ("output", "present_key", "present_value")]
    graph = helper.make_graph([node], "gqa", graph_inputs, outputs)
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


def main():
    if len(sys.argv) != 8:
        sys.exit("usage: gqa_peer.py IN_DIR OUT.npy THREADS WARMUP RUNS CACHE_LEN ROPE")
    folder, out_path = sys.argv[1], sys.argv[2]
    threads, warmup, runs, cache_len, rotary = (int(a) for a in sys.argv[3:8])
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        skip(f"{e.name} not installed")
    q, k_new, v_new = (np.load(f"{folder}/{name}.npy") for name in ("q", "k_new", "v_new"))
    b, sq, h, d = q.shape
    kvh = k_new.shape[2]
    if sq > 1 and b > 1:
        skip("GroupQueryAttention takes Sq > 1 with a past only at batch 1")
    # The cache in BNSH, made once (not timed); the op writes the new tokens into it in place.
    caches = [ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(np.load(f"{folder}/{name}.npy").transpose(0, 2, 1, 3)))
              for name in ("k_cache", "v_cache")]
    smax = caches[0].shape()[2]
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model(onnx, h, kvh, rotary), options, providers=["CPUExecutionProvider"])
    binding = session.io_binding()
    feeds = {"query": q.reshape(b, sq, h * d), "key": k_new.reshape(b, sq, kvh * d),
             "value": v_new.reshape(b, sq, kvh * d), "seqlens_k": np.full(b, cache_len + sq - 1, np.int32),
             "total_sequence_length": np.array(cache_len + sq, np.int32)}
    if rotary:
        angles = rope_angles(np.arange(smax), d)
        feeds["cos_cache"], feeds["sin_cache"] = np.cos(angles), np.sin(angles)
    for name, array in feeds.items():
        binding.bind_cpu_input(name, np.ascontiguousarray(array))
    for name, cache in zip(("key", "value"), caches):
        binding.bind_ortvalue_input(f"past_{name}", cache)
        binding.bind_ortvalue_output(f"present_{name}", cache)
    binding.bind_output("output")
    import time
    for _ in range(warmup):
        session.run_with_iobinding(binding)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run_with_iobinding(binding)
        times.append((time.perf_counter() - start) * 1e3)
    out = binding.copy_outputs_to_cpu()[2].reshape(b, sq, h, d)  # outputs in binding order
    np.save(out_path, np.ascontiguousarray(out, dtype=np.float32))
    print(json.dumps({"median_ms": float(np.median(times)), "min_ms": float(np.min(times)), "runs": runs,
                      "threads": threads, "version": f"onnxruntime {ort.__version__}"}))


if __name__ == "__main__":
    main()
