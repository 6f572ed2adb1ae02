#!/usr/bin/env bash
# tools/gpu_check.sh: the CUDA build of attnc, checked and timed on a machine with an NVIDIA GPU.
#
#   tools/gpu_check.sh build        here (Halide, attnc): builds the CUDA kernel sweep, the
#                                   device test, attn-run, the runtime's shared library (for the
#                                   Python binding) and the benchmark kernels into gpu_bundle/
#                                   (ignored by git; well under 64 MiB)
#   tools/gpu_check.sh run OUT_DIR  on the GPU machine (CUDA driver, PyTorch; no Halide, no
#                                   network), with gpu_bundle/ beside the working tree: the sweep
#                                   on the CUDA variant, then bench/gpu_bench.py against PyTorch's
#                                   scaled_dot_product_attention (PyTorch CUDA tensors passed as
#                                   device tensors through python/attnc); JSON, markdown and logs into
#                                   OUT_DIR. Within 8 minutes.
#
# Without a GPU `run` says so and stops with status 3 before anything that needs one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bundle="$root/gpu_bundle"
mode=${1:-}

# The benchmark kernels (issue 23): prefill B8 H16 S4096 D64 / D128, causal or not; decode
# H32 KVH8 D128 (Sq = 1, Sk = 8192); causal D128 prefill in bf16 and f16 and decode in bf16 (against
# SDPA in the same dtype). Batch and lengths are run-time values. bench/gpu_bench.py's CASES run them.
bench_specs=(
  "heads=16 head_dim=64 mask=none"
  "heads=16 head_dim=64 mask=causal"
  "heads=16 head_dim=128 mask=none"
  "heads=16 head_dim=128 mask=causal"
  "heads=32 kv_heads=8 head_dim=128 mask=none"
  "heads=16 head_dim=128 mask=causal dtype=bf16"
  "heads=16 head_dim=128 mask=causal dtype=f16"
  "heads=32 kv_heads=8 head_dim=128 mask=none dtype=bf16"
)
sweep_tests=(kernels_cuda_core_sweep_test kernels_cuda_block_sweep_test kernels_cuda_masked_rows_test
             kernels_cuda_split_keys_test kernels_cuda_device_test)

build() {
  local build_dir=${BUILD:-$root/build}
  local venv="$root/.venv"
  local ninja="$venv/bin/ninja"
  [ -x "$ninja" ] || { echo "gpu_check: $venv has no ninja: run 'make setup' first" >&2; exit 1; }
  local halide_dir
  halide_dir=$("$venv/bin/python" -c "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'lib64', 'cmake', 'Halide'))")
  PATH="$venv/bin:$PATH" "$venv/bin/cmake" -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHalide_DIR="$halide_dir" -DCMAKE_MAKE_PROGRAM="$ninja" -DATTNC_CUDA_SWEEP=ON >/dev/null
  "$ninja" -C "$build_dir" -j "${JOBS:-2}" attnc_cli attn_run attnc_runtime_shared "${sweep_tests[@]}"
  rm -rf "$bundle"
  mkdir -p "$bundle/bin" "$bundle/kernels" "$bundle/lib"
  cp "$build_dir/runtime/libattnc_runtime.so" "$bundle/lib/"
  local spec_args=()
  for s in "${bench_specs[@]}"; do spec_args+=(--spec "$s"); done
  "$build_dir/tools/attnc" gen "${spec_args[@]}" --target cuda --shared -o "$bundle/kernels" \
    --basename gpu_bench 2>&1 | grep -v '^Warning: Ignoring assertion' || true
  [ -f "$bundle/kernels/gpu_bench.so" ] || { echo "gpu_check: the benchmark kernels did not build" >&2; exit 1; }
  cp "$build_dir/tools/attn-run" "$bundle/bin/"
  for t in "${sweep_tests[@]}"; do cp "$build_dir/tests/kernels/gpu/$t" "$bundle/bin/"; done
  strip "$bundle"/bin/* "$bundle"/lib/* 2>/dev/null || true
  du -sh "$bundle"
  echo "gpu_check: built $bundle; carry it: run(command='tools/gpu_check.sh run \$OUT', carry=['gpu_bundle'])"
}

run() {
  local out=${1:?usage: tools/gpu_check.sh run OUT_DIR}
  mkdir -p "$out"
  [ -d "$bundle/bin" ] || { echo "gpu_check: no $bundle: run 'tools/gpu_check.sh build' where Halide is" >&2; exit 1; }
  if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >"$out/gpu.txt" 2>&1; then
    echo "gpu_check: no NVIDIA GPU here (nvidia-smi missing or found no device): nothing to run" | tee "$out/no_gpu.txt"
    exit 3
  fi
  cat "$out/gpu.txt"
  chmod +x "$bundle"/bin/* 2>/dev/null || true  # in case the copy dropped the modes
  local failed=0 started=$SECONDS
  : >"$out/sweep_status.txt"
  for t in "${sweep_tests[@]}"; do
    local start=$SECONDS status=0
    # The sweep kernels have only a CUDA variant; forced, a missing device fails loudly.
    local device=cuda
    [ "$t" = kernels_cuda_device_test ] && device=auto
    ATTN_DEVICE=$device timeout 90 "$bundle/bin/$t" >"$out/$t.log" 2>&1 || status=$?
    echo "$t status=$status seconds=$((SECONDS - start))" | tee -a "$out/sweep_status.txt"
    [ "$status" = 0 ] || failed=1
    tail -3 "$out/$t.log"
  done
  local python=${PYTHON:-python3}
  # What is left of 8 minutes (the sweeps take about one), at least one for the benchmark.
  local left=$((470 - (SECONDS - started)))
  [ "$left" -ge 60 ] || left=60
  ATTNC_RUNTIME="$bundle/lib/libattnc_runtime.so" PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" \
    timeout "$left" "$python" "$root/bench/gpu_bench.py" --bundle "$bundle" --out "$out" || failed=1
  exit $failed
}

case "$mode" in
  build) build ;;
  run) shift; run "$@" ;;
  *) sed -n 2,14p "$0" | sed 's/^# \{0,1\}//'; exit 1 ;;
esac
