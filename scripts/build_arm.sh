#!/usr/bin/env bash
# Cross-builds attnc for AArch64 Linux (cmake/toolchains/aarch64-linux-gnu.cmake) into a tree that
# generates its kernels with the plain build's attnc: the runtime, attn-run, the examples and the
# arm-labelled kernel suites, all AArch64, run by ctest under qemu-user.
#
#   scripts/build_arm.sh [PLAIN_BUILD [ARM_BUILD]]           make arm: configure and build all of it
#   scripts/build_arm.sh --suites [PLAIN_BUILD [ARM_BUILD]]  make test (tests/arm): the suites only
#
# PLAIN_BUILD defaults to build/, ARM_BUILD to build-arm/. Exits 77 (ctest: skipped) when the cross
# compiler or the emulator is missing (scripts/setup.sh installs both). Settings: JOBS (2),
# ATTNC_FULL_TESTS (OFF: the suites' make test share; ON: every spec and case of each).
set -euo pipefail
mode=all
case "${1:-}" in
  --suites) mode=suites; shift ;;
  --*) echo "build_arm: unknown option '$1' (valid: --suites)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
plain=$(cd "${1:-$root/build}" && pwd)
arm=${2:-$root/build-arm}
jobs=${JOBS:-2}
venv="$root/.venv"
export PATH="$venv/bin:$PATH"

attnc="$plain/tools/attnc"
if [ ! -x "$attnc" ]; then
  echo "build_arm: no attnc at '$attnc': build the plain tree first (make build)" >&2
  exit 2
fi
for tool in aarch64-linux-gnu-g++ qemu-aarch64; do
  if ! command -v "$tool" >/dev/null; then
    echo "build_arm: '$tool' not found (Debian: g++-aarch64-linux-gnu, qemu-user; scripts/setup.sh installs them)" >&2
    exit 77
  fi
done
halide_dir=$("$venv/bin/python" -c "import halide, os; print(os.path.join(os.path.dirname(halide.__file__), 'lib64', 'cmake', 'Halide'))")

echo "build_arm: AArch64 tree $arm (attnc from $plain)"
cmake -S "$root" -B "$arm" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DCMAKE_MAKE_PROGRAM="$venv/bin/ninja" -DHalide_DIR="$halide_dir" -DATTNC_TOOL="$attnc" \
  -DATTNC_FULL_TESTS="${ATTNC_FULL_TESTS:-OFF}" >/dev/null
if [ "$mode" = suites ]; then
  cmake --build "$arm" -j "$jobs" --target attnc_arm_suites
else
  cmake --build "$arm" -j "$jobs"
fi
