// attnc/expr_bounds.h: what a mask_mod (attn/expr.h) is over a whole block of pairs, by interval
// arithmetic on Halide Exprs: provably false everywhere (the block is skipped) or provably true.
#pragma once

#include <Halide.h>

#include "attn/expr.h"

namespace attnc {

// A block of pairs: query key positions q in [q_lo, q_hi] (rows i in [i_lo, i_hi]), keys k in
// [k_lo, k_hi], one head and batch element (each may be undefined: any), the lengths.
struct PairBlock {
  Halide::Expr q_lo, q_hi, i_lo, i_hi, k_lo, k_hi, head, kv_head, batch, seq_q, seq_k;
};

// Two conditions on the block, each false where unknown: `never` holds only where the expression
// is false at every pair, `always` only where it is true at every pair. Captured tensors, floats
// and int(x) are unknown; ints follow + - * / % min max abs select exactly (C's truncation).
struct BlockTruth {
  Halide::Expr never, always;
};
BlockTruth mask_mod_on_block(const attn::ExprTree &mask_mod, const PairBlock &block);

}  // namespace attnc
