// spec_text.cpp: printing and parsing the one-line `key=value ...` text form of specs and masks.
#include "attn/spec_text.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>

#include "attn/validate.h"

namespace attn {
namespace {

// ---- masks: printing ------------------------------------------------------------------------

// Binding strength: terms bind tightest, then &, then |.
int binding(MaskOp op) {
  return op == MaskOp::window ? 3 : op == MaskOp::both ? 2 : 1;
}

void print_mask_node(const Mask &m, int index, std::string &out);

// Parses back left-associatively, so a right operand of the same operator keeps its parentheses:
// the tree, not only the set of kept keys, survives the round trip.
void print_operand(const Mask &m, int parent, int child, bool is_rhs, std::string &out) {
  if (child < 0 || child >= parent) {
    out += "<bad-node>";
    return;
  }
  const int outer = binding(m.nodes[parent].op);
  const int inner = binding(m.nodes[child].op);
  const bool parens = inner < outer || (is_rhs && inner == outer);
  if (parens) out += '(';
  print_mask_node(m, child, out);
  if (parens) out += ')';
}

void print_mask_node(const Mask &m, int index, std::string &out) {
  const MaskNode &n = m.nodes[index];
  if (n.op == MaskOp::window) {
    if (n.left == -1 && n.right == 0) {
      out += "causal";
    } else {
      out += "window(" + std::to_string(n.left) + "," + std::to_string(n.right) + ")";
    }
    return;
  }
  print_operand(m, index, n.lhs, false, out);
  out += n.op == MaskOp::both ? '&' : '|';
  print_operand(m, index, n.rhs, true, out);
}

// ---- masks: parsing -------------------------------------------------------------------------

// expr := conj ('|' conj)*    conj := primary ('&' primary)*
// primary := '(' expr ')' | 'none' | 'causal' | 'window' '(' int ',' int ')'
class MaskParser {
 public:
  explicit MaskParser(std::string_view text) : text_(text) {}

  // The mask, or nullopt with error() saying why (without a "mask:" prefix).
  std::optional<Mask> parse() {
    if (text_.empty()) return fail("empty mask (write 'none' for no mask)");
    std::optional<Mask> m = expr();
    if (m && pos_ < text_.size()) return fail_here("unexpected '" + std::string(1, text_[pos_]) + "'");
    return m;
  }
  const std::string &error() const { return error_; }

 private:
  std::optional<Mask> expr() {
    std::optional<Mask> m = conj();
    while (m && eat('|')) {
      std::optional<Mask> rhs = conj();
      if (!rhs) return std::nullopt;
      m = *m | *rhs;
    }
    return m;
  }

  std::optional<Mask> conj() {
    std::optional<Mask> m = primary();
    while (m && eat('&')) {
      std::optional<Mask> rhs = primary();
      if (!rhs) return std::nullopt;
      m = *m & *rhs;
    }
    return m;
  }

  std::optional<Mask> primary() {
    if (eat('(')) {
      std::optional<Mask> m = expr();
      if (m && !eat(')')) return fail_here("expected ')'");
      return m;
    }
    const std::string_view word = identifier();
    if (word.empty()) {
      if (pos_ >= text_.size()) return fail_here("expected a term");
      return fail_here("expected a term, got '" + std::string(1, text_[pos_]) + "'");
    }
    if (word == "none") return no_mask();
    if (word == "causal") return causal();
    if (word != "window")
      return fail("unknown term '" + std::string(word) + "' (supported: none, causal, window(L,R))");
    if (!eat('(')) return fail_here("expected '(' after 'window'");
    const std::optional<int32_t> left = bound(',');
    if (!left) return std::nullopt;
    const std::optional<int32_t> right = bound(')');
    if (!right) return std::nullopt;
    return window(*left, *right);
  }

  // An integer window bound followed by `terminator`, which is consumed.
  std::optional<int32_t> bound(char terminator) {
    const size_t start = pos_;
    while (pos_ < text_.size() && std::string_view(",()&|").find(text_[pos_]) == std::string_view::npos)
      ++pos_;
    const std::string_view digits = text_.substr(start, pos_ - start);
    int32_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range)
      return fail("window bound '" + std::string(digits) + "' is out of range (must fit int32)");
    if (ec != std::errc() || ptr != digits.data() + digits.size())
      return fail("window bound '" + std::string(digits) + "' is not an integer");
    if (!eat(terminator)) return fail_here(std::string("expected '") + terminator + "'");
    return value;
  }

  std::string_view identifier() {
    const size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    return text_.substr(start, pos_ - start);
  }

  bool eat(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  std::nullopt_t fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return std::nullopt;
  }
  std::nullopt_t fail_here(const std::string &what) {
    return fail(what + " at offset " + std::to_string(pos_) + " in '" + std::string(text_) + "'");
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

// ---- specs ----------------------------------------------------------------------------------

enum class Key {
  name,
  d_model,
  heads,
  kv_heads,
  head_dim,
  head_dim_v,
  form,
  qkv,
  proj_bias,
  mask,
  dtype,
  scale
};
constexpr std::string_view key_names[] = {"name",      "d_model",    "heads", "kv_heads",
                                          "head_dim",  "head_dim_v", "form",  "qkv",
                                          "proj_bias", "mask",       "dtype", "scale"};
constexpr int key_count = sizeof(key_names) / sizeof(key_names[0]);

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

std::string scale_text(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(v));  // 9 digits round-trip a float
  return buffer;
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
      case Key::form:
        if (value != "core" && value != "block") return bad(key, value, "is not one of core|block");
        spec = value == "block" ? spec.block() : spec.core();
        return std::nullopt;
      case Key::qkv:
        if (value != "separate" && value != "fused") return bad(key, value, "is not one of separate|fused");
        spec = value == "fused" ? spec.fused_qkv() : spec.separate_qkv();
        return std::nullopt;
      case Key::proj_bias:
        if (value != "true" && value != "false") return bad(key, value, "is not one of true|false");
        spec = spec.with_proj_bias(value == "true");
        return std::nullopt;
      case Key::mask: {
        MaskParser parser(value);
        const std::optional<Mask> m = parser.parse();
        if (!m) return quoted_key(key) + parser.error();
        spec = spec.with_mask(*m);
        return std::nullopt;
      }
      case Key::dtype:
        if (value != "f32") return bad(key, value, "is not one of f32");
        spec = spec.with_dtype(DType::f32);
        return std::nullopt;
      case Key::scale:
        return set_scale(key, value);
    }
    return bad(key, value, "is not handled");
  }

  Spec spec = attention();

 private:
  static std::string bad(Key key, std::string_view value, const char *why) {
    return quoted_key(key) + "'" + std::string(value) + "' " + why;
  }

  std::optional<std::string> set_int(Key key, std::string_view value, Spec (Spec::*setter)(int32_t) const) {
    int32_t v = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc::result_out_of_range) return bad(key, value, "is out of range (must fit int32)");
    if (ec != std::errc() || ptr != value.data() + value.size()) return bad(key, value, "is not an integer");
    spec = (spec.*setter)(v);
    return std::nullopt;
  }

  std::optional<std::string> set_scale(Key key, std::string_view value) {
    float v = 0.0f;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc::result_out_of_range) return bad(key, value, "is out of range for a float");
    if (ec != std::errc() || ptr != value.data() + value.size()) return bad(key, value, "is not a number");
    spec = spec.with_scale(v);
    return std::nullopt;
  }
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

std::string to_string(const Mask &mask) {
  if (mask.empty()) return "none";
  std::string out;
  print_mask_node(mask, mask.root(), out);
  return out;
}

std::string to_string(const Spec &spec) {
  const Spec s = resolve(spec);
  const std::string name(s.name, strnlen(s.name, sizeof(s.name)));
  std::string out;
  if (!name.empty()) out += "name=" + name + " ";
  out += "d_model=" + std::to_string(s.d_model);
  out += " heads=" + std::to_string(s.heads);
  out += " kv_heads=" + std::to_string(s.kv_heads);
  out += " head_dim=" + std::to_string(s.head_dim);
  out += " head_dim_v=" + std::to_string(s.head_dim_v);
  out += std::string(" form=") + (s.form == Form::block ? "block" : "core");
  out += std::string(" qkv=") + (s.qkv == Qkv::fused ? "fused" : "separate");
  out += std::string(" proj_bias=") + (s.proj_bias ? "true" : "false");
  out += " mask=" + to_string(s.mask);
  out += " dtype=f32";
  out += " scale=" + scale_text(s.scale);
  return out;
}

MaskParseResult parse_mask(std::string_view text) {
  MaskParser parser(text);
  const std::optional<Mask> m = parser.parse();
  if (!m) return {false, Mask{}, "mask: " + parser.error()};
  if (m->bad_term == 1)
    return {false, *m,
            "mask: window bound (" + std::to_string(m->bad_value) + ") must be >= -1 (-1 means unbounded)"};
  if (m->bad_term == 2)
    return {false, *m,
            "mask: too many terms (" + std::to_string(m->bad_value) + " nodes; at most " +
                std::to_string(Mask::capacity) + ")"};
  return {true, *m, ""};
}

ParseResult parse_spec(std::string_view text) {
  SpecBuilder builder;
  std::optional<std::string_view> seen[key_count];
  size_t pos = 0;
  while (true) {
    while (pos < text.size() && is_space(text[pos])) ++pos;
    if (pos >= text.size()) break;
    size_t end = pos;
    while (end < text.size() && !is_space(text[end])) ++end;
    const std::string_view token = text.substr(pos, end - pos);
    pos = end;

    const size_t eq = token.find('=');
    if (eq == std::string_view::npos)
      return {false, builder.spec, "expected key=value, got '" + std::string(token) + "' (no '=')"};
    const std::string_view key_text = token.substr(0, eq);
    const std::string_view value = token.substr(eq + 1);
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
  const SpecCheck check = check_spec(builder.spec);
  if (!check.ok()) return {false, builder.spec, describe(builder.spec, check)};
  return {true, builder.spec, ""};
}

}  // namespace attn
