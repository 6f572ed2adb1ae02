#!/usr/bin/env bash
# First numbers: attnc core kernels (B1 H12 S1024 D64, none and causal) through attn-run --bench,
# the unfused NumPy/OpenBLAS peer on the same inputs, and the FMA peak, all in one run.
# Every output is checked against an fp64 NumPy reference before its time is reported.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
out="$build/bench"
mkdir -p "$out"
threads=${THREADS:-2}

c++ -O3 -march=native -std=c++17 -pthread "$root/bench/fma_peak.cpp" -o "$out/fma_peak"
peak=$("$out/fma_peak" "$threads" | "$python" -c "import json,sys; print(json.load(sys.stdin)['fma_peak_gflops'])")

specs=("heads=12 head_dim=64 mask=none" "heads=12 head_dim=64 mask=causal")
"$build/tools/attnc" gen --spec "${specs[0]}" --spec "${specs[1]}" --target host -o "$out" --shared \
  --basename bench_kernels >/dev/null

"$python" - "$out" <<'PY'
import sys, numpy as np
rng = np.random.default_rng(1)
for name in ("q", "k", "v"):
    np.save(f"{sys.argv[1]}/{name}.npy", rng.standard_normal((1, 1024, 12, 64), dtype=np.float32))
PY

printf '%-8s %12s %10s %10s %12s %10s %s\n' mask attnc_ms GFLOP/s %peak peer_ms ratio max_err
for spec in "${specs[@]}"; do
  mask=${spec##*mask=}
  id=$("$build/tools/attnc" id --spec "$spec")
  json=$("$build/tools/attn-run" "$out/bench_kernels.so" --kernel "$id" --threads "$threads" \
    --input q="$out/q.npy" --input k="$out/k.npy" --input v="$out/v.npy" --output out="$out/out.npy" \
    --bench --json --warmup 3 --runs 15)
  peer=$(OPENBLAS_NUM_THREADS=$threads "$python" "$root/bench/unfused_peer.py" "$out" "$out/peer_out.npy" "$mask" "$threads" 1 7)
  "$python" - "$out" "$mask" "$json" "$peer" "$peak" <<'PY'
import json, sys, numpy as np
d, mask, mine, peer, peak = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4]), float(sys.argv[5])
q, k, v = (np.load(f"{d}/{n}.npy").astype(np.float64) for n in "qkv")
s = np.einsum("bqhd,bkhd->bhqk", q, k) / 8.0
if mask == "causal":
    s = np.where(np.tril(np.ones((1024, 1024), bool)), s, -np.inf)
p = np.exp(s - s.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
ref = np.einsum("bhqk,bkhd->bqhd", p, v)
err = np.abs(np.load(f"{d}/out.npy") - ref).max()
peer_err = np.abs(np.load(f"{d}/peer_out.npy") - ref).max()
if not (err < 1e-4 and peer_err < 1e-4):
    sys.exit(f"wrong result: attnc error {err:.3g}, peer error {peer_err:.3g}")
print(f"{mask:<8} {mine['median_ms']:12.2f} {mine['gflops']:10.1f} {100 * mine['gflops'] / peak:9.1f}% "
      f"{peer['median_ms']:12.2f} {peer['median_ms'] / mine['median_ms']:9.2f}x {err:.2g}")
PY
done
echo "FMA peak ($threads threads): $peak GFLOP/s; GFLOP/s count 4*B*H*Sq*Sk*D, causal only the kept pairs;"
echo "ratio = peer time / attnc time (above 1: attnc faster); peer: NumPy/OpenBLAS unfused, per head."
