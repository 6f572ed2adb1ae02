// bf16 linear layers on AMX tiles: tdpbf16ps over x's rows and w in input pairs.
//
// Measured (issue 36; Intel Xeon of the Sapphire Rapids class, 2 shared vCPUs, one thread,
// smallest of 4 interleaved rounds, 2026-12-05): W6 (the GPT-2 block, B1 S1024, causal) 48.0 ms
// against the fp32 kernel's 52.2 and the vdpbf16ps panels' 62.3 (the q/k/v projection on tiles;
// the block core and the output projection as before). docs/AMX_NOTES.md.
#include "attnc/projection_amx.h"

namespace attnc {

using Halide::Expr;
using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

bool amx_linear_fits(int in_features, int rows) {
  return in_features % amx_reduction == 0 && rows % amx_tile_rows == 0;
}

LinearFuncs define_linear_amx(const Func &x_bf16, const Func &w_bf16, const Func &bias, int in_features,
                              const Expr &tokens, const std::string &name) {
  LinearFuncs f;
  f.amx = true;
  f.bf16_pairs = true;
  f.inputs = x_bf16;
  f.weights = w_bf16;
  f.weights_t = Func(name + "_weights_t");
  f.x_rows = Func(name + "_x_rows");
  f.y_tile = Func(name + "_tile");
  f.y = Func(name);
  f.over_inputs = Halide::RDom(0, in_features, name + "_over_inputs");
  const Expr c = f.over_inputs.x;
  f.weights_t(f.pair, f.row, f.col) = w_bf16(2 * f.col + f.pair, f.row);
  f.x_rows(f.col, f.token, f.b) = x_bf16(f.col, Halide::min(f.token, tokens - 1), f.b);
  f.y_tile(f.row, f.token, f.b) = 0.0f;
  f.y_tile(f.row, f.token, f.b) +=
      Halide::cast<float>(f.x_rows(c, f.token, f.b)) * Halide::cast<float>(f.weights_t(c % 2, f.row, c / 2));
  const Expr sum = f.y_tile(f.row, f.token, f.b);
  f.y(f.row, f.token, f.b) = bias.defined() ? sum + bias(f.row) : sum;
  return f;
}

void schedule_linear_amx(LinearFuncs &f, const CpuTiles &t, int rows) {
  Var token_task("token_task"), token_rest("token_rest"), task("task");
  Var row_in("row_in"), token_in("token_in");
  RVar input_step("input_step"), input_in("input_in");
  f.weights_t.compute_root().parallel(f.col).vectorize(f.row, amx_tile_rows).unroll(f.pair);
  Func tasks = f.y.in();
  tasks.compute_root()
      .split(f.token, token_task, token_rest, t.proj_token_task, TailStrategy::GuardWithIf)
      .fuse(token_task, f.b, task)
      .parallel(task)
      .vectorize(f.row, amx_tile_rows);
  // x's rows per task: a tile load reads 16 whole rows, so a partial last tile of tokens reads
  // this copy's clamped rows rather than past x's end.
  f.x_rows.compute_at(tasks, task).vectorize(f.col, amx_tile_rows);
  f.y.compute_at(tasks, task)
      .bound(f.row, 0, rows)
      .tile(f.row, f.token, row_in, token_in, amx_tile_rows, amx_tile_rows)
      .reorder(row_in, token_in, f.row, f.token)
      .vectorize(row_in)
      .unroll(token_in);
  Func staged = f.y_tile.in();
  staged.compute_at(f.y, f.row).bound_storage(f.row, 2 * amx_tile_rows).vectorize(f.row).vectorize(f.token);
  f.y_tile.compute_at(f.y, f.row).store_in(Halide::MemoryType::AMXTile).vectorize(f.row).vectorize(f.token);
  f.y_tile.update()
      .tile(f.row, f.token, row_in, token_in, amx_tile_rows, amx_tile_rows, TailStrategy::GuardWithIf)
      .split(f.over_inputs.x, input_step, input_in, amx_reduction)
      .reorder(input_in, row_in, token_in, input_step, f.row, f.token)
      .atomic()
      .vectorize(input_in)
      .vectorize(row_in)
      .vectorize(token_in);
}

}  // namespace attnc
