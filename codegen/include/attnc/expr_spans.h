// attnc/expr_spans.h: the key spans of a mask_mod for a range of queries, solved from its block
// bounds (expr_bounds.h) with Halide's interval solver; the cores' key_spans / kept_by_all use them.
#pragma once

#include <Halide.h>

#include <optional>

#include "attn/expr.h"
#include "attnc/expr_bounds.h"

namespace attnc {

// The queries and everything but the key, as in a PairBlock (k_lo / k_hi are ignored).
using QueryBlock = PairBlock;

// The smallest [first, last] outside which the mask_mod is false for every query of the block;
// nullopt when the solver finds no finite bound (a side without one is 0 or seq_k - 1).
struct KeyInterval {
  Halide::Expr first, last;
};
std::optional<KeyInterval> mask_mod_key_hull(const attn::ExprTree &mask_mod, const QueryBlock &queries);

// The largest [first, last] where the mask_mod is true for every query of the block (empty,
// first > last, when none is known).
KeyInterval mask_mod_kept_by_all(const attn::ExprTree &mask_mod, const QueryBlock &queries);

}  // namespace attnc
