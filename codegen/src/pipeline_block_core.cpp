// The block core family: key blocks with a running max and sum, CPU and GPU schedules.
#include "attnc/pipeline_block_core.h"

#include "attnc/schedule_cpu.h"
#include "attnc/schedule_gpu.h"

namespace attnc {

AttendedRows attend_in_blocks(const PipelineContext &ctx, const CoreInputs &in, const attn::Spec &core,
                              const CpuTiles &cpu_tiles, const GpuTiles &gpu_tiles) {
  if (ctx.gpu) {
    CoreFuncs funcs = define_core(in, core, gpu_tiles.key_block, gpu_tiles.query_tile, gpu_tiles.pv_rows,
                                  gpu_tiles.value_columns);
    schedule_core_gpu(funcs, gpu_tiles);
    return {funcs.out, funcs.with_lse};
  }
  CoreFuncs funcs = define_core(in, core, cpu_tiles.key_block, cpu_tiles.query_tile, cpu_tiles.pv_rows);
  schedule_core_cpu(funcs, cpu_tiles);
  return {funcs.out, funcs.with_lse};
}

}  // namespace attnc
