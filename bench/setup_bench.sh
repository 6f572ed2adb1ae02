#!/usr/bin/env bash
# Installs the benchmark's optional peers when missing: oneDNN (apt) and onnxruntime, onnx,
# matplotlib (pip, into .venv). Never fails: a peer that cannot be installed is skipped later.
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
exit 0
