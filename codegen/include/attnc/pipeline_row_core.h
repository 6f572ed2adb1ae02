// attnc/pipeline_row_core.h: the whole-row core family (CPU prefill of specs with whole_row_core()).
#pragma once

#include "attnc/core_algorithm.h"
#include "attnc/pipeline_context.h"
#include "attnc/pipeline_outputs.h"

namespace attnc {

// Defines and schedules the whole-row core (core_rows.h) over in: the context's tiles, or the
// AMX core tiles where q, k and v go to AMX tiles (amx_row_core).
AttendedRows attend_whole_rows(const PipelineContext &ctx, const CoreInputs &in, const attn::Spec &core);

}  // namespace attnc
