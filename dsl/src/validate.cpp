// validate.cpp: the run-time wording of check_spec's findings, one message per SpecProblem.
#include "attn/validate.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "attn/expr_text.h"
#include "mask_text.h"

namespace attn {
namespace {

std::string spec_label(const Spec &s) {
  const std::string name(s.name, strnlen(s.name, sizeof(s.name)));
  return "spec '" + (name.empty() ? std::string("<unnamed>") : name) + "': ";
}

std::string number(int32_t v) {
  return std::to_string(v);
}

std::string float_text(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(v));
  return buffer;
}

// A name character as the user would type it: 'x', or '\xNN' when it is not printable.
std::string char_text(int32_t code) {
  const auto c = static_cast<unsigned char>(code);
  if (c >= 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "'\\x%02x'", c);
  return buffer;
}

// "rope_theta must be a finite number > 0 and below 3e+38 (got 3.00000001e+38)"
std::string finite_positive(const char *field, float got) {
  char limit[16];
  std::snprintf(limit, sizeof(limit), "%g", static_cast<double>(limits::max_float_value));
  return std::string(field) + " must be a finite number > 0 and below " + limit + " (got " + float_text(got) +
         ")";
}

std::string must_be_positive(const char *field, int32_t got) {
  return std::string(field) + " must be > 0 (got " + number(got) + ")";
}

// "heads (5000) must be at most 4096"; `from` says where a derived value came from.
std::string at_most(const char *field, int32_t got, int32_t limit, const char *from = "") {
  return std::string(field) + " (" + number(got) + from + ") must be at most " + number(limit);
}

// "block form: w_qkv [49152, 16384] would hold 805306368 elements; at most 536870911 (2 GiB of f32)"
std::string weight_too_large(const Spec &s) {
  const WeightShape w = largest_weight(resolve(s));
  return "block form: " + std::string(w.name) + " [" + std::to_string(w.rows) + ", " +
         std::to_string(w.columns) + "] would hold " + std::to_string(w.elements()) + " elements; at most " +
         std::to_string(limits::max_weight_elements) + " (2 GiB of f32)";
}

std::string malformed_mask(const SpecCheck &c) {
  if (c.b == 1)
    return "mask node count (" + number(c.a) + ") must be between 0 and " + number(Mask::capacity);
  return "mask node " + number(c.a) +
         " is malformed (an operator's operands must be earlier nodes, a term one of the known terms)";
}

std::string width_missing(const Spec &s) {
  if (s.form == Form::block)
    return "d_model must be set for the block form (got 0); head_dim alone is enough only for the core form";
  return "d_model or head_dim must be set (both are 0)";
}

// "head group 1 (8x64/3)": the group's text form.
std::string group_text(const Spec &s, int32_t g) {
  const HeadGroup &group = s.head_groups[g];
  std::string text = "head group " + number(g) + " (" + number(group.heads) + "x" + number(group.head_dim);
  if (group.kv_heads != 0) text += "/" + number(group.kv_heads);
  return text + ")";
}

std::string head_group_text(const Spec &s, const SpecCheck &c) {
  using P = SpecProblem;
  switch (c.problem) {
    case P::head_group_count_invalid:
      return "head_groups must hold 1 to " + number(c.b) + " groups (got " + number(c.a) + ")";
    case P::head_groups_in_core_form:
      return "head_groups needs the block form (form=block); the core form takes q, k and v of one head size";
    case P::head_group_heads_not_positive:
      return group_text(s, c.a) + ": heads must be > 0 (got " + number(c.b) + ")";
    case P::head_group_head_dim_not_positive:
      return group_text(s, c.a) + ": head_dim must be > 0 (got " + number(c.b) + ")";
    case P::head_group_kv_heads_not_positive:
      return group_text(s, c.a) + ": kv heads must be > 0 (got " + number(c.b) + ")";
    case P::head_group_kv_heads_not_dividing_heads:
      return group_text(s, c.a) + ": kv heads (" + number(c.b) + ") must divide its heads (" +
             number(s.head_groups[c.a].heads) + ")";
    case P::head_groups_heads_mismatch:
      return "heads (" + number(c.a) + ") must be left unset beside head_groups, or be their sum (" +
             number(c.b) + ")";
    case P::head_groups_kv_heads_mismatch:
      return "kv_heads (" + number(c.a) + ") must be left unset beside head_groups, or be their sum (" +
             number(c.b) + ")";
    case P::head_groups_head_dim_mismatch:
      return "head_dim (" + number(c.a) +
             ") must be left unset beside head_groups, or be the widest group's (" + number(c.b) + ")";
    case P::head_groups_head_dim_v_mismatch:
      return "head_dim_v (" + number(c.a) +
             ") must be left unset beside head_groups, or be the widest group's (" + number(c.b) + ")";
    default:
      return "";
  }
}

const char *sequence_feature(int32_t which) {
  return which == 1 ? "kv_cache" : "layout=varlen";
}

const char *sequence_input(int32_t which) {
  switch (which) {
    case 1:
      return "mask term padding (key_lengths [B])";
    case 2:
      return "mask term prefix (prefix_lengths [B])";
    case 3:
      return "mask term document (segment ids [B, S])";
    case 4:
      return "mask term tensor ([B, H, Sq, Sk])";
    default:
      return "score_bias=tensor ([B, H, Sq, Sk])";
  }
}

std::string problem_text(const Spec &s, const SpecCheck &c) {
  using P = SpecProblem;
  switch (c.problem) {
    case P::none:
      return "";
    case P::d_model_not_positive:
      return must_be_positive("d_model", c.a);
    case P::heads_not_positive:
      return must_be_positive("heads", c.a);
    case P::kv_heads_not_positive:
      return must_be_positive("kv_heads", c.a);
    case P::head_dim_not_positive:
      return must_be_positive("head_dim", c.a);
    case P::head_dim_v_not_positive:
      return must_be_positive("head_dim_v", c.a);
    case P::heads_missing:
      return "heads must be set to a value > 0 (got 0, which means unset)";
    case P::width_missing:
      return width_missing(s);
    case P::heads_not_dividing_d_model:
      return "heads (" + number(c.a) + ") must divide d_model (" + number(c.b) + ")";
    case P::kv_heads_not_dividing_heads:
      return "kv_heads (" + number(c.a) + ") must divide heads (" + number(c.b) + ")";
    case P::scale_not_positive:
      return finite_positive("scale", s.scale);
    case P::softcap_not_positive:
      return finite_positive("softcap", s.softcap);
    case P::mask_block_not_positive:
      return must_be_positive("mask_block", c.a);
    case P::window_bound_invalid:
      return detail::mask_problem_text(MaskProblem::window_bound, c.a);
    case P::mask_too_large:
      return "mask has " + detail::mask_problem_text(MaskProblem::too_many_terms, c.a);
    case P::global_tokens_not_positive:
      return detail::mask_problem_text(MaskProblem::global_tokens, c.a);
    case P::random_block_not_positive:
      return detail::mask_problem_text(MaskProblem::random_block, c.a);
    case P::random_count_not_positive:
      return detail::mask_problem_text(MaskProblem::random_count, c.a);
    case P::heads_too_many:
      return at_most("heads", c.a, c.b);
    case P::kv_heads_too_many:
      return at_most("kv_heads", c.a, c.b);
    case P::head_dim_too_large:
      return at_most("head_dim", c.a, c.b, s.head_dim > 0 || s.group_count > 0 ? "" : ", d_model / heads");
    case P::head_dim_v_too_large:
      return at_most("head_dim_v", c.a, c.b, s.head_dim_v > 0 ? "" : ", the same as head_dim");
    case P::d_model_too_large:
      return at_most("d_model", c.a, c.b);
    case P::query_width_too_large:
      return at_most("heads * head_dim", c.a, c.b);
    case P::value_width_too_large:
      return at_most("heads * head_dim_v", c.a, c.b);
    case P::weight_too_large:
      return weight_too_large(s);
    case P::mask_block_too_large:
      return at_most("mask_block", c.a, c.b);
    case P::window_bound_too_large:
      return detail::mask_problem_text(MaskProblem::window_bound_too_large, c.a);
    case P::global_tokens_too_large:
      return detail::mask_problem_text(MaskProblem::global_tokens_too_large, c.a);
    case P::random_block_too_large:
      return detail::mask_problem_text(MaskProblem::random_block_too_large, c.a);
    case P::random_count_too_large:
      return detail::mask_problem_text(MaskProblem::random_count_too_large, c.a);
    case P::random_draws_too_many:
      return "random terms draw " + number(c.a) + " key blocks in all (the sum of their N); at most " +
             number(c.b);
    case P::mask_malformed:
      return malformed_mask(c);
    case P::rope_dim_invalid:
      return "rope_dim (" + number(c.a) + ") must be even, > 0 and at most head_dim (" + number(c.b) + ")";
    case P::rope_theta_not_positive:
      return finite_positive("rope_theta", s.rope_theta);
    case P::page_size_invalid:
      return "kv_cache=paged(P): the page size P (" + number(c.a) + ") must be > 0 and at most " +
             number(c.b);
    case P::sequence_needs_core_form:
      return std::string(sequence_feature(c.a)) + " needs form=core (the block form projects x itself)";
    case P::varlen_with_kv_cache:
      return "layout=varlen and kv_cache do not combine (give the cache's sequences a batch dim)";
    case P::sequence_input_unsupported:
      return std::string(sequence_feature(c.a)) + " does not take " + sequence_input(c.b) +
             ": its tensor has no per-sequence meaning there; use window/causal/global/random, softcap or "
             "alibi";
    case P::rope_options_without_rope:
      return "rope_theta and rope_dim need rope=neox or rope=interleaved (rope is none)";
    case P::probs_with_sequence:
      return std::string("probs=true does not combine with ") +
             (c.a == 1   ? "kv_cache"
              : c.a == 2 ? "layout=varlen"
                         : "head_groups") +
             ": probs [B, H, Sq, Sk] is one matrix per batch element of one head size, with no Sk per " +
             (c.a == 3 ? "head group" : "sequence");
    case P::backward_unsupported:
      return std::string("backward=true does not take ") +
             (c.a == 1   ? "form=block: the backward kernel is the core form's (q, k, v given)"
              : c.a == 2 ? "kv_cache: a cache is for inference"
              : c.a == 4 ? "probs=true: it recomputes the probabilities from q, k and lse itself"
                         : "lse=true: lse is an input of the backward kernel (the forward's, with lse=true)");
    case P::dropout_invalid: {
      char text[32];
      std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(s.dropout));
      return std::string("dropout (") + text + ") must be a probability in [0, 1)";
    }
    case P::dropout_unsupported:
      return std::string("dropout does not take ") +
             (c.a == 1 ? "kv_cache: a cache is for inference, where dropout is off"
                       : "layout=varlen yet: pad the sequences to a batch (key_lengths) for now");
    case P::dscore_bias_without_backward:
      return std::string("dscore_bias=true needs ") +
             (c.a == 1 ? "backward=true: it is an output of the backward kernel"
                       : "score_bias=tensor: it is the gradient by that tensor");
    case P::kv_dtype_needs_kv_cache:
      return std::string("kv_dtype=") + kv_dtype_name(static_cast<KvDType>(c.a)) +
             " needs kv_cache=contiguous or kv_cache=paged(P): only a cache holds codes and scales" +
             (c.b == 1 ? " (layout=varlen takes k and v whole, in dtype)" : " (kv_cache is none)");
    case P::page_too_large:
      return "kv_cache=paged(" + number(c.a) +
             "): a page holds P * kv_heads * max(head_dim, head_dim_v) = " + number(c.a) + " * " +
             number(c.b) + " = " + std::to_string(int64_t{c.a} * c.b) + " elements, more than the " +
             std::to_string(limits::max_tensor_elements) +
             " a cache tensor may hold; use P <= " + std::to_string(limits::max_tensor_elements / c.b);
    case P::cross_attention_needs_block_form:
      return "cross=true (with_cross_attention) needs the block form: a core spec takes k and v as inputs "
             "already, of their own length Sk";
    case P::name_invalid:
      return "name character " + char_text(c.a) + " at position " + number(c.b) +
             " is not allowed (use letters, digits, '_' or '-')";
    case P::score_mod_invalid:
    case P::mask_mod_invalid: {
      const bool mask = c.problem == P::mask_mod_invalid;
      const ExprTree &e = mask ? s.mask_mod : s.score_mod;
      return std::string(mask ? "mask_mod" : "score_mod") + " \"" + to_string(e) + "\" " +
             expr_problem_text(e, s.captured, check_expr(e, s.captured, mask));
    }
    case P::captured_input_invalid:
      return "inputs: " + input_problem_text(s.captured, InputCheck{static_cast<InputProblem>(c.a), c.b});
    case P::mods_unsupported:
      return std::string("score_mod, mask_mod and inputs do not combine with ") +
             (c.a == 1   ? "kv_cache"
              : c.a == 2 ? "layout=varlen"
              : c.a == 3 ? "backward=true"
                         : "head_groups") +
             " yet: use the dense core or block form";
    case P::block_mask_unsupported:
      return std::string("block_mask=") + (c.a == 2 ? "pass" : "input") + " needs " +
             (c.b == 1 ? "a mask_mod: it classifies the mask_mod's blocks"
              : c.b == 2
                  ? "the core form (form=core): the block form has no block-mask input yet"
                  : "positions from Sk, not mask=padding's key_lengths: give the lengths to the mask_mod "
                    "as a captured tensor instead (inputs=len:i32[B] mask_mod=\"k < len[b] && ...\")");
    case P::head_group_count_invalid:
    case P::head_groups_in_core_form:
    case P::head_group_heads_not_positive:
    case P::head_group_head_dim_not_positive:
    case P::head_group_kv_heads_not_positive:
    case P::head_group_kv_heads_not_dividing_heads:
    case P::head_groups_heads_mismatch:
    case P::head_groups_kv_heads_mismatch:
    case P::head_groups_head_dim_mismatch:
    case P::head_groups_head_dim_v_mismatch:
      return head_group_text(s, c);
  }
  return "unknown problem code " + number(static_cast<int32_t>(c.problem));
}

}  // namespace

std::string describe(const Spec &s, const SpecCheck &c) {
  if (c.ok()) return "";
  return spec_label(s) + problem_text(s, c);
}

Validation validate(const Spec &s) {
  const SpecCheck c = check_spec(s);
  return {c.ok(), describe(s, c)};
}

}  // namespace attn
