// attnc/pipeline_split_keys.h: the split-keys family (decode: few queries, key chunks in parallel).
#pragma once

#include "attnc/core_algorithm.h"
#include "attnc/pipeline_context.h"
#include "attnc/pipeline_outputs.h"

namespace attnc {

// Defines and schedules the split-keys core (split_keys_algorithm.h) over in, with the chunk,
// dot-product and lane sizes of the context's CPU or GPU tiles.
AttendedRows attend_split_keys(const PipelineContext &ctx, const CoreInputs &in, const attn::Spec &core);

}  // namespace attnc
