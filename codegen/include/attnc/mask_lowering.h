// attnc/mask_lowering.h: a mask expression lowered to a Halide boolean of (query position, key).
#pragma once

#include <Halide.h>

#include "attn/mask.h"

namespace attnc {

// True where key `key` is kept for the query whose key position is `query_pos` (bottom-right
// aligned: query row i sits at i + Sk - Sq). An empty mask keeps every key.
Halide::Expr lower_mask(const attn::Mask &mask, const Halide::Expr &query_pos, const Halide::Expr &key);

}  // namespace attnc
