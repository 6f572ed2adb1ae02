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

}  // namespace attnc
