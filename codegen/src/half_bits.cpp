// f16 and bf16 bits to and from f32 in integer operations (the GPU targets' 16-bit storage).
#include "attnc/half_bits.h"

#include <cmath>

namespace attnc {
namespace {

using Halide::Expr;
using Halide::select;

Expr u32(uint32_t n) {
  return Halide::Expr(n);
}

// f16 bits (UInt(32), < 2^16) as f32 bits.
Expr f32_bits_from_f16(const Expr &h) {
  const Expr sign = (h & u32(0x8000)) << 16;
  const Expr exponent = (h >> 10) & u32(0x1f), mantissa = h & u32(0x3ff);
  // A subnormal m * 2^-24: exact as an f32 product (m < 2^10, a power of two, a normal result),
  // as OpenCL C has no count_leading_zeros in Halide's code to normalize it by.
  const Expr subnormal =
      Halide::reinterpret(Halide::UInt(32), Halide::cast<float>(mantissa) * std::ldexp(1.0f, -24));
  const Expr magnitude =
      select(exponent == u32(0x1f), u32(0x7f800000) | (mantissa << 13),  // inf, NaN
             exponent != u32(0), ((exponent + u32(112)) << 23) | (mantissa << 13), subnormal);
  return sign | magnitude;
}

// f32 bits (UInt(32)) as the nearest f16's bits, ties to even.
Expr f16_bits_from_f32(const Expr &u) {
  const Expr sign = (u >> 16) & u32(0x8000), a = u & u32(0x7fffffff);
  // Normal f16 (2^-14 <= |x| < 65520): rebias the exponent by 127 - 15, round off 13 bits.
  const Expr normal = (a - u32(0x38000000) + u32(0xfff) + ((a >> 13) & u32(1))) >> 13;
  // Below 2^-14: the f16 subnormal round(|x| * 2^24), the significand shifted right by 126 - e
  // (at most 31: anything that small rounds to 0; a carry into 0x400 is the smallest normal). The
  // clamps keep every shift in range where the other branches are taken.
  const Expr shift = Halide::clamp(u32(126) - Halide::min(a >> 23, u32(125)), u32(1), u32(31));
  const Expr significand = (a & u32(0x7fffff)) | u32(0x800000);
  const Expr kept = significand >> shift, rest = significand & ((u32(1) << shift) - u32(1));
  const Expr half = u32(1) << (shift - u32(1));
  const Expr subnormal =
      kept + select(rest > half || (rest == half && (kept & u32(1)) != u32(0)), u32(1), u32(0));
  const Expr magnitude = select(a > u32(0x7f800000), u32(0x7e00) | ((a >> 13) & u32(0x3ff)),  // NaN, quiet
                                a >= u32(0x477ff000), u32(0x7c00),                            // inf
                                a >= u32(0x38800000), normal, subnormal);
  return sign | magnitude;
}

// f32 bits (UInt(32)) as the nearest bf16's bits, ties to even.
Expr bf16_bits_from_f32(const Expr &u) {
  const Expr rounded = (u + u32(0x7fff) + ((u >> 16) & u32(1))) >> 16;
  const Expr nan = (u & u32(0x7fffffff)) > u32(0x7f800000);
  return select(nan, (u >> 16) | u32(0x40), rounded);  // NaN stays NaN (quiet)
}

}  // namespace

Expr f32_from_bits(const Expr &bits, attn::DType dtype) {
  const Expr h = Halide::cast<uint32_t>(bits);
  const Expr f32_bits = dtype == attn::DType::bf16 ? h << 16 : f32_bits_from_f16(h);
  return Halide::reinterpret(Halide::Float(32), f32_bits);
}

Expr bits_from_f32(const Expr &value, attn::DType dtype) {
  const Expr u = Halide::reinterpret(Halide::UInt(32), value);
  return Halide::cast<uint16_t>(dtype == attn::DType::bf16 ? bf16_bits_from_f32(u) : f16_bits_from_f32(u));
}

}  // namespace attnc
