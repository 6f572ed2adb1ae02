// test_support.h: comparisons of masks and specs that the DSL tests share.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "attn/spec.h"
#include "attn/validate.h"

namespace attn_test {

// The same tree of terms (and so the same kernel), node for node.
inline bool same_mask(const attn::Mask &a, const attn::Mask &b) {
  if (a.count != b.count || a.bad_term != b.bad_term) return false;
  for (int i = 0; i < a.count; ++i) {
    const attn::MaskNode &x = a.nodes[i];
    const attn::MaskNode &y = b.nodes[i];
    if (x.op != y.op) return false;
    if (x.op == attn::MaskOp::window && (x.left != y.left || x.right != y.right)) return false;
    if (x.op != attn::MaskOp::window && (x.lhs != y.lhs || x.rhs != y.rhs)) return false;
  }
  return true;
}

// Equal once resolved: every field, with the scale compared bit for bit. Whether the scale was
// written or defaulted does not matter: the text form always writes it.
inline bool same_resolved(const attn::Spec &a, const attn::Spec &b) {
  const attn::Spec x = attn::resolve(a);
  const attn::Spec y = attn::resolve(b);
  return std::strncmp(x.name, y.name, sizeof(x.name)) == 0 && x.d_model == y.d_model && x.heads == y.heads &&
         x.kv_heads == y.kv_heads && x.head_dim == y.head_dim && x.head_dim_v == y.head_dim_v &&
         x.form == y.form && x.qkv == y.qkv && x.proj_bias == y.proj_bias && same_mask(x.mask, y.mask) &&
         x.dtype == y.dtype && std::bit_cast<uint32_t>(x.scale) == std::bit_cast<uint32_t>(y.scale);
}

}  // namespace attn_test
