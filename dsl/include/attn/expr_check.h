// attn/expr_check.h: the type rules of score_mod / mask_mod and of captured inputs, constexpr so
// that a C++ spec is checked at compile time and the text parser reports the same problems.
#pragma once

#include <cstdint>

#include "attn/expr.h"

namespace attn {

enum class ExprProblem : int32_t {
  none,
  too_many_nodes,          // above limits::max_expr_nodes (a builder overflowed)
  malformed,               // an operand that is not an earlier node, a bad operand count
  unknown_tensor,          // NAME[...] without NAME in inputs=
  index_count,             // indices given (a) differ from the tensor's rank (b)
  index_not_int,           // an index that is not an int expression
  score_in_mask_mod,       // s in mask_mod (the mask is decided before any score)
  operand_not_number,      // a bool where a number belongs
  operand_not_bool,        // a number where a bool belongs (&&, ||, !, select's condition)
  operand_not_int,         // % on a float
  mixed_branches,          // select(c, bool, number) or comparing a bool with a number
  divide_by_literal_zero,  // x / 0, x % 0
  mask_not_bool,           // mask_mod's value is a number
  score_not_number,        // score_mod's value is a bool
};

struct ExprCheck {
  ExprProblem problem = ExprProblem::none;
  int32_t node = -1;  // the node at fault (the text parser maps it to a position)
  int32_t a = 0, b = 0;
  constexpr bool ok() const { return problem == ExprProblem::none; }
};

namespace detail {
constexpr bool is_number(ExprType t) {
  return t == ExprType::i32 || t == ExprType::f32;
}
constexpr ExprType promoted(ExprType a, ExprType b) {
  return a == ExprType::f32 || b == ExprType::f32 ? ExprType::f32 : ExprType::i32;
}
constexpr bool is_literal_zero(const ExprNode &n) {
  return (n.op == ExprOp::int_lit && n.value == 0) || (n.op == ExprOp::float_lit && n.number == 0.0f);
}
constexpr int expr_arity(ExprOp op) {
  switch (op) {
    case ExprOp::int_lit:
    case ExprOp::float_lit:
    case ExprOp::var:
      return 0;
    case ExprOp::index:
      return -1;  // 1..max_input_rank
    case ExprOp::neg:
    case ExprOp::lnot:
    case ExprOp::abs:
    case ExprOp::exp:
    case ExprOp::log:
    case ExprOp::sqrt:
    case ExprOp::tanh:
    case ExprOp::floor:
    case ExprOp::ceil:
    case ExprOp::to_float:
    case ExprOp::to_int:
      return 1;
    case ExprOp::select:
      return 3;
    default:
      return 2;
  }
}

// The type of node n from its operands' types (already in `types`), or the problem.
constexpr ExprCheck node_type(const ExprTree &t, int n, const CapturedInputs &in, bool is_mask,
                              const ExprType *types, ExprType &out) {
  using P = ExprProblem;
  const ExprNode &node = t.nodes[n];
  const ExprType x = node.argc > 0 ? types[node.arg[0]] : ExprType::none;
  const ExprType y = node.argc > 1 ? types[node.arg[1]] : ExprType::none;
  const ExprType z = node.argc > 2 ? types[node.arg[2]] : ExprType::none;
  switch (node.op) {
    case ExprOp::int_lit:
      out = ExprType::i32;
      return {};
    case ExprOp::float_lit:
      if (!(node.number >= -3.4e38f && node.number <= 3.4e38f)) return {P::malformed, n};  // NaN, inf
      out = ExprType::f32;
      return {};
    case ExprOp::var:
      if (node.var == ExprVar::s && is_mask) return {P::score_in_mask_mod, n};
      out = node.var == ExprVar::s ? ExprType::f32 : ExprType::i32;
      return {};
    case ExprOp::index: {
      const int found = in.find(node.tensor);
      if (found < 0) return {P::unknown_tensor, n};
      if (node.argc != in.items[found].rank) return {P::index_count, n, node.argc, in.items[found].rank};
      for (int a = 0; a < node.argc; ++a)
        if (types[node.arg[a]] != ExprType::i32) return {P::index_not_int, node.arg[a], a};
      out = in.items[found].dtype == InputDType::f32 ? ExprType::f32 : ExprType::i32;
      return {};
    }
    case ExprOp::neg:
    case ExprOp::abs:
      if (!is_number(x)) return {P::operand_not_number, node.arg[0]};
      out = x;
      return {};
    case ExprOp::lnot:
      if (x != ExprType::boolean) return {P::operand_not_bool, node.arg[0]};
      out = ExprType::boolean;
      return {};
    case ExprOp::land:
    case ExprOp::lor:
      if (x != ExprType::boolean) return {P::operand_not_bool, node.arg[0]};
      if (y != ExprType::boolean) return {P::operand_not_bool, node.arg[1]};
      out = ExprType::boolean;
      return {};
    case ExprOp::eq:
    case ExprOp::ne:
      if (x == ExprType::boolean && y == ExprType::boolean) {
        out = ExprType::boolean;
        return {};
      }
      [[fallthrough]];
    case ExprOp::lt:
    case ExprOp::le:
    case ExprOp::gt:
    case ExprOp::ge:
      if (!is_number(x))
        return {x == ExprType::boolean && is_number(y) ? P::mixed_branches : P::operand_not_number,
                node.arg[0]};
      if (!is_number(y)) return {P::operand_not_number, node.arg[1]};
      out = ExprType::boolean;
      return {};
    case ExprOp::mod:
      if (x != ExprType::i32) return {is_number(x) ? P::operand_not_int : P::operand_not_number, node.arg[0]};
      if (y != ExprType::i32) return {is_number(y) ? P::operand_not_int : P::operand_not_number, node.arg[1]};
      if (is_literal_zero(t.nodes[node.arg[1]])) return {P::divide_by_literal_zero, node.arg[1]};
      out = ExprType::i32;
      return {};
    case ExprOp::div:
      if (node.argc == 2 && is_literal_zero(t.nodes[node.arg[1]]))
        return {P::divide_by_literal_zero, node.arg[1]};
      [[fallthrough]];
    case ExprOp::add:
    case ExprOp::sub:
    case ExprOp::mul:
    case ExprOp::min:
    case ExprOp::max:
      if (!is_number(x)) return {P::operand_not_number, node.arg[0]};
      if (!is_number(y)) return {P::operand_not_number, node.arg[1]};
      out = promoted(x, y);
      return {};
    case ExprOp::select:
      if (x != ExprType::boolean) return {P::operand_not_bool, node.arg[0]};
      if (y == ExprType::boolean && z == ExprType::boolean) {
        out = ExprType::boolean;
        return {};
      }
      if (!is_number(y) || !is_number(z)) return {P::mixed_branches, n};
      out = promoted(y, z);
      return {};
    case ExprOp::exp:
    case ExprOp::log:
    case ExprOp::sqrt:
    case ExprOp::tanh:
    case ExprOp::floor:
    case ExprOp::ceil:
    case ExprOp::to_float:
      if (!is_number(x)) return {P::operand_not_number, node.arg[0]};
      out = ExprType::f32;
      return {};
    case ExprOp::to_int:
      if (!is_number(x)) return {P::operand_not_number, node.arg[0]};
      out = ExprType::i32;
      return {};
  }
  return {P::malformed, n};
}
}  // namespace detail

// The type of every node checked in order, then the root's: a bool for mask_mod, a number (an int
// converts to float) for score_mod. An empty tree passes.
constexpr ExprCheck check_expr(const ExprTree &t, const CapturedInputs &in, bool is_mask) {
  using P = ExprProblem;
  if (t.overflow || t.count > limits::max_expr_nodes)
    return {P::too_many_nodes, -1, t.count, limits::max_expr_nodes};
  if (t.count < 0) return {P::malformed, -1};
  ExprType types[limits::max_expr_nodes]{};
  for (int n = 0; n < t.count; ++n) {
    const ExprNode &node = t.nodes[n];
    const int arity = detail::expr_arity(node.op);
    const bool count_ok = arity < 0 ? node.argc >= 1 && node.argc <= max_input_rank : node.argc == arity;
    if (!count_ok || static_cast<int>(node.op) > static_cast<int>(ExprOp::to_int)) return {P::malformed, n};
    for (int a = 0; a < node.argc; ++a)
      if (node.arg[a] < 0 || node.arg[a] >= n) return {P::malformed, n};
    if (const ExprCheck c = detail::node_type(t, n, in, is_mask, types, types[n]); !c.ok()) return c;
  }
  if (t.count == 0) return {};
  const ExprType root = types[t.root()];
  if (is_mask && root != ExprType::boolean) return {P::mask_not_bool, t.root()};
  if (!is_mask && !detail::is_number(root)) return {P::score_not_number, t.root()};
  return {};
}

// The type of the root of a checked tree.
constexpr ExprType expr_type(const ExprTree &t, const CapturedInputs &in, int node) {
  ExprType types[limits::max_expr_nodes]{};
  for (int n = 0; n <= node; ++n) detail::node_type(t, n, in, false, types, types[n]);
  return types[node];
}

enum class InputProblem : int32_t {
  none,
  too_many,      // above limits::max_captured_inputs
  name_invalid,  // empty, not [A-Za-z_][A-Za-z0-9_]*, or a kernel's own argument or a variable
  duplicate,     // two inputs of one name
  rank_invalid,  // rank outside 1..4
  dim_invalid,   // a dim that is neither > 0 nor one of B H KVH Sq Sk
};

namespace detail {
constexpr bool same_name(const char *a, const char *b) {
  int c = 0;
  while (a[c] != '\0' && a[c] == b[c]) ++c;
  return a[c] == b[c];
}
// Names a captured tensor may not take: variables, functions, and the kernels' own arguments.
constexpr bool reserved_input_name(const char *name) {
  constexpr const char *reserved[] = {"s",
                                      "b",
                                      "h",
                                      "kvh",
                                      "q",
                                      "k",
                                      "i",
                                      "Sq",
                                      "Sk",
                                      "min",
                                      "max",
                                      "abs",
                                      "select",
                                      "exp",
                                      "log",
                                      "sqrt",
                                      "tanh",
                                      "floor",
                                      "ceil",
                                      "float",
                                      "int",
                                      "v",
                                      "out",
                                      "lse",
                                      "probs",
                                      "mask",
                                      "scale",
                                      "x",
                                      "x_kv",
                                      "key_lengths",
                                      "prefix_lengths",
                                      "segment_ids_q",
                                      "segment_ids_k",
                                      "alibi_slopes",
                                      "score_bias",
                                      "dout",
                                      "dq",
                                      "dk",
                                      "dv",
                                      "dscore_bias",
                                      "seed",
                                      "offset",
                                      "block_mask"};
  for (const char *r : reserved)
    if (same_name(r, name)) return true;
  // The kernels' w_* and b_* projections.
  return (name[0] == 'w' || name[0] == 'b') && name[1] == '_';
}
constexpr bool valid_input_name(const char *name) {
  if (name[0] == '\0' || (name[0] >= '0' && name[0] <= '9')) return false;
  for (int c = 0; c < max_input_name; ++c) {
    const char x = name[c];
    if (x == '\0') return !reserved_input_name(name);
    if (!((x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z') || (x >= '0' && x <= '9') || x == '_'))
      return false;
  }
  return false;
}
}  // namespace detail

struct InputCheck {
  InputProblem problem = InputProblem::none;
  int32_t input = -1;  // which declaration
  constexpr bool ok() const { return problem == InputProblem::none; }
};
constexpr InputCheck check_inputs(const CapturedInputs &in) {
  using P = InputProblem;
  if (in.overflow || in.count > limits::max_captured_inputs) return {P::too_many, in.count};
  for (int t = 0; t < in.count; ++t) {
    const CapturedInput &c = in.items[t];
    if (!detail::valid_input_name(c.name)) return {P::name_invalid, t};
    for (int u = 0; u < t; ++u)
      if (detail::same_name(in.items[u].name, c.name)) return {P::duplicate, t};
    if (c.rank < 1 || c.rank > max_input_rank) return {P::rank_invalid, t};
    for (int d = 0; d < c.rank; ++d)
      if (c.dims[d] < static_cast<int32_t>(InputDim::Sk) || c.dims[d] > limits::max_positions)
        return {P::dim_invalid, t};
  }
  return {};
}

}  // namespace attn
