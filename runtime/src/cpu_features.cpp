// cpu_features.cpp: maps feature names to this CPU's capabilities (cpuid on x86, HWCAP on AArch64).
#include "cpu_features.h"

#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace {

#if defined(__x86_64__) || defined(__i386__)

// Features some compilers' __builtin_cpu_supports does not know (clang 14 lacks f16c, avxvnni
// and avx512fp16) are read from cpuid. Each needs register state that the OS enables only with
// AVX (f16c, vnni) or AVX-512 (fp16), which __builtin_cpu_supports checks for avx and avx512f.
bool cpuid_bit(unsigned leaf, unsigned subleaf, int reg, unsigned bit) {
  unsigned regs[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3])) return false;
  return (regs[reg] >> bit) & 1u;
}
constexpr int eax = 0, ecx = 2, edx = 3;

bool has_feature(std::string_view name) {
  __builtin_cpu_init();
  // __builtin_cpu_supports takes string literals only, hence one line per name.
  if (name == "sse41" || name == "sse4.1") return __builtin_cpu_supports("sse4.1");
  if (name == "sse42" || name == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (name == "popcnt") return __builtin_cpu_supports("popcnt");
  if (name == "avx") return __builtin_cpu_supports("avx");
  if (name == "avx2") return __builtin_cpu_supports("avx2");
  if (name == "fma") return __builtin_cpu_supports("fma");
  // cpuid traps to the hypervisor in a VM: each bit is read once.
  if (name == "f16c") {
    static const bool f16c = __builtin_cpu_supports("avx") && cpuid_bit(1, 0, ecx, 29);
    return f16c;
  }
  if (name == "bmi") return __builtin_cpu_supports("bmi");
  if (name == "bmi2") return __builtin_cpu_supports("bmi2");
  if (name == "avx512f") return __builtin_cpu_supports("avx512f");
  if (name == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (name == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (name == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (name == "avx512cd") return __builtin_cpu_supports("avx512cd");
  if (name == "avx512bf16") return __builtin_cpu_supports("avx512bf16");
  if (name == "avx512vnni") return __builtin_cpu_supports("avx512vnni");
  if (name == "avx512vbmi") return __builtin_cpu_supports("avx512vbmi");
  if (name == "avx512ifma") return __builtin_cpu_supports("avx512ifma");
  if (name == "avx512fp16") {
    static const bool fp16 = __builtin_cpu_supports("avx512f") && cpuid_bit(7, 0, edx, 23);
    return fp16;
  }
  if (name == "avxvnni") {
    static const bool vnni = __builtin_cpu_supports("avx2") && cpuid_bit(7, 1, eax, 4);
    return vnni;
  }
  return false;
}

#elif defined(__aarch64__)

// Advanced SIMD is architectural on AArch64. The rest comes from the kernel's HWCAP bits (names as
// /proc/cpuinfo spells them; bit numbers from Linux's arch/arm64/include/uapi/asm/hwcap.h, spelled
// out so that older libc headers do. Elsewhere (no HWCAP) they count as missing, and a variant
// needing them is passed over rather than run on a guess.
bool has_feature(std::string_view name) {
  if (name == "neon" || name == "asimd") return true;
#if defined(__linux__)
  static const unsigned long hwcap = getauxval(AT_HWCAP);
  constexpr unsigned long fphp = 1ul << 9, asimdhp = 1ul << 10, asimddp = 1ul << 20;
  if (name == "fphp") return (hwcap & fphp) != 0;
  if (name == "asimdhp") return (hwcap & asimdhp) != 0;
  if (name == "asimddp") return (hwcap & asimddp) != 0;
#endif
  return false;
}

#else

bool has_feature(std::string_view) {
  return false;
}

#endif

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

namespace attn::detail {

void for_each_feature(const char *features, const std::function<void(std::string_view)> &visit) {
  if (features == nullptr) return;
  std::string_view rest(features);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string_view name = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    if (!name.empty()) visit(name);
  }
}

bool cpu_supports_all(const char *features, std::string *missing) {
  if (missing != nullptr) missing->clear();
  bool all = true;
  for_each_feature(features, [&](std::string_view name) {
    if (has_feature(name)) return;
    all = false;
    if (missing != nullptr) {
      if (!missing->empty()) *missing += ", ";
      *missing += name;
    }
  });
  return all;
}

}  // namespace attn::detail
