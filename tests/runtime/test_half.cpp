// test_half.cpp: attn/half.hpp's f16 and bf16 conversions, over every 16-bit pattern.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attn/half.hpp"
#include "attn/runtime.hpp"

using attn::rt::bf16;
using attn::rt::f16;

namespace {

// One format's layout, so that each check below runs on both.
struct Format {
  const char *name;
  int mantissa_bits;
  int exponent_bias;
  uint16_t infinity;  // the pattern of +inf; the largest finite one is infinity - 1
  float (*widen)(uint16_t);
  uint16_t (*round)(float);
};

const Format formats[] = {
    {"f16", 10, 15, 0x7C00, [](uint16_t b) { return attn::rt::to_float(f16{b}); },
     [](float x) { return attn::rt::to_f16(x).bits; }},
    {"bf16", 7, 127, 0x7F80, [](uint16_t b) { return attn::rt::to_float(bf16{b}); },
     [](float x) { return attn::rt::to_bf16(x).bits; }},
};

// The value of a non-negative pattern from its fields alone, in double; the inf pattern reads as
// the power of two it would be if the exponent went on (for midpoints with the largest value).
double value_of(const Format &f, uint16_t bits) {
  const int exponent = bits >> f.mantissa_bits;
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  if (exponent == 0) return std::ldexp(mantissa, 1 - f.exponent_bias - f.mantissa_bits);
  return std::ldexp((1 << f.mantissa_bits) + mantissa, exponent - f.exponent_bias - f.mantissa_bits);
}

bool is_nan_pattern(const Format &f, uint16_t bits) {
  return (bits & 0x7FFF) > f.infinity;
}

}  // namespace

TEST_CASE("every 16-bit pattern widens to its exact value and rounds back to itself") {
  for (const Format &f : formats) {
    CAPTURE(f.name);
    for (uint32_t pattern = 0; pattern <= 0xFFFF; ++pattern) {
      const uint16_t bits = static_cast<uint16_t>(pattern);
      const uint16_t magnitude = bits & 0x7FFF;
      const bool negative = (bits & 0x8000) != 0;
      const float wide = f.widen(bits);
      CAPTURE(pattern);
      if (is_nan_pattern(f, bits)) {
        REQUIRE(std::isnan(wide));
        REQUIRE(std::signbit(wide) == negative);
        // Back as a quiet NaN of the same sign and payload.
        const uint16_t quiet_bit = static_cast<uint16_t>(1u << (f.mantissa_bits - 1));
        REQUIRE(f.round(wide) == (bits | quiet_bit));
        continue;
      }
      if (magnitude == f.infinity) {
        REQUIRE(std::isinf(wide));
      } else {
        REQUIRE(static_cast<double>(wide) == (negative ? -1 : 1) * value_of(f, magnitude));
      }
      REQUIRE(std::signbit(wide) == negative);
      REQUIRE(f.round(wide) == bits);
    }
  }
}

TEST_CASE("rounding is to nearest, ties to even, between every two neighbours") {
  for (const Format &f : formats) {
    CAPTURE(f.name);
    for (uint16_t low = 0; low < f.infinity; ++low) {
      const uint16_t high = low + 1;
      const double a = value_of(f, low), b = value_of(f, high);
      // Every midpoint is a float: its significand needs one bit more than the format's.
      const float middle = static_cast<float>((a + b) / 2);
      REQUIRE(static_cast<double>(middle) == (a + b) / 2);
      const uint16_t even = (low & 1) == 0 ? low : high;
      const float below = std::nextafter(middle, 0.0f);
      const float above = std::nextafter(middle, std::numeric_limits<float>::infinity());
      CAPTURE(low);
      REQUIRE(f.round(middle) == even);
      REQUIRE(f.round(below) == low);
      REQUIRE(f.round(above) == high);
      REQUIRE(f.round(-middle) == (even | 0x8000));
      REQUIRE(f.round(-below) == (low | 0x8000));
      REQUIRE(f.round(-above) == (high | 0x8000));
    }
  }
}

TEST_CASE("floats across the whole range round to the nearest pattern") {
  // Every 65521st float pattern (a prime stride, so every exponent and many mantissas are hit).
  for (const Format &f : formats) {
    CAPTURE(f.name);
    for (uint64_t pattern = 0; pattern <= 0xFFFFFFFFu; pattern += 65521) {
      const float x = std::bit_cast<float>(static_cast<uint32_t>(pattern));
      if (std::isnan(x) || std::isinf(x)) continue;
      const uint16_t got = f.round(x);
      const uint16_t magnitude = got & 0x7FFF;
      CAPTURE(pattern);
      REQUIRE(((got & 0x8000) != 0) == std::signbit(x));
      REQUIRE(magnitude <= f.infinity);
      const double target = std::fabs(static_cast<double>(x));
      const double error = std::fabs(value_of(f, magnitude) - target);
      if (magnitude > 0) REQUIRE(error <= std::fabs(value_of(f, magnitude - 1) - target));
      if (magnitude < f.infinity) REQUIRE(error <= std::fabs(value_of(f, magnitude + 1) - target));
    }
  }
}

#if defined(__FLT16_MAX__)
TEST_CASE("to_f16 agrees with the compiler's _Float16 conversion") {
  for (uint64_t pattern = 0; pattern <= 0xFFFFFFFFu; pattern += 4093) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(pattern));
    if (std::isnan(x)) continue;
    CAPTURE(pattern);
    REQUIRE(attn::rt::to_f16(x).bits == std::bit_cast<uint16_t>(static_cast<_Float16>(x)));
  }
}
#endif

TEST_CASE("overflow: above the largest finite value after rounding is inf") {
  CHECK(attn::rt::to_f16(65504.0f).bits == 0x7BFF);
  CHECK(attn::rt::to_f16(65519.996f).bits == 0x7BFF);  // just below the tie
  CHECK(attn::rt::to_f16(65520.0f).bits == 0x7C00);    // the tie goes to the even inf
  CHECK(attn::rt::to_f16(1e6f).bits == 0x7C00);
  CHECK(attn::rt::to_f16(-1e6f).bits == 0xFC00);
  CHECK(attn::rt::to_f16(std::numeric_limits<float>::max()).bits == 0x7C00);
  CHECK(attn::rt::to_f16(std::numeric_limits<float>::infinity()).bits == 0x7C00);
  CHECK(attn::rt::to_float(f16{0x7BFF}) == 65504.0f);

  const float bf16_max = attn::rt::to_float(bf16{0x7F7F});
  CHECK(bf16_max == doctest::Approx(3.3895e38f).epsilon(1e-4));
  CHECK(attn::rt::to_bf16(bf16_max).bits == 0x7F7F);
  CHECK(attn::rt::to_bf16(std::numeric_limits<float>::max()).bits == 0x7F80);
  CHECK(attn::rt::to_bf16(-std::numeric_limits<float>::max()).bits == 0xFF80);
  CHECK(attn::rt::to_bf16(std::numeric_limits<float>::infinity()).bits == 0x7F80);
}

TEST_CASE("subnormals and zeros") {
  CHECK(attn::rt::to_f16(std::ldexp(1.0f, -24)).bits == 0x0001);  // the smallest subnormal
  CHECK(attn::rt::to_f16(std::ldexp(1.0f, -25)).bits == 0x0000);  // half of it: tie to even 0
  CHECK(attn::rt::to_f16(std::nextafter(std::ldexp(1.0f, -25), 1.0f)).bits == 0x0001);
  CHECK(attn::rt::to_f16(std::ldexp(3.0f, -25)).bits == 0x0002);     // 1.5 steps: tie to even 2
  CHECK(attn::rt::to_f16(std::ldexp(1023.0f, -24)).bits == 0x03FF);  // the largest subnormal
  CHECK(attn::rt::to_f16(std::ldexp(2047.0f, -25)).bits == 0x0400);  // rounds up to 2^-14
  CHECK(attn::rt::to_f16(-std::ldexp(1.0f, -30)).bits == 0x8000);
  CHECK(attn::rt::to_f16(-0.0f).bits == 0x8000);
  CHECK(attn::rt::to_float(f16{0x0001}) == std::ldexp(1.0f, -24));
  CHECK(std::signbit(attn::rt::to_float(f16{0x8000})));

  const float smallest_float = std::numeric_limits<float>::denorm_min();
  CHECK(attn::rt::to_bf16(smallest_float).bits == 0x0000);
  CHECK(attn::rt::to_bf16(-smallest_float).bits == 0x8000);
  CHECK(attn::rt::to_bf16(std::ldexp(1.0f, -133)).bits == 0x0001);  // bf16's smallest subnormal
  CHECK(attn::rt::to_float(bf16{0x0001}) == std::ldexp(1.0f, -133));
}

TEST_CASE("NaN stays NaN, quiet, with its sign") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(attn::rt::to_f16(nan).bits == 0x7E00);
  CHECK(attn::rt::to_bf16(nan).bits == 0x7FC0);
  CHECK(attn::rt::to_f16(-nan).bits == 0xFE00);
  CHECK(attn::rt::to_bf16(-nan).bits == 0xFFC0);
  // A signalling NaN whose payload lies only in the low bits that rounding drops stays a NaN.
  const float low_payload = std::bit_cast<float>(0x7F800001u);
  CHECK(std::isnan(attn::rt::to_float(attn::rt::to_f16(low_payload))));
  CHECK(std::isnan(attn::rt::to_float(attn::rt::to_bf16(low_payload))));
  CHECK(std::isnan(attn::rt::to_float(attn::rt::to_bf16(std::bit_cast<float>(0x7FFFFFFFu)))));
}

TEST_CASE("whole buffers convert, and Tensor takes them with their dtype") {
  const std::vector<float> values = {1.0f, 1.00390625f, -2.5f, 70000.0f};
  const std::vector<bf16> as_bf16 = attn::rt::to_bf16(values);
  const std::vector<f16> as_f16 = attn::rt::to_f16(values);
  CHECK(attn::rt::to_float(as_bf16) == std::vector<float>{1.0f, 1.0f, -2.5f, 70144.0f});
  CHECK(attn::rt::to_float(as_f16) ==
        std::vector<float>{1.0f, 1.00390625f, -2.5f, std::numeric_limits<float>::infinity()});

  const attn::rt::Tensor from_bf16(as_bf16.data(), {2, 2});
  const attn::rt::Tensor from_f16(as_f16.data(), {4});
  CHECK(from_bf16.view().dtype == ATTN_BF16);
  CHECK(from_f16.view().dtype == ATTN_F16);
  const std::vector<uint16_t> raw_bits = {0x3F80, 0x4000};
  const attn::rt::Tensor from_bits(raw_bits.data(), ATTN_BF16, {2});
  CHECK(from_bits.view().dtype == ATTN_BF16);
  CHECK(from_bits.view().data == raw_bits.data());
}
