#!/usr/bin/env bash
# The demo: generate kernels for a spec, run the GPT-2 example application and time a kernel
# through the standalone runtime tool. Called by `make demo` after the build.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
out="$build/demo"
spec="name=demo d_model=768 heads=12 mask=causal"

echo "== 1. attnc gen: spec '$spec' for this machine's dispatch set"
"$build/tools/attnc" gen --spec "$spec" --target host -o "$out" --shared --basename demo_kernels

echo
echo "== 2. the gpt2_attention example (block form: fused QKV + bias, 12 causal heads, output projection)"
"$build/examples/gpt2_attention/gpt2_attention" 256

echo
echo "== 3. attn-run on the generated shared library (runtime only, no Halide compiler inside)"
id=$("$build/tools/attnc" id --spec "$spec")
"$python" - "$out" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(0)
for name in ("q", "k", "v"):
    np.save(f"{sys.argv[1]}/{name}.npy", rng.standard_normal((1, 1024, 12, 64), dtype=np.float32))
PY
"$build/tools/attn-run" "$out/demo_kernels.so" --kernel "$id" \
  --input q="$out/q.npy" --input k="$out/k.npy" --input v="$out/v.npy" --output out="$out/out.npy" --bench
"$python" - "$out" <<'PY'
import sys, numpy as np
d = sys.argv[1]
q, k, v, o = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in ("q", "k", "v", "out"))
s = np.einsum("bqhd,bkhd->bhqk", q, k) / 8.0
s = np.where(np.tril(np.ones((1024, 1024), bool)), s, -np.inf)
p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
ref = np.einsum("bhqk,bkhd->bqhd", p, v)
print(f"attn-run output vs numpy fp64: max abs error {np.abs(o - ref).max():.3g}")
PY
