#!/usr/bin/env python3
"""reference.py: an independent fp64 NumPy forward of all-MiniLM-L6-v2 written from config.json
(BERT: embeddings, post-LayerNorm encoder layers with exact GELU, mean pooling, L2 normalization).

It reads the weights with minilm_weights.py (NumPy only) and takes token ids from a file (one
sentence a line, as golden/token_ids.txt holds them: [CLS] ... [SEP]), so it shares no code with
the C++ example. Each sentence runs alone, unpadded.

  reference.py [--ids FILE] [--out EMB.npy]      embeddings of each line of FILE
  reference.py --check GOLDEN.npy [--min-cosine C]  exit 1 unless each cosine to GOLDEN >= C
"""
import argparse
import math
import os
import pathlib
import sys

# Small fp64 products: one BLAS thread is faster here, and much faster on a busy machine.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import minilm_weights  # noqa: E402


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def gelu(x):
    erf = np.fromiter(map(math.erf, (x / math.sqrt(2.0)).ravel().tolist()), np.float64, x.size)
    return 0.5 * x * (1.0 + erf.reshape(x.shape))


class Reference:
    def __init__(self, model_dir):
        self.cfg = minilm_weights.config(model_dir)
        raw = minilm_weights.read_safetensors(pathlib.Path(model_dir) / "model.safetensors")
        self.w = {k: v.astype(np.float64) for k, v in raw.items()}

    def encode(self, ids):
        """ids: one sentence's token ids -> its [hidden] unit-length embedding (fp64)."""
        cfg, w = self.cfg, self.w
        eps, heads = cfg["layer_norm_eps"], cfg["num_attention_heads"]
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        hidden = cfg["hidden_size"]
        d = hidden // heads
        for layer in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{layer}."

            def dense(t, name):
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = dense(x, "attention.self.query").reshape(n, heads, d).transpose(1, 0, 2)
            k = dense(x, "attention.self.key").reshape(n, heads, d).transpose(1, 0, 2)
            v = dense(x, "attention.self.value").reshape(n, heads, d).transpose(1, 0, 2)
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            merged = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
            x = layer_norm(x + dense(merged, "attention.output.dense"), w[p + "attention.output.LayerNorm.weight"],
                           w[p + "attention.output.LayerNorm.bias"], eps)
            h = gelu(dense(x, "intermediate.dense"))
            x = layer_norm(x + dense(h, "output.dense"), w[p + "output.LayerNorm.weight"],
                           w[p + "output.LayerNorm.bias"], eps)
        pooled = x.mean(axis=0)
        return pooled / max(np.linalg.norm(pooled), 1e-12)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", default=str(HERE / "golden" / "token_ids.txt"))
    parser.add_argument("--out", help="write the embeddings [N, hidden] as float64 .npy")
    parser.add_argument("--check", help="golden embeddings .npy to compare with")
    parser.add_argument("--min-cosine", type=float, default=0.99999)
    args = parser.parse_args()
    with open(args.ids) as f:
        rows = [[int(t) for t in line.split()] for line in f]
    ref = Reference(minilm_weights.model_dir())
    emb = np.stack([ref.encode(ids) for ids in rows])
    if args.out:
        np.save(args.out, emb)
    if not args.check:
        return 0
    golden = np.load(args.check).astype(np.float64)
    if golden.shape != emb.shape:
        print(f"golden holds {golden.shape}, the reference made {emb.shape}")
        return 1
    cos = (emb * golden).sum(axis=1) / np.linalg.norm(golden, axis=1)  # emb rows have norm 1
    worst = int(np.argmin(cos))
    ok = bool(np.all(cos >= args.min_cosine))
    print(f"reference: {len(rows)} sentences, lowest cosine to golden {cos[worst]:.9f} (sentence {worst}), "
          f"need >= {args.min_cosine}: {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
