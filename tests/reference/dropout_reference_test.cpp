// The reference's Philox 4x32-10 against the generator's published known answers, and its keep rule.
#include "dropout_reference.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>

namespace {

namespace ref = attnc::reference;

TEST_CASE("philox4x32_10 gives Random123's known answers") {
  using Words = std::array<uint32_t, 4>;
  CHECK(ref::philox4x32_10({0, 0, 0, 0}, {0, 0}) ==
        Words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(
      ref::philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}) ==
      Words{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(
      ref::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}) ==
      Words{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("the keep rule reads the 16 bits docs/DSL.md names") {
  // Pair (row 9, key 13) of head 2, batch 1 under 3 heads: counter (1, 9, 1 * 3 + 2 + offset),
  // word (13 / 2) % 4 = 2, its high half.
  const ref::Dropout d{true, 0.25f, 0x0123456789abcdefull, 0xfffffffffffffffeull};
  const uint64_t head = 1 * 3 + 2 + d.offset;  // wraps to 3 mod 2^64
  CHECK(head == 3);
  const std::array<uint32_t, 4> w = ref::philox4x32_10({1, 9, 3, 0}, {0x89abcdefu, 0x01234567u});
  const uint32_t bits = w[2] >> 16;
  CHECK(ref::dropout_keeps(d, 3, 1, 2, 9, 13) == (bits >= 16384u));
  // The threshold rounds p * 65536: p = 0 keeps every pair, whatever the bits.
  const ref::Dropout none{true, 0.0f, 7, 0};
  for (int64_t j = 0; j < 256; ++j) CHECK(ref::dropout_keeps(none, 4, 0, 1, 3, j));
}

TEST_CASE("the kept fraction is 1 - p within 4 sigma over 2^20 pairs") {
  for (const float p : {0.1f, 0.5f, 0.9f}) {
    const ref::Dropout d{true, p, 1234, 99};
    int64_t kept = 0, n = 0;
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t i = 0; i < 256; ++i)
          for (int64_t j = 0; j < 512; ++j, ++n) kept += ref::dropout_keeps(d, 4, b, h, i, j);
    const double expected = 1.0 - p, sigma = std::sqrt(p * (1.0 - p) / static_cast<double>(n));
    CAPTURE(p);
    CHECK(std::abs(static_cast<double>(kept) / static_cast<double>(n) - expected) < 4 * sigma);
  }
}

}  // namespace
