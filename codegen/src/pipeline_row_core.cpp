// The whole-row core family: one softmax over every key a query tile may keep (core_rows.h).
#include "attnc/pipeline_row_core.h"

#include "attnc/core_rows.h"

namespace attnc {

AttendedRows attend_whole_rows(const PipelineContext &ctx, const CoreInputs &in, const attn::Spec &core) {
  const CpuTiles tiles = in.amx_tiles && amx_row_core(core) ? amx_core_tiles(ctx.tiles) : ctx.tiles;
  RowsFuncs rows = define_core_rows(in, core, tiles.query_tile, tiles.pv_rows);
  schedule_core_rows_cpu(rows, tiles);
  return {rows.out, rows.with_lse};
}

}  // namespace attnc
