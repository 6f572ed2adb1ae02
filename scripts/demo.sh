#!/usr/bin/env bash
# The demo: build only what it runs, generate kernels for a spec, run the GPT-2 example
# application and time a kernel through the standalone runtime tool. Called by `make demo`.
# V=1 (or ATTNC_VERBOSE=1) shows the build's and the generator's own lines; otherwise a progress
# line (scripts/build_progress.py) stands for them while the build runs, and one of the seconds so
# far (scripts/command_progress.py) while attnc gen works.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
verbose=${V:-${ATTNC_VERBOSE:-0}}
out="$build/demo"
spec="name=demo heads=12 head_dim=64 mask=causal"
shape="B=1, S=1024, 12 heads of 64"

echo "== 0. build attnc, attn-run, the runtime for Python and the gpt2_attention example (not the test suite)"
log="$build/demo-build.log"
start=$(date +%s)
build_cmd=(env PATH="$root/.venv/bin:$PATH" "$root/.venv/bin/cmake" --build "$build" -j "${JOBS:-$(nproc)}"
           --target attnc_cli attn_run attnc_runtime_shared gpt2_attention)
if [ "$verbose" != 0 ]; then
  "${build_cmd[@]}"
elif ! "${build_cmd[@]}" 2>&1 | "$python" "$root/scripts/build_progress.py" "$log"; then
  tail -n 40 "$log"
  echo "demo: the build failed; its whole output is in $log" >&2
  exit 1
fi
if [ "$verbose" != 0 ]; then
  echo "built in $(( $(date +%s) - start )) s"
else
  kernels=$(grep -c "attnc: generating kernels" "$log" || true)
  echo "built in $(( $(date +%s) - start )) s; kernel libraries generated: ${kernels} (the build's own lines: $log; V=1 shows them)"
fi

echo
echo "== 1. attnc gen: spec '$spec' for this machine's dispatch set"
gen=("$build/tools/attnc" gen --spec "$spec" -o "$out" --shared --basename demo_kernels)
if [ "$verbose" != 0 ]; then
  "${gen[@]}"
else  # attnc gen prints nothing while it works (one to three minutes): a line of the seconds so far
  gen_out=$("$python" "$root/scripts/command_progress.py" "generating demo_kernels" "${gen[@]}")
  grep -E "^(kernel|generated) " <<<"$gen_out"
fi
echo "files: $(ls "$out" | grep -E '^demo_kernels' | tr '\n' ' ')"

echo
echo "== 2. the gpt2_attention example (block form: fused QKV + bias, 12 causal heads, output projection)"
"$build/examples/gpt2_attention/gpt2_attention" 256

echo
echo "== 3. attn-run on the generated shared library (runtime only, no Halide compiler inside): $shape, causal"
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
