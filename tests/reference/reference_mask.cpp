// reference_mask.cpp: which (query, key) pairs a mask keeps, term by term from docs/DSL.md.
#include <stdexcept>
#include <string>

#include "reference.h"

namespace attnc::reference {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// The positions a structural term looks at on one side: the position itself, or every position of
// its mask_block block (rows and keys that do not exist count too).
struct Span {
  int64_t first, last;
};
Span span_of(int64_t pos, int mask_block) {
  if (mask_block <= 0) return {pos, pos};
  const int64_t first = floor_div(pos, mask_block) * mask_block;
  return {first, first + mask_block - 1};
}

// window(L, R) keeps a block pair when some q' in q and key in k have -L <= key - q' <= R; over the
// two spans key - q' takes every value of [k.first - q.last, k.last - q.first].
bool window_keeps(const attn::MaskNode &node, Span q, Span k) {
  if (node.left >= 0 && k.last - q.first < -int64_t{node.left}) return false;
  if (node.right >= 0 && k.first - q.last > int64_t{node.right}) return false;
  return true;
}

// global(G) keeps k < G or q' < G: some position of either span below G.
bool global_keeps(const attn::MaskNode &node, Span q, Span k) {
  return k.first < node.tokens || q.first < node.tokens;
}

bool random_keeps(const attn::MaskNode &node, const Pair &p) {
  if (p.q_pos < 0 || p.key_length <= 0) return false;
  const int64_t key_blocks = (p.key_length + node.block - 1) / node.block;
  const int64_t key_block = p.key / node.block;
  for (int64_t drawn : random_key_blocks(node.seed, p.q_pos / node.block, node.blocks, key_blocks))
    if (drawn == key_block) return true;
  return false;
}

void require(const IndexView &v, const char *name) {
  if (v.empty()) throw std::invalid_argument(std::string("reference: the mask needs ") + name);
}

}  // namespace

std::vector<int64_t> random_key_blocks(uint32_t seed, int64_t query_block, int n_blocks, int64_t key_blocks) {
  std::vector<int64_t> picks;
  for (int n = 0; n < n_blocks; ++n) {
    // Unsigned 32-bit: every step wraps mod 2^32.
    uint32_t h = seed * 0x9E3779B1u + static_cast<uint32_t>(query_block) * 0x85EBCA77u +
                 static_cast<uint32_t>(n) * 0xC2B2AE3Du;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    h *= 0x297A2D39u;
    h ^= h >> 15;
    picks.push_back(static_cast<int64_t>(h % static_cast<uint64_t>(key_blocks)));
  }
  return picks;
}

bool keeps(const attn::Mask &mask, int mask_block, const RuntimeInputs &in, const Pair &p) {
  if (mask.empty()) return true;
  const Span q = span_of(p.q_pos, mask_block), k = span_of(p.key, mask_block);
  bool value[attn::Mask::capacity] = {};
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskNode &node = mask.nodes[n];
    switch (node.op) {
      case attn::MaskOp::window:
        value[n] = window_keeps(node, q, k);
        break;
      case attn::MaskOp::global_tokens:
        value[n] = global_keeps(node, q, k);
        break;
      case attn::MaskOp::random_blocks:
        value[n] = random_keeps(node, p);
        break;
      case attn::MaskOp::padding:
        require(in.key_lengths, "key_lengths");
        value[n] = p.key < in.key_lengths.at(p.batch);
        break;
      case attn::MaskOp::prefix:
        require(in.prefix_lengths, "prefix_lengths");
        value[n] = p.key < in.prefix_lengths.at(p.batch);
        break;
      case attn::MaskOp::document:
        require(in.segment_ids_q, "segment_ids_q");
        require(in.segment_ids_k, "segment_ids_k");
        value[n] = in.segment_ids_q.at(p.batch, p.row) == in.segment_ids_k.at(p.batch, p.key);
        break;
      case attn::MaskOp::tensor:
        if (in.mask.empty()) throw std::invalid_argument("reference: the mask needs the mask tensor");
        value[n] = broadcast_at(in.mask, p.batch, p.head, p.row, p.key) != 0;
        break;
      case attn::MaskOp::both:
        value[n] = value[node.lhs] && value[node.rhs];
        break;
      case attn::MaskOp::either:
        value[n] = value[node.lhs] || value[node.rhs];
        break;
    }
  }
  return value[mask.root()];
}

bool keeps(const attn::Mask &mask, int64_t q_pos, int64_t k) {
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskOp op = mask.nodes[n].op;
    if (op != attn::MaskOp::window && op != attn::MaskOp::global_tokens && !attn::is_operator(op))
      throw std::invalid_argument("keeps(mask, q_pos, k): windows and global only");
  }
  Pair p;
  p.q_pos = q_pos;
  p.key = k;
  return keeps(mask, 0, RuntimeInputs{}, p);
}

}  // namespace attnc::reference
