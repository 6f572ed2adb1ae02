// The test side's f16 / bf16 rounding (low_precision.h) against hand-picked values, its own round
// trip over every bit pattern, and the compiler's _Float16 where it has one. The kernel suite's
// reference reads what these give, so they are checked before anything is compared to them.
#include <doctest/doctest.h>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>

#include "low_precision.h"

namespace {

using namespace attnc::test;

TEST_CASE("f16: nearest even, subnormals, overflow to inf, NaN") {
  CHECK(f16_bits(1.0f) == 0x3c00);
  CHECK(f16_bits(-2.0f) == 0xc000);
  CHECK(f16_bits(0.0f) == 0x0000);
  CHECK(f16_bits(-0.0f) == 0x8000);
  CHECK(f16_bits(1.0f + 0x1p-11f) == 0x3c00);      // tie between 1 and 1 + 2^-10: to even
  CHECK(f16_bits(1.0f + 3 * 0x1p-11f) == 0x3c02);  // tie between 0x3c01 and 0x3c02: to even
  CHECK(f16_bits(1.0f + 0x1p-11f + 0x1p-20f) == 0x3c01);
  CHECK(f16_bits(65504.0f) == 0x7bff);
  CHECK(f16_bits(65519.99f) == 0x7bff);
  CHECK(f16_bits(65520.0f) == 0x7c00);  // the tie with 65536 goes to the even: inf
  CHECK(f16_bits(-1e6f) == 0xfc00);
  CHECK(f16_bits(INFINITY) == 0x7c00);
  CHECK(f16_bits(0x1p-14f) == 0x0400);             // the smallest normal
  CHECK(f16_bits(0x1p-14f - 0x1p-26f) == 0x0400);  // rounds up into it
  CHECK(f16_bits(0x1p-24f) == 0x0001);             // the smallest subnormal
  CHECK(f16_bits(0x1p-25f) == 0x0000);             // tie with 0: to even
  CHECK(f16_bits(1.5f * 0x1p-24f) == 0x0002);      // tie between 1 and 2 units: to even
  CHECK(f16_bits(-3 * 0x1p-24f) == 0x8003);
  for (float nan : {NAN, -NAN, std::bit_cast<float>(0x7f800001u), std::bit_cast<float>(0xff800001u)}) {
    CAPTURE(nan);
    CHECK(std::isnan(f16_value(f16_bits(nan))));
  }
  CHECK(f16_value(0x7c00) == INFINITY);
  CHECK(f16_value(0xfbff) == -65504.0f);
  CHECK(f16_value(0x0001) == 0x1p-24f);
  CHECK(round_to(attn::DType::f16, 0.1f) == 0.0999755859375f);
  CHECK(overflow_threshold(attn::DType::f16) == 65520.0);
}

TEST_CASE("bf16: nearest even, overflow to inf, NaN") {
  CHECK(bf16_bits(1.0f) == 0x3f80);
  CHECK(bf16_bits(1.0f + 0x1p-8f) == 0x3f80);      // tie: to even
  CHECK(bf16_bits(1.0f + 3 * 0x1p-8f) == 0x3f82);  // tie: to even
  CHECK(bf16_bits(-1.0f - 0x1p-8f - 0x1p-20f) == 0xbf81);
  CHECK(bf16_bits(std::bit_cast<float>(0x7f7f7fffu)) == 0x7f7f);  // just below the threshold
  CHECK(bf16_bits(FLT_MAX) == 0x7f80);                            // above it: inf
  CHECK(bf16_bits(-FLT_MAX) == 0xff80);
  CHECK(bf16_bits(std::bit_cast<float>(0x00000001u)) == 0x0000);  // float subnormals round too
  for (float nan : {NAN, -NAN, std::bit_cast<float>(0x7f800001u), std::bit_cast<float>(0xff800001u)}) {
    CAPTURE(nan);
    CHECK(std::isnan(bf16_value(bf16_bits(nan))));
  }
  CHECK(bf16_value(0x7f7f) == std::bit_cast<float>(0x7f7f0000u));
  CHECK(overflow_threshold(attn::DType::bf16) == std::ldexp(1.0, 128) - std::ldexp(1.0, 119));
}

TEST_CASE("every f16 and bf16 value rounds to itself") {
  int64_t mismatches = 0;
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    if (!std::isnan(f16_value(bits))) mismatches += f16_bits(f16_value(bits)) != bits;
    if (!std::isnan(bf16_value(bits))) mismatches += bf16_bits(bf16_value(bits)) != bits;
  }
  CHECK(mismatches == 0);
}

// The compiler's own half type: _Float16 where C++ has it; AArch64's __fp16 (g++ 12 has no C++
// _Float16 there), which converts by the same IEEE round-to-nearest-even.
#if defined(__aarch64__)
#define ATTNC_COMPILER_F16 __fp16
#elif defined(__FLT16_MAX__)
#define ATTNC_COMPILER_F16 _Float16
#endif

#if defined(ATTNC_COMPILER_F16)
TEST_CASE("f16 rounding agrees with the compiler's half type") {
  std::mt19937 rng(20);
  int64_t mismatches = 0;
  for (int n = 0; n < 1000000; ++n) {
    // Random bit patterns, exponents around f16's range (2^-30 .. 2^17) so that subnormals,
    // ties and overflow all come up.
    const uint32_t bits = (rng() & 0x8000ffffu) | ((97u + rng() % 48u) << 23) | (rng() & 0x007f0000u);
    const float x = std::bit_cast<float>(bits);
    const float expected = static_cast<float>(static_cast<ATTNC_COMPILER_F16>(x));
    mismatches += std::bit_cast<uint32_t>(round_to(attn::DType::f16, x)) != std::bit_cast<uint32_t>(expected);
  }
  CHECK(mismatches == 0);
}
#endif

}  // namespace
