// Interval arithmetic over an expression, node by node in post-order: ints as [lo, hi] (either
// side undefined: unbounded), bools as {never, always}. Every rule is conservative: a bound only
// where it holds for every pair of the block.
#include "attnc/expr_bounds.h"

#include <optional>
#include <vector>

namespace attnc {

using attn::ExprOp;
using Halide::Expr;

namespace {

struct Bounds {
  Expr lo, hi;          // ints: undefined is unbounded on that side
  Expr never, always;   // bools: each false where unknown
  bool is_int = false;  // an int (else a float or a bool: no range)
};

Expr no() {
  return Halide::Internal::const_false();
}
Bounds range(const Expr &lo, const Expr &hi) {
  return {lo, hi, no(), no(), true};
}
Bounds any_int() {
  return range(Expr(), Expr());
}
Bounds point(const Expr &v) {
  return v.defined() ? range(v, v) : any_int();
}
Bounds any_value() {
  return {Expr(), Expr(), no(), no(), false};
}
Bounds truth(const Expr &never, const Expr &always) {
  return {Expr(), Expr(), never, always, false};
}
bool both(const Expr &a, const Expr &b) {
  return a.defined() && b.defined();
}
Expr min_of(const Expr &a, const Expr &b) {
  return both(a, b) ? Halide::min(a, b) : Expr();
}
Expr max_of(const Expr &a, const Expr &b) {
  return both(a, b) ? Halide::max(a, b) : Expr();
}

bool constant_value(const Bounds &b, int64_t &value) {
  if (!b.is_int || !both(b.lo, b.hi)) return false;
  const std::optional<int64_t> lo = Halide::Internal::as_const_int(b.lo),
                               hi = Halide::Internal::as_const_int(b.hi);
  if (!lo || !hi || *lo != *hi) return false;
  value = *lo;
  return true;
}

// C's truncating quotient by a constant (the lowering's rule, expr_lowering.cpp).
Expr quotient(const Expr &x, int c) {
  return x / c + Halide::select(x < 0 && x % c != 0, c > 0 ? 1 : -1, 0);
}

Bounds add(const Bounds &a, const Bounds &b, bool subtract) {
  if (!subtract)
    return range(both(a.lo, b.lo) ? a.lo + b.lo : Expr(), both(a.hi, b.hi) ? a.hi + b.hi : Expr());
  return range(both(a.lo, b.hi) ? a.lo - b.hi : Expr(), both(a.hi, b.lo) ? a.hi - b.lo : Expr());
}

Bounds multiply(const Bounds &a, const Bounds &b) {
  int64_t c = 0;
  const Bounds *x = constant_value(b, c) ? &a : constant_value(a, c) ? &b : nullptr;
  if (x == nullptr) {
    if (!both(a.lo, a.hi) || !both(b.lo, b.hi)) return any_int();
    const Expr p0 = a.lo * b.lo, p1 = a.lo * b.hi, p2 = a.hi * b.lo, p3 = a.hi * b.hi;
    return range(Halide::min(Halide::min(p0, p1), Halide::min(p2, p3)),
                 Halide::max(Halide::max(p0, p1), Halide::max(p2, p3)));
  }
  if (c == 0) return point(Expr(0));
  const Expr k = static_cast<int32_t>(c);
  const Expr lo = x->lo.defined() ? x->lo * k : Expr(), hi = x->hi.defined() ? x->hi * k : Expr();
  return c > 0 ? range(lo, hi) : range(hi, lo);
}

// x / c and x % c for a constant c != 0; anything else divides into an unknown int.
Bounds divide(const Bounds &a, const Bounds &b, bool remainder) {
  int64_t c = 0;
  if (!constant_value(b, c) || c == 0 || c < -65536 || c > 65536) return any_int();
  const int k = static_cast<int>(c), m = k > 0 ? k : -k;
  if (!remainder) {  // monotonic in x
    const Expr lo = a.lo.defined() ? quotient(a.lo, k) : Expr(),
               hi = a.hi.defined() ? quotient(a.hi, k) : Expr();
    return k > 0 ? range(lo, hi) : range(hi, lo);
  }
  // The sign of the dividend: [0, m - 1] for x >= 0, [-(m - 1), 0] for x <= 0; exact when a
  // non-negative range lies in one period.
  if (!both(a.lo, a.hi)) return range(-(m - 1), m - 1);
  const Expr one_period = a.lo >= 0 && a.lo / m == a.hi / m;
  return range(Halide::select(one_period, a.lo % m, a.lo >= 0, 0, -(m - 1)),
               Halide::select(one_period, a.hi % m, a.hi <= 0, 0, m - 1));
}

Bounds absolute(const Bounds &a) {
  if (!both(a.lo, a.hi)) {
    if (a.lo.defined()) return range(Halide::select(a.lo >= 0, a.lo, 0), Expr());
    if (a.hi.defined()) return range(Halide::select(a.hi <= 0, -a.hi, 0), Expr());
    return range(0, Expr());
  }
  return range(Halide::select(a.lo >= 0, a.lo, a.hi <= 0, -a.hi, 0), Halide::max(-a.lo, a.hi));
}

// a < b (or <= with or_equal) at every pair, and at none.
Bounds less(const Bounds &a, const Bounds &b, bool or_equal) {
  const Expr always = both(a.hi, b.lo) ? (or_equal ? a.hi <= b.lo : a.hi < b.lo) : no();
  const Expr never = both(a.lo, b.hi) ? (or_equal ? a.lo > b.hi : a.lo >= b.hi) : no();
  return truth(never, always);
}

Bounds equal(const Bounds &a, const Bounds &b) {
  const Expr never = (both(a.hi, b.lo) ? a.hi < b.lo : no()) || (both(b.hi, a.lo) ? b.hi < a.lo : no());
  const Expr always =
      both(a.lo, a.hi) && both(b.lo, b.hi) ? a.lo == a.hi && b.lo == b.hi && a.lo == b.lo : no();
  return truth(never, always);
}

Bounds negate(const Bounds &t) {
  return truth(t.always, t.never);
}

Bounds compare(ExprOp op, const Bounds &a, const Bounds &b) {
  if (!a.is_int || !b.is_int) return any_value();
  switch (op) {
    case ExprOp::lt:
      return less(a, b, false);
    case ExprOp::le:
      return less(a, b, true);
    case ExprOp::gt:
      return less(b, a, false);
    case ExprOp::ge:
      return less(b, a, true);
    case ExprOp::eq:
      return equal(a, b);
    default:
      return negate(equal(a, b));  // ne
  }
}

Bounds choose(const Bounds &c, const Bounds &a, const Bounds &b) {
  if (a.is_int && b.is_int) {
    auto pick = [&](const Expr &x, const Expr &y, bool lower) {
      const Expr either = lower ? min_of(x, y) : max_of(x, y);
      if (!either.defined()) return Expr();
      return Halide::select(c.always, x, c.never, y, either);
    };
    return range(pick(a.lo, b.lo, true), pick(a.hi, b.hi, false));
  }
  if (a.is_int || b.is_int) return any_value();
  return truth((c.always && a.never) || (c.never && b.never) || (a.never && b.never),
               (c.always && a.always) || (c.never && b.always) || (a.always && b.always));
}

Bounds node_bounds(const attn::ExprNode &node, const std::vector<Bounds> &v, const PairBlock &p) {
  const Bounds x = node.argc > 0 ? v[node.arg[0]] : Bounds{}, y = node.argc > 1 ? v[node.arg[1]] : Bounds{};
  const bool ints = x.is_int && (node.argc < 2 || y.is_int);
  switch (node.op) {
    case ExprOp::int_lit:
      return point(Expr(node.value));
    case ExprOp::var:
      switch (node.var) {
        case attn::ExprVar::q:
          return range(p.q_lo, p.q_hi);
        case attn::ExprVar::k:
          return range(p.k_lo, p.k_hi);
        case attn::ExprVar::i:
          return range(p.i_lo, p.i_hi);
        case attn::ExprVar::b:
          return p.batch.defined() ? point(p.batch) : range(0, Expr());
        case attn::ExprVar::h:
          return p.head.defined() ? point(p.head) : range(0, Expr());
        case attn::ExprVar::kvh:
          return p.kv_head.defined() ? point(p.kv_head) : range(0, Expr());
        case attn::ExprVar::Sq:
          return point(p.seq_q);
        case attn::ExprVar::Sk:
          return point(p.seq_k);
        case attn::ExprVar::s:
          return any_value();
      }
      return any_value();
    case ExprOp::neg:
      return x.is_int ? range(x.hi.defined() ? -x.hi : Expr(), x.lo.defined() ? -x.lo : Expr()) : any_value();
    case ExprOp::add:
    case ExprOp::sub:
      return ints ? add(x, y, node.op == ExprOp::sub) : any_value();
    case ExprOp::mul:
      return ints ? multiply(x, y) : any_value();
    case ExprOp::div:
    case ExprOp::mod:
      return ints ? divide(x, y, node.op == ExprOp::mod) : any_value();
    case ExprOp::min:
      return ints ? range(min_of(x.lo, y.lo), min_of(x.hi, y.hi)) : any_value();
    case ExprOp::max:
      return ints ? range(max_of(x.lo, y.lo), max_of(x.hi, y.hi)) : any_value();
    case ExprOp::abs:
      return x.is_int ? absolute(x) : any_value();
    case ExprOp::lt:
    case ExprOp::le:
    case ExprOp::gt:
    case ExprOp::ge:
    case ExprOp::eq:
    case ExprOp::ne:
      return compare(node.op, x, y);
    case ExprOp::land:
      return truth(x.never || y.never, x.always && y.always);
    case ExprOp::lor:
      return truth(x.never && y.never, x.always || y.always);
    case ExprOp::lnot:
      return negate(x);
    case ExprOp::select:
      return choose(x, y, v[node.arg[2]]);
    case ExprOp::to_int:
    case ExprOp::index:
      return node.op == ExprOp::index ? any_value() : any_int();
    default:
      return any_value();  // floats
  }
}

}  // namespace

BlockTruth mask_mod_on_block(const attn::ExprTree &e, const PairBlock &block) {
  if (e.empty()) return {no(), Halide::Internal::const_true()};
  std::vector<Bounds> v(e.count);
  for (int n = 0; n < e.count; ++n) v[n] = node_bounds(e.nodes[n], v, block);
  const Bounds &root = v[e.root()];
  return {Halide::Internal::simplify(root.never), Halide::Internal::simplify(root.always)};
}

}  // namespace attnc
