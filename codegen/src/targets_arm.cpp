// The AArch64 target sets and what each variant needs of a CPU.
#include "attnc/targets_arm.h"

#include <Halide.h>

#include <cstdlib>

namespace attnc {
namespace {

bool is_arm64(const Halide::Target &t) {
  return t.arch == Halide::Target::ARM && t.bits == 64;
}

bool is_foreign(const Halide::Target &t) {
  const Halide::Target host = Halide::get_host_target();
  return t.arch != host.arch || t.bits != host.bits || t.os != host.os;
}

}  // namespace

const std::vector<std::string> *arm_named_set(const std::string &name) {
  // arm_dot_prod (sdot/udot) and arm_fp16 (half-precision arithmetic) arrived together in
  // Armv8.2-A as implemented by every server core of that class; Halide uses the first for
  // integer dot products and the second for f16 arithmetic. Kernels compute in fp32 on both
  // variants (storage types convert with fcvtl, which any AArch64 has), so the Armv8.2 variant
  // differs in what LLVM may select, not in the algorithm.
  static const std::vector<std::string> linux_set = {"arm-64-linux-arm_dot_prod-arm_fp16", "arm-64-linux"};
  static const std::vector<std::string> osx_set = {"arm-64-osx-arm_dot_prod-arm_fp16", "arm-64-osx"};
  if (name == "arm64") return &linux_set;
  if (name == "arm64-osx") return &osx_set;
  return nullptr;
}

VectorUnit target_vector_unit(const std::string &halide_target) {
  const Halide::Target t(halide_target);
  if (is_arm64(t)) return neon_vectors;
  return x86_vectors(t.natural_vector_size(Halide::Float(32)));
}

VectorUnit native_vector_unit() {
  return target_vector_unit(Halide::get_host_target().to_string());
}

bool host_is_arm64_linux() {
  const Halide::Target host = Halide::get_host_target();
  return is_arm64(host) && host.os == Halide::Target::Linux;
}

std::string arm_required_cpu_features(const std::string &halide_target) {
  const Halide::Target t(halide_target);
  if (!is_arm64(t)) return "";
  std::string names;
  if (t.has_feature(Halide::Target::ARMDotProd)) names += "asimddp";
  if (t.has_feature(Halide::Target::ARMFp16)) names += std::string(names.empty() ? "" : ",") + "fphp,asimdhp";
  return names;
}

std::string cross_c_compiler(const std::string &halide_target) {
  const Halide::Target t(halide_target);
  if (!is_foreign(t)) return "";
  if (is_arm64(t) && t.os == Halide::Target::Linux) return "aarch64-linux-gnu-gcc";
  return "";
}

bool has_c_compiler_for(const std::string &halide_target) {
  return !is_foreign(Halide::Target(halide_target)) || !cross_c_compiler(halide_target).empty();
}

std::string cross_archiver(const std::string &halide_target) {
  const Halide::Target t(halide_target);
  if (!is_foreign(t)) return "";
  if (is_arm64(t) && t.os == Halide::Target::Linux) return "aarch64-linux-gnu-ar";
  // Mach-O members: LLVM's archiver writes their symbol index (Debian's GNU ar does not know
  // Mach-O and leaves it out: ranlib on the Mac adds it).
  if (t.os == Halide::Target::OSX) return std::system("command -v llvm-ar >/dev/null 2>&1") == 0 ? "llvm-ar" : "ar";
  return "";
}

}  // namespace attnc
