// mask_text.cpp: printing and parsing the text form of masks: "(window(256,256)|global(4))&padding".
#include "mask_text.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "attn/limits.h"
#include "attn/spec_text.h"

namespace attn {
namespace {

// ---- printing -------------------------------------------------------------------------------

// Binding strength: terms bind tightest, then &, then |.
int binding(MaskOp op) {
  if (!is_operator(op)) return 3;
  return op == MaskOp::both ? 2 : 1;
}

std::string term_text(const MaskNode &n) {
  switch (n.op) {
    case MaskOp::window:
      if (n.left == -1 && n.right == 0) return "causal";
      return "window(" + std::to_string(n.left) + "," + std::to_string(n.right) + ")";
    case MaskOp::global_tokens:
      return "global(" + std::to_string(n.tokens) + ")";
    case MaskOp::random_blocks:
      return "random(" + std::to_string(n.block) + "," + std::to_string(n.blocks) + "," +
             std::to_string(n.seed) + ")";
    case MaskOp::padding:
      return "padding";
    case MaskOp::prefix:
      return "prefix";
    case MaskOp::document:
      return "document";
    case MaskOp::tensor:
      return "tensor";
    case MaskOp::both:
    case MaskOp::either:
      break;
  }
  return "<bad-term>";
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
  if (!is_operator(n.op)) {
    out += term_text(n);
    return;
  }
  print_operand(m, index, n.lhs, false, out);
  out += n.op == MaskOp::both ? '&' : '|';
  print_operand(m, index, n.rhs, true, out);
}

// ---- parsing --------------------------------------------------------------------------------

constexpr const char *supported_terms =
    "none, causal, window(L,R), global(G), random(BS,N,SEED), padding, prefix, document, tensor";

// expr := conj ('|' conj)*    conj := primary ('&' primary)*
// primary := '(' expr ')' | word | word '(' int (',' int)* ')'
class MaskParser {
 public:
  explicit MaskParser(std::string_view text) : text_(text) {}

  std::optional<Mask> parse() {
    if (text_.empty()) return fail("empty mask (write 'none' for no mask)");
    if (static_cast<int64_t>(text_.size()) > limits::max_text_bytes)
      return fail("mask text is " + std::to_string(text_.size()) + " bytes long; at most " +
                  std::to_string(limits::max_text_bytes));
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
      // Each '(' recurses once: bound the depth so that no text can exhaust the stack.
      if (++depth_ > limits::max_mask_depth)
        return fail_here("parentheses nest deeper than " + std::to_string(limits::max_mask_depth));
      std::optional<Mask> m = expr();
      --depth_;
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
    if (word == "padding") return padding();
    if (word == "prefix") return prefix();
    if (word == "document") return document();
    if (word == "tensor") return mask_tensor();
    if (word == "window") return window_term();
    if (word == "global") return global_term();
    if (word == "random") return random_term();
    return fail("unknown term '" + std::string(word) + "' (supported: " + supported_terms + ")");
  }

  std::optional<Mask> window_term() {
    const std::optional<std::vector<std::string_view>> args = arguments("window");
    if (!args) return std::nullopt;
    if (args->size() != 2) return fail(arity_error("window", "two integers L,R", *args));
    const std::optional<int64_t> left = integer((*args)[0], "window bound", int32_range);
    const std::optional<int64_t> right =
        left ? integer((*args)[1], "window bound", int32_range) : std::nullopt;
    if (!right) return std::nullopt;
    return window(static_cast<int32_t>(*left), static_cast<int32_t>(*right));
  }

  std::optional<Mask> global_term() {
    const std::optional<std::vector<std::string_view>> args = arguments("global");
    if (!args) return std::nullopt;
    if (args->size() != 1) return fail(arity_error("global", "one integer G", *args));
    const std::optional<int64_t> tokens = integer((*args)[0], "global token count", int32_range);
    if (!tokens) return std::nullopt;
    return global_tokens(static_cast<int32_t>(*tokens));
  }

  std::optional<Mask> random_term() {
    const std::optional<std::vector<std::string_view>> args = arguments("random");
    if (!args) return std::nullopt;
    if (args->size() != 3) return fail(arity_error("random", "three integers BS,N,SEED", *args));
    const std::optional<int64_t> block = integer((*args)[0], "random block size", int32_range);
    if (!block) return std::nullopt;
    const std::optional<int64_t> blocks = integer((*args)[1], "random block count", int32_range);
    if (!blocks) return std::nullopt;
    const std::optional<int64_t> seed = integer((*args)[2], "random seed", uint32_range);
    if (!seed) return std::nullopt;
    return random_blocks(static_cast<int32_t>(*block), static_cast<int32_t>(*blocks),
                         static_cast<uint32_t>(*seed));
  }

  // "(a,b,...)" after a term's name: the comma-separated texts, not yet read as numbers.
  std::optional<std::vector<std::string_view>> arguments(std::string_view term) {
    if (!eat('(')) return fail_here("expected '(' after '" + std::string(term) + "'");
    std::vector<std::string_view> args;
    size_t start = pos_;
    while (pos_ < text_.size() && std::string_view("()&|").find(text_[pos_]) == std::string_view::npos) {
      if (text_[pos_] == ',') {
        args.push_back(text_.substr(start, pos_ - start));
        start = pos_ + 1;
      }
      ++pos_;
    }
    args.push_back(text_.substr(start, pos_ - start));
    if (!eat(')')) return fail_here("expected ')'");
    return args;
  }

  static std::string arity_error(std::string_view term, const char *needs,
                                 const std::vector<std::string_view> &args) {
    std::string written;
    for (size_t i = 0; i < args.size(); ++i) written += (i ? "," : "") + std::string(args[i]);
    return std::string(term) + "(...) needs " + needs + ", got '" + std::string(term) + "(" + written + ")'";
  }

  struct Range {
    int64_t min, max;
    const char *name;
  };
  static constexpr Range int32_range{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                     "int32"};
  static constexpr Range uint32_range{0, std::numeric_limits<uint32_t>::max(), "uint32"};

  std::optional<int64_t> integer(std::string_view digits, const char *what, const Range &range) {
    int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    const std::string quoted = std::string(what) + " '" + std::string(digits) + "'";
    const bool whole = ptr == digits.data() + digits.size();
    if ((ec == std::errc::result_out_of_range && whole) ||
        (ec == std::errc() && whole && (value < range.min || value > range.max)))
      return fail(quoted + " is out of range (must fit " + range.name + ")");
    if (ec != std::errc() || !whole) return fail(quoted + " is not an integer");
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
    return fail(what + " at offset " + std::to_string(pos_) + " in '" + excerpt() + "'");
  }
  // The text, or its first characters when it is too long to repeat in a message.
  std::string excerpt() const {
    constexpr size_t shown = 80;
    if (text_.size() <= shown) return std::string(text_);
    return std::string(text_.substr(0, shown)) + "...";
  }

  std::string_view text_;
  size_t pos_ = 0;
  int32_t depth_ = 0;  // '(' open around pos_
  std::string error_;
};

}  // namespace

namespace detail {

std::optional<Mask> parse_mask_expression(std::string_view text, std::string &error) {
  MaskParser parser(text);
  std::optional<Mask> m = parser.parse();
  if (!m) error = parser.error();
  return m;
}

std::string mask_problem_text(MaskProblem problem, int32_t value) {
  const std::string got = "(got " + std::to_string(value) + ")";
  switch (problem) {
    case MaskProblem::none:
      return "";
    case MaskProblem::window_bound:
      return "window bound (" + std::to_string(value) + ") must be >= -1 (-1 means unbounded)";
    case MaskProblem::too_many_terms:
      return "too many terms (" + std::to_string(value) + " nodes; at most " +
             std::to_string(Mask::capacity) + ")";
    case MaskProblem::global_tokens:
      return "global(G) needs G >= 1 " + got;
    case MaskProblem::random_block:
      return "random(BS,N,SEED) needs a block size BS >= 1 " + got;
    case MaskProblem::random_count:
      return "random(BS,N,SEED) needs N >= 1 blocks " + got;
    case MaskProblem::window_bound_too_large:
      return "window bound (" + std::to_string(value) + ") must be at most " +
             std::to_string(limits::max_positions) + " (or -1 for unbounded)";
    case MaskProblem::global_tokens_too_large:
      return "global(G) needs G <= " + std::to_string(limits::max_positions) + " " + got;
    case MaskProblem::random_block_too_large:
      return "random(BS,N,SEED) needs a block size BS <= " + std::to_string(limits::max_positions) + " " +
             got;
    case MaskProblem::random_count_too_large:
      return "random(BS,N,SEED) needs N <= " + std::to_string(limits::max_random_draws) + " blocks " + got;
  }
  return "unknown mask problem " + std::to_string(static_cast<int32_t>(problem));
}

}  // namespace detail

std::string to_string(const Mask &mask) {
  if (mask.empty()) return "none";
  std::string out;
  print_mask_node(mask, mask.root(), out);
  return out;
}

MaskParseResult parse_mask(std::string_view text) {
  std::string error;
  const std::optional<Mask> m = detail::parse_mask_expression(text, error);
  if (!m) return {false, Mask{}, "mask: " + error};
  if (m->bad_term != MaskProblem::none)
    return {false, *m, "mask: " + detail::mask_problem_text(m->bad_term, m->bad_value)};
  return {true, *m, ""};
}

}  // namespace attn
