// GPU schedules (CUDA, OpenCL): one family, sized by gpu_tiles().
//
// Not yet measured on a GPU: PoCL (OpenCL on the CPU) runs them in `make test` for correctness
// only, and tools/gpu_check.sh times the CUDA build against PyTorch's scaled_dot_product_attention
// where an NVIDIA GPU is lent. The schedule is the plain flash-style one: a thread per query row
// keeps its softmax state in registers; K and V stay in global memory, where every thread of a
// block reads the same rows (broadcast through L1). Staging K/V tiles in shared memory and
// threads over Dv are the next steps, to be measured against this one.
#include "attnc/schedule_gpu.h"

namespace attnc {

using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

bool runs_on_gpu(const Halide::Target &target) {
  return target.has_feature(Halide::Target::CUDA) || target.has_feature(Halide::Target::OpenCL);
}

namespace {

// One key block of one thread's row, inside the block loop of the sweep's state update (each
// update runs in the thread that owns the row: the state is computed per thread). Every stage
// is bounded to one block of one row so its storage is a constant-size private array (a GPU
// kernel cannot allocate storage of run-time size).
void schedule_sweep_gpu(CoreFuncs &f, BlockSweep &w, const GpuTiles &t) {
  const RVar over_blocks = w.over_blocks.y;
  auto per_block = [&](Halide::Func fn) {
    fn.compute_at(f.state, over_blocks)
        .bound_storage(f.tile, 1)
        .bound_storage(f.h, 1)
        .bound_storage(f.b, 1)
        .bound_storage(f.kb, 1);
    return fn;
  };
  for (Halide::Func block : {w.scores, w.probs})
    per_block(block).bound_storage(f.row, 1).bound_storage(f.key, t.key_block);
  if (f.has_modifiers) per_block(w.logits).bound_storage(f.row, 1).bound_storage(f.key, t.key_block);
  if (w.key_penalty.defined())
    w.key_penalty.compute_at(f.state, over_blocks).bound_storage(f.key, t.key_block).bound_storage(f.kb, 1);
  per_block(w.block_max).bound_storage(f.row, 1);
  per_block(w.block_sum).bound_storage(f.row, 1);
  per_block(w.block_pv).bound_storage(f.group_row, 1).bound_storage(f.pv_group, 1);
}

}  // namespace

void schedule_core_gpu(CoreFuncs &f, const GpuTiles &t) {
  // The threads run over the state's own row (a wrapper of it that out reads), not over out's
  // i: a thread of out would read row i % query_tile, which bounds inference widens to the whole
  // tile (each thread then computed every row of its tile). The wrapper costs one store and load
  // of {max, sum, acc} per output element.
  Halide::Func rows = f.state.in(f.out);
  rows.compute_root()
      .reorder(f.dv, f.row, f.tile, f.h, f.b)
      .gpu_blocks(f.tile, f.h, f.b)
      .gpu_threads(f.row);

  Var query_block("query_block"), query_in_tile("query_in_tile");
  f.out.compute_root()
      .split(f.i, query_block, query_in_tile, t.query_tile, TailStrategy::GuardWithIf)
      .reorder(f.dv, query_in_tile, query_block, f.h, f.b)
      .gpu_blocks(query_block, f.h, f.b)
      .gpu_threads(query_in_tile);

  // Checked on the host, once, before any kernel runs.
  for (Halide::Func &check : f.value_checks) check.compute_root();

  // The row's scaled q and its state, per thread.
  for (Halide::Func per_row : {f.query_tile, f.state})
    per_row.compute_at(rows, f.row)
        .bound_storage(f.row, 1)
        .bound_storage(f.tile, 1)
        .bound_storage(f.h, 1)
        .bound_storage(f.b, 1);
  for (size_t n = 0; n < f.sweeps.size(); ++n) schedule_sweep_gpu(f, f.sweeps[n], t);
}

void schedule_linear_gpu(LinearFuncs &f, const GpuTiles &t) {
  Var row_block("row_block"), row_in("row_in"), token_block("token_block"), token_in("token_in");
  // The bias (or 0) and the sums in the same threads: one kernel per stage, the batch a block dim.
  auto tiles = [&](auto stage) {
    stage.split(f.row, row_block, row_in, t.proj_rows, TailStrategy::GuardWithIf)
        .split(f.token, token_block, token_in, t.proj_tokens, TailStrategy::GuardWithIf)
        .reorder(row_in, token_in, row_block, token_block, f.b)
        .gpu_blocks(row_block, token_block, f.b)
        .gpu_threads(row_in, token_in);
  };
  f.y.compute_root();
  tiles(f.y);
  tiles(f.y.update());
}

void schedule_elementwise_gpu(Halide::Func f, const Halide::Var &x, const Halide::Var &y, const Halide::Var &z) {
  Var x_block("x_block"), y_block("y_block"), x_in("x_in"), y_in("y_in");
  f.compute_root()
      .split(x, x_block, x_in, 16, TailStrategy::GuardWithIf)
      .split(y, y_block, y_in, 16, TailStrategy::GuardWithIf)
      .reorder(x_in, y_in, x_block, y_block, z)
      .gpu_blocks(x_block, y_block, z)
      .gpu_threads(x_in, y_in);
}

}  // namespace attnc
