// Lowers the mask expression tree node by node, post-order as it is stored.
#include "attnc/mask_lowering.h"

#include <vector>

namespace attnc {

using Halide::Expr;

Expr random_key_block(uint32_t seed, const Expr &query_block, int draw, const Expr &key_blocks) {
  using Halide::cast;
  auto u32 = [](uint32_t v) { return Halide::Internal::make_const(Halide::UInt(32), v); };
  // uint32 arithmetic wraps, as the formula says.
  Expr h = u32(seed * 0x9E3779B1u) + cast<uint32_t>(query_block) * u32(0x85EBCA77u) +
           u32(static_cast<uint32_t>(draw) * 0xC2B2AE3Du);
  h = h ^ (h >> 15);
  h = h * u32(0x2C1B3C6Du);
  h = h ^ (h >> 12);
  h = h * u32(0x297A2D39u);
  h = h ^ (h >> 15);
  return cast<int32_t>(h % cast<uint32_t>(Halide::max(key_blocks, 1)));
}

MaskInputs without_mask_mod(const MaskInputs &in) {
  MaskInputs built_in = in;
  built_in.mask_mod = nullptr;
  built_in.mask_mod_hull = nullptr;
  built_in.mask_mod_kept = nullptr;
  built_in.mask_mod_block = nullptr;
  return built_in;
}

Expr first_query_position(attn::Align align, const Expr &key_length, const Expr &seq_q) {
  return align == attn::Align::top_left ? Expr(0) : key_length - seq_q;
}

namespace {

// Block pair (query block of q', key block of k) when mask_block > 0, else the positions.
struct Positions {
  Expr query_lo, query_hi, key_lo, key_hi;
};

Positions positions(int mask_block, const MaskPoint &p) {
  if (mask_block <= 0) return {p.query_pos, p.query_pos, p.key, p.key};
  const Expr qb = p.query_pos / mask_block, kb = p.key / mask_block;  // floor division
  return {qb * mask_block, qb * mask_block + mask_block - 1, kb * mask_block,
          kb * mask_block + mask_block - 1};
}

}  // namespace

Expr lower_mask(const attn::Mask &mask, int mask_block, const MaskPoint &p, const MaskInputs &in) {
  if (in.mask_mod) return lower_mask(mask, mask_block, p, without_mask_mod(in)) && in.mask_mod(p);
  if (mask.empty()) return Halide::Internal::const_true();
  const Positions at = positions(mask_block, p);
  std::vector<Expr> value(mask.count);
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskNode &node = mask.nodes[n];
    switch (node.op) {
      case attn::MaskOp::window: {
        // Some pair of the two ranges has k - q' in [-left, right].
        Expr keep = Halide::Internal::const_true();
        if (node.left >= 0) keep = keep && at.key_hi >= at.query_lo - node.left;
        if (node.right >= 0) keep = keep && at.key_lo <= at.query_hi + node.right;
        value[n] = keep;
        break;
      }
      case attn::MaskOp::global_tokens:
        value[n] = at.key_lo < node.tokens || at.query_lo < node.tokens;
        break;
      case attn::MaskOp::random_blocks: {
        const Expr key_blocks = (p.key_length + node.block - 1) / node.block;
        const Expr query_block = p.query_pos / node.block, key_block = p.key / node.block;
        Expr keep = Halide::Internal::const_false();
        for (int draw = 0; draw < node.blocks; ++draw)
          keep = keep || key_block == random_key_block(node.seed, query_block, draw, key_blocks);
        value[n] = keep && p.query_pos >= 0 && key_blocks > 0;
        break;
      }
      case attn::MaskOp::padding:
        value[n] = p.key < in.key_lengths(p.batch);
        break;
      case attn::MaskOp::prefix:
        value[n] = p.key < in.prefix_lengths(p.batch);
        break;
      case attn::MaskOp::document:
        value[n] = in.segment_ids_q(p.query_row, p.batch) == in.segment_ids_k(p.key, p.batch);
        break;
      case attn::MaskOp::tensor:
        value[n] = in.mask(p.key, p.query_row, p.head, p.batch) != 0;
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

KeySpan span_hull(const std::vector<KeySpan> &spans) {
  KeySpan h = spans[0];
  for (size_t i = 1; i < spans.size(); ++i) {
    h.first = Halide::min(h.first, spans[i].first);
    h.last = Halide::max(h.last, spans[i].last);
  }
  return h;
}

KeySpans key_spans(const attn::Mask &mask, int mask_block, const Expr &query_lo, const Expr &query_hi,
                   const Expr &batch, const Expr &seq_k, const MaskInputs &in) {
  if (in.mask_mod_hull) {
    // The built-in mask's spans, each narrowed to the mask_mod's hull (issue 34).
    const KeySpans built_in =
        key_spans(mask, mask_block, query_lo, query_hi, batch, seq_k, without_mask_mod(in));
    const std::optional<KeyInterval> hull = in.mask_mod_hull(query_lo, query_hi, batch);
    if (!hull) return built_in;
    KeySpans narrowed{{}, true};
    for (const KeySpan &s : built_in.spans)
      narrowed.spans.push_back({Halide::max(s.first, hull->first), Halide::min(s.last, hull->last)});
    return narrowed;
  }
  const KeySpan all{0, seq_k - 1};
  if (mask.empty()) return {{all}, false};
  // With block granularity, widen the queries to whole blocks and round keys out to blocks.
  Expr q_lo = query_lo, q_hi = query_hi;
  if (mask_block > 0) {
    q_lo = (query_lo / mask_block) * mask_block;
    q_hi = (query_hi / mask_block) * mask_block + mask_block - 1;
  }
  auto round_first = [&](const Expr &k) { return mask_block > 0 ? (k / mask_block) * mask_block : k; };
  auto round_last = [&](const Expr &k) {
    return mask_block > 0 ? (k / mask_block) * mask_block + mask_block - 1 : k;
  };
  // Past max_key_spans, a set collapses to its hull.
  auto hull = [](const std::vector<KeySpan> &spans) { return std::vector<KeySpan>{span_hull(spans)}; };
  std::vector<KeySpans> sets(mask.count);
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskNode &node = mask.nodes[n];
    KeySpans &r = sets[n];
    r = {{all}, false};
    switch (node.op) {
      case attn::MaskOp::window:
        if (node.left >= 0) r.spans[0].first = round_first(q_lo - node.left);
        if (node.right >= 0) r.spans[0].last = round_last(q_hi + node.right);
        r.bounded = node.left >= 0 || node.right >= 0;
        break;
      case attn::MaskOp::global_tokens: {
        // Every query sees the global keys; only global queries (q' < G) see the rest.
        const Expr global_last = round_last(Expr(node.tokens - 1));
        r.spans = {{0, global_last},
                   {global_last + 1, Halide::select(q_lo < node.tokens, seq_k - 1, global_last)}};
        r.bounded = true;
        break;
      }
      case attn::MaskOp::padding:
        r.spans[0].last = in.key_lengths(batch) - 1;
        r.bounded = true;
        break;
      case attn::MaskOp::prefix:
        r.spans[0].last = in.prefix_lengths(batch) - 1;
        r.bounded = true;
        break;
      case attn::MaskOp::random_blocks:
      case attn::MaskOp::document:
      case attn::MaskOp::tensor:
        break;
      case attn::MaskOp::both: {
        const KeySpans &a = sets[node.lhs], &b = sets[node.rhs];
        std::vector<KeySpan> as = a.spans, bs = b.spans;
        if (as.size() * bs.size() > max_key_spans) as = hull(as), bs = hull(bs);
        r.spans.clear();
        for (const KeySpan &x : as)
          for (const KeySpan &y : bs)
            r.spans.push_back({Halide::max(x.first, y.first), Halide::min(x.last, y.last)});
        r.bounded = a.bounded || b.bounded;
        break;
      }
      case attn::MaskOp::either: {
        const KeySpans &a = sets[node.lhs], &b = sets[node.rhs];
        r.bounded = a.bounded && b.bounded;
        r.spans = a.spans;
        r.spans.insert(r.spans.end(), b.spans.begin(), b.spans.end());
        if (r.spans.size() > max_key_spans) r.spans = hull(r.spans);
        break;
      }
    }
  }
  KeySpans result = sets[mask.root()];
  if (!result.bounded) result.spans = {all};
  return result;
}

KeySpan kept_by_all(const attn::Mask &mask, const Expr &query_lo, const Expr &query_hi, const Expr &batch,
                    const Expr &seq_k, const MaskInputs &in) {
  // Exact terms: mask_block only widens what a structural term keeps, so these stay kept.
  if (in.mask_mod) {
    // Kept by all: by the built-in mask and by the mask_mod (an empty span where it knows none).
    const KeySpan built_in = kept_by_all(mask, query_lo, query_hi, batch, seq_k, without_mask_mod(in));
    if (!in.mask_mod_kept) return {0, -1};
    const KeyInterval kept = in.mask_mod_kept(query_lo, query_hi, batch);
    return {Halide::max(built_in.first, kept.first), Halide::min(built_in.last, kept.last)};
  }
  const KeySpan all{0, seq_k - 1}, none{0, -1};
  if (mask.empty()) return all;
  std::vector<KeySpan> sets(mask.count, all);
  auto length = [](const KeySpan &s) { return s.last - s.first; };
  for (int n = 0; n < mask.count; ++n) {
    const attn::MaskNode &node = mask.nodes[n];
    KeySpan &r = sets[n];
    switch (node.op) {
      case attn::MaskOp::window:
        // q' - L <= k for the last query, k <= q' + R for the first.
        if (node.left >= 0) r.first = query_hi - node.left;
        if (node.right >= 0) r.last = query_lo + node.right;
        break;
      case attn::MaskOp::global_tokens:
        r.last = Expr(node.tokens - 1);
        break;
      case attn::MaskOp::padding:
        r.last = in.key_lengths(batch) - 1;
        break;
      case attn::MaskOp::prefix:
        r.last = in.prefix_lengths(batch) - 1;
        break;
      case attn::MaskOp::random_blocks:
      case attn::MaskOp::document:
      case attn::MaskOp::tensor:
        r = none;
        break;
      case attn::MaskOp::both:
        r = {Halide::max(sets[node.lhs].first, sets[node.rhs].first),
             Halide::min(sets[node.lhs].last, sets[node.rhs].last)};
        break;
      case attn::MaskOp::either: {
        // Either side's keys are kept by all; take the longer.
        const KeySpan &a = sets[node.lhs], &b = sets[node.rhs];
        const Expr take_a = length(a) >= length(b);
        r = {Halide::select(take_a, a.first, b.first), Halide::select(take_a, a.last, b.last)};
        break;
      }
    }
  }
  const KeySpan &root = sets[mask.root()];
  return {Halide::max(root.first, 0), Halide::min(root.last, seq_k - 1)};
}

}  // namespace attnc
