// A kernel built for the x86 (or arm64) dispatch set runs on this CPU (whichever variant it picks)
// and is right.
#include <doctest/doctest.h>
#if defined(__aarch64__)
#include <sys/auxv.h>
#endif

#include <algorithm>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

constexpr const char *dispatch_spec = "heads=2 kv_heads=1 head_dim=48 mask=causal";

std::vector<std::string> split_targets(const std::string &list) {
  std::vector<std::string> targets;
  std::stringstream in(list);
  for (std::string t; std::getline(in, t, ',');) targets.push_back(t);
  return targets;
}

TEST_CASE("the dispatch kernel lists its variants") {
  const attn_kernel *kernel = find_kernel(parse(dispatch_spec));
  REQUIRE(kernel != nullptr);
  const std::string listed = attn_kernel_target(kernel);
  CAPTURE(listed);
  const std::vector<std::string> targets = split_targets(listed);
  const std::string configured = ATTNC_DISPATCH_TARGETS;
#if defined(__x86_64__)
  if (configured == "host" || configured == "x86") {
    // AVX-512 variants first, then AVX2, then baseline x86-64: the most capable this CPU runs wins.
    CHECK(targets.size() >= 3);
    CHECK(listed.find("avx512") != std::string::npos);
    CHECK(listed.find("avx2") != std::string::npos);
    CHECK(targets.back().find("avx") == std::string::npos);
  }
#elif defined(__aarch64__)
  if (configured == "host" || configured == "arm64") {
    // Armv8.2 (dot product, fp16) first, then baseline NEON.
    CHECK(targets.size() == 2);
    CHECK(targets.front().find("arm_dot_prod") != std::string::npos);
    CHECK(targets.back().find("arm_dot_prod") == std::string::npos);
  }
#endif
  CHECK(!targets.empty());
  // The spec it reports names the same kernel.
  const attn::ParseResult reported = attn::parse_spec(attn_kernel_spec(kernel));
  REQUIRE(reported.ok);
  CHECK(attn::kernel_id(reported.spec) == attn::kernel_id(parse(dispatch_spec)));
}

// Runs the dispatch kernel on odd sizes and checks it against the fp64 reference.
void check_against_reference(const attn::Spec &spec, const attn_kernel *kernel);

TEST_CASE("the dispatch kernel matches the fp64 reference") {
  const attn::Spec spec = parse(dispatch_spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  check_against_reference(spec, kernel);
}

TEST_CASE("a max isa picks the variant, and every variant this CPU runs is right") {
  const attn::Spec spec = parse(dispatch_spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  const std::vector<std::string> targets = split_targets(attn_kernel_target(kernel));
  struct Reset {
    ~Reset() { attn_set_max_isa(nullptr); }
  } reset;
#if defined(__aarch64__)
  // The HWCAP bits the Armv8.2 variant needs: fphp (9), asimdhp (10), asimddp (20).
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const bool armv8_2 = (hwcap >> 9 & 1) && (hwcap >> 10 & 1) && (hwcap >> 20 & 1);
  MESSAGE("this CPU ", std::string(armv8_2 ? "has" : "lacks"), " asimddp, fphp and asimdhp; the kernel runs ",
          std::string(attn_kernel_selected_target(kernel)));
  const char *const isas[] = {"neon", "armv8.2"};
#else
  const char *const isas[] = {"x86-64", "avx2", "avx512"};
#endif
  for (const char *isa : isas) {
    CAPTURE(isa);
    REQUIRE(attn_set_max_isa(isa) == ATTN_OK);
    const std::string selected = attn_kernel_selected_target(kernel);
    CAPTURE(selected);
    REQUIRE(!selected.empty());
    CHECK(std::find(targets.begin(), targets.end(), selected) != targets.end());
    if (std::string(isa) == "x86-64") CHECK(selected.find("avx") == std::string::npos);
    if (std::string(isa) == "avx2") CHECK(selected.find("avx512") == std::string::npos);
#if defined(__x86_64__)
    if (std::string(isa) != "x86-64" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        targets.size() > 1)
      CHECK(selected.find("avx2") != std::string::npos);
#elif defined(__aarch64__)
    const bool capped = std::string(isa) == "neon";
    CHECK((selected.find("arm_dot_prod") != std::string::npos) == (armv8_2 && !capped && targets.size() > 1));
#endif
    check_against_reference(spec, kernel);
  }
}

void check_against_reference(const attn::Spec &spec, const attn_kernel *kernel) {
  struct Lengths {
    int batch, seq_q, seq_k;
    bool padded;
  };
  for (const Lengths l :
       {Lengths{1, 1, 1, false}, Lengths{2, 17, 63, true}, Lengths{3, 65, 64, false},
        Lengths{1, 129, 127, true}, Lengths{2, 1, 300, false}, Lengths{1, 300, 300, false}}) {
    CAPTURE(l.batch);
    CAPTURE(l.seq_q);
    CAPTURE(l.seq_k);
    CAPTURE(l.padded);
    std::mt19937 rng(static_cast<unsigned>(l.seq_q * 7 + l.seq_k));
    Call call = make_core_call(spec, l.batch, l.seq_q, l.seq_k, l.padded, rng);
    const attn_status status = call.run(kernel);
    INFO(last_error());
    REQUIRE(status == ATTN_OK);
    const Comparison result = compare(call.tensors.at("out"), expected_result(spec, call));
    CAPTURE(result);
    CHECK(result.pass());
  }
}

}  // namespace
