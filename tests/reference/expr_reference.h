// expr_reference.h: an evaluator of score_mod / mask_mod (attn/expr.h) for the reference, written
// from docs/DSL.md's semantics apart from codegen's lowering: a tree walk from the root, ints in
// 64 bits wrapped to 32, floats in the precision asked for (double for the reference, float for
// its naive twin).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/spec.h"
#include "reference.h"

namespace attnc::reference {

// A captured tensor: its shape (outermost first) and its element at an in-range index.
struct CapturedView {
  std::vector<int64_t> shape;
  std::function<double(const std::vector<int64_t> &)> at;
  bool is_float = false;  // f32 data: its elements are floats, else ints
};
using CapturedViews = std::map<std::string, CapturedView>;

// The variables at one pair (s aside).
struct ExprVars {
  int64_t b = 0, h = 0, kvh = 0, q = 0, k = 0, i = 0, seq_q = 0, seq_k = 0;
};

// A score_mod's value for score s (an int value converted), in T (double or float).
template <class T>
T eval_score(const attn::ExprTree &e, T s, const ExprVars &vars, const CapturedViews &tensors);
// A mask_mod's value.
bool eval_mask(const attn::ExprTree &e, const ExprVars &vars, const CapturedViews &tensors);

// Sets o.score_mod_f64 / score_mod_f32 / mask_mod from a resolved spec's expressions, for a call of
// seq_q queries and seq_k keys (o keeps the views; the data they read must outlive o's use).
void add_expr_options(Options &o, const attn::Spec &resolved, int64_t seq_q, int64_t seq_k,
                      CapturedViews tensors);

}  // namespace attnc::reference
