// attnc/pipeline_core_form.h: the core form's inputs (q, k, v given), whichever core family runs them.
#pragma once

#include "attnc/core_algorithm.h"
#include "attnc/pipeline_context.h"

namespace attnc {

// q, k and v as f32 (k and v through pages for the "paged" role), the masks and modifiers, the
// storage rounding of out, rope's rotations of q and k, and bf16 q, k and v where the core
// multiplies them as stored (pairs that pay, or the AMX row core).
CoreInputs core_form_inputs(const PipelineContext &ctx);

}  // namespace attnc
