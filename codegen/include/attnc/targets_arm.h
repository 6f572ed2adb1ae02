// attnc/targets_arm.h: the AArch64 target sets (Linux dispatch set, Apple Silicon) and their CPU needs.
#pragma once

#include <string>
#include <vector>

#include "attnc/tile_config.h"

namespace attnc {

// "arm64": the AArch64 Linux dispatch set, most capable first: Armv8.2 with dot product and fp16
// arithmetic (Neoverse N1/V1/V2, Graviton 2-4, Ampere, Grace), then baseline NEON (any AArch64
// CPU, Cortex-A53 class). "arm64-osx": the same two variants as Mach-O objects for Apple Silicon.
// Null for any other name.
const std::vector<std::string> *arm_named_set(const std::string &name);

// The vector unit a Halide target's tiles are sized for: neon_vectors on AArch64, x86_vectors of
// the target's f32 lanes elsewhere.
VectorUnit target_vector_unit(const std::string &halide_target);
// The same for the machine attnc runs on (attnc tune).
VectorUnit native_vector_unit();

// Whether the machine attnc runs on is AArch64 Linux ("host" then means the arm64 set).
bool host_is_arm64_linux();

// The CPU features (names as Linux's /proc/cpuinfo and HWCAP spell them) an AArch64 Halide target
// needs: "asimddp,fphp,asimdhp" for arm_dot_prod + arm_fp16, "" for baseline NEON.
std::string arm_required_cpu_features(const std::string &halide_target);

// The C compiler and archiver for entries and libraries of a target that is not this machine's
// architecture (aarch64-linux-gnu-gcc / -ar for AArch64 Linux from x86); "" when the host's serve.
std::string cross_c_compiler(const std::string &halide_target);
// Whether this machine has a C compiler for the target's entry: its own architecture and OS, or a
// cross compiler above. Not for arm64-osx off a Mac (no macOS SDK): attnc gen leaves its entry as
// source and cannot link --shared.
bool has_c_compiler_for(const std::string &halide_target);
std::string cross_archiver(const std::string &halide_target);

}  // namespace attnc
