// Attention dropout: Philox 4x32-10 in Halide, the counter layout and the 16-bit keep rule.
#include "attnc/dropout.h"

#include <cmath>

namespace attnc {

using Halide::Expr;

namespace {
Expr u32(uint32_t v) {
  return Halide::Internal::make_const(Halide::UInt(32), static_cast<uint64_t>(v));
}
}  // namespace

std::array<Expr, 4> philox4x32_10(std::array<Expr, 4> c, std::array<Expr, 2> k) {
  const Expr m0 = u32(0xD2511F53u), m1 = u32(0xCD9E8D57u), w0 = u32(0x9E3779B9u), w1 = u32(0xBB67AE85u);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = k[0] + w0;
      k[1] = k[1] + w1;
    }
    const Expr hi0 = Halide::mul_shift_right(m0, c[0], 32), lo0 = m0 * c[0];
    const Expr hi1 = Halide::mul_shift_right(m1, c[2], 32), lo1 = m1 * c[2];
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
  }
  return c;
}

uint32_t dropout_threshold(float p) {
  return static_cast<uint32_t>(std::floor(static_cast<double>(p) * 65536.0 + 0.5));
}

float dropout_scale(float p) {
  return 1.0f / (1.0f - p);
}

DropoutWords define_dropout_words(const std::string &name, const DropoutInputs &in) {
  DropoutWords w;
  w.words = Halide::Func(name);
  const Expr head = Halide::cast<uint64_t>(w.b) * Halide::cast<uint64_t>(Expr(in.heads)) +
                    Halide::cast<uint64_t>(in.first_head + w.h) + in.offset();
  const Expr seed = in.seed();
  const std::array<Expr, 4> counter = {Halide::cast<uint32_t>(w.group), Halide::cast<uint32_t>(w.i),
                                       Halide::cast<uint32_t>(head), Halide::cast<uint32_t>(head >> 32)};
  const std::array<Expr, 2> key = {Halide::cast<uint32_t>(seed), Halide::cast<uint32_t>(seed >> 32)};
  const std::array<Expr, 4> r = philox4x32_10(counter, key);
  w.words(w.group, w.i, w.h, w.b) = Halide::Tuple(r[0], r[1], r[2], r[3]);
  return w;
}

Expr dropout_factor(const DropoutInputs &in, const DropoutWords &w, const Expr &key, const Expr &i,
                    const Expr &h, const Expr &b) {
  const Halide::FuncRef words = w.words(key >> 3, i, h, b);
  const Expr word = Halide::mux((key >> 1) & 3, {words[0], words[1], words[2], words[3]});
  const Expr bits = (word >> Halide::cast<uint32_t>((key & 1) * 16)) & u32(0xFFFFu);
  const Expr threshold = u32(dropout_threshold(in.probability));
  return Halide::select(bits >= threshold, dropout_scale(in.probability), 0.0f);
}

}  // namespace attnc
