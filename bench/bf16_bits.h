// bf16_bits.h: bf16 <-> f32 for the C++ bench helpers, rounding to nearest even as the kernels do.
#pragma once

#include <cstdint>
#include <cstring>

namespace bench_bf16 {

inline uint16_t from_f32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float to_f32(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}

}  // namespace bench_bf16
