// Reads the block-mask entries under a core block, a constant number of them, unrolled.
#include "attnc/block_mask_lookup.h"

#include "attn/spec.h"
#include "attnc/pipeline_block_mask.h"

namespace attnc {

using Halide::Expr;

namespace {

// The first and last entry of a run of positions [lo, min(lo + count, limit) - 1], and how many
// entries it can overlap at most.
struct EntryRange {
  Expr first, last;
  int most = 1;
};

EntryRange entries(const Expr &lo, int count, const Expr &limit, int per_entry) {
  return {lo / per_entry, (Halide::min(lo + count, limit) - 1) / per_entry,
          (count + per_entry - 2) / per_entry + 1};
}

}  // namespace

BlockClass kernel_block_class(const Halide::Func &block_mask, const Expr &row_lo, int rows,
                              const Expr &key_lo, int keys, const Expr &seq_q, const Expr &seq_k,
                              const Expr &h, const Expr &b) {
  const EntryRange q = entries(row_lo, rows, seq_q, attn::block_mask_rows);
  const EntryRange k = entries(key_lo, keys, seq_k, attn::block_mask_keys);
  Expr empty = Halide::Internal::const_true(), full = Halide::Internal::const_true();
  // Past the last entry the index repeats it: the same value, read again.
  for (int i = 0; i < q.most; ++i) {
    for (int j = 0; j < k.most; ++j) {
      const Expr v = block_mask(Halide::min(k.first + j, k.last), Halide::min(q.first + i, q.last), h, b);
      empty = empty && v == Halide::cast<uint8_t>(block_mask_empty);
      full = full && v == Halide::cast<uint8_t>(block_mask_full);
    }
  }
  return {empty, full};
}

}  // namespace attnc
