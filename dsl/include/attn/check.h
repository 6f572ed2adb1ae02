// attn/check.h: compile-time validation of constexpr specs, with errors that name field and value.
#pragma once

#include <utility>

#include "attn/validate.h"

namespace attn::spec_error {
// Each problem is an incomplete template whose arguments carry the values, so the compiler's
// message reads e.g. "incomplete type 'attn::spec_error::heads_must_divide_d_model<12, 770>'".
template <int heads>
struct heads_must_be_positive;
template <int d_model>
struct d_model_must_be_positive;
template <int kv_heads>
struct kv_heads_must_be_positive;
template <int head_dim>
struct head_dim_must_be_positive;
template <int head_dim_v>
struct head_dim_v_must_be_positive;
template <int heads>
struct heads_must_be_set;
template <int d_model>
struct d_model_or_head_dim_must_be_set;
template <int heads, int d_model>
struct heads_must_divide_d_model;
template <int kv_heads, int heads>
struct kv_heads_must_divide_heads;
// The scale itself where float template arguments work (GCC 11+, Clang 18+): "<-5.0e-1f>".
#if __cpp_nontype_template_args >= 201911L
template <float scale>
struct scale_must_be_positive;
template <float softcap>
struct softcap_must_be_positive;
constexpr float scale_argument(float scale) {
  return scale;
}
#else
template <int scale_is_not_positive>
struct scale_must_be_positive;
template <int softcap_is_not_positive>
struct softcap_must_be_positive;
constexpr int scale_argument(float) {
  return 1;
}
#endif
template <int window_bound>
struct window_bound_must_be_at_least_minus_1;
template <int terms, int capacity>
struct mask_has_too_many_terms;
template <int character, int position>
struct name_must_be_alphanumeric_or_underscore;
template <int tokens>
struct global_tokens_must_be_positive;
template <int block>
struct random_block_size_must_be_positive;
template <int blocks>
struct random_block_count_must_be_positive;
template <int mask_block>
struct mask_block_must_be_positive;
// Above attn/limits.h: the value, then the limit.
template <int heads, int limit>
struct heads_must_be_at_most;
template <int kv_heads, int limit>
struct kv_heads_must_be_at_most;
template <int head_dim, int limit>
struct head_dim_must_be_at_most;
template <int head_dim_v, int limit>
struct head_dim_v_must_be_at_most;
template <int d_model, int limit>
struct d_model_must_be_at_most;
template <int heads_times_head_dim, int limit>
struct heads_times_head_dim_must_be_at_most;
template <int heads_times_head_dim_v, int limit>
struct heads_times_head_dim_v_must_be_at_most;
template <int rows, int columns>
struct projection_weight_must_be_below_2_gib;
template <int mask_block, int limit>
struct mask_block_must_be_at_most;
template <int window_bound, int limit>
struct window_bound_must_be_at_most;
template <int tokens, int limit>
struct global_tokens_must_be_at_most;
template <int block, int limit>
struct random_block_size_must_be_at_most;
template <int blocks, int limit>
struct random_block_count_must_be_at_most;
template <int draws, int limit>
struct random_draws_in_all_must_be_at_most;
template <int node, int count_is_bad>
struct mask_node_is_malformed;
// Head groups: the group's index, then the value.
template <int groups, int limit>
struct head_group_count_must_be_between_1_and;
template <int unused>
struct head_groups_need_the_block_form;
template <int group, int heads>
struct head_group_heads_must_be_positive;
template <int group, int head_dim>
struct head_group_head_dim_must_be_positive;
template <int group, int kv_heads>
struct head_group_kv_heads_must_be_positive;
template <int group, int kv_heads>
struct head_group_kv_heads_must_divide_its_heads;
template <int heads, int groups_sum>
struct heads_beside_head_groups_must_be_their_sum;
template <int kv_heads, int groups_sum>
struct kv_heads_beside_head_groups_must_be_their_sum;
template <int head_dim, int widest>
struct head_dim_beside_head_groups_must_be_the_widest;
template <int head_dim_v, int widest>
struct head_dim_v_beside_head_groups_must_be_the_widest;
template <int rope_dim, int head_dim>
struct rope_dim_must_be_even_positive_and_at_most_head_dim;
template <int rope_theta_is_not_positive>
struct rope_theta_must_be_positive;
template <int page_size, int limit>
struct page_size_must_be_positive_and_at_most;
template <int kv_cache_1_varlen_2>
struct kv_cache_and_varlen_need_the_core_form;
template <int zero>
struct varlen_and_kv_cache_do_not_combine;
template <int kv_cache_1_varlen_2, int padding_1_prefix_2_document_3_tensor_4_score_bias_5>
struct kv_cache_and_varlen_take_no_batch_shaped_mask_inputs;
template <int rope_dim> struct rope_theta_and_rope_dim_need_rope;
template <int unused> struct cross_attention_needs_the_block_form;
template <int kv_cache_1_varlen_2_head_groups_3> struct probs_does_not_combine_with;
template <int page_size, int kv_heads_times_head_dim> struct a_cache_page_must_hold_at_most_2147483647_elements;
template <int block_form_1_kv_cache_2_varlen_3_probs_4_lse_5> struct backward_does_not_take;
template <int backward_1_score_bias_tensor_2> struct dscore_bias_needs;
template <int int8_1_fp8_e4m3_2, int varlen_1>
struct kv_dtype_needs_kv_cache_contiguous_or_paged;
template <int unused> struct dropout_must_be_in_0_to_1;
template <int input_1_pass_2, int no_mask_mod_1_block_form_2_padding_3>
struct block_mask_needs;
template <int kv_cache_1_varlen_2> struct dropout_does_not_take;
// Issue 34: the ExprProblem (attn/expr_check.h) and the node; the InputProblem and the input.
template <int expr_problem, int node>
struct score_mod_is_invalid;
template <int expr_problem, int node>
struct mask_mod_is_invalid;
template <int input_problem, int input>
struct captured_input_is_invalid;
template <int kv_cache_1_varlen_2_backward_3_head_groups_4>
struct score_mod_and_mask_mod_do_not_combine_with;
}  // namespace attn::spec_error

namespace attn::spec_error {

// The spec's name in the error: its .named() label, else the text that declared it.
template <unsigned N>
struct Label {
  char text[N];
};
consteval unsigned label_size(const Spec &spec, const char *declared) {
  const char *name = spec.name[0] != '\0' ? spec.name : declared;
  unsigned n = 0;
  while (name[n] != '\0') ++n;
  return n + 1;
}
template <unsigned N>
consteval Label<N> label(const Spec &spec, const char *declared) {
  const char *name = spec.name[0] != '\0' ? spec.name : declared;
  Label<N> out{};
  for (unsigned i = 0; i + 1 < N; ++i) out.text[i] = name[i];
  return out;
}

// The name as a type in the message. GCC prints a Label argument as its text; Clang prints it as
// numbers, but a pack of chars as characters.
#if defined(__clang__)
template <char... text>
struct spec_named;
template <Label L, class Indices>
struct label_chars;
template <Label L, unsigned... i>
struct label_chars<L, std::integer_sequence<unsigned, i...>> {
  using type = spec_named<L.text[i]...>;
};
template <Label L>
using spec_name = typename label_chars<L, std::make_integer_sequence<unsigned, sizeof(L.text) - 1>>::type;
#else
template <Label L>
struct spec_named;
template <Label L>
using spec_name = spec_named<L>;
#endif

// The float a problem is about (scale or softcap), as scale_argument passes it.
constexpr auto float_argument(const Spec &spec, SpecProblem problem) {
  return scale_argument(problem == SpecProblem::softcap_not_positive ? spec.softcap : spec.scale);
}

struct no_problem;
// A null pointer to the problem's type: the rule's name and its values, for the message.
template <SpecProblem problem, int a, int b, auto f>
consteval auto rule_pointer() {
  using P = SpecProblem;
  if constexpr (problem == P::d_model_not_positive) return (d_model_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::heads_not_positive) return (heads_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::kv_heads_not_positive) return (kv_heads_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::head_dim_not_positive) return (head_dim_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::head_dim_v_not_positive) return (head_dim_v_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::heads_missing) return (heads_must_be_set<a> *)nullptr;
  else if constexpr (problem == P::width_missing) return (d_model_or_head_dim_must_be_set<a> *)nullptr;
  else if constexpr (problem == P::heads_not_dividing_d_model) return (heads_must_divide_d_model<a, b> *)nullptr;
  else if constexpr (problem == P::kv_heads_not_dividing_heads) return (kv_heads_must_divide_heads<a, b> *)nullptr;
  else if constexpr (problem == P::scale_not_positive) return (scale_must_be_positive<f> *)nullptr;
  else if constexpr (problem == P::window_bound_invalid) return (window_bound_must_be_at_least_minus_1<a> *)nullptr;
  else if constexpr (problem == P::mask_too_large) return (mask_has_too_many_terms<a, b> *)nullptr;
  else if constexpr (problem == P::name_invalid) return (name_must_be_alphanumeric_or_underscore<a, b> *)nullptr;
  else if constexpr (problem == P::global_tokens_not_positive) return (global_tokens_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::random_block_not_positive) return (random_block_size_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::random_count_not_positive) return (random_block_count_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::mask_block_not_positive) return (mask_block_must_be_positive<a> *)nullptr;
  else if constexpr (problem == P::softcap_not_positive) return (softcap_must_be_positive<f> *)nullptr;
  else if constexpr (problem == P::heads_too_many) return (heads_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::kv_heads_too_many) return (kv_heads_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::head_dim_too_large) return (head_dim_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::head_dim_v_too_large) return (head_dim_v_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::d_model_too_large) return (d_model_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::query_width_too_large) return (heads_times_head_dim_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::value_width_too_large) return (heads_times_head_dim_v_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::weight_too_large) return (projection_weight_must_be_below_2_gib<a, b> *)nullptr;
  else if constexpr (problem == P::mask_block_too_large) return (mask_block_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::window_bound_too_large) return (window_bound_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::global_tokens_too_large) return (global_tokens_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::random_block_too_large) return (random_block_size_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::random_count_too_large) return (random_block_count_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::random_draws_too_many) return (random_draws_in_all_must_be_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::mask_malformed) return (mask_node_is_malformed<a, b> *)nullptr;
  else if constexpr (problem == P::head_group_count_invalid) return (head_group_count_must_be_between_1_and<a, b> *)nullptr;
  else if constexpr (problem == P::head_groups_in_core_form) return (head_groups_need_the_block_form<a> *)nullptr;
  else if constexpr (problem == P::head_group_heads_not_positive) return (head_group_heads_must_be_positive<a, b> *)nullptr;
  else if constexpr (problem == P::head_group_head_dim_not_positive) return (head_group_head_dim_must_be_positive<a, b> *)nullptr;
  else if constexpr (problem == P::head_group_kv_heads_not_positive) return (head_group_kv_heads_must_be_positive<a, b> *)nullptr;
  else if constexpr (problem == P::head_group_kv_heads_not_dividing_heads) return (head_group_kv_heads_must_divide_its_heads<a, b> *)nullptr;
  else if constexpr (problem == P::head_groups_heads_mismatch) return (heads_beside_head_groups_must_be_their_sum<a, b> *)nullptr;
  else if constexpr (problem == P::head_groups_kv_heads_mismatch) return (kv_heads_beside_head_groups_must_be_their_sum<a, b> *)nullptr;
  else if constexpr (problem == P::head_groups_head_dim_mismatch) return (head_dim_beside_head_groups_must_be_the_widest<a, b> *)nullptr;
  else if constexpr (problem == P::head_groups_head_dim_v_mismatch) return (head_dim_v_beside_head_groups_must_be_the_widest<a, b> *)nullptr;
  else if constexpr (problem == P::rope_dim_invalid) return (rope_dim_must_be_even_positive_and_at_most_head_dim<a, b> *)nullptr;
  else if constexpr (problem == P::rope_theta_not_positive) return (rope_theta_must_be_positive<1> *)nullptr;
  else if constexpr (problem == P::page_size_invalid) return (page_size_must_be_positive_and_at_most<a, b> *)nullptr;
  else if constexpr (problem == P::sequence_needs_core_form) return (kv_cache_and_varlen_need_the_core_form<a> *)nullptr;
  else if constexpr (problem == P::varlen_with_kv_cache) return (varlen_and_kv_cache_do_not_combine<0> *)nullptr;
  else if constexpr (problem == P::sequence_input_unsupported) return (kv_cache_and_varlen_take_no_batch_shaped_mask_inputs<a, b> *)nullptr;
  else if constexpr (problem == P::rope_options_without_rope) return (rope_theta_and_rope_dim_need_rope<a> *)nullptr;
  else if constexpr (problem == P::cross_attention_needs_block_form) return (cross_attention_needs_the_block_form<a> *)nullptr;
  else if constexpr (problem == P::probs_with_sequence) return (probs_does_not_combine_with<a> *)nullptr;
  else if constexpr (problem == P::page_too_large) return (a_cache_page_must_hold_at_most_2147483647_elements<a, b> *)nullptr;
  else if constexpr (problem == P::backward_unsupported) return (backward_does_not_take<a> *)nullptr;
  else if constexpr (problem == P::dscore_bias_without_backward) return (dscore_bias_needs<a> *)nullptr;
  else if constexpr (problem == P::kv_dtype_needs_kv_cache)
    return (kv_dtype_needs_kv_cache_contiguous_or_paged<a, b> *)nullptr;
  else if constexpr (problem == P::dropout_invalid) return (dropout_must_be_in_0_to_1<a> *)nullptr;
  else if constexpr (problem == P::dropout_unsupported) return (dropout_does_not_take<a> *)nullptr;
  else if constexpr (problem == P::score_mod_invalid)
    return (score_mod_is_invalid<a, b> *)nullptr;
  else if constexpr (problem == P::mask_mod_invalid)
    return (mask_mod_is_invalid<a, b> *)nullptr;
  else if constexpr (problem == P::captured_input_invalid)
    return (captured_input_is_invalid<a, b> *)nullptr;
  else if constexpr (problem == P::mods_unsupported)
    return (score_mod_and_mask_mod_do_not_combine_with<a> *)nullptr;
  else if constexpr (problem == P::block_mask_unsupported)
    return (block_mask_needs<a, b> *)nullptr;
  else {
    static_assert(problem == P::none, "attn::check: a SpecProblem without its spec_error type");
    return (no_problem *)nullptr;
  }
}
template <class T>
struct pointee;
template <class T>
struct pointee<T *> {
  using type = T;
};
template <SpecProblem problem, int a, int b, auto f>
using rule = typename pointee<decltype(rule_pointer<problem, a, b, f>())>::type;

// The one error an invalid spec produces: the compiler shows this template's arguments (the
// spec's name, then the rule it breaks with the values) on the line before the message.
// `ok` is true either way, so that the static_assert using it adds no second error.
template <class spec_name, class broken_rule>
struct invalid_spec {
  static_assert(
      __is_same(broken_rule, no_problem),
      "invalid attn::Spec: invalid_spec<spec_named<name>, rule<values>> names it and the rule it breaks");
  static constexpr bool ok = true;
};

}  // namespace attn::spec_error

// Checks one spec at compile time; `declared` names it when it has no .named() label.
#define ATTN_CHECK_SPEC_NAMED(spec, declared)                                                           \
  static_assert(                                                                                        \
      ::attn::spec_error::invalid_spec<                                                                 \
          ::attn::spec_error::spec_name<::attn::spec_error::label<::attn::spec_error::label_size(       \
              (spec), declared)>((spec), declared)>,                                                    \
          ::attn::spec_error::rule<                                                                     \
              ::attn::check_spec(spec).problem, ::attn::check_spec(spec).a, ::attn::check_spec(spec).b, \
              ::attn::spec_error::float_argument((spec), ::attn::check_spec(spec).problem)>>::ok)
// ATTN_CHECK_SPEC(my_spec); fails to compile, naming my_spec (or its label) and the rule it breaks.
#define ATTN_CHECK_SPEC(spec) ATTN_CHECK_SPEC_NAMED(spec, #spec)

namespace attn {

// static_assert(attn::checked<my_spec>()); as ATTN_CHECK_SPEC, for a spec given as a template
// argument (the compiler then also prints the spec's fields where it says which call failed).
template <Spec S>
consteval bool checked() {
  constexpr SpecCheck c = check_spec(S);
  constexpr auto name = spec_error::label<spec_error::label_size(S, "unnamed spec")>(S, "unnamed spec");
  return spec_error::invalid_spec<
      spec_error::spec_name<name>,
      spec_error::rule<c.problem, c.a, c.b, spec_error::float_argument(S, c.problem)>>::ok;
}

}  // namespace attn

// One ATTN_CHECK_SPEC per argument of a macro: each spec named by the text that declared it.
#define ATTN_DETAIL_PARENS ()
#define ATTN_DETAIL_EXPAND(...) ATTN_DETAIL_EXPAND3(ATTN_DETAIL_EXPAND3(ATTN_DETAIL_EXPAND3(__VA_ARGS__)))
#define ATTN_DETAIL_EXPAND3(...) ATTN_DETAIL_EXPAND2(ATTN_DETAIL_EXPAND2(ATTN_DETAIL_EXPAND2(__VA_ARGS__)))
#define ATTN_DETAIL_EXPAND2(...) ATTN_DETAIL_EXPAND1(ATTN_DETAIL_EXPAND1(ATTN_DETAIL_EXPAND1(__VA_ARGS__)))
#define ATTN_DETAIL_EXPAND1(...) __VA_ARGS__
#define ATTN_DETAIL_CHECK_EACH(...) __VA_OPT__(ATTN_DETAIL_EXPAND(ATTN_DETAIL_CHECK_NEXT(__VA_ARGS__)))
#define ATTN_DETAIL_CHECK_NEXT(spec, ...) \
  ATTN_CHECK_SPEC(spec);                  \
  __VA_OPT__(ATTN_DETAIL_CHECK_AGAIN ATTN_DETAIL_PARENS(__VA_ARGS__))
#define ATTN_DETAIL_CHECK_AGAIN() ATTN_DETAIL_CHECK_NEXT

// Declares the specs a translation unit exports to attn_add_kernels(... SPEC_SOURCES ...):
// each is checked at compile time, and the spec printer (attnc::spec_printer) lists them.
#define ATTN_EXPORT_SPECS(...)                                     \
  ATTN_DETAIL_CHECK_EACH(__VA_ARGS__)                              \
  extern "C" const ::attn::Spec *attn_exported_specs(int *count) { \
    static constexpr ::attn::Spec specs[] = {__VA_ARGS__};         \
    *count = static_cast<int>(sizeof(specs) / sizeof(specs[0]));   \
    return specs;                                                  \
  }
