#!/usr/bin/env python3
"""bench_onnxruntime.py: the peer for the MiniLM example's speed (docs/PERFORMANCE.md): ONNX Runtime
on the same model, batch and length (random token ids, [CLS] ... [SEP], no padding).

  export (once, needs torch and transformers, e.g. the throwaway venv of make_golden.py
  with `pip install onnx` added):
    /tmp/stvenv/bin/python examples/minilm/bench_onnxruntime.py --export /tmp/minilm_onnx/model.onnx
  run (the project .venv has onnxruntime):
    .venv/bin/python examples/minilm/bench_onnxruntime.py --onnx /tmp/minilm_onnx/model.onnx [--batch 32 --length 128]
  or the same forward in PyTorch itself (sentence-transformers' own path):
    /tmp/stvenv/bin/python examples/minilm/bench_onnxruntime.py --torch

The exported graph is BertModel's last hidden state; the mean pooling and normalization (a few
microseconds) are done in NumPy, outside the timing. Nothing it writes belongs in the repo.
"""
import argparse
import os
import pathlib
import statistics
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import minilm_weights  # noqa: E402


def random_ids(batch, length, vocab):
    rng = np.random.default_rng(25)
    ids = rng.integers(1000, vocab, size=(batch, length), dtype=np.int64)
    ids[:, 0], ids[:, -1] = 101, 102
    return ids


def timed(run, runs):
    run()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def report(what, args, median, best):
    print(f"{what} ({args.threads} threads): batch {args.batch}, length {args.length}, {args.runs} runs: "
          f"median {median * 1e3:.1f} ms = {args.batch / median:.1f} sentences/s; "
          f"best {best * 1e3:.1f} ms = {args.batch / best:.1f} sentences/s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--export", help="write the ONNX graph here (needs torch)")
    parser.add_argument("--onnx", help="time ONNX Runtime on this graph")
    parser.add_argument("--torch", action="store_true", help="time PyTorch's forward instead")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    model_dir = minilm_weights.model_dir()
    ids = random_ids(args.batch, args.length, minilm_weights.config(model_dir)["vocab_size"])
    mask = np.ones_like(ids)
    if args.export or args.torch:
        import torch
        from transformers import AutoModel
        torch.set_num_threads(args.threads)
        model = AutoModel.from_pretrained(str(model_dir)).eval()
        if args.export:
            pathlib.Path(args.export).parent.mkdir(parents=True, exist_ok=True)

            class LastHidden(torch.nn.Module):  # keyword arguments: BertModel's positional order varies
                def __init__(self, bert):
                    super().__init__()
                    self.bert = bert

                def forward(self, input_ids, attention_mask):
                    return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

            with torch.no_grad():
                torch.onnx.export(LastHidden(model), (torch.from_numpy(ids), torch.from_numpy(mask)), args.export,
                                  input_names=["input_ids", "attention_mask"], output_names=["last_hidden_state"],
                                  dynamic_axes={"input_ids": {0: "batch", 1: "length"},
                                                "attention_mask": {0: "batch", 1: "length"}},
                                  opset_version=17, dynamo=False)
            print(f"wrote {args.export}")
        if args.torch:
            t_ids, t_mask = torch.from_numpy(ids), torch.from_numpy(mask)

            def run():
                with torch.inference_mode():
                    model(input_ids=t_ids, attention_mask=t_mask)
            report(f"torch {torch.__version__}", args, *timed(run, args.runs))
    if args.onnx:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.threads
        session = ort.InferenceSession(args.onnx, options, providers=["CPUExecutionProvider"])
        feeds = {"input_ids": ids, "attention_mask": mask}
        names = {i.name for i in session.get_inputs()}
        if "token_type_ids" in names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        report(f"onnxruntime {ort.__version__}", args, *timed(lambda: session.run(None, feeds), args.runs))


if __name__ == "__main__":
    main()
