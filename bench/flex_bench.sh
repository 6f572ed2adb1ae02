#!/usr/bin/env bash
# Issue 34's rows: score_mod / mask_mod against the built-ins they equal, at B1 H8 S=4096 D64 f32,
# timed with attn-run --bench in interleaved rounds (the VM's speed drifts), ratios per round.
#   bench/flex_bench.sh [BUILD] [ROUNDS]      BUILD: a plain build with attnc and attn-run (build/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-5}
work="$build/bench/flex"
mkdir -p "$work"
S=4096
specs=(
  "heads=8 head_dim=64 mask=causal"
  'heads=8 head_dim=64 mask_mod="q >= k"'
  "heads=8 head_dim=64 mask=window(255,0)"
  'heads=8 head_dim=64 mask_mod="q - k < 256 && q >= k"'
  "heads=8 head_dim=64"
  "heads=8 head_dim=64 inputs=rel:f32[H,8191] score_mod=\"s + rel[h, q - k + 4095]\""
)
args=()
for spec in "${specs[@]}"; do args+=(--spec "$spec"); done
"$build/tools/attnc" gen "${args[@]}" --target host --shared -o "$work" --basename flex >/dev/null
"$root/.venv/bin/python" - "$work" "$S" <<'PY'
import sys, numpy as np
work, S = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(34)
for name in "qkv":
    np.save(f"{work}/{name}.npy", rng.standard_normal((1, S, 8, 64)).astype(np.float32))
np.save(f"{work}/rel.npy", (0.1 * rng.standard_normal((8, 2 * S - 1))).astype(np.float32))
PY
ids=()
for spec in "${specs[@]}"; do ids+=("$("$build/tools/attnc" id --spec "$spec")"); done
time_of() {  # median ms of one kernel
  local extra=()
  [[ "$1" == *_in* ]] && extra=(--input "rel=$work/rel.npy")
  "$build/tools/attn-run" "$work/flex.so" --kernel "$1" --input "q=$work/q.npy" --input "k=$work/k.npy" \
    --input "v=$work/v.npy" "${extra[@]}" --bench --warmup 1 --runs 5 | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p'
}
echo "round causal q>=k ratio | window(255,0) mask_mod ratio | none rel-bias ratio   (ms, B1 H8 S$S D64)"
for ((r = 1; r <= rounds; ++r)); do
  t=()
  for id in "${ids[@]}"; do t+=("$(time_of "$id")"); done
  awk -v r="$r" -v a="${t[0]}" -v b="${t[1]}" -v c="${t[2]}" -v d="${t[3]}" -v e="${t[4]}" -v f="${t[5]}" \
    'BEGIN { printf "%d  %.1f %.1f %.3f | %.1f %.1f %.3f | %.1f %.1f %.3f\n", r, a, b, b / a, c, d, d / c, e, f, f / e }'
done
