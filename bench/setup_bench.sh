#!/usr/bin/env bash
# Installs the benchmark's optional peers when missing: oneDNN (apt) and onnxruntime, onnx,
# matplotlib and llama-cpp-python (pip, into .venv). Never fails: a peer that cannot be installed
# is skipped later.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"

if [ ! -f /usr/include/oneapi/dnnl/dnnl.hpp ]; then
  echo "bench setup: installing libdnnl-dev (oneDNN) from Debian"
  if ! { $sudo_cmd apt-get update -qq && \
         $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libdnnl-dev >/dev/null; }; then
    echo "bench setup: could not install libdnnl-dev; the oneDNN peer will be skipped"
  fi
fi

missing=()
for module in onnxruntime onnx matplotlib; do
  "$venv/bin/python" -c "import $module" 2>/dev/null || missing+=("$module")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench setup: installing ${missing[*]} into $venv"
  if ! timeout 600 "$venv/bin/pip" install -q --disable-pip-version-check "${missing[@]}"; then
    echo "bench setup: could not install ${missing[*]}; those peers (or the plot) will be skipped"
  fi
fi
# llama.cpp's CPU attention (bench/llamacpp_peer.py): llama-cpp-python has no Linux wheel on PyPI,
# so pip builds its sdist (llama.cpp and ggml, for this CPU: ~15 min of CPU on 2 cores), once.
if ! "$venv/bin/python" -c "import llama_cpp" 2>/dev/null; then
  echo "bench setup: building llama-cpp-python from its sdist into $venv (once; ~15 min of CPU)"
  if ! PATH="$venv/bin:$PATH" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
       CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF" \
       timeout 2400 "$venv/bin/pip" install -q --disable-pip-version-check --no-binary llama-cpp-python \
       llama-cpp-python; then
    echo "bench setup: could not build llama-cpp-python; the llama.cpp peer will be skipped"
  fi
fi
exit 0
