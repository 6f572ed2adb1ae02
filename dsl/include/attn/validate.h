// attn/validate.h: spec defaults and validation, usable in constant expressions and at run time.
#pragma once

#include <cstdint>
#include <string>

#include "attn/expr_check.h"
#include "attn/limits.h"
#include "attn/spec.h"

namespace attn {

enum class SpecProblem : int32_t {
  none = 0,
  d_model_not_positive = 1,  // codes 1..5 match Spec::set_dim's field codes
  heads_not_positive = 2,
  kv_heads_not_positive = 3,
  head_dim_not_positive = 4,
  head_dim_v_not_positive = 5,
  heads_missing,
  width_missing,  // neither d_model nor head_dim
  heads_not_dividing_d_model,
  kv_heads_not_dividing_heads,
  scale_not_positive,
  window_bound_invalid,
  mask_too_large,
  name_invalid,
  global_tokens_not_positive,
  random_block_not_positive,
  random_count_not_positive,
  softcap_not_positive,
  mask_block_not_positive = 20,  // matches Spec::with_mask_block's field code
  // Above attn/limits.h (a: the value, b: the limit).
  heads_too_many,
  kv_heads_too_many,
  head_dim_too_large,    // given, or d_model / heads
  head_dim_v_too_large,  // given, or head_dim
  d_model_too_large,
  query_width_too_large,  // heads * head_dim
  value_width_too_large,  // heads * head_dim_v
  weight_too_large,       // block form (a: rows, b: columns of the largest projection weight)
  mask_block_too_large,
  window_bound_too_large,
  global_tokens_too_large,
  random_block_too_large,
  random_count_too_large,
  random_draws_too_many,  // N summed over random terms
  mask_malformed,         // a hand-built node (a: its index; b: 1 when the node count itself is bad)
  // Head groups (a: the group's index, b: the value, unless said otherwise).
  head_group_count_invalid = 64,  // matches Spec::with_head_groups' field code (a: the count, b: the most)
  head_groups_in_core_form,       // a, b: 0
  head_group_heads_not_positive,
  head_group_head_dim_not_positive,
  head_group_kv_heads_not_positive,
  head_group_kv_heads_not_dividing_heads,  // b: the group's kv heads
  head_groups_heads_mismatch,              // heads given beside the groups (a: heads, b: the groups' sum)
  head_groups_kv_heads_mismatch,           // a: kv_heads, b: the groups' sum
  head_groups_head_dim_mismatch,           // a: head_dim, b: the widest group's
  head_groups_head_dim_v_mismatch,         // a: head_dim_v, b: the widest group's
  // Issue 24 (a: the value, b: the other one).
  rope_dim_invalid,            // a: rope_dim, b: head_dim (odd, negative or above head_dim)
  rope_theta_not_positive,     // rope_theta not a finite number in (0, limits::max_float_value)
  page_size_invalid,           // paged cache: a: page_size, b: the limit (0, negative, above the limit)
  sequence_needs_core_form,    // a: 1 for kv_cache, 2 for layout=varlen
  varlen_with_kv_cache,        // layout=varlen and a kv_cache in one spec
  sequence_input_unsupported,  // a: 1 kv_cache, 2 varlen; b: 1 padding, 2 prefix, 3 document, 4 tensor, 5
                               // score_bias
  rope_options_without_rope,   // rope_theta or rope_dim given with rope=none
  cross_attention_needs_block_form,  // cross=true on a core spec (its k and v are inputs already)
  // Issue 32: what gen could not build although check accepted it.
  probs_with_sequence,  // probs=true with a: 1 kv_cache, 2 layout=varlen, 3 head_groups
  page_too_large,       // paged: a: page_size, b: kv_heads * max(head_dim, head_dim_v) per token
  // Issue 33: a backward kernel (a: 1 block form, 2 kv_cache, 3 (unused: varlen is taken), 4 probs, 5 lse).
  backward_unsupported,
  dscore_bias_without_backward,  // dscore_bias=true without a: 1 backward=true, 2 score_bias=tensor
  // Issue 37: kv_dtype=int8|fp8_e4m3 without a KV cache (a: the KvDType, b: 1 varlen, 0 neither).
  kv_dtype_needs_kv_cache,
  dropout_invalid,      // dropout not a number in [0, 1)
  dropout_unsupported,  // dropout with a: 1 kv_cache (inference), 2 layout=varlen
  // Issue 34 (attn/expr_check.h): a: the ExprProblem, b: the node at fault.
  score_mod_invalid,
  mask_mod_invalid,
  captured_input_invalid,  // a: the InputProblem, b: the declaration's index
  mods_unsupported,  // score_mod / mask_mod / inputs with a: 1 kv_cache, 2 varlen, 3 backward, 4 head_groups
  // block_mask=input|pass (a: the BlockMask) with b: 1 no mask_mod, 2 the block form, 3 mask=padding.
  block_mask_unsupported,
};

// The first problem found, with the values involved (a: the offending value, b: the other one).
struct SpecCheck {
  SpecProblem problem = SpecProblem::none;
  int32_t a = 0;
  int32_t b = 0;
  constexpr bool ok() const { return problem == SpecProblem::none; }
};

namespace detail {
constexpr float sqrt_newton(float x) {
  double r = x > 1 ? x : 1.0;
  for (int i = 0; i < 64; ++i) r = 0.5 * (r + x / r);
  return static_cast<float>(r);
}
constexpr bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}
}  // namespace detail

// A head group's k/v heads, its default filled in.
constexpr int32_t group_kv_heads(const HeadGroup &g) {
  return g.kv_heads > 0 ? g.kv_heads : g.heads;
}

// The widths of the merged heads of a resolved spec (with head groups: summed over the groups,
// whose values are as wide as their keys). query_width: rows of w_q (H·D); key_width: rows of
// w_k (KVH·D); value_width: rows of w_v (KVH·Dv); attended_width: columns of w_o (H·Dv).
constexpr int64_t query_width(const Spec &r) {
  if (r.group_count == 0) return int64_t{r.heads} * r.head_dim;
  int64_t sum = 0;
  for (int g = 0; g < r.group_count && g < max_head_groups; ++g)
    sum += int64_t{r.head_groups[g].heads} * r.head_groups[g].head_dim;
  return sum;
}
constexpr int64_t key_width(const Spec &r) {
  if (r.group_count == 0) return int64_t{r.kv_heads} * r.head_dim;
  int64_t sum = 0;
  for (int g = 0; g < r.group_count && g < max_head_groups; ++g)
    sum += int64_t{group_kv_heads(r.head_groups[g])} * r.head_groups[g].head_dim;
  return sum;
}
constexpr int64_t value_width(const Spec &r) {
  return r.group_count == 0 ? int64_t{r.kv_heads} * r.head_dim_v : key_width(r);
}
constexpr int64_t attended_width(const Spec &r) {
  return r.group_count == 0 ? int64_t{r.heads} * r.head_dim_v : query_width(r);
}

// The largest projection weight of the block form: w_qkv [(H + KVH)·D + KVH·Dv, d_model] when
// fused, else w_q [H·D, d_model] or w_o [d_model, H·Dv]. For a resolved spec within the limits.
struct WeightShape {
  const char *name;
  int64_t rows, columns;
  constexpr int64_t elements() const { return rows * columns; }
};
constexpr WeightShape largest_weight(const Spec &r) {
  const int64_t q_rows = query_width(r);
  const int64_t out_elements = int64_t{r.d_model} * attended_width(r);
  WeightShape in{"w_q", q_rows, r.d_model};
  if (r.qkv == Qkv::fused) in = {"w_qkv", q_rows + key_width(r) + value_width(r), r.d_model};
  if (out_elements > in.elements()) return {"w_o", r.d_model, attended_width(r)};
  return in;
}

namespace detail {
constexpr SpecCheck mask_check(MaskProblem problem, int32_t value) {
  using P = SpecProblem;
  constexpr int32_t max_pos = limits::max_positions;
  switch (problem) {
    case MaskProblem::none:
      return {};
    case MaskProblem::window_bound:
      return {P::window_bound_invalid, value, 0};
    case MaskProblem::too_many_terms:
      return {P::mask_too_large, value, Mask::capacity};
    case MaskProblem::global_tokens:
      return {P::global_tokens_not_positive, value, 0};
    case MaskProblem::random_block:
      return {P::random_block_not_positive, value, 0};
    case MaskProblem::random_count:
      return {P::random_count_not_positive, value, 0};
    case MaskProblem::window_bound_too_large:
      return {P::window_bound_too_large, value, max_pos};
    case MaskProblem::global_tokens_too_large:
      return {P::global_tokens_too_large, value, max_pos};
    case MaskProblem::random_block_too_large:
      return {P::random_block_too_large, value, max_pos};
    case MaskProblem::random_count_too_large:
      return {P::random_count_too_large, value, limits::max_random_draws};
  }
  return {P::mask_malformed, -1, 0};
}

// What the constructors record (Mask::bad_term), then every node again, for masks built by hand:
// operands must be earlier nodes, terms known and within range; then the total random draws.
constexpr SpecCheck check_mask(const Mask &m) {
  using P = SpecProblem;
  if (m.bad_term != MaskProblem::none) return mask_check(m.bad_term, m.bad_value);
  if (m.count < 0 || m.count > Mask::capacity) return {P::mask_malformed, m.count, 1};
  int32_t draws = 0;
  for (int i = 0; i < m.count; ++i) {
    const MaskNode &n = m.nodes[i];
    if (is_operator(n.op)) {
      if (n.lhs < 0 || n.lhs >= i || n.rhs < 0 || n.rhs >= i) return {P::mask_malformed, i, 0};
      continue;
    }
    if (static_cast<int>(n.op) > static_cast<int>(MaskOp::tensor)) return {P::mask_malformed, i, 0};
    const TermCheck t = check_term(n);
    if (t.problem != MaskProblem::none) return mask_check(t.problem, t.value);
    if (n.op == MaskOp::random_blocks) draws += n.blocks;
  }
  if (draws > limits::max_random_draws) return {P::random_draws_too_many, draws, limits::max_random_draws};
  return {};
}

// Every dimension and derived width within attn/limits.h; the spec's own fields are already > 0
// where set, heads > 0, and d_model or head_dim is set.
constexpr SpecCheck check_sizes(const Spec &s) {
  using P = SpecProblem;
  if (s.d_model > limits::max_d_model) return {P::d_model_too_large, s.d_model, limits::max_d_model};
  if (s.heads > limits::max_heads) return {P::heads_too_many, s.heads, limits::max_heads};
  if (s.kv_heads > limits::max_heads) return {P::kv_heads_too_many, s.kv_heads, limits::max_heads};
  const int32_t head_dim = s.head_dim > 0 ? s.head_dim : s.d_model / s.heads;
  const int32_t head_dim_v = s.head_dim_v > 0 ? s.head_dim_v : head_dim;
  if (head_dim > limits::max_head_dim) return {P::head_dim_too_large, head_dim, limits::max_head_dim};
  if (head_dim_v > limits::max_head_dim) return {P::head_dim_v_too_large, head_dim_v, limits::max_head_dim};
  Spec widths = s;
  widths.head_dim = head_dim;
  widths.head_dim_v = head_dim_v;
  if (query_width(widths) > limits::max_d_model)
    return {P::query_width_too_large, static_cast<int32_t>(query_width(widths)), limits::max_d_model};
  if (attended_width(widths) > limits::max_d_model)
    return {P::value_width_too_large, static_cast<int32_t>(attended_width(widths)), limits::max_d_model};
  if (s.mask_block > limits::max_positions)
    return {P::mask_block_too_large, s.mask_block, limits::max_positions};
  return {};
}

// The head groups' own rules: a count within 1..max_head_groups, the block form, each group's
// heads and head_dim > 0 and within the limits, its kv heads dividing its heads; heads, kv_heads,
// head_dim and head_dim_v either unset or what the groups give.
constexpr SpecCheck check_head_groups(const Spec &s) {
  using P = SpecProblem;
  if (s.group_count < 1 || s.group_count > max_head_groups)
    return {P::head_group_count_invalid, s.group_count, max_head_groups};
  if (s.form != Form::block) return {P::head_groups_in_core_form, 0, 0};
  int32_t heads = 0, kv_heads = 0, widest = 0;
  for (int g = 0; g < s.group_count; ++g) {
    const HeadGroup &group = s.head_groups[g];
    if (group.heads <= 0) return {P::head_group_heads_not_positive, g, group.heads};
    if (group.head_dim <= 0) return {P::head_group_head_dim_not_positive, g, group.head_dim};
    if (group.kv_heads < 0) return {P::head_group_kv_heads_not_positive, g, group.kv_heads};
    if (group.heads > limits::max_heads) return {P::heads_too_many, group.heads, limits::max_heads};
    if (group.head_dim > limits::max_head_dim)
      return {P::head_dim_too_large, group.head_dim, limits::max_head_dim};
    if (group.heads % group_kv_heads(group) != 0)
      return {P::head_group_kv_heads_not_dividing_heads, g, group_kv_heads(group)};
    heads += group.heads;
    kv_heads += group_kv_heads(group);
    widest = group.head_dim > widest ? group.head_dim : widest;
  }
  if (s.heads != 0 && s.heads != heads) return {P::head_groups_heads_mismatch, s.heads, heads};
  if (s.kv_heads != 0 && s.kv_heads != kv_heads)
    return {P::head_groups_kv_heads_mismatch, s.kv_heads, kv_heads};
  if (s.head_dim != 0 && s.head_dim != widest) return {P::head_groups_head_dim_mismatch, s.head_dim, widest};
  if (s.head_dim_v != 0 && s.head_dim_v != widest)
    return {P::head_groups_head_dim_v_mismatch, s.head_dim_v, widest};
  return {};
}

// heads and kv_heads the groups' sums, head_dim and head_dim_v the widest group's, each group's
// kv heads filled in. For a spec that passes check_head_groups.
constexpr Spec with_group_dims(Spec s) {
  if (s.group_count <= 0) return s;
  s.heads = s.kv_heads = s.head_dim = 0;
  for (int g = 0; g < s.group_count && g < max_head_groups; ++g) {
    HeadGroup &group = s.head_groups[g];
    group.kv_heads = group_kv_heads(group);
    s.heads += group.heads;
    s.kv_heads += group.kv_heads;
    s.head_dim = group.head_dim > s.head_dim ? group.head_dim : s.head_dim;
  }
  s.head_dim_v = s.head_dim;
  return s;
}
}  // namespace detail

constexpr Spec resolve(Spec s);

namespace detail {
// The issue-24 fields: KV cache, RoPE and the varlen layout.
constexpr SpecCheck check_sequence(const Spec &s) {
  using P = SpecProblem;
  const int32_t head_dim = s.head_dim > 0 ? s.head_dim : s.d_model / s.heads;
  if (s.rope == Rope::none && (s.rope_dim != 0 || s.rope_theta != 0.0f))
    return {P::rope_options_without_rope, s.rope_dim, 0};
  if (s.rope != Rope::none) {
    if (s.rope_dim < 0 || s.rope_dim % 2 != 0 || s.rope_dim > head_dim ||
        (s.rope_dim == 0 && head_dim % 2 != 0))
      return {P::rope_dim_invalid, s.rope_dim == 0 ? head_dim : s.rope_dim, head_dim};
    if (s.rope_theta != 0.0f && !(s.rope_theta > 0.0f && s.rope_theta < limits::max_float_value))
      return {P::rope_theta_not_positive, 0, 0};
  }
  if (s.kv_cache == KvCache::paged && (s.page_size <= 0 || s.page_size > limits::max_positions))
    return {P::page_size_invalid, s.page_size, limits::max_positions};
  // One page of k_cache [num_pages, P, KVH, D] (v_cache: Dv) must fit the 2^31 - 1 elements a
  // tensor may hold, or no cache of that page size can be passed (and its strides wrap in gen).
  if (s.kv_cache == KvCache::paged) {
    const int32_t kv_heads = s.kv_heads > 0 ? s.kv_heads : s.heads;
    const int32_t head_dim_v = s.head_dim_v > 0 ? s.head_dim_v : head_dim;
    const int32_t per_token = kv_heads * (head_dim > head_dim_v ? head_dim : head_dim_v);
    if (int64_t{s.page_size} * per_token > limits::max_tensor_elements)
      return {P::page_too_large, s.page_size, per_token};
  }
  // probs [B, H, Sq, Sk] is one matrix per batch element of one head size: it has no Sk per
  // cached or packed sequence, nor one head size per group.
  if (s.probs && s.kv_cache != KvCache::none) return {P::probs_with_sequence, 1, 0};
  if (s.probs && s.layout == Layout::varlen) return {P::probs_with_sequence, 2, 0};
  if (s.probs && s.group_count != 0) return {P::probs_with_sequence, 3, 0};
  if (s.score_bias_grad && !s.backward_pass) return {P::dscore_bias_without_backward, 1, 0};
  if (s.score_bias_grad && !s.score_bias) return {P::dscore_bias_without_backward, 2, 0};
  if (s.backward_pass) {
    if (s.form != Form::core) return {P::backward_unsupported, 1, 0};
    if (s.kv_cache != KvCache::none) return {P::backward_unsupported, 2, 0};
    if (s.probs) return {P::backward_unsupported, 4, 0};
    if (s.lse) return {P::backward_unsupported, 5, 0};
  }
  if (s.has_dropout && s.kv_cache != KvCache::none) return {P::dropout_unsupported, 1, 0};
  if (s.has_dropout && s.layout == Layout::varlen) return {P::dropout_unsupported, 2, 0};
  const bool cache = s.kv_cache != KvCache::none, varlen = s.layout == Layout::varlen;
  // Only a cache has codes and scales to keep: q, k and v given whole stay in dtype.
  if (s.kv_dtype != KvDType::same && !cache)
    return {P::kv_dtype_needs_kv_cache, static_cast<int32_t>(s.kv_dtype), varlen ? 1 : 0};
  if (!cache && !varlen) return {};
  const int32_t which = cache ? 1 : 2;
  if (s.form != Form::core) return {P::sequence_needs_core_form, which, 0};
  if (cache && varlen) return {P::varlen_with_kv_cache, 0, 0};
  // Inputs indexed by batch and sequence ([B, Sk], [B, H, Sq, Sk]) have no meaning per cached or
  // packed sequence yet: refused rather than silently misread.
  const MaskOp ops[] = {MaskOp::padding, MaskOp::prefix, MaskOp::document, MaskOp::tensor};
  for (int i = 0; i < 4; ++i)
    if (s.mask.uses(ops[i])) return {P::sequence_input_unsupported, which, i + 1};
  if (s.score_bias) return {P::sequence_input_unsupported, which, 5};
  return {};
}
}  // namespace detail

namespace detail {
// score_mod, mask_mod and their captured inputs (issue 34).
constexpr SpecCheck check_mods(const Spec &s) {
  using P = SpecProblem;
  if (const InputCheck in = check_inputs(s.captured); !in.ok())
    return {P::captured_input_invalid, static_cast<int32_t>(in.problem), in.input};
  if (const ExprCheck c = check_expr(s.score_mod, s.captured, false); !c.ok())
    return {P::score_mod_invalid, static_cast<int32_t>(c.problem), c.node};
  if (const ExprCheck c = check_expr(s.mask_mod, s.captured, true); !c.ok())
    return {P::mask_mod_invalid, static_cast<int32_t>(c.problem), c.node};
  if (s.score_mod.empty() && s.mask_mod.empty() && s.captured.count == 0) return {};
  if (s.kv_cache != KvCache::none) return {P::mods_unsupported, 1, 0};
  if (s.layout == Layout::varlen) return {P::mods_unsupported, 2, 0};
  if (s.backward_pass) return {P::mods_unsupported, 3, 0};
  if (s.group_count != 0) return {P::mods_unsupported, 4, 0};
  return {};
}
// block_mask=input|pass: a mask_mod to classify, the core form's block core, positions from Sk.
constexpr SpecCheck check_block_mask(const Spec &s) {
  using P = SpecProblem;
  if (s.block_mask == BlockMask::none) return {};
  const int32_t which = static_cast<int32_t>(s.block_mask);
  if (s.mask_mod.empty()) return {P::block_mask_unsupported, which, 1};
  if (s.form != Form::core) return {P::block_mask_unsupported, which, 2};
  if (s.mask.uses(MaskOp::padding)) return {P::block_mask_unsupported, which, 3};
  return {};
}
}  // namespace detail

constexpr SpecCheck check_spec(const Spec &spec) {
  using P = SpecProblem;
  if (spec.bad_value_field != 0)
    return {static_cast<P>(spec.bad_value_field), spec.bad_value,
            spec.bad_value_field == static_cast<int32_t>(P::head_group_count_invalid) ? max_head_groups : 0};
  for (int i = 0; i < 32 && spec.name[i] != '\0'; ++i)
    if (!detail::is_name_char(spec.name[i])) return {P::name_invalid, spec.name[i], i};
  if (spec.group_count != 0)
    if (const SpecCheck groups = detail::check_head_groups(spec); !groups.ok()) return groups;
  // With head groups, the rules below see the sizes the groups give.
  const Spec s = detail::with_group_dims(spec);
  if (s.d_model < 0) return {P::d_model_not_positive, s.d_model, 0};
  if (s.heads <= 0) return {s.heads == 0 ? P::heads_missing : P::heads_not_positive, s.heads, 0};
  if (s.kv_heads < 0) return {P::kv_heads_not_positive, s.kv_heads, 0};
  if (s.head_dim < 0) return {P::head_dim_not_positive, s.head_dim, 0};
  if (s.head_dim_v < 0) return {P::head_dim_v_not_positive, s.head_dim_v, 0};
  if (s.mask_block < 0) return {P::mask_block_not_positive, s.mask_block, 0};
  if (s.d_model == 0 && (s.head_dim == 0 || s.form == Form::block)) return {P::width_missing, 0, 0};
  if (const SpecCheck sizes = detail::check_sizes(s); !sizes.ok()) return sizes;
  // Head groups set their own widths (d_model is free) and their kv heads divide per group.
  if (s.group_count == 0 && s.d_model > 0 && s.d_model % s.heads != 0)
    return {P::heads_not_dividing_d_model, s.heads, s.d_model};
  const int32_t kvh = s.kv_heads == 0 ? s.heads : s.kv_heads;
  if (s.group_count == 0 && s.heads % kvh != 0) return {P::kv_heads_not_dividing_heads, kvh, s.heads};
  if (s.form == Form::block) {
    const WeightShape w = largest_weight(resolve(s));
    if (w.elements() > limits::max_weight_elements)
      return {P::weight_too_large, static_cast<int32_t>(w.rows), static_cast<int32_t>(w.columns)};
  }
  if (s.has_scale && !(s.scale > 0.0f && s.scale < limits::max_float_value))
    return {P::scale_not_positive, 0, 0};
  if (s.has_softcap && !(s.softcap > 0.0f && s.softcap < limits::max_float_value))
    return {P::softcap_not_positive, 0, 0};
  if (s.cross_attention && s.form != Form::block) return {P::cross_attention_needs_block_form, 0, 0};
  if (s.has_dropout && !(s.dropout >= 0.0f && s.dropout < 1.0f)) return {P::dropout_invalid, 0, 0};
  if (const SpecCheck mask = detail::check_mask(s.mask); !mask.ok()) return mask;
  if (const SpecCheck mods = detail::check_mods(s); !mods.ok()) return mods;
  if (const SpecCheck block_mask = detail::check_block_mask(s); !block_mask.ok()) return block_mask;
  return detail::check_sequence(s);
}

// The spec with every default filled in. Only meaningful for a spec that passes check_spec (the
// widths are computed in 64 bits so that an unchecked spec wraps instead of overflowing).
constexpr Spec resolve(Spec s) {
  s = detail::with_group_dims(s);
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.head_dim == 0 && s.heads > 0) s.head_dim = s.d_model / s.heads;
  if (s.d_model == 0) s.d_model = static_cast<int32_t>(int64_t{s.heads} * s.head_dim);
  if (s.head_dim_v == 0) s.head_dim_v = s.head_dim;
  // Head groups without an explicit scale take one per group (group_spec), none here.
  if (!s.has_scale && s.head_dim > 0 && s.group_count == 0)
    s.scale = 1.0f / detail::sqrt_newton(static_cast<float>(s.head_dim));
  if (s.rope != Rope::none && s.rope_theta == 0.0f) s.rope_theta = 10000.0f;
  if (s.rope != Rope::none && s.rope_dim == 0) s.rope_dim = s.head_dim;
  return s;
}

// Group g of a resolved spec with head groups as a spec of its own: its heads, kv heads and
// head dim, its scale (1 / sqrt(its head_dim) unless the spec gives one), no groups.
constexpr Spec group_spec(const Spec &r, int g) {
  Spec s = r;
  const HeadGroup group = r.head_groups[g];
  s.group_count = 0;
  for (HeadGroup &cleared : s.head_groups) cleared = HeadGroup{};
  s.heads = group.heads;
  s.kv_heads = group_kv_heads(group);
  s.head_dim = s.head_dim_v = group.head_dim;
  if (!r.has_scale) s.scale = 1.0f / detail::sqrt_newton(static_cast<float>(group.head_dim));
  return s;
}

// The first query head (and k/v head) of group g among all heads, in the spec's order.
constexpr int32_t group_first_head(const Spec &r, int g) {
  int32_t first = 0;
  for (int i = 0; i < g; ++i) first += r.head_groups[i].heads;
  return first;
}
constexpr int32_t group_first_kv_head(const Spec &r, int g) {
  int32_t first = 0;
  for (int i = 0; i < g; ++i) first += group_kv_heads(r.head_groups[i]);
  return first;
}

// "spec 'gpt2': heads (12) must divide d_model (770)"; empty when the check passed.
std::string describe(const Spec &s, const SpecCheck &c);

// Run-time validation: ok, or the message describe() gives.
struct Validation {
  bool ok = true;
  std::string message;
};
Validation validate(const Spec &s);

}  // namespace attn
