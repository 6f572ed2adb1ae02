// expr_text.cpp: printing and parsing score_mod / mask_mod text and `inputs=` declarations.
#include "attn/expr_text.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace attn {
namespace {

// ---- printing -------------------------------------------------------------------------------

struct OpInfo {
  const char *text;
  int binding;  // C precedence: higher binds tighter; 0 for calls and leaves
};
OpInfo op_info(ExprOp op) {
  switch (op) {
    case ExprOp::lor:
      return {"||", 1};
    case ExprOp::land:
      return {"&&", 2};
    case ExprOp::eq:
      return {"==", 3};
    case ExprOp::ne:
      return {"!=", 3};
    case ExprOp::lt:
      return {"<", 4};
    case ExprOp::le:
      return {"<=", 4};
    case ExprOp::gt:
      return {">", 4};
    case ExprOp::ge:
      return {">=", 4};
    case ExprOp::add:
      return {"+", 5};
    case ExprOp::sub:
      return {"-", 5};
    case ExprOp::mul:
      return {"*", 6};
    case ExprOp::div:
      return {"/", 6};
    case ExprOp::mod:
      return {"%", 6};
    case ExprOp::neg:
      return {"-", 7};
    case ExprOp::lnot:
      return {"!", 7};
    case ExprOp::min:
      return {"min", 0};
    case ExprOp::max:
      return {"max", 0};
    case ExprOp::abs:
      return {"abs", 0};
    case ExprOp::select:
      return {"select", 0};
    case ExprOp::exp:
      return {"exp", 0};
    case ExprOp::log:
      return {"log", 0};
    case ExprOp::sqrt:
      return {"sqrt", 0};
    case ExprOp::tanh:
      return {"tanh", 0};
    case ExprOp::floor:
      return {"floor", 0};
    case ExprOp::ceil:
      return {"ceil", 0};
    case ExprOp::to_float:
      return {"float", 0};
    case ExprOp::to_int:
      return {"int", 0};
    default:
      return {"", 8};
  }
}

const char *var_text(ExprVar v) {
  constexpr const char *names[] = {"s", "b", "h", "kvh", "q", "k", "i", "Sq", "Sk"};
  return names[static_cast<int>(v)];
}

std::string float_literal(float v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(v));
  std::string text = buffer;
  if (text.find_first_of(".en") == std::string::npos) text += ".0";  // stays a float when parsed
  return text;
}

// The binding of a node as printed (a negative literal prints as a unary minus).
int printed_binding(const ExprNode &n) {
  if (n.op == ExprOp::int_lit && n.value < 0) return 7;
  if (n.op == ExprOp::float_lit && std::signbit(n.number)) return 7;
  return op_info(n.op).binding == 0 ? 8 : op_info(n.op).binding;
}

void print_node(const ExprTree &e, int n, std::string &out) {
  if (n < 0 || n >= e.count) {
    out += "<bad-node>";
    return;
  }
  const ExprNode &node = e.nodes[n];
  const OpInfo info = op_info(node.op);
  auto operand = [&](int a, bool parenthesize) {
    if (parenthesize) out += "(";
    print_node(e, node.arg[a], out);
    if (parenthesize) out += ")";
  };
  auto binding_of = [&](int a) {
    const int child = node.arg[a];
    return child >= 0 && child < e.count ? printed_binding(e.nodes[child]) : 8;
  };
  switch (node.op) {
    case ExprOp::int_lit:
      out += std::to_string(node.value);
      return;
    case ExprOp::float_lit:
      out += float_literal(node.number);
      return;
    case ExprOp::var:
      out += var_text(node.var);
      return;
    case ExprOp::index:
      out += std::string(node.tensor, strnlen(node.tensor, max_input_name)) + "[";
      for (int a = 0; a < node.argc; ++a) {
        if (a > 0) out += ", ";
        operand(a, false);
      }
      out += "]";
      return;
    case ExprOp::neg:
    case ExprOp::lnot:
      out += info.text;
      operand(0, binding_of(0) < 7 || (node.op == ExprOp::neg && binding_of(0) == 7));
      return;
    default:
      break;
  }
  if (info.binding == 0) {  // a call
    out += std::string(info.text) + "(";
    for (int a = 0; a < node.argc; ++a) {
      if (a > 0) out += ", ";
      operand(a, false);
    }
    out += ")";
    return;
  }
  // Left-associative: the right operand keeps its parentheses at equal binding.
  operand(0, binding_of(0) < info.binding);
  out += std::string(" ") + info.text + " ";
  operand(1, binding_of(1) <= info.binding);
}

const char *dim_text(int32_t d) {
  switch (d) {
    case dim::B:
      return "B";
    case dim::H:
      return "H";
    case dim::KVH:
      return "KVH";
    case dim::Sq:
      return "Sq";
    case dim::Sk:
      return "Sk";
    default:
      return nullptr;
  }
}

const char *dtype_text(InputDType t) {
  return t == InputDType::i32 ? "i32" : t == InputDType::u8 ? "u8" : "f32";
}

// ---- parsing --------------------------------------------------------------------------------

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

struct Function {
  const char *name;
  ExprOp op;
  int arity;
};
constexpr Function functions[] = {
    {"min", ExprOp::min, 2},       {"max", ExprOp::max, 2},        {"abs", ExprOp::abs, 1},
    {"select", ExprOp::select, 3}, {"exp", ExprOp::exp, 1},        {"log", ExprOp::log, 1},
    {"sqrt", ExprOp::sqrt, 1},     {"tanh", ExprOp::tanh, 1},      {"floor", ExprOp::floor, 1},
    {"ceil", ExprOp::ceil, 1},     {"float", ExprOp::to_float, 1}, {"int", ExprOp::to_int, 1}};
constexpr const char *variables[] = {"s", "b", "h", "kvh", "q", "k", "i", "Sq", "Sk"};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  ExprParse run() {
    ExprParse result;
    if (static_cast<int64_t>(text_.size()) > limits::max_expr_text_bytes) {
      result.message = "is " + std::to_string(text_.size()) + " bytes long; at most " +
                       std::to_string(limits::max_expr_text_bytes);
      return result;
    }
    skip_space();
    if (pos_ == text_.size()) {
      result.message = "is empty";
      return result;
    }
    const bool parsed = parse_or(0);
    skip_space();
    if (parsed && pos_ < text_.size())
      fail("unexpected '" + std::string(1, text_[pos_]) + "' after the expression");
    if (!error_.empty()) {
      result.message = error_;
      return result;
    }
    result.ok = true;
    result.tree = tree_;
    result.columns = columns_;
    return result;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  bool fail(const std::string &why) {
    if (error_.empty()) error_ = "at column " + std::to_string(pos_ + 1) + ": " + why;
    return false;
  }
  bool accept(std::string_view token) {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    // "<" must not take the first half of "<=", "!" of "!=", "&" alone is no operator.
    if (token.size() == 1 && pos_ + 1 < text_.size() && text_[pos_ + 1] == '=' &&
        (token == "<" || token == ">" || token == "!" || token == "="))
      return false;
    pos_ += token.size();
    return true;
  }
  bool add(ExprNode node, int column, std::initializer_list<int> operands) {
    if (tree_.count == limits::max_expr_nodes)
      return fail("more than " + std::to_string(limits::max_expr_nodes) +
                  " nodes (operators, operands, calls)");
    node.argc = static_cast<int8_t>(operands.size());
    int a = 0;
    for (const int o : operands) node.arg[a++] = static_cast<int8_t>(o);
    tree_.nodes[tree_.count++] = node;
    columns_.push_back(column);
    return true;
  }
  bool add_op(ExprOp op, int column, std::initializer_list<int> operands) {
    ExprNode node;
    node.op = op;
    return add(node, column, operands);
  }
  bool enter() {
    if (++depth_ > limits::max_expr_depth)
      return fail("nested more than " + std::to_string(limits::max_expr_depth) + " deep");
    return true;
  }

  // One level of left-associative binary operators over `next`.
  template <class Next>
  bool binary_level(int depth_unused, std::initializer_list<std::pair<std::string_view, ExprOp>> ops,
                    Next next) {
    (void)depth_unused;
    if (!next()) return false;
    while (true) {
      bool matched = false;
      for (const auto &[token, op] : ops) {
        skip_space();
        const int column = static_cast<int>(pos_) + 1;
        if (!accept(token)) continue;
        const int lhs = tree_.count - 1;
        if (!next()) return false;
        if (!add_op(op, column, {lhs, tree_.count - 1})) return false;
        matched = true;
        break;
      }
      if (!matched) return true;
    }
  }

  bool parse_or(int) {
    if (!enter()) return false;
    const bool ok = binary_level(0, {{"||", ExprOp::lor}}, [&] { return parse_and(); });
    --depth_;
    return ok;
  }
  bool parse_and() {
    return binary_level(0, {{"&&", ExprOp::land}}, [&] { return parse_eq(); });
  }
  bool parse_eq() {
    return binary_level(0, {{"==", ExprOp::eq}, {"!=", ExprOp::ne}}, [&] { return parse_rel(); });
  }
  bool parse_rel() {
    return binary_level(0, {{"<=", ExprOp::le}, {">=", ExprOp::ge}, {"<", ExprOp::lt}, {">", ExprOp::gt}},
                        [&] { return parse_add(); });
  }
  bool parse_add() {
    return binary_level(0, {{"+", ExprOp::add}, {"-", ExprOp::sub}}, [&] { return parse_mul(); });
  }
  bool parse_mul() {
    return binary_level(0, {{"*", ExprOp::mul}, {"/", ExprOp::div}, {"%", ExprOp::mod}},
                        [&] { return parse_unary(); });
  }
  bool parse_unary() {
    skip_space();
    const int column = static_cast<int>(pos_) + 1;
    for (const auto &[token, op] :
         {std::pair<std::string_view, ExprOp>{"-", ExprOp::neg}, {"!", ExprOp::lnot}}) {
      if (!accept(token)) continue;
      if (!enter()) return false;
      const bool ok = parse_unary() && add_op(op, column, {tree_.count - 1});
      --depth_;
      return ok;
    }
    return parse_primary();
  }

  bool parse_number(int column) {
    const size_t start = pos_;
    bool is_float = false;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (pos_ == text_.size() || !is_digit(text_[pos_])) return fail("an exponent needs digits");
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && is_ident_char(text_[pos_])) return fail("a number runs into a name");
    const std::string_view digits = text_.substr(start, pos_ - start);
    ExprNode node;
    if (is_float) {
      node.op = ExprOp::float_lit;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), node.number);
      if (ec != std::errc() || end != digits.data() + digits.size() || !std::isfinite(node.number))
        return fail("'" + std::string(digits) + "' is out of range for a float");
    } else {
      node.op = ExprOp::int_lit;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), node.value);
      if (ec != std::errc() || end != digits.data() + digits.size())
        return fail("'" + std::string(digits) + "' is out of range for an int (at most 2147483647)");
    }
    return add(node, column, {});
  }

  // Comma-separated expressions up to `close`; their node indices in `operands`.
  bool parse_list(char close, std::vector<int> &operands) {
    if (!enter()) return false;
    while (true) {
      if (!parse_or(0)) return false;
      operands.push_back(tree_.count - 1);
      skip_space();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == close) {
        ++pos_;
        --depth_;
        return true;
      }
      return fail(std::string("expected ',' or '") + close + "'");
    }
  }

  bool parse_primary() {
    skip_space();
    const int column = static_cast<int>(pos_) + 1;
    if (pos_ == text_.size()) return fail("expected an operand, got the end of the text");
    const char c = text_[pos_];
    if (is_digit(c) || c == '.') return parse_number(column);
    if (c == '(') {
      ++pos_;
      if (!parse_or(0)) return false;
      if (!accept(")")) return fail("expected ')'");
      return true;
    }
    if (!is_ident_start(c)) return fail("expected an operand, got '" + std::string(1, c) + "'");
    const size_t start = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    const std::string name(text_.substr(start, pos_ - start));
    skip_space();
    const char next = pos_ < text_.size() ? text_[pos_] : '\0';
    if (next == '(') {
      for (const Function &f : functions) {
        if (name != f.name) continue;
        ++pos_;
        std::vector<int> operands;
        if (!parse_list(')', operands)) return false;
        if (static_cast<int>(operands.size()) != f.arity) {
          pos_ = start;
          return fail(name + "() takes " + std::to_string(f.arity) + " argument" + (f.arity > 1 ? "s" : "") +
                      ", got " + std::to_string(operands.size()));
        }
        ExprNode node;
        node.op = f.op;
        node.argc = static_cast<int8_t>(f.arity);
        for (int a = 0; a < f.arity; ++a) node.arg[a] = static_cast<int8_t>(operands[a]);
        if (tree_.count == limits::max_expr_nodes) return add(node, column, {});
        tree_.nodes[tree_.count++] = node;
        columns_.push_back(column);
        return true;
      }
      pos_ = start;
      return fail("unknown function '" + name +
                  "' (functions: min, max, abs, select, exp, log, sqrt, tanh, floor, ceil, float, int)");
    }
    if (next == '[') {
      if (name.size() >= static_cast<size_t>(max_input_name)) {
        pos_ = start;
        return fail("tensor name '" + name + "' is longer than " + std::to_string(max_input_name - 1) +
                    " characters");
      }
      ++pos_;
      std::vector<int> operands;
      if (!parse_list(']', operands)) return false;
      if (operands.size() > static_cast<size_t>(max_input_rank)) {
        pos_ = start;
        return fail("'" + name + "' takes at most " + std::to_string(max_input_rank) + " indices");
      }
      ExprNode node;
      node.op = ExprOp::index;
      for (size_t ch = 0; ch < name.size(); ++ch) node.tensor[ch] = name[ch];
      node.argc = static_cast<int8_t>(operands.size());
      for (size_t a = 0; a < operands.size(); ++a) node.arg[a] = static_cast<int8_t>(operands[a]);
      if (tree_.count == limits::max_expr_nodes) return add(node, column, {});
      tree_.nodes[tree_.count++] = node;
      columns_.push_back(column);
      return true;
    }
    for (int v = 0; v < static_cast<int>(sizeof(variables) / sizeof(variables[0])); ++v) {
      if (name != variables[v]) continue;
      ExprNode node;
      node.op = ExprOp::var;
      node.var = static_cast<ExprVar>(v);
      return add(node, column, {});
    }
    pos_ = start;
    return fail("unknown name '" + name +
                "' (variables: s, b, h, kvh, q, k, i, Sq, Sk; a captured tensor is indexed: NAME[...])");
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  ExprTree tree_{};
  std::vector<int> columns_;
  std::string error_;
};

// One `NAME:DTYPE[DIM,...]`.
std::optional<std::string> parse_one_input(std::string_view item, CapturedInput &out) {
  const size_t colon = item.find(':'), open = item.find('['), close = item.rfind(']');
  if (colon == std::string_view::npos || open == std::string_view::npos || close != item.size() - 1 ||
      open < colon)
    return "'" + std::string(item) + "' is not NAME:DTYPE[DIM,...] (e.g. rel:f32[H,127])";
  const std::string_view name = item.substr(0, colon), dtype = item.substr(colon + 1, open - colon - 1);
  if (name.empty() || name.size() >= static_cast<size_t>(max_input_name))
    return "'" + std::string(name) + "' is not a valid tensor name (1 to " +
           std::to_string(max_input_name - 1) + " letters, digits or '_')";
  for (size_t c = 0; c < name.size(); ++c) out.name[c] = name[c];
  if (dtype == "f32")
    out.dtype = InputDType::f32;
  else if (dtype == "i32")
    out.dtype = InputDType::i32;
  else if (dtype == "u8")
    out.dtype = InputDType::u8;
  else
    return "tensor '" + std::string(name) + "': dtype '" + std::string(dtype) + "' is not one of f32|i32|u8";
  std::string_view dims = item.substr(open + 1, close - open - 1);
  out.rank = 0;
  while (true) {
    const size_t comma = dims.find(',');
    const std::string_view d = dims.substr(0, comma);
    if (out.rank == max_input_rank)
      return "tensor '" + std::string(name) + "' has more than " + std::to_string(max_input_rank) + " dims";
    int32_t value = 0;
    if (d == "B")
      value = dim::B;
    else if (d == "H")
      value = dim::H;
    else if (d == "KVH")
      value = dim::KVH;
    else if (d == "Sq")
      value = dim::Sq;
    else if (d == "Sk")
      value = dim::Sk;
    else {
      const auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), value);
      if (ec != std::errc() || end != d.data() + d.size() || value <= 0 || value > limits::max_positions)
        return "tensor '" + std::string(name) + "': dim '" + std::string(d) +
               "' is not one of B, H, KVH, Sq, Sk or an integer in 1.." +
               std::to_string(limits::max_positions);
    }
    out.dims[out.rank++] = value;
    if (comma == std::string_view::npos) break;
    dims = dims.substr(comma + 1);
  }
  return std::nullopt;
}

const char *expr_problem_words(ExprProblem p) {
  using P = ExprProblem;
  switch (p) {
    case P::none:
      return "";
    case P::too_many_nodes:
      return "has more nodes than the limit";
    case P::malformed:
      return "a malformed node (operands must be earlier nodes, with the op's count)";
    case P::unknown_tensor:
      return "a tensor that inputs= does not declare";
    case P::index_count:
      return "the wrong number of indices for the tensor's rank";
    case P::index_not_int:
      return "an index must be an int expression (use int(x))";
    case P::score_in_mask_mod:
      return "s (the score) is not available in mask_mod: the mask is decided before any score";
    case P::operand_not_number:
      return "a bool where a number belongs";
    case P::operand_not_bool:
      return "a number where a bool belongs (&&, ||, !, select's condition; compare it)";
    case P::operand_not_int:
      return "% takes ints only (use int(x))";
    case P::mixed_branches:
      return "a bool and a number together (select's branches or a comparison)";
    case P::divide_by_literal_zero:
      return "division by a literal zero";
    case P::mask_not_bool:
      return "mask_mod must be a bool (a comparison), not a number: a float or int used as a mask";
    case P::score_not_number:
      return "score_mod must be a number, not a bool";
  }
  return "an unknown problem";
}

}  // namespace

std::string to_string(const ExprTree &e) {
  if (e.empty()) return "";
  std::string out;
  print_node(e, e.root(), out);
  return out;
}

std::string to_string(const CapturedInputs &inputs) {
  std::string out;
  for (int t = 0; t < inputs.count && t < limits::max_captured_inputs; ++t) {
    const CapturedInput &c = inputs.items[t];
    out += (t ? ";" : "") + std::string(c.name, strnlen(c.name, max_input_name)) + ":" + dtype_text(c.dtype) +
           "[";
    for (int d = 0; d < c.rank && d < max_input_rank; ++d) {
      const char *symbol = dim_text(c.dims[d]);
      out += (d ? "," : "") + (symbol ? std::string(symbol) : std::to_string(c.dims[d]));
    }
    out += "]";
  }
  return out;
}

ExprParse parse_expr(std::string_view text) {
  return Parser(text).run();
}

std::optional<CapturedInputs> parse_inputs(std::string_view text, std::string &error) {
  CapturedInputs inputs;
  while (!text.empty()) {
    const size_t semi = text.find(';');
    const std::string_view item = text.substr(0, semi);
    if (inputs.count == limits::max_captured_inputs) {
      error = "more than " + std::to_string(limits::max_captured_inputs) + " tensors";
      return std::nullopt;
    }
    if (std::optional<std::string> why = parse_one_input(item, inputs.items[inputs.count])) {
      error = *why;
      return std::nullopt;
    }
    ++inputs.count;
    if (semi == std::string_view::npos) break;
    text = text.substr(semi + 1);
  }
  if (inputs.count == 0) error = "declares no tensor (NAME:DTYPE[DIM,...];...)";
  if (inputs.count == 0) return std::nullopt;
  return inputs;
}

std::string expr_problem_text(const ExprTree &e, const CapturedInputs &inputs, const ExprCheck &c,
                              const std::vector<int> &columns) {
  std::string where;
  if (c.node >= 0 && c.node < e.count) {
    std::string node_text;
    print_node(e, c.node, node_text);
    if (c.node < static_cast<int>(columns.size()))
      where = "at column " + std::to_string(columns[c.node]) + " ";
    where += "('" + node_text + "'): ";
  }
  std::string words = expr_problem_words(c.problem);
  if (c.problem == ExprProblem::too_many_nodes)
    words = "has " + std::to_string(c.a) + " nodes or more; at most " + std::to_string(c.b);
  if (c.problem == ExprProblem::index_count)
    words = "gives " + std::to_string(c.a) + " indices to a tensor of rank " + std::to_string(c.b);
  if (c.problem == ExprProblem::unknown_tensor && c.node >= 0 && c.node < e.count) {
    const std::string name(e.nodes[c.node].tensor, strnlen(e.nodes[c.node].tensor, max_input_name));
    words = "unknown tensor '" + name + "' (" +
            (inputs.count ? "inputs= declares " + to_string(inputs)
                          : std::string("declare it in inputs=NAME:DTYPE[DIM,...]")) +
            ")";
  }
  return where + words;
}

std::string input_problem_text(const CapturedInputs &inputs, const InputCheck &c) {
  using P = InputProblem;
  const std::string name =
      c.input >= 0 && c.input < inputs.count && c.input < limits::max_captured_inputs
          ? std::string(inputs.items[c.input].name, strnlen(inputs.items[c.input].name, max_input_name))
          : std::string();
  switch (c.problem) {
    case P::none:
      return "";
    case P::too_many:
      return "more than " + std::to_string(limits::max_captured_inputs) + " captured tensors";
    case P::name_invalid:
      return "tensor name '" + name +
             "' must be 1 to 15 of [A-Za-z0-9_], not start with a digit, and not be a variable, a function "
             "or one of the kernel's own tensors (q, k, v, out, mask, w_*, b_* ...)";
    case P::duplicate:
      return "tensor '" + name + "' is declared twice";
    case P::rank_invalid:
      return "tensor '" + name + "' must have 1 to 4 dims";
    case P::dim_invalid:
      return "tensor '" + name + "' has a dim that is neither > 0 nor one of B, H, KVH, Sq, Sk";
  }
  return "unknown input problem";
}

}  // namespace attn
