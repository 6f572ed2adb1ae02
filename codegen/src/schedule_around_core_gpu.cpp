// GPU schedules of the stages around the core: rotated keys, the cache append, RoPE's angles, probs.
//
// Correctness only (PoCL in `make test`; not timed on a GPU): these stages are a small share of a
// call (a pass over the new keys, a table of cos/sin, and probs, which is for inspection), so each
// is the plainest layout that keeps neighbouring threads on neighbouring elements.
#include "attnc/schedule_around_core_gpu.h"

namespace attnc {

using Halide::TailStrategy;
using Halide::Var;

namespace {
// Rows of one head per GPU block in schedule_head_rows_gpu: head_dim x 4 threads, at most 1024
// (head_dim 256).
constexpr int head_rows_per_block = 4;
// The probs output's block: 32 keys x 8 query rows.
constexpr int probs_keys = 32, probs_rows = 8;
}  // namespace

void schedule_head_rows_gpu(Halide::Func f) {
  const std::vector<Var> args = f.args();
  const Var &d = args[0], &g = args[1], &j = args[2], &b = args[3];
  Var row_block("row_block"), row_in("row_in");
  f.compute_root()
      .split(j, row_block, row_in, head_rows_per_block, TailStrategy::GuardWithIf)
      .reorder(d, row_in, g, row_block, b)
      .gpu_blocks(g, row_block, b)
      .gpu_threads(d, row_in);
}

void schedule_table_gpu(Halide::Func table) {
  const std::vector<Var> args = table.args();
  Var x_block("x_block"), y_block("y_block"), x_in("x_in"), y_in("y_in");
  table.compute_root().gpu_tile(args[0], args[1], x_block, y_block, x_in, y_in, 16, 16,
                                TailStrategy::GuardWithIf);
}

void schedule_probs_gpu(ProbsFuncs &f) {
  Var key_block("key_block"), key_in("key_in"), row_block("row_block"), row_in("row_in"),
      head_batch("head_batch");
  f.probs.compute_root()
      .split(f.key, key_block, key_in, probs_keys, TailStrategy::GuardWithIf)
      .split(f.i, row_block, row_in, probs_rows, TailStrategy::GuardWithIf)
      .reorder(key_in, row_in, key_block, row_block, f.h, f.b)
      .fuse(f.h, f.b, head_batch)
      .gpu_blocks(key_block, row_block, head_batch)
      .gpu_threads(key_in, row_in);
  // One (key, row)'s dot product in its thread's registers; the transposed keys are read in place.
  f.scores.compute_at(f.probs, key_in);
}

}  // namespace attnc
