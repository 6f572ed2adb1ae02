// cpu_features.cpp: maps feature names to this CPU's capabilities (cpuid on x86, HWCAP on AArch64).
#include "cpu_features.h"

#include <array>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

#include <cstdint>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

namespace {

#if defined(__x86_64__) || defined(__i386__)

// Every name is read from cpuid, not __builtin_cpu_supports: compilers know different subsets of
// names (clang 14 lacks f16c, avxvnni and avx512fp16; GCC 12 lacks the AMX ones), and a variant's
// list must mean the same whatever built the runtime. A feature counts only where the OS also
// saves its register state (XCR0): AVX's ymm, AVX-512's zmm and mask registers, AMX's tiles; AMX
// in Linux further needs the process's permission (amx_permission below).
enum class State { none, avx, avx512, amx };

struct CpuidBit {
  const char *name;
  unsigned leaf, subleaf;
  int reg;  // 0 eax, 1 ebx, 2 ecx, 3 edx
  unsigned bit;
  State state;
};
constexpr int eax = 0, ebx = 1, ecx = 2, edx = 3;

// Bit positions from the Intel SDM (vol. 2A, CPUID) and AMD's APM (vol. 3, CPUID Fn8000_0001).
constexpr CpuidBit cpuid_bits[] = {
    {"sse3", 1, 0, ecx, 0, State::none},
    {"pclmul", 1, 0, ecx, 1, State::none},
    {"ssse3", 1, 0, ecx, 9, State::none},
    {"fma", 1, 0, ecx, 12, State::avx},
    {"sse41", 1, 0, ecx, 19, State::none},
    {"sse4.1", 1, 0, ecx, 19, State::none},
    {"sse42", 1, 0, ecx, 20, State::none},
    {"sse4.2", 1, 0, ecx, 20, State::none},
    {"movbe", 1, 0, ecx, 22, State::none},
    {"popcnt", 1, 0, ecx, 23, State::none},
    {"aes", 1, 0, ecx, 25, State::none},
    {"avx", 1, 0, ecx, 28, State::avx},
    {"f16c", 1, 0, ecx, 29, State::avx},
    {"bmi", 7, 0, ebx, 3, State::none},
    {"avx2", 7, 0, ebx, 5, State::avx},
    {"bmi2", 7, 0, ebx, 8, State::none},
    {"avx512f", 7, 0, ebx, 16, State::avx512},
    {"avx512dq", 7, 0, ebx, 17, State::avx512},
    {"adx", 7, 0, ebx, 19, State::none},
    {"avx512ifma", 7, 0, ebx, 21, State::avx512},
    {"avx512cd", 7, 0, ebx, 28, State::avx512},
    {"sha", 7, 0, ebx, 29, State::none},
    {"avx512bw", 7, 0, ebx, 30, State::avx512},
    {"avx512vl", 7, 0, ebx, 31, State::avx512},
    {"avx512vbmi", 7, 0, ecx, 1, State::avx512},
    {"avx512vbmi2", 7, 0, ecx, 6, State::avx512},
    {"gfni", 7, 0, ecx, 8, State::none},
    {"vaes", 7, 0, ecx, 9, State::avx},
    {"vpclmulqdq", 7, 0, ecx, 10, State::avx},
    {"avx512vnni", 7, 0, ecx, 11, State::avx512},
    {"avx512bitalg", 7, 0, ecx, 12, State::avx512},
    {"avx512vpopcntdq", 7, 0, ecx, 14, State::avx512},
    {"amx-bf16", 7, 0, edx, 22, State::amx},
    {"avx512fp16", 7, 0, edx, 23, State::avx512},
    {"amx-tile", 7, 0, edx, 24, State::amx},
    {"amx-int8", 7, 0, edx, 25, State::amx},
    {"avxvnni", 7, 1, eax, 4, State::avx},
    {"avx512bf16", 7, 1, eax, 5, State::avx512},
    {"lzcnt", 0x80000001u, 0, ecx, 5, State::none},
    {"sse4a", 0x80000001u, 0, ecx, 6, State::none},
};

bool cpuid_bit(unsigned leaf, unsigned subleaf, int reg, unsigned bit) {
  unsigned regs[4] = {0, 0, 0, 0};
  // __get_cpuid_count checks the leaf against the highest one of its range (basic or extended).
  if (!__get_cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3])) return false;
  return (regs[reg] >> bit) & 1u;
}

// XCR0, the register state the OS saves on a context switch; 0 without OSXSAVE.
uint64_t enabled_state() {
  if (!cpuid_bit(1, 0, ecx, 27)) return 0;
  uint32_t low = 0, high = 0;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (static_cast<uint64_t>(high) << 32) | low;
}

// Linux hands out AMX's 8 KiB of tile state only to a process that asked for it
// (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); a tile instruction before that faults.
// Asked once per process; a refusal (an older kernel, a seccomp filter) makes the AMX features
// count as missing, so the next variant runs.
bool amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
  constexpr long arch_get_xcomp_perm = 0x1022, arch_req_xcomp_perm = 0x1023;
  constexpr int xfeature_xtiledata = 18;
  static const bool granted = [] {
    if (syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) != 0) return false;
    unsigned long permitted = 0;
    return syscall(SYS_arch_prctl, arch_get_xcomp_perm, &permitted) == 0 &&
           (permitted >> xfeature_xtiledata & 1ul) != 0;
  }();
  return granted;
#else
  return false;
#endif
}

bool state_enabled(State state) {
  static const uint64_t xcr0 = enabled_state();
  constexpr uint64_t sse_avx = 0x6, opmask_zmm = 0xe0, tiles = 0x60000;
  switch (state) {
    case State::none:
      return true;
    case State::avx:
      return (xcr0 & sse_avx) == sse_avx;
    case State::avx512:
      return (xcr0 & (sse_avx | opmask_zmm)) == (sse_avx | opmask_zmm);
    case State::amx:
      return (xcr0 & tiles) == tiles && amx_permission();
  }
  return false;
}

bool has_feature(std::string_view name) {
  // cpuid traps to the hypervisor in a VM: every bit is read once.
  constexpr size_t count = sizeof(cpuid_bits) / sizeof(cpuid_bits[0]);
  static const std::array<bool, count> present = [] {
    std::array<bool, count> bits{};
    for (size_t i = 0; i < count; ++i) {
      const CpuidBit &b = cpuid_bits[i];
      bits[i] = cpuid_bit(b.leaf, b.subleaf, b.reg, b.bit) && state_enabled(b.state);
    }
    return bits;
  }();
  for (size_t i = 0; i < count; ++i)
    if (name == cpuid_bits[i].name) return present[i];
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
