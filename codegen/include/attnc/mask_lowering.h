// attnc/mask_lowering.h: a mask expression lowered to Halide: per-element keep, per-tile key range.
#pragma once

#include <Halide.h>

#include <functional>
#include <vector>

#include "attn/mask.h"
#include "attn/spec.h"
#include "attnc/expr_spans.h"

namespace attnc {

struct MaskPoint;

// The runtime inputs a mask may read, as Halide Funcs (undefined when the mask does not use them):
//   key_lengths(b), prefix_lengths(b), segment_ids_q(i, b), segment_ids_k(k, b), mask(k, i, h, b).
struct MaskInputs {
  Halide::Func key_lengths, prefix_lengths, segment_ids_q, segment_ids_k, mask;
  // block_mask=input: block_mask(key block, query block, h, b) u8, the run-time block mask
  // (block_mask_lookup.h); undefined otherwise.
  Halide::Func block_mask;
  // The spec's mask_mod (issue 34) at a pair, ANDed with the mask; empty when it has none.
  std::function<Halide::Expr(const MaskPoint &)> mask_mod;
  // Its keys for queries at key positions [lo, hi] of a batch, from its block bounds
  // (expr_spans.h): the hull it may keep (nullopt: unbounded) and the span every query keeps.
  std::function<std::optional<KeyInterval>(const Halide::Expr &, const Halide::Expr &, const Halide::Expr &)>
      mask_mod_hull;
  std::function<KeyInterval(const Halide::Expr &, const Halide::Expr &, const Halide::Expr &)> mask_mod_kept;
  // Its bounds over a block of pairs (expr_bounds.h), for the block core's per-block skip.
  std::function<BlockTruth(const PairBlock &)> mask_mod_block;
};

// One (query, key) pair. query_pos is the query's key position q' (bottom-right aligned);
// query_row and key index the runtime inputs and must already be clamped into range.
struct MaskPoint {
  Halide::Expr query_pos, key, query_row, head, batch, key_length;
};

// The inputs of the built-in mask alone (the mask_mod and its bounds dropped).
MaskInputs without_mask_mod(const MaskInputs &in);

// The key position q' of a batch's query row 0 (row i sits at q' + i): Lk - Sq bottom-right
// aligned (key_length: the batch's Lk), 0 top-left aligned (attn::Align).
Halide::Expr first_query_position(attn::Align align, const Halide::Expr &key_length, const Halide::Expr &seq_q);

// True where the pair is kept. mask_block > 0 evaluates structural terms per block pair.
Halide::Expr lower_mask(const attn::Mask &mask, int mask_block, const MaskPoint &p, const MaskInputs &in);

// The keys a mask may keep for queries at key positions [query_lo, query_hi] of batch `batch`,
// as a few spans [first, last] whose union is a superset (a span may be empty at run time:
// first > last). bounded is false when nothing narrower than every key is known.
struct KeySpan {
  Halide::Expr first, last;
};
struct KeySpans {
  std::vector<KeySpan> spans;
  bool bounded = false;
};
constexpr int max_key_spans = 4;
// The smallest single span holding every span of `spans` (not empty).
KeySpan span_hull(const std::vector<KeySpan> &spans);
KeySpans key_spans(const attn::Mask &mask, int mask_block, const Halide::Expr &query_lo,
                   const Halide::Expr &query_hi, const Halide::Expr &batch, const Halide::Expr &seq_k,
                   const MaskInputs &in);

// The keys that every query at key positions [query_lo, query_hi] of batch `batch` keeps, as one
// span (empty at run time when first > last; a subset of what the mask keeps, often smaller):
// the cores multiply those keys' values by their probability without a select, and select only
// at the edges of the hull, where a masked key's garbage v (0 * NaN) could leak.
KeySpan kept_by_all(const attn::Mask &mask, const Halide::Expr &query_lo, const Halide::Expr &query_hi,
                    const Halide::Expr &batch, const Halide::Expr &seq_k, const MaskInputs &in);

// The random(BS, N, SEED) key block for query block qb and draw n (formula in docs/DSL.md).
Halide::Expr random_key_block(uint32_t seed, const Halide::Expr &query_block, int draw,
                              const Halide::Expr &key_blocks);

}  // namespace attnc
