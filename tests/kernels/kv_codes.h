// kv_codes.h: an independent int8 and OCP fp8 E4M3 quantizer for the quantized-cache tests, written from
// docs/DSL.md.
#pragma once

#include <cstdint>
#include <vector>

namespace attnc::test {

// E4M3 ("e4m3fn") byte -> value, from the format's fields: bias 7, exponent 0 subnormal, 0x7F /
// 0xFF NaN, no infinities.
double e4m3_value(uint8_t byte);
// The byte whose value is nearest x, found by searching every finite code (ties: the even code);
// |x| >= 448 and infinities give +-448, NaN gives 0x7F (sign kept).
uint8_t e4m3_nearest(float x);

// int8 of one head vector: scale = max |x| / 127 in fp32, codes round-half-even(x / scale) in
// [-127, 127]; an all-zero vector gives scale 0 and codes 0.
struct Int8Head {
  float scale = 0;
  std::vector<int8_t> codes;
};
Int8Head int8_quantized(const float *x, int count);

}  // namespace attnc::test
