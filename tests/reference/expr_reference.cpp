// expr_reference.cpp: the tree-walking evaluator of score_mod / mask_mod.
#include "expr_reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace attnc::reference {
namespace {

using attn::ExprNode;
using attn::ExprOp;

// A value of the language: an int (kept in int64, wrapped to int32 after each operation), a
// float in T, or a bool.
template <class T>
struct Value {
  enum Kind { integer, real, boolean } kind = integer;
  int64_t i = 0;
  T f = 0;
  bool b = false;
  T as_real() const { return kind == real ? f : static_cast<T>(i); }
};

int64_t wrap32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

template <class T>
Value<T> integer(int64_t v) {
  Value<T> r;
  r.i = wrap32(v);
  return r;
}
template <class T>
Value<T> real(T v) {
  Value<T> r;
  r.kind = Value<T>::real;
  r.f = v;
  return r;
}
template <class T>
Value<T> boolean(bool v) {
  Value<T> r;
  r.kind = Value<T>::boolean;
  r.b = v;
  return r;
}

// C's truncating division and remainder; a zero divisor gives 0 (docs/DSL.md).
int64_t c_div(int64_t a, int64_t b) {
  return b == 0 ? 0 : a / b;
}
int64_t c_mod(int64_t a, int64_t b) {
  return b == 0 ? 0 : a % b;
}

// float -> int: truncation, saturated to the int32 range.
template <class T>
int64_t to_int(T x) {
  if (std::isnan(x)) return 0;
  const double d = static_cast<double>(x);
  if (d <= -2147483648.0) return INT32_MIN;
  if (d >= 2147483520.0) return 2147483520;  // the largest float below 2^31
  return static_cast<int64_t>(std::trunc(d));
}

template <class T>
class Evaluator {
 public:
  Evaluator(const attn::ExprTree &e, T s, const ExprVars &v, const CapturedViews &t)
      : e_(e), s_(s), v_(v), t_(t) {}

  Value<T> at(int n) const {
    const ExprNode &node = e_.nodes[n];
    switch (node.op) {
      case ExprOp::int_lit:
        return integer<T>(node.value);
      case ExprOp::float_lit:
        return real<T>(static_cast<T>(node.number));
      case ExprOp::var:
        return variable(node);
      case ExprOp::index:
        return element(node);
      case ExprOp::neg: {
        const Value<T> x = at(node.arg[0]);
        return x.kind == Value<T>::real ? real<T>(-x.f) : integer<T>(-x.i);
      }
      case ExprOp::lnot:
        return boolean<T>(!at(node.arg[0]).b);
      case ExprOp::land:
        return boolean<T>(at(node.arg[0]).b && at(node.arg[1]).b);
      case ExprOp::lor:
        return boolean<T>(at(node.arg[0]).b || at(node.arg[1]).b);
      case ExprOp::abs: {
        const Value<T> x = at(node.arg[0]);
        return x.kind == Value<T>::real ? real<T>(std::fabs(x.f)) : integer<T>(x.i < 0 ? -x.i : x.i);
      }
      case ExprOp::select:
        return at(node.arg[0]).b ? branch(node, 1) : branch(node, 2);
      case ExprOp::exp:
        return real<T>(std::exp(at(node.arg[0]).as_real()));
      case ExprOp::log:
        return real<T>(std::log(at(node.arg[0]).as_real()));
      case ExprOp::sqrt:
        return real<T>(std::sqrt(at(node.arg[0]).as_real()));
      case ExprOp::tanh:
        return real<T>(std::tanh(at(node.arg[0]).as_real()));
      case ExprOp::floor:
        return real<T>(std::floor(at(node.arg[0]).as_real()));
      case ExprOp::ceil:
        return real<T>(std::ceil(at(node.arg[0]).as_real()));
      case ExprOp::to_float:
        return real<T>(at(node.arg[0]).as_real());
      case ExprOp::to_int: {
        const Value<T> x = at(node.arg[0]);
        return x.kind == Value<T>::real ? integer<T>(to_int(x.f)) : x;
      }
      default:
        return binary(node);
    }
  }

 private:
  Value<T> variable(const ExprNode &node) const {
    switch (node.var) {
      case attn::ExprVar::s:
        return real<T>(s_);
      case attn::ExprVar::b:
        return integer<T>(v_.b);
      case attn::ExprVar::h:
        return integer<T>(v_.h);
      case attn::ExprVar::kvh:
        return integer<T>(v_.kvh);
      case attn::ExprVar::q:
        return integer<T>(v_.q);
      case attn::ExprVar::k:
        return integer<T>(v_.k);
      case attn::ExprVar::i:
        return integer<T>(v_.i);
      case attn::ExprVar::Sq:
        return integer<T>(v_.seq_q);
      case attn::ExprVar::Sk:
        return integer<T>(v_.seq_k);
    }
    throw std::invalid_argument("expr reference: unknown variable");
  }

  // The documented clamp: each index to the nearest element of its dim.
  Value<T> element(const ExprNode &node) const {
    const std::string name(node.tensor, strnlen(node.tensor, attn::max_input_name));
    const auto found = t_.find(name);
    if (found == t_.end()) throw std::invalid_argument("expr reference: no tensor '" + name + "'");
    std::vector<int64_t> index(node.argc);
    for (int a = 0; a < node.argc; ++a)
      index[a] = std::clamp<int64_t>(at(node.arg[a]).i, 0, std::max<int64_t>(found->second.shape[a] - 1, 0));
    const double value = found->second.at(index);
    return found->second.is_float ? real<T>(static_cast<T>(value)) : integer<T>(static_cast<int64_t>(value));
  }

  Value<T> branch(const ExprNode &node, int which) const {
    const Value<T> chosen = at(node.arg[which]);
    if (chosen.kind == Value<T>::boolean) return chosen;
    // The branches promote together: an int branch beside a float one is a float.
    const Value<T> other = at(node.arg[3 - which]);
    if (chosen.kind == Value<T>::integer && other.kind == Value<T>::real) return real<T>(chosen.as_real());
    return chosen;
  }

  Value<T> binary(const ExprNode &node) const {
    const Value<T> x = at(node.arg[0]), y = at(node.arg[1]);
    if (x.kind == Value<T>::boolean) {  // bool == bool, bool != bool
      return boolean<T>(node.op == ExprOp::eq ? x.b == y.b : x.b != y.b);
    }
    if (x.kind == Value<T>::real || y.kind == Value<T>::real) {
      if (node.op == ExprOp::div) return real<T>(x.as_real() / y.as_real());
      return common(node.op, x.as_real(), y.as_real(), [](T v) { return real<T>(v); });
    }
    if (node.op == ExprOp::div) return integer<T>(c_div(x.i, y.i));
    if (node.op == ExprOp::mod) return integer<T>(c_mod(x.i, y.i));
    return common(node.op, x.i, y.i, [](int64_t v) { return integer<T>(v); });
  }

  // The operators ints and floats share; `number` makes a value of the operands' kind.
  template <class N, class Number>
  static Value<T> common(ExprOp op, N a, N b, Number number) {
    switch (op) {
      case ExprOp::add:
        return number(a + b);
      case ExprOp::sub:
        return number(a - b);
      case ExprOp::mul:
        return number(a * b);
      case ExprOp::min:
        return number(std::min(a, b));
      case ExprOp::max:
        return number(std::max(a, b));
      case ExprOp::eq:
        return boolean<T>(a == b);
      case ExprOp::ne:
        return boolean<T>(a != b);
      case ExprOp::lt:
        return boolean<T>(a < b);
      case ExprOp::le:
        return boolean<T>(a <= b);
      case ExprOp::gt:
        return boolean<T>(a > b);
      case ExprOp::ge:
        return boolean<T>(a >= b);
      default:
        break;
    }
    throw std::invalid_argument("expr reference: not an operator of these operands");
  }

  const attn::ExprTree &e_;
  T s_;
  const ExprVars &v_;
  const CapturedViews &t_;
};

}  // namespace

template <class T>
T eval_score(const attn::ExprTree &e, T s, const ExprVars &vars, const CapturedViews &tensors) {
  return Evaluator<T>(e, s, vars, tensors).at(e.root()).as_real();
}
template float eval_score<float>(const attn::ExprTree &, float, const ExprVars &, const CapturedViews &);
template double eval_score<double>(const attn::ExprTree &, double, const ExprVars &, const CapturedViews &);

bool eval_mask(const attn::ExprTree &e, const ExprVars &vars, const CapturedViews &tensors) {
  return Evaluator<double>(e, 0.0, vars, tensors).at(e.root()).b;
}

void add_expr_options(Options &o, const attn::Spec &r, int64_t seq_q, int64_t seq_k, CapturedViews views) {
  const auto tensors_ptr = std::make_shared<const CapturedViews>(std::move(views));
  const int64_t group = r.heads / r.kv_heads;
  auto vars = [=](const Pair &p) {
    return ExprVars{p.batch, p.head, p.head / group, p.q_pos, p.key, p.row, seq_q, seq_k};
  };
  if (!r.score_mod.empty()) {
    const attn::ExprTree e = r.score_mod;
    o.score_mod_f64 = [e, vars, tensors_ptr](double s, const Pair &p) {
      return eval_score(e, s, vars(p), *tensors_ptr);
    };
    o.score_mod_f32 = [e, vars, tensors_ptr](float s, const Pair &p) {
      return eval_score(e, s, vars(p), *tensors_ptr);
    };
  }
  if (!r.mask_mod.empty()) {
    const attn::ExprTree e = r.mask_mod;
    o.mask_mod = [e, vars, tensors_ptr](const Pair &p) { return eval_mask(e, vars(p), *tensors_ptr); };
  }
}

}  // namespace attnc::reference
