// Lowers an expression node by node, post-order as it is stored, converting ints to f32 where an
// operator mixes them (the types of attn/expr_check.h).
#include "attnc/expr_lowering.h"

#include <cstring>
#include <stdexcept>

#include "attn/expr_check.h"

namespace attnc {

using attn::ExprOp;
using attn::ExprType;
using Halide::Expr;

namespace {

Expr as_f32(const Expr &e) {
  return e.type().is_float() ? e : Halide::cast<float>(e);
}

// Both operands f32 when either is (an int meets a float), else as they are.
std::pair<Expr, Expr> promote(const Expr &a, const Expr &b) {
  if (a.type().is_float() || b.type().is_float()) return {as_f32(a), as_f32(b)};
  return {a, b};
}

Expr variable(attn::ExprVar v, const ExprPoint &p) {
  switch (v) {
    case attn::ExprVar::s:
      return p.score;
    case attn::ExprVar::b:
      return p.batch;
    case attn::ExprVar::h:
      return p.head;
    case attn::ExprVar::kvh:
      return p.kv_head;
    case attn::ExprVar::q:
      return p.query_pos;
    case attn::ExprVar::k:
      return p.key_pos;
    case attn::ExprVar::i:
      return p.query_row;
    case attn::ExprVar::Sq:
      return p.seq_q;
    case attn::ExprVar::Sk:
      return p.seq_k;
  }
  return Expr();
}

// NAME[i0, ..., in]: each index clamped into [0, extent - 1]; u8 and i32 read as int32.
Expr element(const attn::ExprNode &node, const std::vector<Expr> &value, const CapturedTensors &tensors) {
  const std::string name(node.tensor, strnlen(node.tensor, attn::max_input_name));
  const auto found = tensors.find(name);
  if (found == tensors.end()) throw std::runtime_error("captured tensor '" + name + "' is not an input");
  const CapturedTensor &t = found->second;
  std::vector<Expr> at(node.argc);
  for (int a = 0; a < node.argc; ++a)  // Halide's order: innermost first
    at[node.argc - 1 - a] = Halide::clamp(value[node.arg[a]], 0, Halide::max(t.extents[a] - 1, 0));
  const Expr read = t.data(at);
  return read.type().is_float() ? read : Halide::cast<int32_t>(read);
}

// int(x): truncation toward zero, saturated to int32 (what a float past the range gives).
Expr to_int(const Expr &x) {
  if (!x.type().is_float()) return x;
  return Halide::cast<int32_t>(Halide::clamp(x, -2147483648.0f, 2147483520.0f));
}

// C's quotient and remainder from Halide's Euclidean ones (which never trap: x / 0 is 0 there);
// Halide's div_round_to_zero would fault on a zero divisor. x / 0 and x % 0 are 0.
Expr truncated_quotient(const Expr &a, const Expr &b) {
  const Expr euclid = a / b;
  const Expr adjust = Halide::select(a < 0 && a % b != 0, Halide::select(b > 0, 1, -1), 0);
  return Halide::select(b == 0, 0, euclid + adjust);
}
Expr truncated_remainder(const Expr &a, const Expr &b) {
  return Halide::select(b == 0, 0, a - truncated_quotient(a, b) * b);
}

Expr arithmetic(ExprOp op, const Expr &x, const Expr &y) {
  const auto [a, b] = promote(x, y);
  const bool ints = !a.type().is_float();
  switch (op) {
    case ExprOp::add:
      return a + b;
    case ExprOp::sub:
      return a - b;
    case ExprOp::mul:
      return a * b;
    case ExprOp::div:
      return ints ? truncated_quotient(a, b) : a / b;
    case ExprOp::mod:
      return truncated_remainder(a, b);
    case ExprOp::min:
      return Halide::min(a, b);
    case ExprOp::max:
      return Halide::max(a, b);
    case ExprOp::eq:
      return a == b;
    case ExprOp::ne:
      return a != b;
    case ExprOp::lt:
      return a < b;
    case ExprOp::le:
      return a <= b;
    case ExprOp::gt:
      return a > b;
    case ExprOp::ge:
      return a >= b;
    default:
      break;
  }
  throw std::logic_error("arithmetic: not a binary operator");
}

}  // namespace

Expr lower_expr(const attn::ExprTree &e, const ExprPoint &p, const CapturedTensors &tensors) {
  std::vector<Expr> value(e.count);
  for (int n = 0; n < e.count; ++n) {
    const attn::ExprNode &node = e.nodes[n];
    const Expr x = node.argc > 0 ? value[node.arg[0]] : Expr();
    const Expr y = node.argc > 1 ? value[node.arg[1]] : Expr();
    switch (node.op) {
      case ExprOp::int_lit:
        value[n] = Expr(node.value);
        break;
      case ExprOp::float_lit:
        value[n] = Expr(node.number);
        break;
      case ExprOp::var:
        value[n] = variable(node.var, p);
        break;
      case ExprOp::index:
        value[n] = element(node, value, tensors);
        break;
      case ExprOp::neg:
        value[n] = -x;
        break;
      case ExprOp::lnot:
        value[n] = !x;
        break;
      case ExprOp::land:
        value[n] = x && y;
        break;
      case ExprOp::lor:
        value[n] = x || y;
        break;
      case ExprOp::eq:
      case ExprOp::ne:
        // bool == bool compares as is; numbers promote.
        value[n] = x.type().is_bool() ? (node.op == ExprOp::eq ? x == y : x != y) : arithmetic(node.op, x, y);
        break;
      case ExprOp::abs:
        value[n] = x.type().is_float() ? Halide::abs(x) : Halide::cast<int32_t>(Halide::abs(x));
        break;
      case ExprOp::select: {
        const Expr z = value[node.arg[2]];
        if (y.type().is_bool()) {
          value[n] = Halide::select(x, y, z);
        } else {
          const auto [a, b] = promote(y, z);
          value[n] = Halide::select(x, a, b);
        }
        break;
      }
      case ExprOp::exp:
        value[n] = Halide::exp(as_f32(x));
        break;
      case ExprOp::log:
        value[n] = Halide::log(as_f32(x));
        break;
      case ExprOp::sqrt:
        value[n] = Halide::sqrt(as_f32(x));
        break;
      case ExprOp::tanh:
        value[n] = Halide::tanh(as_f32(x));
        break;
      case ExprOp::floor:
        value[n] = Halide::floor(as_f32(x));
        break;
      case ExprOp::ceil:
        value[n] = Halide::ceil(as_f32(x));
        break;
      case ExprOp::to_float:
        value[n] = as_f32(x);
        break;
      case ExprOp::to_int:
        value[n] = to_int(x);
        break;
      default:
        value[n] = arithmetic(node.op, x, y);
        break;
    }
  }
  const Expr root = value[e.root()];
  return root.type().is_bool() ? root : as_f32(root);
}

}  // namespace attnc
