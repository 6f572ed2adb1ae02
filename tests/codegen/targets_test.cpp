// Target sets: named sets, Halide target strings, and named sets with extra features.
#include "attnc/targets.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

bool ends_with(const std::string &text, const std::string &tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

TEST_CASE("a named set with features gives every target of the set those features") {
  const attnc::TargetList plain = attnc::expand_targets("x86");
  const attnc::TargetList tsan = attnc::expand_targets("x86-tsan");
  REQUIRE(plain.ok);
  REQUIRE(tsan.ok);
  REQUIRE(tsan.targets.size() == plain.targets.size());
  for (const std::string &t : tsan.targets) {
    CAPTURE(t);
    CHECK(ends_with(t, "-tsan"));
  }
  // "host-tsan" is the dispatch set (on x86), not Halide's host target with tsan.
  const attnc::TargetList host = attnc::expand_targets("host");
  const attnc::TargetList host_tsan = attnc::expand_targets("host-tsan");
  REQUIRE(host_tsan.ok);
  CHECK(host_tsan.targets.size() == host.targets.size());
  const attnc::TargetList native = attnc::expand_targets("native-tsan");
  REQUIRE(native.ok);
  CHECK(native.targets.size() == 1);
}

TEST_CASE("Halide target strings that start like a set name stay Halide target strings") {
  const attnc::TargetList list = attnc::expand_targets("x86-64-linux-avx2");
  REQUIRE(list.ok);
  REQUIRE(list.targets.size() == 1);
  CHECK(list.targets[0].find("avx2") != std::string::npos);
}

TEST_CASE("unknown features after a set name are refused, naming them") {
  const attnc::TargetList list = attnc::expand_targets("host-nonsense_feature");
  CHECK(!list.ok);
  CHECK(list.message.find("nonsense_feature") != std::string::npos);
  CHECK(!attnc::expand_targets("hostile").ok);
}

TEST_CASE("cuda and opencl are this host's baseline plus the GPU API, after the CPU set in 'host,cuda'") {
  const attnc::TargetList cuda = attnc::expand_targets("cuda");
  REQUIRE(cuda.ok);
  REQUIRE(cuda.targets.size() == 1);
  CAPTURE(cuda.targets[0]);
  CHECK(cuda.targets[0].find("-cuda") != std::string::npos);
  CHECK(cuda.targets[0].find("cuda_capability_86") != std::string::npos);
  CHECK(cuda.targets[0].find("avx") == std::string::npos);
  CHECK(attnc::required_cpu_features(cuda.targets[0]).empty());

  const attnc::TargetList opencl = attnc::expand_targets("opencl");
  REQUIRE(opencl.ok);
  REQUIRE(opencl.targets.size() == 1);
  CHECK(opencl.targets[0].find("-opencl") != std::string::npos);

  const attnc::TargetList both = attnc::expand_targets("host,cuda");
  const attnc::TargetList host = attnc::expand_targets("host");
  REQUIRE(both.ok);
  REQUIRE(both.targets.size() == host.targets.size() + 1);
  CHECK(both.targets.back() == cuda.targets[0]);
}

}  // namespace

namespace {

bool lists(const std::string &features, const std::string &name) {
  return ("," + features + ",").find("," + name + ",") != std::string::npos;
}

}  // namespace

TEST_CASE("each x86 variant requires what its LLVM CPU may emit, vendor extensions included") {
  const attnc::TargetList x86 = attnc::expand_targets("x86");
  REQUIRE(x86.ok);
  for (const std::string &t : x86.targets) {
    CAPTURE(t);
    const std::string needs = attnc::required_cpu_features(t);
    CAPTURE(needs);
    const bool amx = t.find("avx512_sapphirerapids") != std::string::npos;
    const bool zen4 = t.find("avx512_zen4") != std::string::npos && !amx;
    CHECK(lists(needs, "amx-tile") == amx);
    const bool avx2 = t.find("avx2") != std::string::npos;
    // LLVM's znver4 packs bytes with SSE4a's insertq, which no Intel CPU has (issue 36).
    CHECK(lists(needs, "sse4a") == zen4);
    // haswell and later: andn, shlx, lzcnt appear in kernels of every AVX2 variant.
    for (const char *scalar : {"bmi", "bmi2", "lzcnt", "movbe"}) CHECK(lists(needs, scalar) == avx2);
    if (zen4 || amx) CHECK(lists(needs, "avx512vbmi2"));
    if (t == x86.targets.back()) CHECK(needs.empty());
  }
  // A Sapphire Rapids target (AMX, AVX-512 FP16) asks for its tiles and half-precision arithmetic.
  const std::string spr = attnc::required_cpu_features(
      "x86-64-linux-sse41-avx-f16c-fma-avx2-avx512-avx512_skylake-avx512_cannonlake-avx512_zen4-avx512_"
      "sapphirerapids");
  for (const char *name : {"amx-tile", "amx-bf16", "avx512fp16", "avx512bf16", "avxvnni"}) {
    CAPTURE(name);
    CHECK(lists(spr, name));
  }
  CHECK_FALSE(lists(spr, "sse4a"));
}

TEST_CASE("the AMX variant is built for bf16 kernels only, unless it is the only CPU target") {
  const attnc::TargetList host = attnc::expand_targets("x86");
  REQUIRE(host.ok);
  REQUIRE(host.targets.front().find("avx512_sapphirerapids") != std::string::npos);
  attn::Spec f32 = attn::attention().with_heads(2).with_head_dim(32);
  attn::Spec bf16 = f32.with_dtype(attn::DType::bf16);
  CHECK_FALSE(attnc::amx_variant_pays(f32, host.targets.front(), host.targets));
  CHECK(attnc::amx_variant_pays(bf16, host.targets.front(), host.targets));
  for (size_t i = 1; i < host.targets.size(); ++i) CHECK(attnc::amx_variant_pays(f32, host.targets[i], host.targets));
  const std::vector<std::string> alone = {host.targets.front()};
  CHECK(attnc::amx_variant_pays(f32, alone.front(), alone));
}
