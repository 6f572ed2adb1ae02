// attnc/pipeline_outputs.h: an attention core's result handed to the outputs out, lse and probs.
#pragma once

#include <Halide.h>

#include "attnc/core_algorithm.h"
#include "attnc/pipeline_context.h"

namespace attnc {

// What a core builder returns. out(dv, h, i, b): the attended values as stored, or with with_lse
// a Tuple of (value as stored, the row's lse).
struct AttendedRows {
  Halide::Func out;
  bool with_lse = false;
};

// The core form's out: the core's out itself, or the values taken from its Tuple (scheduled).
Halide::Func attended_values(const PipelineContext &ctx, const AttendedRows &rows);

// out = out_value; lse from the core's Tuple where the spec asks for it; and with probs, the
// probabilities (in: the core's q, k and masks; the core's lse normalizes them).
PipelineOutputs attention_outputs(const PipelineContext &ctx, const AttendedRows &rows,
                                  const Halide::Func &out_value, const CoreInputs &in);

}  // namespace attnc
