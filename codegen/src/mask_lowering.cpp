// Lowers the mask expression tree node by node, post-order as it is stored.
#include "attnc/mask_lowering.h"

#include <vector>

namespace attnc {

Halide::Expr lower_mask(const attn::Mask &mask, const Halide::Expr &query_pos, const Halide::Expr &key) {
  if (mask.empty()) return Halide::Internal::const_true();
  std::vector<Halide::Expr> value(mask.count);
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskNode &node = mask.nodes[n];
    switch (node.op) {
      case attn::MaskOp::window: {
        Halide::Expr keep = Halide::Internal::const_true();
        if (node.left >= 0) keep = keep && key >= query_pos - node.left;
        if (node.right >= 0) keep = keep && key <= query_pos + node.right;
        value[n] = keep;
        break;
      }
      case attn::MaskOp::both:
        value[n] = value[node.lhs] && value[node.rhs];
        break;
      case attn::MaskOp::either:
        value[n] = value[node.lhs] || value[node.rhs];
        break;
    }
  }
  return value[mask.root()];
}

KeyRange key_range(const attn::Mask &mask, const Halide::Expr &query_lo, const Halide::Expr &query_hi) {
  if (mask.empty()) return {};
  std::vector<KeyRange> range(mask.count);
  // One side of two ranges; an undefined Expr is unbounded.
  auto intersect = [](const Halide::Expr &a, const Halide::Expr &b, bool lower) -> Halide::Expr {
    if (!a.defined()) return b;
    if (!b.defined()) return a;
    return lower ? Halide::max(a, b) : Halide::min(a, b);
  };
  auto hull = [](const Halide::Expr &a, const Halide::Expr &b, bool lower) -> Halide::Expr {
    if (!a.defined() || !b.defined()) return Halide::Expr();
    return lower ? Halide::min(a, b) : Halide::max(a, b);
  };
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskNode &node = mask.nodes[n];
    switch (node.op) {
      case attn::MaskOp::window:
        if (node.left >= 0) range[n].first = query_lo - node.left;
        if (node.right >= 0) range[n].last = query_hi + node.right;
        break;
      case attn::MaskOp::both:
        range[n].first = intersect(range[node.lhs].first, range[node.rhs].first, true);
        range[n].last = intersect(range[node.lhs].last, range[node.rhs].last, false);
        break;
      case attn::MaskOp::either:
        range[n].first = hull(range[node.lhs].first, range[node.rhs].first, true);
        range[n].last = hull(range[node.lhs].last, range[node.rhs].last, false);
        break;
    }
  }
  return range[mask.root()];
}

}  // namespace attnc
