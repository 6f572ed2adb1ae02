// attn/validate.h: spec defaults and validation, usable in constant expressions and at run time.
#pragma once

#include <cstdint>
#include <string>

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

constexpr SpecCheck check_spec(const Spec &s) {
  using P = SpecProblem;
  if (s.bad_value_field != 0) return {static_cast<P>(s.bad_value_field), s.bad_value, 0};
  for (int i = 0; i < 32 && s.name[i] != '\0'; ++i)
    if (!detail::is_name_char(s.name[i])) return {P::name_invalid, s.name[i], i};
  if (s.d_model < 0) return {P::d_model_not_positive, s.d_model, 0};
  if (s.heads <= 0) return {s.heads == 0 ? P::heads_missing : P::heads_not_positive, s.heads, 0};
  if (s.kv_heads < 0) return {P::kv_heads_not_positive, s.kv_heads, 0};
  if (s.head_dim < 0) return {P::head_dim_not_positive, s.head_dim, 0};
  if (s.head_dim_v < 0) return {P::head_dim_v_not_positive, s.head_dim_v, 0};
  if (s.mask_block < 0) return {P::mask_block_not_positive, s.mask_block, 0};
  if (s.d_model == 0 && (s.head_dim == 0 || s.form == Form::block)) return {P::width_missing, 0, 0};
  if (s.d_model > 0 && s.d_model % s.heads != 0) return {P::heads_not_dividing_d_model, s.heads, s.d_model};
  const int32_t kvh = s.kv_heads == 0 ? s.heads : s.kv_heads;
  if (s.heads % kvh != 0) return {P::kv_heads_not_dividing_heads, kvh, s.heads};
  if (s.has_scale && !(s.scale > 0.0f && s.scale < 3.0e38f)) return {P::scale_not_positive, 0, 0};
  if (s.has_softcap && !(s.softcap > 0.0f && s.softcap < 3.0e38f)) return {P::softcap_not_positive, 0, 0};
  switch (s.mask.bad_term) {
    case MaskProblem::none: break;
    case MaskProblem::window_bound: return {P::window_bound_invalid, s.mask.bad_value, 0};
    case MaskProblem::too_many_terms: return {P::mask_too_large, s.mask.bad_value, Mask::capacity};
    case MaskProblem::global_tokens: return {P::global_tokens_not_positive, s.mask.bad_value, 0};
    case MaskProblem::random_block: return {P::random_block_not_positive, s.mask.bad_value, 0};
    case MaskProblem::random_count: return {P::random_count_not_positive, s.mask.bad_value, 0};
  }
  return {};
}

// The spec with every default filled in. Only meaningful for a spec that passes check_spec.
constexpr Spec resolve(Spec s) {
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.head_dim == 0 && s.heads > 0) s.head_dim = s.d_model / s.heads;
  if (s.d_model == 0) s.d_model = s.heads * s.head_dim;
  if (s.head_dim_v == 0) s.head_dim_v = s.head_dim;
  if (!s.has_scale && s.head_dim > 0) s.scale = 1.0f / detail::sqrt_newton(static_cast<float>(s.head_dim));
  return s;
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
