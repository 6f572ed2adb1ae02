// spec_text.cpp: printing and parsing the one-line `key=value ...` text form of specs (masks:
// mask_text.cpp).
#include "attn/spec_text.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>

#include "attn/expr_text.h"
#include "attn/limits.h"
#include "attn/validate.h"
#include "mask_text.h"

namespace attn {
namespace {

// The order to_string prints them in.
enum class Key {
  name,
  d_model,
  heads,
  kv_heads,
  head_dim,
  head_dim_v,
  head_groups,
  form,
  qkv,
  proj_bias,
  mask,
  align,
  mask_block,
  dtype,
  scale,
  softcap,
  alibi,
  score_bias,
  lse,
  kv_cache,
  kv_dtype,
  rope,
  rope_theta,
  rope_dim,
  layout,
  probs,
  runtime_scale,
  cross,
  backward,
  dscore_bias,
  dropout,
  inputs,
  score_mod,
  mask_mod,
  block_mask
};
constexpr std::string_view key_names[] = {
    "name",     "d_model",     "heads",     "kv_heads",   "head_dim",  "head_dim_v",    "head_groups",
    "form",     "qkv",         "proj_bias", "mask",       "align",     "mask_block",    "dtype",
    "scale",    "softcap",     "alibi",     "score_bias", "lse",       "kv_cache",      "kv_dtype",
    "rope",     "rope_theta",  "rope_dim",  "layout",     "probs",     "runtime_scale", "cross",
    "backward", "dscore_bias", "dropout",   "inputs",     "score_mod", "mask_mod",      "block_mask"};
constexpr int key_count = sizeof(key_names) / sizeof(key_names[0]);
static_assert(key_count == static_cast<int>(Key::block_mask) + 1);

std::optional<Key> find_key(std::string_view k) {
  for (int i = 0; i < key_count; ++i)
    if (key_names[i] == k) return static_cast<Key>(i);
  return std::nullopt;
}

std::string valid_keys() {
  std::string out;
  for (int i = 0; i < key_count; ++i) out += (i ? ", " : "") + std::string(key_names[i]);
  return out;
}

std::string quoted_key(Key k) {
  return "key '" + std::string(key_names[static_cast<int>(k)]) + "': ";
}

std::string float_text(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(v));  // 9 digits round-trip a float
  return buffer;
}

const char *bool_text(bool v) {
  return v ? "true" : "false";
}

// One key=value applied to `spec`; returns the reason when the value is rejected.
class SpecBuilder {
 public:
  std::optional<std::string> apply(Key key, std::string_view value) {
    switch (key) {
      case Key::name:
        if (value.empty() || value.size() >= sizeof(spec.name))
          return bad(key, value, "is not a valid name (1 to 31 of letters, digits, '_' or '-')");
        spec = spec.named(std::string(value).c_str());
        return std::nullopt;
      case Key::d_model:
        return set_int(key, value, &Spec::with_d_model);
      case Key::heads:
        return set_int(key, value, &Spec::with_heads);
      case Key::kv_heads:
        return set_int(key, value, &Spec::with_kv_heads);
      case Key::head_dim:
        return set_int(key, value, &Spec::with_head_dim);
      case Key::head_dim_v:
        return set_int(key, value, &Spec::with_head_dim_v);
      case Key::head_groups:
        return set_head_groups(key, value);
      case Key::form:
        if (value != "core" && value != "block") return bad(key, value, "is not one of core|block");
        spec = value == "block" ? spec.block() : spec.core();
        return std::nullopt;
      case Key::qkv:
        if (value != "separate" && value != "fused") return bad(key, value, "is not one of separate|fused");
        spec = value == "fused" ? spec.fused_qkv() : spec.separate_qkv();
        return std::nullopt;
      case Key::proj_bias:
        return set_bool(key, value, &Spec::with_proj_bias);
      case Key::mask: {
        std::string error;
        const std::optional<Mask> m = detail::parse_mask_expression(value, error);
        if (!m) return quoted_key(key) + error;
        spec = spec.with_mask(*m);
        return std::nullopt;
      }
      case Key::align:
        if (value != "bottom_right" && value != "top_left")
          return bad(key, value, "is not one of bottom_right|top_left");
        spec = spec.with_align(value == "top_left" ? Align::top_left : Align::bottom_right);
        return std::nullopt;
      case Key::mask_block:
        return set_mask_block(key, value);
      case Key::dtype:
        if (value != "f32" && value != "f16" && value != "bf16")
          return bad(key, value, "is not one of f32|f16|bf16");
        spec = spec.with_dtype(value == "f16" ? DType::f16 : value == "bf16" ? DType::bf16 : DType::f32);
        return std::nullopt;
      case Key::scale:
        return set_float(key, value, &Spec::with_scale);
      case Key::softcap:
        if (value == "none") {
          spec.has_softcap = false;
          spec.softcap = 0.0f;
          return std::nullopt;
        }
        return set_float(key, value, &Spec::with_softcap);
      case Key::alibi:
        return set_bool(key, value, &Spec::with_alibi);
      case Key::score_bias:
        if (value != "none" && value != "tensor") return bad(key, value, "is not one of none|tensor");
        spec = spec.with_score_bias(value == "tensor");
        return std::nullopt;
      case Key::lse:
        return set_bool(key, value, &Spec::with_lse);
      case Key::kv_cache:
        return set_kv_cache(key, value);
      case Key::kv_dtype:
        if (value != "same" && value != "int8" && value != "fp8_e4m3")
          return bad(key, value, "is not one of same|int8|fp8_e4m3");
        spec = spec.with_kv_dtype(value == "int8"       ? KvDType::int8
                                  : value == "fp8_e4m3" ? KvDType::fp8_e4m3
                                                        : KvDType::same);
        return std::nullopt;
      case Key::rope:
        if (value != "none" && value != "neox" && value != "interleaved")
          return bad(key, value, "is not one of none|neox|interleaved");
        spec.rope = value == "neox" ? Rope::neox : value == "interleaved" ? Rope::interleaved : Rope::none;
        return std::nullopt;
      case Key::rope_theta: {
        float theta = 0.0f;
        if (std::optional<std::string> error = read_float(key, value, theta)) return error;
        if (!(theta > 0.0f)) return bad(key, value, "must be a number > 0");
        spec.rope_theta = theta;
        return std::nullopt;
      }
      case Key::rope_dim: {
        int32_t v = 0;
        if (std::optional<std::string> error = read_int(key, value, v)) return error;
        if (v <= 0) return bad(key, value, "must be > 0 (even, at most head_dim)");
        spec.rope_dim = v;
        return std::nullopt;
      }
      case Key::layout:
        if (value != "dense" && value != "varlen") return bad(key, value, "is not one of dense|varlen");
        spec = spec.with_layout(value == "varlen" ? Layout::varlen : Layout::dense);
        return std::nullopt;
      case Key::probs:
        return set_bool(key, value, &Spec::with_probs);
      case Key::runtime_scale:
        return set_bool(key, value, &Spec::with_runtime_scale);
      case Key::cross:
        return set_bool(key, value, &Spec::with_cross_attention);
      case Key::backward:
        return set_bool(key, value, &Spec::backward);
      case Key::dscore_bias:
        return set_bool(key, value, &Spec::with_score_bias_grad);
      case Key::dropout:
        if (value == "none") {
          spec.has_dropout = false;
          spec.dropout = 0.0f;
          return std::nullopt;
        }
        return set_float(key, value, &Spec::with_dropout);
      case Key::block_mask:
        if (value != "none" && value != "input" && value != "pass")
          return bad(key, value, "is not one of none|input|pass");
        spec = spec.with_block_mask(value == "input"  ? BlockMask::input
                                    : value == "pass" ? BlockMask::pass
                                                      : BlockMask::none);
        return std::nullopt;
      case Key::inputs: {
        std::string error;
        const std::optional<CapturedInputs> inputs = parse_inputs(value, error);
        if (!inputs) return quoted_key(key) + "\"" + std::string(value) + "\": " + error;
        spec.captured = *inputs;
        return std::nullopt;
      }
      case Key::score_mod:
      case Key::mask_mod:
        return set_expr(key, value);
    }
    return bad(key, value, "is not handled");
  }

  // The type check of score_mod / mask_mod, once every key (inputs= included) is read: the
  // message names the expression and the column of the node at fault.
  std::optional<std::string> check_exprs() const {
    for (const auto &[key, parsed] :
         {std::pair{Key::score_mod, &score_parse}, std::pair{Key::mask_mod, &mask_parse}}) {
      if (!parsed->ok) continue;
      const ExprCheck c = check_expr(parsed->tree, spec.captured, key == Key::mask_mod);
      if (!c.ok())
        return quoted_key(key) + "\"" + to_string(parsed->tree) + "\" " +
               expr_problem_text(parsed->tree, spec.captured, c, parsed->columns);
    }
    return std::nullopt;
  }

  Spec spec = attention();

 private:
  ExprParse score_parse, mask_parse;

  std::optional<std::string> set_expr(Key key, std::string_view value) {
    ExprParse parsed = parse_expr(value);
    if (!parsed.ok) return quoted_key(key) + "\"" + std::string(value) + "\" " + parsed.message;
    if (key == Key::score_mod)
      spec = spec.with_score_mod(parsed.tree);
    else
      spec = spec.with_mask_mod(parsed.tree);
    (key == Key::score_mod ? score_parse : mask_parse) = std::move(parsed);
    return std::nullopt;
  }

  static std::string bad(Key key, std::string_view value, const char *why) {
    return quoted_key(key) + "'" + std::string(value) + "' " + why;
  }

  static std::optional<std::string> read_int(Key key, std::string_view value, int32_t &v) {
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc::result_out_of_range) return bad(key, value, "is out of range (must fit int32)");
    if (ec != std::errc() || ptr != value.data() + value.size()) return bad(key, value, "is not an integer");
    return std::nullopt;
  }

  std::optional<std::string> set_int(Key key, std::string_view value, Spec (Spec::*setter)(int32_t) const) {
    int32_t v = 0;
    if (std::optional<std::string> error = read_int(key, value, v)) return error;
    spec = (spec.*setter)(v);
    return std::nullopt;
  }

  // "4x128+8x64/2": groups of HEADSxHEAD_DIM, each with /KV_HEADS for GQA within the group.
  std::optional<std::string> set_head_groups(Key key, std::string_view value) {
    HeadGroup groups[max_head_groups]{};
    int count = 0;
    size_t pos = 0;
    while (true) {
      const size_t plus = value.find('+', pos);
      const std::string_view item = value.substr(pos, plus == std::string_view::npos ? plus : plus - pos);
      if (count == max_head_groups)
        return bad(key, value, ("has more than " + std::to_string(max_head_groups) + " groups").c_str());
      if (std::optional<std::string> error = read_group(key, value, item, groups[count])) return error;
      ++count;
      if (plus == std::string_view::npos) break;
      pos = plus + 1;
    }
    Spec s = spec;
    s.group_count = count;
    for (int g = 0; g < max_head_groups; ++g) s.head_groups[g] = groups[g];
    spec = s;
    return std::nullopt;
  }

  // One HEADSxHEAD_DIM[/KV_HEADS] of a head_groups value.
  static std::optional<std::string> read_group(Key key, std::string_view value, std::string_view item,
                                               HeadGroup &group) {
    const size_t x = item.find('x');
    const size_t slash = item.find('/');
    if (x == std::string_view::npos || (slash != std::string_view::npos && slash < x))
      return bad(key, value,
                 ("has a group '" + std::string(item) +
                  "' that is not HEADSxHEAD_DIM or HEADSxHEAD_DIM/KV_HEADS (e.g. 4x128+8x64/2)")
                     .c_str());
    const std::string_view dim_text =
        item.substr(x + 1, slash == std::string_view::npos ? slash : slash - x - 1);
    if (std::optional<std::string> error = read_int(key, item.substr(0, x), group.heads)) return error;
    if (std::optional<std::string> error = read_int(key, dim_text, group.head_dim)) return error;
    if (slash != std::string_view::npos)
      if (std::optional<std::string> error = read_int(key, item.substr(slash + 1), group.kv_heads))
        return error;
    if (slash != std::string_view::npos && group.kv_heads == 0)
      return bad(key, value,
                 ("has a group '" + std::string(item) + "' with 0 kv heads (must be > 0)").c_str());
    return std::nullopt;
  }

  // 0 is how to_string writes "unset" (per element), so the text accepts it although
  // with_mask_block(0) is an error in the DSL.
  std::optional<std::string> set_mask_block(Key key, std::string_view value) {
    int32_t v = 0;
    if (std::optional<std::string> error = read_int(key, value, v)) return error;
    if (v < 0) return bad(key, value, "must be 0 (per element) or a block size > 0");
    if (v == 0) {
      spec.mask_block = 0;
      return std::nullopt;
    }
    spec = spec.with_mask_block(v);
    return std::nullopt;
  }

  static std::optional<std::string> read_float(Key key, std::string_view value, float &v) {
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc::result_out_of_range) return bad(key, value, "is out of range for a float");
    if (ec != std::errc() || ptr != value.data() + value.size()) return bad(key, value, "is not a number");
    return std::nullopt;
  }

  std::optional<std::string> set_float(Key key, std::string_view value, Spec (Spec::*setter)(float) const) {
    float v = 0.0f;
    if (std::optional<std::string> error = read_float(key, value, v)) return error;
    spec = (spec.*setter)(v);
    return std::nullopt;
  }

  // none, contiguous or paged(P).
  std::optional<std::string> set_kv_cache(Key key, std::string_view value) {
    if (value == "none" || value == "contiguous") {
      spec = spec.with_kv_cache(value == "none" ? KvCache::none : KvCache::contiguous);
      return std::nullopt;
    }
    constexpr std::string_view open = "paged(";
    if (!value.starts_with(open) || !value.ends_with(")"))
      return bad(key, value, "is not one of none|contiguous|paged(P)");
    int32_t page = 0;
    const std::string_view inner = value.substr(open.size(), value.size() - open.size() - 1);
    const auto [ptr, ec] = std::from_chars(inner.data(), inner.data() + inner.size(), page);
    const std::string limit = std::to_string(limits::max_positions);
    if (ec == std::errc::result_out_of_range)
      return bad(
          key, value,
          ("has a page size P that is too large: P must be at most " + limit + " tokens, e.g. paged(16)")
              .c_str());
    if (ec != std::errc() || ptr != inner.data() + inner.size())
      return bad(key, value,
                 ("has a page size P ('" + std::string(inner) +
                  "') that is not a decimal integer: give P in tokens, e.g. paged(16)")
                     .c_str());
    if (page <= 0)
      return bad(key, value,
                 ("has a page size P of " + std::to_string(page) + ": P must be > 0 and at most " + limit +
                  ", e.g. paged(16)")
                     .c_str());
    spec = spec.with_kv_cache(KvCache::paged, page);
    return std::nullopt;
  }

  std::optional<std::string> set_bool(Key key, std::string_view value, Spec (Spec::*setter)(bool) const) {
    if (value != "true" && value != "false") return bad(key, value, "is not one of true|false");
    spec = (spec.*setter)(value == "true");
    return std::nullopt;
  }
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// "4x128+8x64/2": a group's kv heads only where they differ from its heads.
std::string head_groups_text(const Spec &resolved) {
  std::string out;
  for (int g = 0; g < resolved.group_count; ++g) {
    const HeadGroup &group = resolved.head_groups[g];
    out += (g ? "+" : "") + std::to_string(group.heads) + "x" + std::to_string(group.head_dim);
    if (group.kv_heads != group.heads) out += "/" + std::to_string(group.kv_heads);
  }
  return out;
}

}  // namespace

std::string to_string(const Spec &spec) {
  const Spec s = resolve(spec);
  const std::string name(s.name, strnlen(s.name, sizeof(s.name)));
  std::string out;
  if (!name.empty()) out += "name=" + name + " ";
  out += "d_model=" + std::to_string(s.d_model);
  if (s.group_count > 0) {
    // The groups give heads and dims; the scale is per group unless the spec gives one.
    out += " head_groups=" + head_groups_text(s);
  } else {
    out += " heads=" + std::to_string(s.heads);
    out += " kv_heads=" + std::to_string(s.kv_heads);
    out += " head_dim=" + std::to_string(s.head_dim);
    out += " head_dim_v=" + std::to_string(s.head_dim_v);
  }
  out += std::string(" form=") + (s.form == Form::block ? "block" : "core");
  out += std::string(" qkv=") + (s.qkv == Qkv::fused ? "fused" : "separate");
  out += std::string(" proj_bias=") + bool_text(s.proj_bias);
  out += " mask=" + to_string(s.mask);
  // Printed only when not the default, so that older specs keep their text (and manifests).
  if (s.align == Align::top_left) out += " align=top_left";
  out += " mask_block=" + std::to_string(s.mask_block);
  out += std::string(" dtype=") + dtype_name(s.dtype);
  if (s.group_count == 0 || s.has_scale) out += " scale=" + float_text(s.scale);
  out += " softcap=" + (s.has_softcap ? float_text(s.softcap) : std::string("none"));
  out += std::string(" alibi=") + bool_text(s.alibi);
  out += std::string(" score_bias=") + (s.score_bias ? "tensor" : "none");
  out += std::string(" lse=") + bool_text(s.lse);
  // Issue 24's keys, printed only when set (older specs keep their text).
  if (s.kv_cache == KvCache::contiguous) out += " kv_cache=contiguous";
  if (s.kv_cache == KvCache::paged) out += " kv_cache=paged(" + std::to_string(s.page_size) + ")";
  if (s.kv_dtype != KvDType::same) out += std::string(" kv_dtype=") + kv_dtype_name(s.kv_dtype);
  if (s.rope != Rope::none) {
    out += std::string(" rope=") + (s.rope == Rope::neox ? "neox" : "interleaved");
    out += " rope_theta=" + float_text(s.rope_theta) + " rope_dim=" + std::to_string(s.rope_dim);
  }
  if (s.layout == Layout::varlen) out += " layout=varlen";
  // Printed only when on, so that older specs keep their text (and manifests).
  if (s.probs) out += " probs=true";
  // Printed only when set, as align: older specs keep their text.
  if (s.runtime_scale) out += " runtime_scale=true";
  if (s.cross_attention) out += " cross=true";
  if (s.backward_pass) out += " backward=true";
  if (s.score_bias_grad) out += " dscore_bias=true";
  if (s.has_dropout) out += " dropout=" + float_text(s.dropout);
  // Issue 34's keys, printed only when set.
  if (s.captured.count > 0) out += " inputs=" + to_string(s.captured);
  if (!s.score_mod.empty()) out += " score_mod=\"" + to_string(s.score_mod) + "\"";
  if (!s.mask_mod.empty()) out += " mask_mod=\"" + to_string(s.mask_mod) + "\"";
  if (s.block_mask != BlockMask::none)
    out += std::string(" block_mask=") + (s.block_mask == BlockMask::input ? "input" : "pass");
  return out;
}

ParseResult parse_spec(std::string_view text) {
  SpecBuilder builder;
  if (static_cast<int64_t>(text.size()) > limits::max_text_bytes)
    return {false, builder.spec,
            "spec text is " + std::to_string(text.size()) + " bytes long; at most " +
                std::to_string(limits::max_text_bytes)};
  std::optional<std::string_view> seen[key_count];
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    if (pos >= text.size()) break;
    size_t end = pos;
    bool quoted = false;  // key="a value with spaces" (score_mod, mask_mod)
    while (end < text.size() && (quoted || !is_space(text[end]))) quoted ^= text[end++] == '"';
    const std::string_view token = text.substr(pos, end - pos);
    pos = end;
    if (quoted)
      return {false, builder.spec, "unterminated quote in '" + std::string(token) + "' (key=\"...\")"};

    const size_t eq = token.find('=');
    if (eq == std::string_view::npos)
      return {false, builder.spec, "expected key=value, got '" + std::string(token) + "' (no '=')"};
    const std::string_view key_text = token.substr(0, eq);
    std::string_view value = token.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    const std::optional<Key> key = find_key(key_text);
    if (!key)
      return {false, builder.spec,
              "unknown key '" + std::string(key_text) + "' (valid keys: " + valid_keys() + ")"};
    std::optional<std::string_view> &first = seen[static_cast<int>(*key)];
    if (first)
      return {false, builder.spec,
              quoted_key(*key) + "given twice ('" + std::string(*first) + "', then '" + std::string(value) +
                  "')"};
    first = value;
    if (std::optional<std::string> error = builder.apply(*key, value)) return {false, builder.spec, *error};
  }
  if (std::optional<std::string> error = builder.check_exprs()) return {false, builder.spec, *error};
  const SpecCheck check = check_spec(builder.spec);
  if (!check.ok()) return {false, builder.spec, describe(builder.spec, check)};
  return {true, builder.spec, ""};
}

}  // namespace attn
