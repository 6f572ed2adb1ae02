// attnc/pipeline_block_core.h: the block core family (running max over key blocks; every GPU prefill).
#pragma once

#include "attnc/core_algorithm.h"
#include "attnc/pipeline_context.h"
#include "attnc/pipeline_outputs.h"

namespace attnc {

// Defines and schedules the block core (core_algorithm.h) over in: with cpu_tiles on a CPU
// target, with gpu_tiles on a GPU one (a thread per query row and value column group). The
// block form passes each head group's own tiles.
AttendedRows attend_in_blocks(const PipelineContext &ctx, const CoreInputs &in, const attn::Spec &core,
                              const CpuTiles &cpu_tiles, const GpuTiles &gpu_tiles);

}  // namespace attnc
