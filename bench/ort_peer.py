"""ONNX Runtime's com.microsoft MultiHeadAttention contrib op on the CPU, as an attention peer.

Optional: prints {"skipped": ...} when onnxruntime or onnx is not installed. The model is one
node built with the onnx package; q, k, v go in as [B,S,H*D] views of the [B,S,H,D] inputs.
Causal is the op's unidirectional attribute when Sq == Sk, else an additive 0/-inf attention_bias
(the contract aligns bottom-right). DTYPE f16: every tensor of the model is float16 (the inputs,
rounded to f16 by the harness, convert exactly); skipped when this ONNX Runtime has no CPU kernel
for it.
Usage: ort_peer.py IN_DIR OUT.npy none|causal THREADS WARMUP RUNS [f32|f16] (see peer_common.py)
"""
import sys

import numpy as np

from peer_common import PeerArgs, causal_keep, skip, time_and_report


def one_node_model(onnx, heads, with_bias, unidirectional, f16):
    helper = onnx.helper
    f32 = onnx.TensorProto.FLOAT16 if f16 else onnx.TensorProto.FLOAT
    inputs = ["query", "key", "value"] + (["", "", "attention_bias"] if with_bias else [])
    attributes = {"num_heads": heads}
    if unidirectional:
        attributes["unidirectional"] = 1
    node = helper.make_node("MultiHeadAttention", inputs, ["output"], domain="com.microsoft", **attributes)
    graph_inputs = [helper.make_tensor_value_info(name, f32, ["B", seq, "hidden"])
                    for name, seq in (("query", "Sq"), ("key", "Sk"), ("value", "Sk"))]
    if with_bias:
        graph_inputs.append(helper.make_tensor_value_info("attention_bias", f32, [1, 1, "Sq", "Sk"]))
    graph = helper.make_graph([node], "attention", graph_inputs, [helper.make_tensor_value_info("output", f32, None)])
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets).SerializeToString()


def main():
    args = PeerArgs(sys.argv)
    if args.dtype not in ("f32", "f16"):
        sys.exit(f"ort_peer.py: dtype is '{args.dtype}', expected f32 or f16")
    f16 = args.dtype == "f16"
    dtype = np.float16 if f16 else np.float32
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as e:
        skip(f"{e.name} not installed")
    q, k, v = args.load_qkv()
    b, sq, h, d = q.shape
    sk, dv = k.shape[1], v.shape[3]
    if k.shape[2] != h:
        skip("MultiHeadAttention needs kv_heads == heads")
    with_bias = args.causal and sq != sk
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    model = one_node_model(onnx, h, with_bias, args.causal and not with_bias, f16)
    try:
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own classes, one per status
        if not f16:
            raise
        skip(f"no f16 MultiHeadAttention on this onnxruntime's CPU: {str(e).splitlines()[0][:160]}")
    feeds = {"query": q.reshape(b, sq, h * d).astype(dtype), "key": k.reshape(b, sk, h * d).astype(dtype),
             "value": v.reshape(b, sk, h * dv).astype(dtype)}
    if with_bias:
        feeds["attention_bias"] = np.where(causal_keep(sq, sk), 0.0, -np.inf).astype(dtype)[None, None]

    def run():
        return session.run(None, feeds)[0].reshape(b, sq, h, dv)

    version = f"onnxruntime {ort.__version__}" + (" f16" if f16 else "")
    try:
        time_and_report(args, run, version=version)
    except Exception as e:  # a kernel that loads but refuses f16 when run
        if not f16:
            raise
        skip(f"f16 MultiHeadAttention failed on this onnxruntime's CPU: {str(e).splitlines()[0][:160]}")


if __name__ == "__main__":
    main()
