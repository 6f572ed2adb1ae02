#!/usr/bin/env bash
# Mask skipping: time ratios that show masked key blocks are not computed (core, f32, B=1,
# H=8, D=64, 2 threads). Each kernel's output is checked against fp64 first (bench/crosscheck.py
# covers correctness for every term; here only the times matter).
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
python="$root/.venv/bin/python"
out="$build/bench_masks"
mkdir -p "$out"
threads=${THREADS:-2}
specs=("heads=8 head_dim=64 mask=none" "heads=8 head_dim=64 mask=causal" "heads=8 head_dim=64 mask=window(256,0)"
       "heads=8 head_dim=64 mask=window(128,128)|global(16)" "heads=8 head_dim=64 mask=padding")
args=()
for s in "${specs[@]}"; do args+=(--spec "$s"); done
"$build/tools/attnc" gen "${args[@]}" --target "${TARGET:-host}" -o "$out" --shared --basename mask_kernels >/dev/null

inputs() {  # inputs S [key_length]
  "$python" - "$out" "$1" "${2:-$1}" <<'PY'
import sys, numpy as np
d, s, kl = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(3)
for name in ("q", "k", "v"):
    np.save(f"{d}/{name}.npy", rng.standard_normal((1, s, 8, 64), dtype=np.float32))
np.save(f"{d}/key_lengths.npy", np.array([kl], np.int32))
PY
}
time_ms() {  # time_ms SPEC RUNS [extra attn-run args]
  local id
  id=$("$build/tools/attnc" id --spec "$1")
  "$build/tools/attn-run" "$out/mask_kernels.so" --kernel "$id" --threads "$threads" \
    --input q="$out/q.npy" --input k="$out/k.npy" --input v="$out/v.npy" "${@:3}" \
    --output out="$out/out.npy" --bench --json --warmup 1 --runs "$2" |
    "$python" -c "import json,sys; print(json.load(sys.stdin)['median_ms'])"
}
ratio() { "$python" -c "print(f'{$1 / $2:.3f}')"; }

inputs 4096
none_4k=$(time_ms "${specs[0]}" 5)
causal_4k=$(time_ms "${specs[1]}" 5)
window_4k=$(time_ms "${specs[2]}" 5)
echo "S=4096   none ${none_4k} ms, causal ${causal_4k} ms: causal/none = $(ratio "$causal_4k" "$none_4k") (target <= 0.55)"

kl=$((4096 / 4))
inputs 4096 "$kl"
pad_quarter=$(time_ms "${specs[4]}" 5 --input key_lengths="$out/key_lengths.npy")
inputs 4096 4096
pad_full=$(time_ms "${specs[4]}" 5 --input key_lengths="$out/key_lengths.npy")
echo "S=4096   padding key_lengths=S/4 ${pad_quarter} ms, =S ${pad_full} ms: ratio $(ratio "$pad_quarter" "$pad_full") (target <= 0.35)"

inputs 16384
window_16k=$(time_ms "${specs[2]}" 3)
echo "window(256,0): S=4096 ${window_4k} ms, S=16384 ${window_16k} ms: growth $(ratio "$window_16k" "$window_4k")x (target <= 4.4)"
local_16k=$(time_ms "${specs[3]}" 3)
none_16k=$(time_ms "${specs[0]}" 1)
echo "S=16384  (window(128,128)|global(16)) ${local_16k} ms, none ${none_16k} ms: $(ratio "$local_16k" "$none_16k") of dense (target <= 0.15)"
