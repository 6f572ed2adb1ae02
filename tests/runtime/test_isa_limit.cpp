// test_isa_limit.cpp: attn_set_max_isa and the variant each run picks, on a table of three variants.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attn/runtime.hpp"
#include "cpu_features.h"
#include "fake_kernel.h"

namespace {

// out [B, Sq, 2, 3] is filled with the index of the variant that ran.
int run_variant(attn_call_context *, void **buffers, int32_t variant) {
  auto *out = static_cast<halide_buffer_t *>(buffers[3]);
  const int64_t count =
      static_cast<int64_t>(out->dim[0].extent) * out->dim[1].extent * out->dim[2].extent * out->dim[3].extent;
  float *data = reinterpret_cast<float *>(out->host);
  for (int64_t i = 0; i < count; ++i) data[i] = static_cast<float>(variant);
  return 0;
}

int run_plain(attn_call_context *, void **) {
  return -1;  // never called: a table with variants runs through run_variant
}

constexpr attn_kernel_variant three[] = {
    {"fake-avx512", "avx512f,avx512bw,avx2,fma"},
    {"fake-avx2", "sse41,avx,avx2,fma,f16c"},
    {"fake-x86-64", ""},
};
constexpr attn_kernel_variant avx512_only[] = {{"fake-avx512", "avx512f"}};

attn_kernel_desc with_variants(const char *id, const attn_kernel_variant *variants, int count) {
  attn_kernel_desc desc = fake::core;
  desc.id = id;
  desc.run = run_plain;
  desc.variant_count = count;
  desc.variants = variants;
  desc.run_variant = run_variant;
  return desc;
}

const attn_kernel_desc three_variants = with_variants("fake_three_variants", three, 3);
const attn_kernel_desc only_avx512 = with_variants("fake_only_avx512", avx512_only, 1);

// Every test leaves the process without a limit, whatever it checked.
struct NoLimitAfter {
  ~NoLimitAfter() { attn_set_max_isa(nullptr); }
};

bool has(const char *features) {
  return attn::detail::cpu_supports_all(features, nullptr);
}

// The variant expected under a limit: the first this CPU has whose features the limit allows.
int expected_variant(bool avx512_allowed, bool avx2_allowed) {
  if (avx512_allowed && has(three[0].required_cpu_features)) return 0;
  if (avx2_allowed && has(three[1].required_cpu_features)) return 1;
  return 2;
}

int variant_that_ran(fake::CoreCall &call) {
  const float first = call.out.front();
  for (float x : call.out) REQUIRE(x == first);
  return static_cast<int>(first);
}

}  // namespace

TEST_CASE("each limit runs the most capable variant it allows") {
  NoLimitAfter reset;
  struct Case {
    const char *isa;
    bool avx512, avx2;
  };
  for (const Case c : {Case{nullptr, true, true}, Case{"amx", true, true}, Case{"avx512bf16", true, true},
                       Case{"avx512", true, true}, Case{"avx2", false, true}, Case{"avx", false, false},
                       Case{"sse41", false, false}, Case{"x86-64", false, false}, Case{"", true, true}}) {
    CAPTURE(c.isa ? c.isa : "(null)");
    REQUIRE(attn_set_max_isa(c.isa) == ATTN_OK);
    CHECK(std::string(attn_max_isa()) == (c.isa == nullptr ? "" : c.isa));
    fake::CoreCall call;
    REQUIRE(call.run(three_variants) == ATTN_OK);
    const int expected = expected_variant(c.avx512, c.avx2);
    CHECK(variant_that_ran(call) == expected);
    CHECK(std::string(attn_kernel_selected_target(fake::find("fake_three_variants"))) ==
          three[expected].target);
  }
}

TEST_CASE("the C++ wrapper gives the dispatch list and the variant that runs") {
  NoLimitAfter reset;
  attn_register_kernel(&three_variants);  // a no-op where an earlier case registered them
  attn_register_kernel(&only_avx512);
  const attn::rt::Result<attn::rt::Kernel> kernel = attn::rt::Kernel::find("fake_three_variants");
  REQUIRE(kernel.ok());
  CHECK(std::string(kernel->target()) == "host");  // the table's whole target, not a variant
  REQUIRE(attn_set_max_isa("avx2") == ATTN_OK);
  CHECK(std::string(kernel->selected_target()) == three[expected_variant(false, true)].target);
  REQUIRE(attn_set_max_isa("x86-64") == ATTN_OK);
  CHECK(std::string(kernel->selected_target()) == "fake-x86-64");
  REQUIRE(attn_set_max_isa("avx2") == ATTN_OK);
  const attn::rt::Result<attn::rt::Kernel> avx512 = attn::rt::Kernel::find("fake_only_avx512");
  REQUIRE(avx512.ok());
  CHECK(std::string(avx512->selected_target()).empty());
}

TEST_CASE("an unknown instruction set is refused and the limit stays") {
  NoLimitAfter reset;
  REQUIRE(attn_set_max_isa("avx2") == ATTN_OK);
  for (const char *bad : {"avx3", "AVX2", "avx2 ", "neon"}) {
    CAPTURE(bad);
    CHECK(attn_set_max_isa(bad) == ATTN_ERR_INVALID_ARGUMENT);
    const std::string message = attn_last_error();
    CHECK(message.find(std::string("'") + bad + "'") != std::string::npos);
    CHECK(message.find("amx, avx512bf16, avx512, avx2, avx, sse41 or x86-64") != std::string::npos);
    CHECK(std::string(attn_max_isa()) == "avx2");
  }
}

TEST_CASE("a limit that leaves no variant is an unsupported cpu, and out is untouched") {
  NoLimitAfter reset;
  REQUIRE(attn_set_max_isa("avx2") == ATTN_OK);
  fake::CoreCall call;
  CHECK(call.run(only_avx512) == ATTN_ERR_UNSUPPORTED_CPU);
  const std::string message = attn_last_error();
  CHECK(message.find("fake_only_avx512") != std::string::npos);
  CHECK(message.find("fake-avx512 (above the limit)") != std::string::npos);
  CHECK(call.out_untouched());
  CHECK(std::string(attn_kernel_selected_target(fake::find("fake_only_avx512"))).empty());
  // Without the limit it runs where the CPU has AVX-512, and says what is missing where not.
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  fake::CoreCall again;
  if (has("avx512f")) {
    CHECK(again.run(only_avx512) == ATTN_OK);
    CHECK(variant_that_ran(again) == 0);
  } else {
    CHECK(again.run(only_avx512) == ATTN_ERR_UNSUPPORTED_CPU);
    CHECK(std::string(attn_last_error()).find("this CPU lacks avx512f") != std::string::npos);
    CHECK(again.out_untouched());
  }
}

TEST_CASE("a table whose variant list is broken is refused at registration") {
  static attn_kernel_desc no_list = with_variants("fake_variants_null", nullptr, 2);
  static attn_kernel_desc negative = with_variants("fake_variants_negative", three, -1);
  static constexpr attn_kernel_variant no_target[] = {{nullptr, ""}};
  static attn_kernel_desc unnamed = with_variants("fake_variant_unnamed", no_target, 1);
  for (const attn_kernel_desc *desc : {&no_list, &negative, &unnamed}) {
    CAPTURE(desc->id);
    attn_register_kernel(desc);
    const attn_kernel *found = nullptr;
    CHECK(attn_find_kernel(desc->id, &found) == ATTN_ERR_ABI_MISMATCH);
    CHECK(found == nullptr);
    CHECK(std::string(attn_last_error()).find("variant") != std::string::npos);
  }
}
