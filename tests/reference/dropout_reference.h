// dropout_reference.h: the dropout keep rule of docs/DSL.md, written from that text (Philox 4x32-10 in plain
// C++).
#pragma once

#include <array>
#include <cstdint>

namespace attnc::reference {

// Philox 4x32-10 (Salmon, Moraes, Dror, Shaw, SC'11): the four words of `counter` under `key`.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// A spec's dropout and a call's seed and offset. heads: H of the counter (every query head of the
// spec); first_head: the head the reference's head 0 is among them (a block form's head group).
struct Dropout {
  bool on = false;
  float p = 0.0f;
  uint64_t seed = 0, offset = 0;
  int64_t heads = 0;  // 0: the q tensor's heads
  int64_t first_head = 0;
};

// Whether pair (query row i, key j) of head h in batch b is kept: counter (j / 8, i, lo, hi) with
// hi:lo = b * heads + first_head + h + offset (mod 2^64), key (seed low, seed high); 16 bits of
// word (j / 2) % 4 (low for even j); kept when they are >= floor(p * 65536 + 0.5).
bool dropout_keeps(const Dropout &d, int64_t heads, int64_t b, int64_t h, int64_t i, int64_t j);

// The factor a kept probability is multiplied by, in T: 1 / (1 - p); 0 for a dropped pair; 1 without dropout.
template <class T>
T dropout_factor(const Dropout &d, int64_t heads, int64_t b, int64_t h, int64_t i, int64_t j) {
  if (!d.on) return T(1);
  return dropout_keeps(d, heads, b, h, i, j) ? T(1) / (T(1) - T(d.p)) : T(0);
}

}  // namespace attnc::reference
