// attnc/pipeline_dispatch.h: which pipeline family a generator invocation builds, and building it.
#pragma once

#include <string>

#include "attnc/pipeline_context.h"

namespace attnc {

// The families, one builder each (pipeline_*.h). The core form runs one of the three cores on
// core_form_inputs(); the block form runs the block core per head group inside its projections.
enum class PipelineFamily {
  cache_append,     // a KV-cache kernel's append role (pipeline_sequence.h)
  whole_row_core,   // CPU prefill of specs with whole_row_core() (pipeline_row_core.h)
  block_core,       // the other prefill: CPU "blocks" and every GPU prefill (pipeline_block_core.h)
  split_keys,       // core_path "split_keys": decode (pipeline_split_keys.h)
  block_form,       // x to out (pipeline_block_form.h)
  backward,         // backward=true: dq, dk, dv of the core form (pipeline_backward.h)
  block_mask_pass,  // block_mask=pass: the block mask of a mask_mod (pipeline_block_mask.h)
};

PipelineFamily pipeline_family(const PipelineContext &ctx);
std::string to_string(PipelineFamily family);

// The outputs of the context's pipeline, by argument name; throws Halide::CompileError for a
// combination no family builds.
PipelineOutputs build_pipeline(const PipelineContext &ctx);

}  // namespace attnc
