// block_mask_lookup_test.cpp: a core block's class from the 128 x 128 block-mask entries it
// overlaps, at tile sizes that straddle entries (48 rows, 96 keys), JIT-evaluated against a loop
// over the entries.
#include "attnc/block_mask_lookup.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

namespace {

TEST_CASE("a core block is empty or full only when every entry it overlaps is") {
  constexpr int seq_q = 300, seq_k = 500, rows = 48, keys = 96, entry = 128;
  constexpr int nq = (seq_q + entry - 1) / entry, nk = (seq_k + entry - 1) / entry;
  std::mt19937 rng(34);
  Halide::Buffer<uint8_t> mask(nk, nq, 1, 1);   // Halide order: key block, query block, h, b
  const uint8_t values[] = {0, 2, 2, 0, 1, 7};  // 7: no pass writes it, partial
  Halide::Var tile("tile"), kb("kb");
  const attnc::BlockClass c =
      attnc::kernel_block_class(Halide::Func(mask), tile * rows, rows, kb * keys, keys, seq_q, seq_k, 0, 0);
  Halide::Func cls("cls");
  cls(kb, tile) = Halide::cast<uint8_t>(Halide::select(c.empty, 0, c.full, 2, 1));
  const int tiles = (seq_q + rows - 1) / rows, blocks = (seq_k + keys - 1) / keys;
  for (int trial = 0; trial < 20; ++trial) {
    CAPTURE(trial);
    mask.for_each_value([&](uint8_t &v) { v = values[rng() % std::size(values)]; });
    const Halide::Buffer<uint8_t> got = cls.realize({blocks, tiles});
    for (int t = 0; t < tiles; ++t)
      for (int k = 0; k < blocks; ++k) {
        bool empty = true, full = true;
        for (int i = t * rows / entry; i <= (std::min(seq_q, (t + 1) * rows) - 1) / entry; ++i)
          for (int j = k * keys / entry; j <= (std::min(seq_k, (k + 1) * keys) - 1) / entry; ++j) {
            empty = empty && mask(j, i, 0, 0) == 0;
            full = full && mask(j, i, 0, 0) == 2;
          }
        CAPTURE(t);
        CAPTURE(k);
        CHECK(got(k, t) == (empty ? 0 : full ? 2 : 1));
      }
  }
}

}  // namespace
