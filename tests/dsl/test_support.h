// test_support.h: comparisons of masks and specs that the DSL tests share.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "attn/spec.h"
#include "attn/validate.h"

namespace attn_test {

// The same node: its operator or term, and the fields that kind of node uses.
inline bool same_node(const attn::MaskNode &x, const attn::MaskNode &y) {
  using attn::MaskOp;
  if (x.op != y.op) return false;
  if (attn::is_operator(x.op)) return x.lhs == y.lhs && x.rhs == y.rhs;
  switch (x.op) {
    case MaskOp::window:
      return x.left == y.left && x.right == y.right;
    case MaskOp::global_tokens:
      return x.tokens == y.tokens;
    case MaskOp::random_blocks:
      return x.block == y.block && x.blocks == y.blocks && x.seed == y.seed;
    default:
      return true;  // padding, prefix, document, tensor: no fields
  }
}

// The same tree of terms (and so the same kernel), node for node.
inline bool same_mask(const attn::Mask &a, const attn::Mask &b) {
  if (a.count != b.count || a.bad_term != b.bad_term) return false;
  for (int i = 0; i < a.count; ++i)
    if (!same_node(a.nodes[i], b.nodes[i])) return false;
  return true;
}

inline bool same_bits(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Equal once resolved: every field, with the scale and softcap compared bit for bit. Whether the
// scale was written or defaulted does not matter: the text form always writes it. An unset softcap
// stays unset.
inline bool same_head_groups(const attn::Spec &x, const attn::Spec &y) {
  if (x.group_count != y.group_count) return false;
  for (int g = 0; g < x.group_count; ++g) {
    const attn::HeadGroup &a = x.head_groups[g], &b = y.head_groups[g];
    if (a.heads != b.heads || a.head_dim != b.head_dim || a.kv_heads != b.kv_heads) return false;
  }
  return true;
}

inline bool same_resolved(const attn::Spec &a, const attn::Spec &b) {
  const attn::Spec x = attn::resolve(a);
  const attn::Spec y = attn::resolve(b);
  if (!same_head_groups(x, y)) return false;
  return std::strncmp(x.name, y.name, sizeof(x.name)) == 0 && x.d_model == y.d_model && x.heads == y.heads &&
         x.kv_heads == y.kv_heads && x.head_dim == y.head_dim && x.head_dim_v == y.head_dim_v &&
         x.form == y.form && x.qkv == y.qkv && x.proj_bias == y.proj_bias && same_mask(x.mask, y.mask) &&
         x.mask_block == y.mask_block && x.dtype == y.dtype && same_bits(x.scale, y.scale) &&
         x.has_softcap == y.has_softcap && (!x.has_softcap || same_bits(x.softcap, y.softcap)) &&
         x.alibi == y.alibi && x.score_bias == y.score_bias && x.lse == y.lse && x.probs == y.probs &&
         x.align == y.align && x.runtime_scale == y.runtime_scale && x.cross_attention == y.cross_attention &&
         x.kv_cache == y.kv_cache && x.page_size == y.page_size && x.kv_dtype == y.kv_dtype &&
         x.rope == y.rope && same_bits(x.rope_theta, y.rope_theta) && x.rope_dim == y.rope_dim &&
         x.layout == y.layout;
}

}  // namespace attn_test
