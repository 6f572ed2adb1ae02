#!/usr/bin/env bash
# Runs one libFuzzer target for FUZZ_SECONDS (default 10) from its seeds; new inputs it finds go to
# WORK/corpus (the seeds stay as checked in), a crash to WORK/crash-* with the input that caused it.
#   run_fuzzer.sh BINARY SEEDS WORK [libFuzzer flags...]
set -euo pipefail
binary=$1 seeds=$2 work=$3
shift 3
seconds=${FUZZ_SECONDS:-10}
mkdir -p "$work/corpus"
echo "fuzz: $(basename "$binary") for ${seconds}s, seeds $seeds"
# -timeout: an input that takes 10 s is a finding too (a hang).
exec "$binary" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$work/" \
  "$@" "$work/corpus" "$seeds"
