// mask_spans_test.cpp: key_spans() never yields more than four spans, whatever the mask, and at the
// DSL's structural limits (2^24) its spans match 64-bit arithmetic for positions near 2^30.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "attn/spec_text.h"
#include "attnc/mask_lowering.h"

namespace {

attn::Spec spec_of(const std::string &text) {
  const attn::ParseResult parsed = attn::parse_spec(text);
  REQUIRE_MESSAGE(parsed.ok, parsed.message);
  return parsed.spec;
}

int64_t floor_div(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

TEST_CASE("a mask yields at most four key spans") {
  const char *masks[] = {
      "global(1)|global(2)|global(3)|global(4)|global(5)|global(6)|global(7)|global(8)",
      "(global(1)|global(2))&(global(3)|global(4))",
      "(global(1)|global(2)|global(3))&(global(4)|global(5)|window(4,4))",
      "((global(1)|causal)&(global(2)|window(8,0)))|((global(3)|causal)&global(4))",
  };
  const Halide::Var q("q"), b("b"), sk("sk");
  for (const char *mask : masks) {
    CAPTURE(mask);
    const attn::Spec s = spec_of(std::string("heads=1 head_dim=16 mask=") + mask);
    const attnc::KeySpans spans = attnc::key_spans(s.mask, 0, q, q + 31, b, sk, attnc::MaskInputs{});
    CHECK(spans.spans.size() >= 1);
    CHECK(spans.spans.size() <= 4);
  }
}

TEST_CASE("key spans at the structural limits, far into a long sequence") {
  constexpr int64_t limit = 1 << 24;
  const int64_t query_lo = (int64_t{1} << 30) + 12345, query_hi = query_lo + 63;
  const int64_t seq_k = query_hi + 1000;
  const Halide::Var b("b");
  auto value = [](const Halide::Expr &e) { return static_cast<int64_t>(Halide::evaluate<int32_t>(e)); };
  const Halide::Expr lo = static_cast<int32_t>(query_lo), hi = static_cast<int32_t>(query_hi);
  const Halide::Expr sk = static_cast<int32_t>(seq_k);

  SUBCASE("window(2^24,2^24) with mask_block=2^24") {
    const attn::Spec s = spec_of("heads=1 head_dim=16 mask=window(16777216,16777216) mask_block=16777216");
    const attnc::KeySpans spans = attnc::key_spans(s.mask, s.mask_block, lo, hi, b, sk, attnc::MaskInputs{});
    REQUIRE(spans.spans.size() == 1);
    const int64_t block_lo = floor_div(query_lo, limit) * limit;
    const int64_t block_hi = floor_div(query_hi, limit) * limit + limit - 1;
    CHECK(value(spans.spans[0].first) == floor_div(block_lo - limit, limit) * limit);
    CHECK(value(spans.spans[0].last) == floor_div(block_hi + limit, limit) * limit + limit - 1);
    CHECK(value(spans.spans[0].last) < (int64_t{1} << 31) - 1);
  }
  SUBCASE("global(2^24) with mask_block=2^24") {
    const attn::Spec s = spec_of("heads=1 head_dim=16 mask=global(16777216) mask_block=16777216");
    const attnc::KeySpans spans = attnc::key_spans(s.mask, s.mask_block, lo, hi, b, sk, attnc::MaskInputs{});
    REQUIRE(spans.spans.size() == 2);
    // Queries past the global ones see the global keys [0, G) and nothing after them.
    CHECK(value(spans.spans[0].first) == 0);
    CHECK(value(spans.spans[0].last) == limit - 1);
    CHECK(value(spans.spans[1].first) == limit);
    CHECK(value(spans.spans[1].last) == limit - 1);
  }
}

}  // namespace
