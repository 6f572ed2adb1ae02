// test_cpu_features.cpp: parsing of required_cpu_features lists against this CPU.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "cpu_features.h"

using attn::detail::cpu_supports_all;

TEST_CASE("no features are always supported") {
  std::string missing = "stale";
  CHECK(cpu_supports_all("", &missing));
  CHECK(missing.empty());
  CHECK(cpu_supports_all(nullptr, &missing));
  CHECK(cpu_supports_all(" , ", nullptr));
}

TEST_CASE("unknown names count as missing and are listed") {
  std::string missing;
  CHECK_FALSE(cpu_supports_all("nonsense", &missing));
  CHECK(missing == "nonsense");
  CHECK_FALSE(cpu_supports_all("nonsense, bogus ,", &missing));
  CHECK(missing == "nonsense, bogus");
}

#if defined(__x86_64__) || defined(__i386__)
TEST_CASE("x86 names agree with __builtin_cpu_supports") {
  __builtin_cpu_init();
  std::string missing;
  CHECK(cpu_supports_all("avx2", &missing) == (__builtin_cpu_supports("avx2") != 0));
  CHECK(cpu_supports_all("avx512f", &missing) == (__builtin_cpu_supports("avx512f") != 0));
  CHECK(cpu_supports_all("fma", &missing) == (__builtin_cpu_supports("fma") != 0));
  CHECK(cpu_supports_all("sse41", &missing) == (__builtin_cpu_supports("sse4.1") != 0));
  CHECK(cpu_supports_all("sse4.1", &missing) == (__builtin_cpu_supports("sse4.1") != 0));
  CHECK(
      cpu_supports_all("sse41, avx ,avx2", &missing) ==
      (__builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2")));
  // A known name that is absent is listed, a present one is not.
  if (!__builtin_cpu_supports("avx512bw")) {
    CHECK_FALSE(cpu_supports_all("sse41,avx512bw", &missing));
    CHECK(missing == "avx512bw");
  }
  // Names probed by cpuid rather than the builtin still answer without crashing.
  cpu_supports_all("f16c,avx512fp16,avxvnni,avx512bf16", &missing);
}

#if defined(__linux__)
// The flags line of /proc/cpuinfo: Linux's own reading of cpuid (and of what the OS enables).
std::string proc_cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("flags", 0) == 0) return line + " ";
  return "";
}

TEST_CASE("x86 names agree with the flags Linux reports, vendor extensions and AMX included") {
  const std::string flags = proc_cpu_flags();
  REQUIRE(!flags.empty());
  struct Pair {
    const char *ours, *linux_flag;
  };
  // sse4a is AMD's (the Zen 4 class variant needs it); AMX needs Linux's permission as well, which
  // the runtime asks for (a kernel from 5.16 on grants it).
  for (const Pair p :
       {Pair{"sse4a", "sse4a"}, Pair{"bmi", "bmi1"}, Pair{"bmi2", "bmi2"}, Pair{"lzcnt", "abm"},
        Pair{"movbe", "movbe"}, Pair{"avx512bf16", "avx512_bf16"}, Pair{"avx512fp16", "avx512_fp16"},
        Pair{"avx512vbmi2", "avx512_vbmi2"}, Pair{"avx512bitalg", "avx512_bitalg"}, Pair{"gfni", "gfni"},
        Pair{"amx-tile", "amx_tile"}, Pair{"amx-bf16", "amx_bf16"}}) {
    CAPTURE(p.ours);
    std::string missing;
    CHECK(cpu_supports_all(p.ours, &missing) ==
          (flags.find(std::string(" ") + p.linux_flag + " ") != std::string::npos));
  }
}
#endif
#elif defined(__aarch64__)
TEST_CASE("neon is present on aarch64") {
  std::string missing;
  CHECK(cpu_supports_all("neon", &missing));
  CHECK_FALSE(cpu_supports_all("avx2", &missing));
}
#endif
