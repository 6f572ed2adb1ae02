// Target sets: the x86 dispatch set, the native target, and CPU feature requirements.
#include "attnc/targets.h"

#include <Halide.h>

#include <sstream>
#include <string_view>
#include <utility>

#include "attnc/targets_arm.h"
#include "attnc/targets_gpu.h"

namespace attnc {
namespace {

// Most capable first: Halide's multitarget wrapper picks the first this CPU can run.
// Features are listed in full so the runtime check and the dispatch agree.
const std::vector<std::string> &x86_dispatch_set() {
  static const std::vector<std::string> set = {
      // Sapphire Rapids class and later Intel Xeons: AMX tiles for bf16 (only bf16 kernels carry
      // it: amx_variant_pays). Needs the tile permission from Linux, which the runtime asks for.
      "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake-avx512_zen4-avx512_"
      "sapphirerapids",
      // Zen 4 / Zen 5: AVX-512 with bf16 and VNNI, compiled for LLVM's znver4 (which needs SSE4a).
      "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake-avx512_zen4",
      // Skylake-X class AVX-512.
      "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake",
      // Haswell / Zen 1-3 class.
      "x86-64-linux-sse41-avx-f16c-fma-avx2",
      // Any x86-64.
      "x86-64-linux",
  };
  return set;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string native_target() {
  Halide::Target t = Halide::get_host_target();
  // Drop tuning-only features so kernels and manifests name what the code needs.
  return t.without_feature(Halide::Target::NoRuntime).to_string();
}

// The targets of one named set: "host", "native", "x86", "arm64" or "arm64-osx".
std::vector<std::string> named_set(const std::string &name) {
  if (name == "native") return {native_target()};
  if (const std::vector<std::string> *arm = arm_named_set(name)) return *arm;
  if (name == "host" && host_is_arm64_linux()) return *arm_named_set("arm64");
  if (name == "host" && Halide::get_host_target().arch != Halide::Target::X86) return {native_target()};
  return x86_dispatch_set();
}

bool is_named_set(const std::string &name) {
  return name == "host" || name == "native" || name == "x86" || arm_named_set(name) != nullptr;
}

}  // namespace

TargetList expand_targets(const std::string &spec) {
  TargetList result;
  for (const std::string &item : split(spec, ',')) {
    if (const std::optional<std::string> gpu = gpu_named_target(item)) {  // "cuda", "opencl"
      result.targets.push_back(*gpu);
      continue;
    }
    const size_t dash = item.find('-');
    const std::string set_name = item.substr(0, dash);
    // "host-tsan" is also a Halide target string (this machine's target plus tsan), and
    // "x86-64-linux" starts like "x86": a named set with features wins for host and native only.
    const bool named_with_features = dash != std::string::npos && is_named_set(set_name) &&
                                     (set_name != "x86" || !Halide::Target::validate_target_string(item));
    if (is_named_set(item)) {
      for (const std::string &t : named_set(item)) result.targets.push_back(t);
    } else if (named_with_features) {
      // A named set with extra features for every target of it ("native-tsan": the sanitizer trees).
      const std::string features = item.substr(dash + 1);
      for (const std::string &t : named_set(set_name)) {
        if (!Halide::Target::validate_target_string(t + "-" + features)) {
          result.message = "target '" + item + "': '" + features + "' are not Halide target features";
          return result;
        }
        result.targets.push_back(Halide::Target(t + "-" + features).to_string());
      }
    } else if (Halide::Target::validate_target_string(item)) {
      result.targets.push_back(Halide::Target(item).to_string());
    } else {
      result.message = "target '" + item +
                       "' is not a Halide target string, 'host', 'native', 'x86', 'arm64' or 'arm64-osx' "
                       "(each may take extra features: 'native-tsan')";
      return result;
    }
  }
  if (result.targets.empty()) {
    result.message = "no target given (try --target host)";
    return result;
  }
  result.ok = true;
  return result;
}

namespace {

// The LLVM CPU Halide 21 compiles an x86 target for (CodeGen_X86::mcpu_target): its most capable
// AVX-512 feature names it, else AVX2 means "haswell", AVX "corei7-avx", SSE4.1 "penryn".
// LLVM may emit any instruction that CPU has, whatever features the target string lists: the
// Zen 4 class variant may use AMD's SSE4a (LLVM packs bytes with insertq), which no Intel CPU has.
const char *llvm_cpu_of(const Halide::Target &t) {
  using F = Halide::Target::Feature;
  if (t.has_feature(F::AVX512_SapphireRapids)) return "sapphirerapids";
  if (t.has_feature(F::AVX512_Zen5) || t.has_feature(F::AVX512_Zen4)) return "znver4";
  if (t.has_feature(F::AVX512_Cannonlake)) return "cannonlake";
  if (t.has_feature(F::AVX512_Skylake)) return "skylake-avx512";
  if (t.has_feature(F::AVX512_KNL)) return "knl";
  if (t.has_feature(F::AVX2)) return "haswell";
  if (t.has_feature(F::AVX)) return "corei7-avx";
  if (t.has_feature(F::SSE41)) return "penryn";
  return "k8";
}

// The instruction sets of each LLVM CPU that compiled code may use (names as cpu_features.cpp
// reads them from cpuid), from LLVM 20's X86.td processor definitions. System-only extensions
// (xsave, rdrnd, clflushopt, mwaitx ...) are left out: a compiled kernel never emits them.
const char *llvm_cpu_features(std::string_view cpu) {
  static constexpr std::pair<std::string_view, const char *> table[] = {
      {"k8", ""},
      {"penryn", "sse3,ssse3,sse41"},
      {"corei7-avx", "sse3,ssse3,sse41,sse42,popcnt,avx,pclmul,aes"},
      {"haswell", "sse3,ssse3,sse41,sse42,popcnt,avx,pclmul,aes,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe"},
      {"knl",
       "sse3,ssse3,sse41,sse42,popcnt,avx,pclmul,aes,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,avx512f,avx512cd"},
      {"skylake-avx512",
       "sse3,ssse3,sse41,sse42,popcnt,avx,pclmul,aes,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,adx,"
       "avx512f,avx512cd,avx512bw,avx512dq,avx512vl"},
      {"cannonlake",
       "sse3,ssse3,sse41,sse42,popcnt,avx,pclmul,aes,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,adx,"
       "avx512f,avx512cd,avx512bw,avx512dq,avx512vl,avx512ifma,avx512vbmi,sha"},
      {"znver4",
       "sse3,ssse3,sse41,sse42,popcnt,avx,pclmul,aes,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,adx,"
       "avx512f,avx512cd,avx512bw,avx512dq,avx512vl,avx512ifma,avx512vbmi,sha,avx512vbmi2,"
       "avx512vnni,avx512bitalg,avx512vpopcntdq,avx512bf16,gfni,vaes,vpclmulqdq,sse4a"},
      {"sapphirerapids",
       "sse3,ssse3,sse41,sse42,popcnt,avx,pclmul,aes,avx2,fma,f16c,bmi,bmi2,lzcnt,movbe,adx,"
       "avx512f,avx512cd,avx512bw,avx512dq,avx512vl,avx512ifma,avx512vbmi,sha,avx512vbmi2,"
       "avx512vnni,avx512bitalg,avx512vpopcntdq,avx512bf16,gfni,vaes,vpclmulqdq,avxvnni,"
       "avx512fp16,amx-tile,amx-bf16,amx-int8"},
  };
  for (const auto &[name, features] : table)
    if (name == cpu) return features;
  return "";
}

}  // namespace

bool amx_variant_pays(const attn::Spec &resolved, const std::string &halide_target,
                      const std::vector<std::string> &targets) {
  const Halide::Target t(halide_target);
  if (t.arch != Halide::Target::X86 || !t.has_feature(Halide::Target::AVX512_SapphireRapids)) return true;
  int cpu_targets = 0;
  for (const std::string &other : targets)
    if (Halide::Target(other).arch == t.arch && !Halide::Target(other).has_gpu_feature()) ++cpu_targets;
  return resolved.dtype == attn::DType::bf16 || cpu_targets == 1;
}

std::string required_cpu_features(const std::string &halide_target) {
  const Halide::Target t(halide_target);
  if (t.arch == Halide::Target::ARM) return arm_required_cpu_features(halide_target);
  if (t.arch != Halide::Target::X86) return "";
  // The LLVM CPU's sets, then what the target's features add on top (Halide's mattrs).
  struct Need {
    Halide::Target::Feature feature;
    const char *names;
  };
  static const Need needs[] = {
      {Halide::Target::SSE41, "sse41"},
      {Halide::Target::AVX, "avx"},
      {Halide::Target::F16C, "f16c"},
      {Halide::Target::FMA, "fma"},
      {Halide::Target::AVX2, "avx2"},
      {Halide::Target::AVX512, "avx512f,avx512cd"},
      {Halide::Target::AVX512_Skylake, "avx512f,avx512bw,avx512dq,avx512vl"},
      {Halide::Target::AVX512_Cannonlake, "avx512ifma,avx512vbmi"},
      {Halide::Target::AVX512_Zen4, "avx512bf16,avx512vnni,avx512bitalg,avx512vbmi2"},
      {Halide::Target::AVXVNNI, "avxvnni"},
      {Halide::Target::AVX512_SapphireRapids, "amx-tile,amx-int8,amx-bf16"},
  };
  std::vector<std::string> names = split(llvm_cpu_features(llvm_cpu_of(t)), ',');
  for (const Need &n : needs) {
    if (!t.has_feature(n.feature)) continue;
    for (const std::string &name : split(n.names, ','))
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string joined;
  for (const std::string &n : names) joined += (joined.empty() ? "" : ",") + n;
  return joined;
}

int native_lanes() {
  return Halide::Target(native_target()).natural_vector_size(Halide::Float(32));
}

}  // namespace attnc
