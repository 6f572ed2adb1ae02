// attnc/pipeline_block_mask.h: the block-mask pass (block_mask=pass): every (query block, key
// block) of a tensor-dependent mask_mod classified empty, partial or full (docs/DSL.md "Block masks").
#pragma once

#include "attnc/pipeline_context.h"

namespace attnc {

// The block-mask values, one byte per (b, h, query block, key block).
constexpr int block_mask_empty = 0;
constexpr int block_mask_partial = 1;
constexpr int block_mask_full = 2;

// block_mask(key_block, query_block, h, b) u8 [B|1, H|1, ceil(Sq/128), ceil(Sk/128)] from the
// captured tensors: the mask_mod evaluated at every pair of the call's [0, Sq) x [0, Sk), q, k,
// b and h as in the attention kernel. q and k give only their shapes.
PipelineOutputs build_block_mask_pass(const PipelineContext &ctx);

}  // namespace attnc
