// An independent int8 and E4M3 quantizer: E4M3 by searching the code table, not by bit manipulation.
#include "kv_codes.h"

#include <cmath>
#include <limits>

namespace attnc::test {

double e4m3_value(uint8_t byte) {
  const int sign = byte >> 7, exponent = (byte >> 3) & 0xF, mantissa = byte & 7;
  if (exponent == 15 && mantissa == 7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude =
      exponent == 0 ? std::ldexp(mantissa / 8.0, -6) : std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return sign ? -magnitude : magnitude;
}

uint8_t e4m3_nearest(float x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  if (std::isnan(x)) return sign | 0x7F;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= 448.0) return sign | 0x7E;
  uint8_t best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int code = 0; code <= 0x7E; ++code) {
    const double distance = std::fabs(e4m3_value(static_cast<uint8_t>(code)) - a);
    // Codes ascend with their values: on a tie the earlier code is the lower; take the even one.
    if (distance < best_distance || (distance == best_distance && code % 2 == 0)) {
      best = static_cast<uint8_t>(code);
      best_distance = distance;
    }
  }
  return sign | best;
}

Int8Head int8_quantized(const float *x, int count) {
  Int8Head head;
  float amax = 0;
  for (int i = 0; i < count; ++i) amax = std::fmax(amax, std::fabs(x[i]));
  head.scale = amax / 127.0f;
  head.codes.assign(static_cast<size_t>(count), 0);
  if (amax == 0) return head;
  for (int i = 0; i < count; ++i) {
    const float code = std::nearbyint(x[i] / head.scale);  // the default mode: to nearest even
    head.codes[static_cast<size_t>(i)] = static_cast<int8_t>(std::fmin(127.0f, std::fmax(-127.0f, code)));
  }
  return head;
}

}  // namespace attnc::test
