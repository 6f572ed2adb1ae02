// f32_from_bits / bits_from_f32 (the GPU targets' f16 and bf16 conversions in integer operations)
// against Halide's float16_t and bfloat16_t on the host: every 16-bit pattern one way, and edge
// values plus a sweep of f32 bit patterns the other, NaN staying NaN. Built twice: JIT-compiled
// for the host (label codegen), and with HALF_BITS_OPENCL for an OpenCL device (label opencl,
// PoCL here), where the GPU kernels run these conversions.
#include "attnc/half_bits.h"

#include <Halide.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

using attn::DType;

float as_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

uint32_t as_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The reference: Halide's host conversions (float16_t rounds to nearest even).
float reference_f32(uint16_t bits, DType dtype) {
  return dtype == DType::f16 ? float(Halide::float16_t::make_from_bits(bits))
                             : float(Halide::bfloat16_t::make_from_bits(bits));
}

uint16_t reference_bits(float value, DType dtype) {
  return dtype == DType::f16 ? Halide::float16_t(value).to_bits() : Halide::bfloat16_t(value).to_bits();
}

// The target the conversions are JIT-compiled for, and each pipeline's schedule on it.
Halide::Target jit_target() {
#if defined(HALF_BITS_OPENCL)
  return Halide::get_host_target().with_feature(Halide::Target::OpenCL);
#else
  return Halide::get_host_target();
#endif
}

template <class T>
Halide::Buffer<T> realize(Halide::Func f, const Halide::Var &i, int count) {
#if defined(HALF_BITS_OPENCL)
  Halide::Var block("block"), thread("thread");
  f.gpu_tile(i, block, thread, 64, Halide::TailStrategy::GuardWithIf);
#endif
  Halide::Buffer<T> out = f.realize({count}, jit_target());
  out.copy_to_host();
  return out;
}

bool is_nan_bits(uint16_t bits, DType dtype) {
  return dtype == DType::f16 ? (bits & 0x7fff) > 0x7c00 : (bits & 0x7fff) > 0x7f80;
}

void check_every_pattern(DType dtype) {
  Halide::Buffer<uint16_t> in(1 << 16);
  for (int n = 0; n < (1 << 16); ++n) in(n) = static_cast<uint16_t>(n);
  Halide::Var i("i");
  Halide::Func f32("f32");
  f32(i) = attnc::f32_from_bits(in(i), dtype);
  const Halide::Buffer<float> out = realize<float>(f32, i, 1 << 16);
  int wrong = 0;
  for (int n = 0; n < (1 << 16); ++n) {
    const float expected = reference_f32(static_cast<uint16_t>(n), dtype);
    const bool same = std::isnan(expected) ? std::isnan(out(n)) && (as_bits(out(n)) & 0x80000000u) ==
                                                                       (as_bits(expected) & 0x80000000u)
                                           : as_bits(out(n)) == as_bits(expected);
    if (!same && ++wrong <= 5) MESSAGE("bits ", n, ": ", out(n), ", expected ", expected);
  }
  CHECK(wrong == 0);
}

void check_rounding(DType dtype) {
  // Edge values: zeros, f16's largest and the ties around it, infinities, NaNs (0x7f800001 a
  // signalling one whose payload is below bf16's), f16's subnormal range and its ties, f32's
  // extremes, and ties of bf16 and f16 around 1.
  constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // clang-format off
  std::vector<float> values = {
      0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e6f, inf, -inf, nan, -nan,
      as_float(0x7f800001u), std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), std::ldexp(1.0f, -25),
      std::ldexp(1.5f, -25), std::ldexp(1.0f, -26), std::ldexp(3.0f, -25), std::numeric_limits<float>::max(),
      std::numeric_limits<float>::denorm_min(), as_float(0x3f808000u), as_float(0x3f818000u),
      as_float(0x3f800fffu), as_float(0x3f801000u), as_float(0x3f803000u), as_float(0x7f7fffffu)};
  // clang-format on
  // Every f32 bit pattern's neighbourhood of ties: random patterns, and those with the 13 or 16
  // bits below the kept ones set to exactly half.
  std::mt19937 rng(20);
  for (int n = 0; n < 200000; ++n) {
    const uint32_t u = rng();
    values.push_back(as_float(u));
    values.push_back(as_float((u & ~0x1fffu) | 0x1000u));
    values.push_back(as_float((u & ~0xffffu) | 0x8000u));
    // Around the f16 range: exponents 100..145.
    values.push_back(as_float((u & 0x807fffffu) | ((100u + rng() % 46u) << 23)));
  }
  Halide::Buffer<float> in(static_cast<int>(values.size()));
  for (size_t n = 0; n < values.size(); ++n) in(static_cast<int>(n)) = values[n];
  Halide::Var i("i");
  Halide::Func bits("bits");
  bits(i) = attnc::bits_from_f32(in(i), dtype);
  const Halide::Buffer<uint16_t> out = realize<uint16_t>(bits, i, static_cast<int>(values.size()));
  int wrong = 0;
  for (size_t n = 0; n < values.size(); ++n) {
    const uint16_t got = out(static_cast<int>(n));
    const bool same = std::isnan(values[n])
                          ? is_nan_bits(got, dtype) && (got >> 15) == (as_bits(values[n]) >> 31)
                          : got == reference_bits(values[n], dtype);
    if (!same && ++wrong <= 5)
      MESSAGE("f32 0x", std::hex, as_bits(values[n]), ": bits 0x", got, ", expected 0x",
              reference_bits(values[n], dtype));
  }
  CHECK(wrong == 0);
}

}  // namespace

TEST_CASE("f16 bits to f32: every pattern exact, subnormals, infinities and NaNs included") {
  check_every_pattern(DType::f16);
}

TEST_CASE("bf16 bits to f32: every pattern exact") {
  check_every_pattern(DType::bf16);
}

TEST_CASE("f32 to f16 bits: nearest, ties to even, overflow to inf, subnormals, NaN stays NaN") {
  check_rounding(DType::f16);
}

TEST_CASE("f32 to bf16 bits: nearest, ties to even, NaN stays NaN") {
  check_rounding(DType::bf16);
}
