// The block bounds at one symbolic key k, solved for k: where the mask_mod may keep it (outer
// interval of "not never") and where it keeps it for sure (inner interval of "always").
#include "attnc/expr_spans.h"

namespace attnc {

using Halide::Expr;
using Halide::Internal::Interval;

namespace {

const char *const key_name = "attnc_mask_mod_key";

// A bound the solver left without the infinities it uses for "none".
bool finite(const Expr &e) {
  return e.defined() && !Halide::Internal::expr_uses_var(e, "pos_inf") &&
         !Halide::Internal::expr_uses_var(e, "neg_inf") && !e.same_as(Interval::pos_inf()) &&
         !e.same_as(Interval::neg_inf());
}

BlockTruth at_one_key(const attn::ExprTree &mask_mod, QueryBlock block) {
  const Expr key = Halide::Internal::Variable::make(Halide::Int(32), key_name);
  block.k_lo = block.k_hi = key;
  return mask_mod_on_block(mask_mod, block);
}

}  // namespace

std::optional<KeyInterval> mask_mod_key_hull(const attn::ExprTree &mask_mod, const QueryBlock &queries) {
  const Expr may_keep = Halide::Internal::simplify(!at_one_key(mask_mod, queries).never);
  const Interval hull = Halide::Internal::solve_for_outer_interval(may_keep, key_name);
  const bool has_first = finite(hull.min), has_last = finite(hull.max);
  if (!has_first && !has_last) return std::nullopt;
  return KeyInterval{has_first ? hull.min : Expr(0), has_last ? hull.max : queries.seq_k - 1};
}

KeyInterval mask_mod_kept_by_all(const attn::ExprTree &mask_mod, const QueryBlock &queries) {
  const Expr always = Halide::Internal::simplify(at_one_key(mask_mod, queries).always);
  const Interval kept = Halide::Internal::solve_for_inner_interval(always, key_name);
  if (kept.is_empty()) return {Expr(0), Expr(-1)};
  const bool has_first = finite(kept.min) || kept.min.same_as(Interval::neg_inf());
  const bool has_last = finite(kept.max) || kept.max.same_as(Interval::pos_inf());
  if (!has_first || !has_last) return {Expr(0), Expr(-1)};  // a bound the solver could not state
  return {finite(kept.min) ? kept.min : Expr(0), finite(kept.max) ? kept.max : queries.seq_k - 1};
}

}  // namespace attnc
