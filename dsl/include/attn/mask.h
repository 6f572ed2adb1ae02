// attn/mask.h: masks as a small constexpr expression of terms joined by & and |.
#pragma once

#include <cstdint>

#include "attn/limits.h"

namespace attn {

// Terms, and the two operators. q' is the query's key position (bottom-right aligned), k the key.
//   window(L, R)        keep q' - L <= k <= q' + R; -1 is unbounded on that side. causal = (-1, 0)
//   global_tokens(G)    keep k < G or q' < G
//   random(BS, N, SEED) keep N pseudo-random key blocks of BS keys per query block (docs/DSL.md)
//   padding             runtime key_lengths [B]: keep k < key_lengths[b]; also sets Lk for q'
//   prefix              runtime prefix_lengths [B]: keep k < prefix_lengths[b]
//   document            runtime segment_ids_q [B,Sq], segment_ids_k [B,Sk]: keep when equal
//   tensor              runtime mask (uint8) [B,H,Sq,Sk], fewer dims aligned from the right: keep where != 0
enum class MaskOp : uint8_t { window, both, either, global_tokens, random_blocks, padding, prefix, document, tensor };

constexpr bool is_operator(MaskOp op) { return op == MaskOp::both || op == MaskOp::either; }
// Structural terms depend on positions only, so the compiler can skip the key blocks they remove.
constexpr bool is_structural(MaskOp op) {
  return op == MaskOp::window || op == MaskOp::global_tokens || op == MaskOp::random_blocks;
}

struct MaskNode {
  MaskOp op = MaskOp::window;
  int32_t left = -1;  // window
  int32_t right = -1;
  int32_t tokens = 0;  // global_tokens: G
  int32_t block = 0;   // random_blocks: BS
  int32_t blocks = 0;  // random_blocks: N
  uint32_t seed = 0;   // random_blocks: SEED
  int8_t lhs = -1;     // both / either: operand node indices
  int8_t rhs = -1;
};

// Problems a term records for validation (Mask::bad_term). The *_too_large ones exceed attn/limits.h.
enum class MaskProblem : int32_t {
  none,
  window_bound,
  too_many_terms,
  global_tokens,
  random_block,
  random_count,
  window_bound_too_large,
  global_tokens_too_large,
  random_block_too_large,
  random_count_too_large,
};

// Nodes are stored in post-order: operands before their operator; the root is the last node.
// An empty mask keeps every key.
struct Mask {
  static constexpr int capacity = 16;
  MaskNode nodes[capacity]{};
  int32_t count = 0;
  // Set when a term saw an out-of-range value or the expression outgrew capacity.
  MaskProblem bad_term = MaskProblem::none;
  int32_t bad_value = 0;

  constexpr bool empty() const { return count == 0; }
  constexpr int root() const { return count - 1; }
  constexpr bool uses(MaskOp op) const {
    for (int i = 0; i < count; ++i)
      if (nodes[i].op == op) return true;
    return false;
  }
};

// The first out-of-range value of a term node (operators and runtime terms have none).
struct TermCheck {
  MaskProblem problem = MaskProblem::none;
  int32_t value = 0;
};
constexpr TermCheck check_term(const MaskNode &n) {
  using P = MaskProblem;
  constexpr int32_t max_pos = limits::max_positions;
  switch (n.op) {
    case MaskOp::window:
      if (n.left < -1 || n.right < -1) return {P::window_bound, n.left < -1 ? n.left : n.right};
      if (n.left > max_pos || n.right > max_pos)
        return {P::window_bound_too_large, n.left > max_pos ? n.left : n.right};
      return {};
    case MaskOp::global_tokens:
      if (n.tokens < 1) return {P::global_tokens, n.tokens};
      if (n.tokens > max_pos) return {P::global_tokens_too_large, n.tokens};
      return {};
    case MaskOp::random_blocks:
      if (n.block < 1) return {P::random_block, n.block};
      if (n.block > max_pos) return {P::random_block_too_large, n.block};
      if (n.blocks < 1) return {P::random_count, n.blocks};
      if (n.blocks > limits::max_random_draws) return {P::random_count_too_large, n.blocks};
      return {};
    default:
      return {};
  }
}

namespace detail {
constexpr Mask single(MaskNode node) {
  Mask m;
  m.count = 1;
  m.nodes[0] = node;
  const TermCheck c = check_term(node);
  m.bad_term = c.problem;
  m.bad_value = c.value;
  return m;
}
}  // namespace detail

constexpr Mask no_mask() { return Mask{}; }

constexpr Mask window(int32_t left, int32_t right) {
  MaskNode n;
  n.op = MaskOp::window;
  n.left = left;
  n.right = right;
  return detail::single(n);
}

constexpr Mask causal() { return window(-1, 0); }

constexpr Mask global_tokens(int32_t count) {
  MaskNode n;
  n.op = MaskOp::global_tokens;
  n.tokens = count;
  return detail::single(n);
}

constexpr Mask random_blocks(int32_t block, int32_t blocks, uint32_t seed) {
  MaskNode n;
  n.op = MaskOp::random_blocks;
  n.block = block;
  n.blocks = blocks;
  n.seed = seed;
  return detail::single(n);
}

constexpr Mask term(MaskOp op) {
  MaskNode n;
  n.op = op;
  return detail::single(n);
}
constexpr Mask padding() { return term(MaskOp::padding); }
constexpr Mask prefix() { return term(MaskOp::prefix); }
constexpr Mask document() { return term(MaskOp::document); }
constexpr Mask mask_tensor() { return term(MaskOp::tensor); }

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
    m.bad_term = MaskProblem::too_many_terms;
    m.bad_value = a.count + b.count + 1;
    return m;
  }
  for (int i = 0; i < a.count; ++i) m.nodes[i] = a.nodes[i];
  for (int i = 0; i < b.count; ++i) {
    MaskNode n = b.nodes[i];
    if (is_operator(n.op)) {
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
  const bool from_a = a.bad_term != MaskProblem::none;
  m.bad_term = from_a ? a.bad_term : b.bad_term;
  m.bad_value = from_a ? a.bad_value : b.bad_value;
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
