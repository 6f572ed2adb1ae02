// attnc/dropout.h: attention dropout's keep factors, from Philox 4x32-10 words (docs/DSL.md "Dropout").
#pragma once

#include <Halide.h>

#include <array>
#include <cstdint>
#include <string>

namespace attnc {

// What a core needs to drop pairs: the run-time seed and offset (uint64 scalars) and the spec's
// probability. Undefined seed: no dropout.
struct DropoutInputs {
  Halide::Func seed, offset;  // seed(), offset(): no dims, UInt(64)
  float probability = 0.0f;
  int heads = 0;                // H in the counter: every query head of the spec
  Halide::Expr first_head = 0;  // the core's head 0 among them (the block form's head groups)
  bool on() const { return seed.defined(); }
};

// Philox 4x32-10 (Salmon et al., SC'11; cuRAND's and FlashAttention's generator): the four
// output words of `counter` under `key`, all UInt(32).
std::array<Halide::Expr, 4> philox4x32_10(std::array<Halide::Expr, 4> counter,
                                          std::array<Halide::Expr, 2> key);

// The 16-bit threshold of the keep rule: floor(p * 65536 + 0.5). A pair is kept when its 16
// random bits are >= it, so P(keep) = 1 - threshold / 65536 (within 2^-17 of 1 - p).
uint32_t dropout_threshold(float probability);
// What a kept probability is multiplied by: 1 / (1 - p) in fp32.
float dropout_scale(float probability);

// The random words of one row and 8 consecutive keys: words(group, i, h, b) = Tuple of the four
// Philox words of counter (group, i, lo, hi) under key (seed's low, high 32 bits), where
// hi:lo = (b * H + first_head + h) + offset mod 2^64. group = key / 8, i the query row.
struct DropoutWords {
  Halide::Var group{"group"}, i{"i"}, h{"h"}, b{"b"};
  Halide::Func words;
};
DropoutWords define_dropout_words(const std::string &name, const DropoutInputs &in);

// The factor pair (i, key) of head h, batch b is multiplied by: 1 / (1 - p) where kept, 0 where
// dropped. Word (key / 2) % 4 of words(key / 8, i, h, b), its low 16 bits for an even key, high
// for an odd one.
Halide::Expr dropout_factor(const DropoutInputs &in, const DropoutWords &w, const Halide::Expr &key,
                            const Halide::Expr &i, const Halide::Expr &h, const Halide::Expr &b);

}  // namespace attnc
