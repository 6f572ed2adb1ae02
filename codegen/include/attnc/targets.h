// attnc/targets.h: named target sets (the x86 dispatch set) and what each variant needs of a CPU.
#pragma once

#include <string>
#include <vector>

#include "attn/spec.h"

namespace attnc {

// Expands "host" (this machine's architecture's dispatch set, most capable first), "native"
// (the single best target for this machine), "x86" (the x86-64 dispatch set) and plain Halide
// target strings, comma separated; a named set may carry extra features for each of its targets
// ("native-tsan", "host-tsan"). "cuda" and "opencl" are GPU variants (targets_gpu.h). Fails
// with a message for an unknown or invalid target.
struct TargetList {
  bool ok = false;
  std::vector<std::string> targets;  // most capable first; the last one is the fallback
  std::string message;
};
TargetList expand_targets(const std::string &spec);

// Whether a kernel of this spec gets the variant for halide_target out of `targets`: an AMX
// (Sapphire Rapids class) target only for bf16 specs, the only ones with AMX code, unless it is the
// only CPU target of the list ("native" on such a machine); for the rest it would be the AVX-512
// Skylake class variant's code again, built twice. Every other target: yes.
bool amx_variant_pays(const attn::Spec &resolved, const std::string &halide_target,
                      const std::vector<std::string> &targets);

// The CPU features (names as cpu_features.cpp reads them from cpuid) a Halide target's code may
// use: every extension of the LLVM CPU Halide compiles it for, plus the target's own.
std::string required_cpu_features(const std::string &halide_target);

// f32 lanes of the native target's vectors (16 with AVX-512, 8 with AVX2, 4 with NEON or SSE).
int native_lanes();

}  // namespace attnc
