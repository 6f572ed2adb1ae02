// attn/expr.h: score_mod / mask_mod expressions (issue 34) as constexpr node pools, and the C++
// builder attn::expr that writes them (no Halide here; the grammar is in docs/DSL.md).
#pragma once

#include <cstdint>

#include "attn/limits.h"

namespace attn {

// Leaves (literals, variables, a captured tensor's element), then operators and functions.
enum class ExprOp : uint8_t {
  int_lit,
  float_lit,
  var,
  index,  // tensor[arg0, ...]: ExprNode::tensor names it, argc indices
  neg,
  lnot,
  add,
  sub,
  mul,
  div,  // int / int truncates toward zero (as C)
  mod,  // int % int has the sign of the dividend (as C)
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  land,
  lor,
  min,
  max,
  abs,
  select,
  exp,
  log,
  sqrt,
  tanh,
  floor,
  ceil,
  to_float,
  to_int,  // truncates toward zero
};
// s: the scaled score (score_mod only, f32); the rest int32. q: the query row's key position under
// the spec's align, i: the query row, k: the key position.
enum class ExprVar : uint8_t { s, b, h, kvh, q, k, i, Sq, Sk };
enum class ExprType : uint8_t { none, i32, f32, boolean };
// A captured tensor's element type.
enum class InputDType : uint8_t { f32, i32, u8 };

inline constexpr int max_input_name = 16;  // bytes, with the terminating 0
inline constexpr int max_input_rank = 4;

struct ExprNode {
  ExprOp op = ExprOp::int_lit;
  ExprVar var = ExprVar::s;
  int8_t argc = 0;
  int8_t arg[max_input_rank]{-1, -1, -1, -1};  // operand node indices, all earlier than this node
  int32_t value = 0;                           // int_lit
  float number = 0.0f;                         // float_lit
  char tensor[max_input_name]{};               // index: the captured tensor's name
};

// One expression, nodes in post-order (operands first), the root last; empty: no expression.
struct ExprTree {
  ExprNode nodes[limits::max_expr_nodes]{};
  int32_t count = 0;
  bool overflow = false;  // a builder outgrew max_expr_nodes (validation reports it)

  constexpr bool empty() const { return count == 0; }
  constexpr int root() const { return count - 1; }
  constexpr bool uses_var(ExprVar v) const {
    for (int n = 0; n < count; ++n)
      if (nodes[n].op == ExprOp::var && nodes[n].var == v) return true;
    return false;
  }
  constexpr bool uses_tensor() const {
    for (int n = 0; n < count; ++n)
      if (nodes[n].op == ExprOp::index) return true;
    return false;
  }

  // Appends `node` whose operands are the roots of `parts` (each copied in, indices shifted).
  template <int N>
  static constexpr ExprTree join(ExprNode node, const ExprTree *const (&parts)[N]) {
    ExprTree t;
    int roots[N > 0 ? N : 1]{};
    for (int p = 0; p < N; ++p) {
      const int base = t.count;
      t.overflow = t.overflow || parts[p]->overflow;
      for (int n = 0; n < parts[p]->count; ++n) {
        if (t.count == limits::max_expr_nodes) {
          t.overflow = true;
          break;
        }
        ExprNode copy = parts[p]->nodes[n];
        for (int a = 0; a < copy.argc; ++a) copy.arg[a] = static_cast<int8_t>(copy.arg[a] + base);
        t.nodes[t.count++] = copy;
      }
      roots[p] = t.count - 1;
    }
    node.argc = static_cast<int8_t>(N);
    for (int p = 0; p < N; ++p) node.arg[p] = static_cast<int8_t>(roots[p]);
    if (t.count == limits::max_expr_nodes) {
      t.overflow = true;
      return t;
    }
    t.nodes[t.count++] = node;
    return t;
  }
};

// A captured tensor: `inputs="NAME:DTYPE[DIM,...]"`. A dim > 0 is fixed; <= 0 a symbol (InputDim).
enum class InputDim : int32_t { B = 0, H = -1, KVH = -2, Sq = -3, Sk = -4 };
struct CapturedInput {
  char name[max_input_name]{};
  InputDType dtype = InputDType::f32;
  int32_t rank = 0;
  int32_t dims[max_input_rank]{};
};
struct CapturedInputs {
  CapturedInput items[limits::max_captured_inputs]{};
  int32_t count = 0;
  bool overflow = false;  // more than max_captured_inputs were declared

  constexpr int find(const char *name) const {
    for (int t = 0; t < count; ++t) {
      int c = 0;
      while (c < max_input_name && items[t].name[c] == name[c] && name[c] != '\0') ++c;
      if (c < max_input_name && items[t].name[c] == name[c]) return t;
    }
    return -1;
  }
};

// The symbolic dims of Spec::with_input: {dim::H, 63} is [H, 63].
namespace dim {
inline constexpr int32_t B = 0, H = -1, KVH = -2, Sq = -3, Sk = -4;
}  // namespace dim

namespace expr {

using E = ExprTree;

constexpr E leaf(ExprNode node) {
  E t;
  node.argc = 0;
  t.nodes[0] = node;
  t.count = 1;
  return t;
}
constexpr E var(ExprVar v) {
  ExprNode n;
  n.op = ExprOp::var;
  n.var = v;
  return leaf(n);
}
constexpr E lit(int32_t v) {
  ExprNode n;
  n.op = ExprOp::int_lit;
  n.value = v;
  return leaf(n);
}
constexpr E lit(double v) {
  ExprNode n;
  n.op = ExprOp::float_lit;
  n.number = static_cast<float>(v);
  return leaf(n);
}
// An operand: an expression, or an int or floating literal.
constexpr E operand(const E &e) {
  return e;
}
constexpr E operand(int v) {
  return lit(static_cast<int32_t>(v));
}
constexpr E operand(double v) {
  return lit(v);
}
constexpr E operand(float v) {
  return lit(static_cast<double>(v));
}

constexpr E apply(ExprOp op, const E &a) {
  ExprNode n;
  n.op = op;
  return E::join<1>(n, {&a});
}
constexpr E apply(ExprOp op, const E &a, const E &b) {
  ExprNode n;
  n.op = op;
  return E::join<2>(n, {&a, &b});
}
constexpr E apply(ExprOp op, const E &a, const E &b, const E &c) {
  ExprNode n;
  n.op = op;
  return E::join<3>(n, {&a, &b, &c});
}

inline constexpr E s = var(ExprVar::s), b = var(ExprVar::b), h = var(ExprVar::h), kvh = var(ExprVar::kvh),
                   q = var(ExprVar::q), k = var(ExprVar::k), i = var(ExprVar::i), Sq = var(ExprVar::Sq),
                   Sk = var(ExprVar::Sk);

// Operators where at least one side is an expression; the other may be a literal.
template <class A, class B>
concept Operands = __is_same(A, E) || __is_same(B, E);
#define ATTN_EXPR_BINARY(symbol, op)                    \
  template <class A, class B>                           \
  requires Operands<A, B>                               \
  constexpr E operator symbol(const A &a, const B &b) { \
    return apply(ExprOp::op, operand(a), operand(b));   \
  }
ATTN_EXPR_BINARY(+, add)
ATTN_EXPR_BINARY(-, sub)
ATTN_EXPR_BINARY(*, mul)
ATTN_EXPR_BINARY(/, div)
ATTN_EXPR_BINARY(%, mod)
ATTN_EXPR_BINARY(==, eq)
ATTN_EXPR_BINARY(!=, ne)
ATTN_EXPR_BINARY(<, lt)
ATTN_EXPR_BINARY(<=, le)
ATTN_EXPR_BINARY(>, gt)
ATTN_EXPR_BINARY(>=, ge)
ATTN_EXPR_BINARY(&&, land)
ATTN_EXPR_BINARY(||, lor)
#undef ATTN_EXPR_BINARY
constexpr E operator-(const E &a) {
  return apply(ExprOp::neg, a);
}
constexpr E operator!(const E &a) {
  return apply(ExprOp::lnot, a);
}

template <class A, class B>
constexpr E min(const A &a, const B &b) {
  return apply(ExprOp::min, operand(a), operand(b));
}
template <class A, class B>
constexpr E max(const A &a, const B &b) {
  return apply(ExprOp::max, operand(a), operand(b));
}
template <class C, class A, class B>
constexpr E select(const C &c, const A &a, const B &b) {
  return apply(ExprOp::select, operand(c), operand(a), operand(b));
}
constexpr E abs(const E &a) {
  return apply(ExprOp::abs, a);
}
constexpr E exp(const E &a) {
  return apply(ExprOp::exp, a);
}
constexpr E log(const E &a) {
  return apply(ExprOp::log, a);
}
constexpr E sqrt(const E &a) {
  return apply(ExprOp::sqrt, a);
}
constexpr E tanh(const E &a) {
  return apply(ExprOp::tanh, a);
}
constexpr E floor(const E &a) {
  return apply(ExprOp::floor, a);
}
constexpr E ceil(const E &a) {
  return apply(ExprOp::ceil, a);
}
// float(x) and int(x) of the text form.
constexpr E to_float(const E &a) {
  return apply(ExprOp::to_float, a);
}
constexpr E to_int(const E &a) {
  return apply(ExprOp::to_int, a);
}

// tensor("rel_bias")(h, q - k): an element of a captured tensor the spec declares (with_input).
struct TensorRef {
  char name[max_input_name]{};
  template <class... I>
  constexpr E operator()(const I &...index) const {
    ExprNode n;
    n.op = ExprOp::index;
    for (int c = 0; c < max_input_name; ++c) n.tensor[c] = name[c];
    if constexpr (sizeof...(I) >= 1 && sizeof...(I) <= max_input_rank) {
      const E parts[] = {operand(index)...};
      const E *ptrs[sizeof...(I)]{};
      for (unsigned p = 0; p < sizeof...(I); ++p) ptrs[p] = &parts[p];
      return E::join<sizeof...(I)>(n, ptrs);
    } else {
      E bad;
      bad.overflow = true;  // no index, or more than any tensor has
      return bad;
    }
  }
};
constexpr TensorRef tensor(const char *name) {
  TensorRef t;
  int c = 0;
  for (; name[c] != '\0' && c < max_input_name - 1; ++c) t.name[c] = name[c];
  return t;
}

}  // namespace expr
}  // namespace attn
