// The split-keys family: each key chunk's partial softmax in parallel, then one combine per row.
#include "attnc/pipeline_split_keys.h"

#include "attnc/schedule_cpu.h"
#include "attnc/schedule_gpu.h"
#include "attnc/split_keys_algorithm.h"

namespace attnc {

AttendedRows attend_split_keys(const PipelineContext &ctx, const CoreInputs &in, const attn::Spec &core) {
  if (ctx.gpu) {
    const GpuTiles &t = ctx.gpu_tiles;
    SplitKeysFuncs split =
        define_split_keys(in, core, t.split_keys_chunk, t.split_keys_group, t.split_keys_lanes);
    schedule_split_keys_gpu(split, t);
    return {split.out, split.with_lse};
  }
  const CpuTiles &t = ctx.tiles;
  SplitKeysFuncs split = define_split_keys(in, core, t.split_keys_chunk, t.split_keys_dots,
                                           t.split_keys_lanes, t.vector_width, t.split_keys_stage_rows);
  schedule_split_keys_cpu(split, t);
  return {split.out, split.with_lse};
}

}  // namespace attnc
