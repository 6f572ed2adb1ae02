// dropout_reference.cpp: Philox 4x32-10 by 64-bit products, and the pair -> bits rule.
#include "dropout_reference.h"

#include <cmath>

namespace attnc::reference {

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint64_t m0 = 0xD2511F53u, m1 = 0xCD9E8D57u;
  constexpr uint32_t w0 = 0x9E3779B9u, w1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += w0;
      k[1] += w1;
    }
    const uint64_t p0 = m0 * c[0], p1 = m1 * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

bool dropout_keeps(const Dropout &d, int64_t heads, int64_t b, int64_t h, int64_t i, int64_t j) {
  const uint64_t all_heads = d.heads > 0 ? static_cast<uint64_t>(d.heads) : static_cast<uint64_t>(heads);
  const uint64_t head =
      static_cast<uint64_t>(b) * all_heads + static_cast<uint64_t>(d.first_head + h) + d.offset;
  const std::array<uint32_t, 4> words =
      philox4x32_10({static_cast<uint32_t>(j / 8), static_cast<uint32_t>(i), static_cast<uint32_t>(head),
                     static_cast<uint32_t>(head >> 32)},
                    {static_cast<uint32_t>(d.seed), static_cast<uint32_t>(d.seed >> 32)});
  const uint32_t bits = (words[static_cast<size_t>((j / 2) % 4)] >> (16 * (j % 2))) & 0xFFFFu;
  const auto threshold = static_cast<uint32_t>(std::floor(static_cast<double>(d.p) * 65536.0 + 0.5));
  return bits >= threshold;
}

}  // namespace attnc::reference
