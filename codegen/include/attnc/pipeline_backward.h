// attnc/pipeline_backward.h: the backward family (backward=true): dq, dk, dv of the core form.
#pragma once

#include "attnc/pipeline_context.h"

namespace attnc {

// The core form's inputs (core_form_inputs) plus out, dout and lse: outputs dq, dk and dv
// (backward_algorithm.h), scheduled for the context's CPU target.
PipelineOutputs build_backward(const PipelineContext &ctx);

}  // namespace attnc
