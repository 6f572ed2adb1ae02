// attn/half.hpp: f16 and bf16 storage types for the tensors of dtype=f16|bf16 kernels (header-only).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace attn::rt {

// IEEE binary16 as stored: 1 sign, 5 exponent, 10 mantissa bits. Named like the scalar types
// they stand for (as Halide's float16_t), not UpperCamel. Plain bits, no arithmetic: convert to
// float to compute. A vector of them is a tensor's storage (Tensor takes a pointer to it).
struct f16 {
  uint16_t bits = 0;
  friend constexpr bool operator==(f16, f16) = default;  // bit equality: NaN == NaN, -0 != +0
};
// bfloat16 as stored: the upper half of an IEEE binary32 (1 sign, 8 exponent, 7 mantissa bits).
struct bf16 {
  uint16_t bits = 0;
  friend constexpr bool operator==(bf16, bf16) = default;
};
static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2, "a tensor's elements are 2 bytes apart");

// Exact: every f16 and bf16 value is a float.
constexpr float to_float(bf16 x) {
  return std::bit_cast<float>(static_cast<uint32_t>(x.bits) << 16);
}

constexpr float to_float(f16 x) {
  const uint32_t sign = static_cast<uint32_t>(x.bits & 0x8000u) << 16;
  const uint32_t exponent = (x.bits >> 10) & 0x1Fu, mantissa = x.bits & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // A subnormal, mantissa · 2^-24: shift its leading 1 up to the implicit bit, one exponent step each.
  uint32_t biased = 113, normal = mantissa;  // 113: float's biased exponent of 2^-14
  while ((normal & 0x400u) == 0) {
    normal <<= 1;
    --biased;
  }
  return std::bit_cast<float>(sign | (biased << 23) | ((normal & 0x3FFu) << 13));
}

// Round to nearest, ties to even (as the kernels round their outputs). A NaN stays a NaN (quiet,
// same sign, the top of its payload); above the largest finite value after rounding is inf.
constexpr bf16 to_bf16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return bf16{static_cast<uint16_t>((bits >> 16) | 0x0040u)};
  // Adding 0x7FFF, plus 1 when the kept half is odd, carries into it exactly when the dropped half
  // is above one half, or exactly one half with an odd kept half. A carry into the exponent is
  // right: 0x7F7FFFFF (FLT_MAX) rounds to 0x7F80, inf.
  const uint32_t rounded = bits + 0x7FFFu + ((bits >> 16) & 1u);
  return bf16{static_cast<uint16_t>(rounded >> 16)};
}

// f16's largest finite value is 65504; from 65520 (65504 + half a step, a tie that goes to the
// even inf) up, the result is inf. Below 2^-14 the result is subnormal, and below 2^-25 (half
// the smallest subnormal, a tie that goes to the even 0) it is a signed zero.
constexpr f16 to_f16(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) {
    return f16{static_cast<uint16_t>(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu))};
  }
  if (magnitude >= 0x477FF000u) return f16{static_cast<uint16_t>(sign | 0x7C00u)};  // 65520 and up, inf
  if (magnitude >= 0x38800000u) {  // 2^-14 and up: normal; rebias the exponent (127 -> 15)
    const uint32_t rebiased = magnitude - (112u << 23);
    const uint32_t rounded = rebiased + 0xFFFu + ((rebiased >> 13) & 1u);
    return f16{static_cast<uint16_t>(sign | (rounded >> 13))};
  }
  const uint32_t biased = magnitude >> 23;
  if (biased < 102) return f16{sign};  // below 2^-25
  // value = significand · 2^(biased - 150); in units of 2^-24 that is significand >> (126 - biased).
  const uint32_t significand = (magnitude & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - biased;  // 14..24
  const uint32_t kept = significand >> shift, dropped = significand & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  const bool up = dropped > half || (dropped == half && (kept & 1u) != 0);
  return f16{static_cast<uint16_t>(sign | (kept + (up ? 1u : 0u)))};  // may carry into 2^-14: right
}

namespace detail {
template <class To, class From, class Convert>
std::vector<To> convert_each(std::span<const From> values, Convert convert) {
  std::vector<To> converted(values.size());
  for (size_t i = 0; i < values.size(); ++i) converted[i] = convert(values[i]);
  return converted;
}
}  // namespace detail

// Whole tensors: a float buffer rounded to a kernel's storage type, and a result read back.
inline std::vector<bf16> to_bf16(std::span<const float> values) {
  return detail::convert_each<bf16>(values, [](float x) { return to_bf16(x); });
}
inline std::vector<f16> to_f16(std::span<const float> values) {
  return detail::convert_each<f16>(values, [](float x) { return to_f16(x); });
}
inline std::vector<float> to_float(std::span<const bf16> values) {
  return detail::convert_each<float>(values, [](bf16 x) { return to_float(x); });
}
inline std::vector<float> to_float(std::span<const f16> values) {
  return detail::convert_each<float>(values, [](f16 x) { return to_float(x); });
}

}  // namespace attn::rt
