// attn/check.h: compile-time validation of constexpr specs, with errors that name field and value.
#pragma once

#include "attn/validate.h"

namespace attn::spec_error {
// Each problem is an incomplete template whose arguments carry the values, so the compiler's
// message reads e.g. "incomplete type 'attn::spec_error::heads_must_divide_d_model<12, 770>'".
template <int heads> struct heads_must_be_positive;
template <int d_model> struct d_model_must_be_positive;
template <int kv_heads> struct kv_heads_must_be_positive;
template <int head_dim> struct head_dim_must_be_positive;
template <int head_dim_v> struct head_dim_v_must_be_positive;
template <int heads> struct heads_must_be_set;
template <int d_model> struct d_model_or_head_dim_must_be_set;
template <int heads, int d_model> struct heads_must_divide_d_model;
template <int kv_heads, int heads> struct kv_heads_must_divide_heads;
// The scale itself where float template arguments work (GCC 11+, Clang 18+): "<-5.0e-1f>".
#if __cpp_nontype_template_args >= 201911L
template <float scale> struct scale_must_be_positive;
template <float softcap> struct softcap_must_be_positive;
constexpr float scale_argument(float scale) { return scale; }
#else
template <int scale_is_not_positive> struct scale_must_be_positive;
template <int softcap_is_not_positive> struct softcap_must_be_positive;
constexpr int scale_argument(float) { return 1; }
#endif
template <int window_bound> struct window_bound_must_be_at_least_minus_1;
template <int terms, int capacity> struct mask_has_too_many_terms;
template <int character, int position> struct name_must_be_alphanumeric_or_underscore;
template <int tokens> struct global_tokens_must_be_positive;
template <int block> struct random_block_size_must_be_positive;
template <int blocks> struct random_block_count_must_be_positive;
template <int mask_block> struct mask_block_must_be_positive;
// Above attn/limits.h: the value, then the limit.
template <int heads, int limit> struct heads_must_be_at_most;
template <int kv_heads, int limit> struct kv_heads_must_be_at_most;
template <int head_dim, int limit> struct head_dim_must_be_at_most;
template <int head_dim_v, int limit> struct head_dim_v_must_be_at_most;
template <int d_model, int limit> struct d_model_must_be_at_most;
template <int heads_times_head_dim, int limit> struct heads_times_head_dim_must_be_at_most;
template <int heads_times_head_dim_v, int limit> struct heads_times_head_dim_v_must_be_at_most;
template <int rows, int columns> struct projection_weight_must_be_below_2_gib;
template <int mask_block, int limit> struct mask_block_must_be_at_most;
template <int window_bound, int limit> struct window_bound_must_be_at_most;
template <int tokens, int limit> struct global_tokens_must_be_at_most;
template <int block, int limit> struct random_block_size_must_be_at_most;
template <int blocks, int limit> struct random_block_count_must_be_at_most;
template <int draws, int limit> struct random_draws_in_all_must_be_at_most;
template <int node, int count_is_bad> struct mask_node_is_malformed;
}  // namespace attn::spec_error

namespace attn {

// static_assert(attn::checked<my_spec>()); fails to compile, naming the problem, for a bad spec.
template <Spec S>
consteval bool checked() {
  constexpr SpecCheck c = check_spec(S);
  using P = SpecProblem;
  using namespace spec_error;
  if constexpr (c.problem == P::d_model_not_positive) return sizeof(d_model_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::heads_not_positive) return sizeof(heads_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::kv_heads_not_positive) return sizeof(kv_heads_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::head_dim_not_positive) return sizeof(head_dim_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::head_dim_v_not_positive) return sizeof(head_dim_v_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::heads_missing) return sizeof(heads_must_be_set<c.a>) > 0;
  else if constexpr (c.problem == P::width_missing) return sizeof(d_model_or_head_dim_must_be_set<c.a>) > 0;
  else if constexpr (c.problem == P::heads_not_dividing_d_model) return sizeof(heads_must_divide_d_model<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::kv_heads_not_dividing_heads) return sizeof(kv_heads_must_divide_heads<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::scale_not_positive) return sizeof(scale_must_be_positive<scale_argument(S.scale)>) > 0;
  else if constexpr (c.problem == P::window_bound_invalid) return sizeof(window_bound_must_be_at_least_minus_1<c.a>) > 0;
  else if constexpr (c.problem == P::mask_too_large) return sizeof(mask_has_too_many_terms<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::name_invalid) return sizeof(name_must_be_alphanumeric_or_underscore<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::global_tokens_not_positive) return sizeof(global_tokens_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::random_block_not_positive) return sizeof(random_block_size_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::random_count_not_positive) return sizeof(random_block_count_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::mask_block_not_positive) return sizeof(mask_block_must_be_positive<c.a>) > 0;
  else if constexpr (c.problem == P::softcap_not_positive) return sizeof(softcap_must_be_positive<scale_argument(S.softcap)>) > 0;
  else if constexpr (c.problem == P::heads_too_many) return sizeof(heads_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::kv_heads_too_many) return sizeof(kv_heads_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::head_dim_too_large) return sizeof(head_dim_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::head_dim_v_too_large) return sizeof(head_dim_v_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::d_model_too_large) return sizeof(d_model_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::query_width_too_large) return sizeof(heads_times_head_dim_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::value_width_too_large) return sizeof(heads_times_head_dim_v_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::weight_too_large) return sizeof(projection_weight_must_be_below_2_gib<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::mask_block_too_large) return sizeof(mask_block_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::window_bound_too_large) return sizeof(window_bound_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::global_tokens_too_large) return sizeof(global_tokens_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::random_block_too_large) return sizeof(random_block_size_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::random_count_too_large) return sizeof(random_block_count_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::random_draws_too_many) return sizeof(random_draws_in_all_must_be_at_most<c.a, c.b>) > 0;
  else if constexpr (c.problem == P::mask_malformed) return sizeof(mask_node_is_malformed<c.a, c.b>) > 0;
  else {
    static_assert(c.ok(), "attn::checked: a SpecProblem without its spec_error type");
    return true;
  }
}

}  // namespace attn

// Declares the specs a translation unit exports to attn_add_kernels(... SPEC_SOURCES ...):
// each is checked at compile time, and the spec printer (attnc::spec_printer) lists them.
#define ATTN_EXPORT_SPECS(...)                                                  \
  static_assert(::attn::detail::all_checked<__VA_ARGS__>());                    \
  extern "C" const ::attn::Spec *attn_exported_specs(int *count) {             \
    static constexpr ::attn::Spec specs[] = {__VA_ARGS__};                      \
    *count = static_cast<int>(sizeof(specs) / sizeof(specs[0]));               \
    return specs;                                                               \
  }

namespace attn::detail {
template <Spec... S>
consteval bool all_checked() {
  return (checked<S>() && ...);
}
}  // namespace attn::detail
