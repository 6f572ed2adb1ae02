// attn/mask.h: masks as a small constexpr expression of terms joined by & and |.
#pragma once

#include <cstdint>

namespace attn {

// One term or operator. A window keeps q' - left <= k <= q' + right, -1 meaning unbounded
// on that side; causal is window(-1, 0). q' is the query's key position (bottom-right aligned).
enum class MaskOp : uint8_t { window, both, either };

struct MaskNode {
  MaskOp op = MaskOp::window;
  int32_t left = -1;  // window only
  int32_t right = -1;
  int8_t lhs = -1;  // both / either: operand node indices
  int8_t rhs = -1;
};

// Nodes are stored in post-order: operands before their operator; the root is the last node.
// An empty mask keeps every key.
struct Mask {
  static constexpr int capacity = 16;
  MaskNode nodes[capacity]{};
  int32_t count = 0;
  // Set when a term saw an out-of-range value or the expression outgrew capacity.
  int32_t bad_term = 0;  // 0 none, 1 window bound < -1, 2 too many terms
  int32_t bad_value = 0;

  constexpr bool empty() const { return count == 0; }
  constexpr int root() const { return count - 1; }
};

constexpr Mask no_mask() { return Mask{}; }

constexpr Mask window(int32_t left, int32_t right) {
  Mask m;
  m.count = 1;
  m.nodes[0].op = MaskOp::window;
  m.nodes[0].left = left;
  m.nodes[0].right = right;
  if (left < -1 || right < -1) {
    m.bad_term = 1;
    m.bad_value = left < -1 ? left : right;
  }
  return m;
}

constexpr Mask causal() { return window(-1, 0); }

namespace detail {
constexpr Mask combine(const Mask &a, const Mask &b, MaskOp op) {
  // An empty mask keeps every key: the identity of &, and the absorbing value of |.
  if (a.empty() || b.empty()) {
    if (op == MaskOp::either) return Mask{};
    return a.empty() ? b : a;
  }
  Mask m;
  if (a.count + b.count + 1 > Mask::capacity) {
    m = a;
    m.bad_term = 2;
    m.bad_value = a.count + b.count + 1;
    return m;
  }
  for (int i = 0; i < a.count; ++i) m.nodes[i] = a.nodes[i];
  for (int i = 0; i < b.count; ++i) {
    MaskNode n = b.nodes[i];
    if (n.op != MaskOp::window) {
      n.lhs = static_cast<int8_t>(n.lhs + a.count);
      n.rhs = static_cast<int8_t>(n.rhs + a.count);
    }
    m.nodes[a.count + i] = n;
  }
  m.count = a.count + b.count + 1;
  MaskNode &top = m.nodes[m.count - 1];
  top.op = op;
  top.lhs = static_cast<int8_t>(a.count - 1);
  top.rhs = static_cast<int8_t>(a.count + b.count - 1);
  m.bad_term = a.bad_term ? a.bad_term : b.bad_term;
  m.bad_value = a.bad_term ? a.bad_value : b.bad_value;
  return m;
}
}  // namespace detail

// Both keep (intersection).
constexpr Mask operator&(const Mask &a, const Mask &b) { return detail::combine(a, b, MaskOp::both); }
// Either keeps (union).
constexpr Mask operator|(const Mask &a, const Mask &b) { return detail::combine(a, b, MaskOp::either); }

constexpr bool is_causal(const Mask &m) {
  return m.count == 1 && m.nodes[0].op == MaskOp::window && m.nodes[0].left == -1 && m.nodes[0].right == 0;
}

}  // namespace attn
