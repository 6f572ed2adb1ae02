// attnc/block_mask_lookup.h: a core's (query tile, key block) classified from the run-time block
// mask, whose 128 x 128 blocks need not line up with the core's tiles.
#pragma once

#include <Halide.h>

namespace attnc {

// empty: every block-mask entry the core block overlaps is 0 (empty); full: every one is 2
// (full). Any other value (1, or a byte no pass writes) makes the core block partial: the
// mask_mod runs per pair there.
struct BlockClass {
  Halide::Expr empty, full;
};

// block_mask(key block, query block, h, b): the input, Halide order. The core block: query rows
// [row_lo, row_lo + rows) and keys [key_lo, key_lo + keys), cut at seq_q and seq_k (row_lo <
// seq_q, key_lo < seq_k). rows and keys are the core's constant tile sizes, which bound how many
// entries it overlaps.
BlockClass kernel_block_class(const Halide::Func &block_mask, const Halide::Expr &row_lo, int rows,
                              const Halide::Expr &key_lo, int keys, const Halide::Expr &seq_q,
                              const Halide::Expr &seq_k, const Halide::Expr &h, const Halide::Expr &b);

}  // namespace attnc
