// attnc/mask_lowering.h: a mask expression lowered to a Halide boolean of (query position, key).
#pragma once

#include <Halide.h>

#include "attn/mask.h"

namespace attnc {

// True where key `key` is kept for the query whose key position is `query_pos` (bottom-right
// aligned: query row i sits at i + Sk - Sq). An empty mask keeps every key.
Halide::Expr lower_mask(const attn::Mask &mask, const Halide::Expr &query_pos, const Halide::Expr &key);

// The keys a mask may keep for queries whose key positions lie in [query_lo, query_hi]:
// [first, last], a superset (windows give exact bounds; & intersects, | takes the hull).
// Unbounded sides come back as undefined Exprs.
struct KeyRange {
  Halide::Expr first, last;
};
KeyRange key_range(const attn::Mask &mask, const Halide::Expr &query_lo, const Halide::Expr &query_hi);

}  // namespace attnc
