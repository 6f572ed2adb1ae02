"""The benchmark's workloads: shapes, attnc spec text, FLOP counts and random inputs."""
from dataclasses import dataclass, replace

import numpy as np

GPT2_SPEC = "name=gpt2 d_model=768 heads=12 form=block qkv=fused proj_bias=true mask=causal"
DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
LOWP_DTYPES = ("bf16", "f16")


def round_to(array, dtype):
    """A float32 array's values rounded (to nearest even) to dtype and held in float32 again."""
    if dtype == "f16":
        return array.astype(np.float16).astype(np.float32)
    if dtype == "bf16":
        bits = array.view(np.uint32).astype(np.uint64)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32)
    return array


@dataclass(frozen=True)
class Workload:
    name: str      # e.g. "W1" or "sweep"
    batch: int
    heads: int
    seq_q: int
    seq_k: int
    head_dim: int
    mask: str      # "none" or "causal"
    block: bool = False  # the GPT-2 block form: S = seq_q = seq_k, d_model = heads * head_dim
    dtype: str = "f32"   # storage type of the tensors: f32, or bf16 / f16 (inputs rounded to it)

    @property
    def label(self):
        shape = f"B{self.batch} H{self.heads} S{self.seq_q}" if self.seq_q == self.seq_k else \
            f"B{self.batch} H{self.heads} Sq{self.seq_q} Sk{self.seq_k}"
        form = " gpt2 block" if self.block else ""
        dtype = "" if self.dtype == "f32" else f" {self.dtype}"
        return f"{self.name} {shape} D{self.head_dim} {self.mask}{form}{dtype}"

    @property
    def shape(self):
        return (self.batch, self.heads, self.seq_q, self.seq_k, self.head_dim, self.mask, self.block, self.dtype)

    @property
    def spec(self):
        dtype = "" if self.dtype == "f32" else f" dtype={self.dtype}"
        if self.block:
            return GPT2_SPEC + dtype
        return f"heads={self.heads} head_dim={self.head_dim} mask={self.mask}{dtype}"

    def in_f32(self):
        """The same workload with f32 storage (the fp32 kernel a low-precision row is compared with)."""
        return replace(self, dtype="f32")

    @property
    def d_model(self):
        return self.heads * self.head_dim

    def kept_pairs(self):
        """Query-key pairs scored: all, or for causal those with k <= i + Sk - Sq."""
        if self.mask == "none":
            return self.seq_q * self.seq_k
        visible = np.clip(np.arange(self.seq_q) + self.seq_k - self.seq_q + 1, 0, self.seq_k)
        return int(visible.sum())

    def flops(self):
        """4 B H D per kept pair (QK^T and PV), plus the block's projections."""
        total = 4 * self.batch * self.heads * self.head_dim * self.kept_pairs()
        if self.block:
            s, m = self.seq_q, self.d_model
            total += self.batch * (2 * s * m * 3 * m + 2 * s * m * m)
        return total

    def kv_bytes(self, element_bytes=4):
        """Bytes of K and V, read once by an ideal decode kernel storing element_bytes per element."""
        return 2 * self.batch * self.seq_k * self.heads * self.head_dim * element_bytes

    def make_inputs(self, seed):
        """Core: q, k, v standard normal. Block: x uniform(-1, 1), weights in nn.Linear's range.
        float32 arrays; for bf16 / f16 workloads their values rounded to that type."""
        return {name: round_to(array, self.dtype) for name, array in self.make_f32_inputs(seed).items()}

    def make_f32_inputs(self, seed):
        rng = np.random.default_rng(seed)
        if not self.block:
            return {name: rng.standard_normal((self.batch, seq, self.heads, self.head_dim), dtype=np.float32)
                    for name, seq in (("q", self.seq_q), ("k", self.seq_k), ("v", self.seq_k))}
        m, bound = self.d_model, 1.0 / np.sqrt(self.d_model)

        def uniform(shape, scale):
            return rng.uniform(-scale, scale, shape).astype(np.float32)
        return {"x": uniform((self.batch, self.seq_q, m), 1.0), "w_qkv": uniform((3 * m, m), bound),
                "b_qkv": uniform((3 * m,), bound), "w_o": uniform((m, m), bound), "b_o": uniform((m,), bound)}


def workloads():
    return [
        Workload("W1", 1, 12, 1024, 1024, 64, "none"),
        Workload("W1", 1, 12, 1024, 1024, 64, "causal"),
        Workload("W2", 1, 8, 4096, 4096, 64, "causal"),
        Workload("W3", 8, 8, 512, 512, 64, "none"),
        Workload("W4", 1, 32, 1, 4096, 128, "none"),
        Workload("W5", 1, 16, 2048, 2048, 128, "causal"),
        Workload("W6", 1, 12, 1024, 1024, 64, "causal", block=True),
    ]


def lowp_workloads():
    """Issue 20's low-precision rows: W1 (none and causal), W3, W4 and W6 in bf16, then in f16."""
    chosen = [w for w in workloads() if w.name in ("W1", "W3", "W4", "W6")]
    return [replace(w, dtype=dtype) for dtype in LOWP_DTYPES for w in chosen]


def sweep(quick, dtype="f32"):
    """GFLOP/s against sequence length: B1 H12 D64, no mask."""
    lengths = (256, 512, 1024) if quick else (256, 512, 1024, 2048, 4096)
    return [Workload("sweep", 1, 12, s, s, 64, "none", dtype=dtype) for s in lengths]


def rss_workload():
    """W2's spec at S=32768, for the peak memory of one attn-run call."""
    return Workload("RSS", 1, 8, 32768, 32768, 64, "causal")
