// attnc/pipeline_block_form.h: the block form family: projections, one core per head group, merge, out_proj.
#pragma once

#include "attnc/pipeline_context.h"

namespace attnc {

// x [B,S,d_model] (and x_kv under cross-attention) through the q/k/v projections, the block core
// of each head group (its own tiles and scale), the heads merged and the output projection:
// out, and lse / probs where the spec asks.
PipelineOutputs build_block_form(const PipelineContext &ctx);

}  // namespace attnc
