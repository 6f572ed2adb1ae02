// attnc/expr_lowering.h: score_mod / mask_mod expressions (attn/expr.h) lowered to one Halide Expr
// per (query, key) pair, captured tensors read with every index clamped into the tensor.
#pragma once

#include <Halide.h>

#include <map>
#include <string>
#include <vector>

#include "attn/expr.h"

namespace attnc {

// A captured tensor (inputs=) as the kernel reads it: data(innermost index first, ...) and its
// run-time extents, outermost first as declared.
struct CapturedTensor {
  Halide::Func data;
  std::vector<Halide::Expr> extents;
};
using CapturedTensors = std::map<std::string, CapturedTensor>;

// The expression language's variables at one pair (attn::ExprVar): score is s (undefined in a
// mask), query_pos q (the row's key position under the spec's align), key_pos k, query_row i.
struct ExprPoint {
  Halide::Expr score, batch, head, kv_head, query_pos, key_pos, query_row, seq_q, seq_k;
};

// e's value at p: f32 for a score_mod (an int value converted), bool for a mask_mod. Integer / and
// % truncate toward zero as in C (x / 0 and x % 0 are 0: no trap); an index outside a
// captured tensor reads the nearest element (clamped, docs/DSL.md), never outside the buffer.
Halide::Expr lower_expr(const attn::ExprTree &e, const ExprPoint &p, const CapturedTensors &tensors);

}  // namespace attnc
