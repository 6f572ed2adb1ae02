// The attention backward on CPU targets: two parallel passes over tiles, each sum in register blocks.
#include "attnc/schedule_backward_cpu.h"

namespace attnc {
namespace {

using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;

// dk/dv: keys per task, and keys per register block. dq: query rows per task, and rows per
// register block. Pairs: query rows per scores / dP register block (two key vectors wide).
constexpr int key_tile = 32;
constexpr int kv_block_keys = 2;
constexpr int query_tile = 16;
constexpr int dq_block_rows = 4;
constexpr int pair_rows = 8;

// A pass's pairs over (key, i) tiles of two key vectors x pair_rows rows, their scores and dP
// sums computed per tile as register blocks: keys vectorized, rows unrolled, the reduction over
// head_dim (value_dim) outermost.
void schedule_pairs(Func pairs, Func scores, const Halide::RDom &over_d, Func dp, const Halide::RDom &over_v,
                    const LoopLevel &at, const Var &key, const Var &i, const Var &h, int lanes) {
  Var key_outer("key_outer"), key_inner("key_inner"), row_outer("row_outer"), row_inner("row_inner");
  pairs.compute_at(at)
      .split(key, key_outer, key_inner, 2 * lanes, TailStrategy::RoundUp)
      .split(i, row_outer, row_inner, pair_rows, TailStrategy::RoundUp)
      .reorder(key_inner, row_inner, key_outer, row_outer, h)
      .vectorize(key_inner, lanes)
      .unroll(row_inner);
  const LoopLevel tile(pairs, key_outer);
  Var key_vector("key_vector"), key_lane("key_lane");
  for (auto [sums, over] : {std::pair{scores, over_d}, std::pair{dp, over_v}}) {
    sums.compute_at(tile)
        .bound_extent(i, pair_rows)
        .bound_extent(key, 2 * lanes)
        .vectorize(key, lanes)
        .unroll(i);
    sums.update()
        .split(key, key_vector, key_lane, lanes)
        .reorder(key_lane, key_vector, i, over.x)
        .vectorize(key_lane)
        .unroll(key_vector)
        .unroll(i);
  }
}

// Vectorized over its first dim (whole vectors: `lanes` divides it) and that dim unrolled.
void vectorize_unrolled(Func f, const Var &x, int lanes) {
  f.vectorize(x, lanes);
}

}  // namespace

void schedule_backward_cpu(BackwardFuncs &f, const CpuTiles &t) {
  const int lanes = t.vector_width, columns = f.column_lanes;
  const Var &c = f.c, &d = f.d, &key = f.key, &i = f.i, &h = f.h, &g = f.g, &b = f.b;
  for (Func &check : f.value_checks) check.compute_root();
  Var rows("rows"), tasks("tasks");

  f.q_scaled.compute_root().fuse(i, b, rows).parallel(rows).vectorize(d, columns);
  f.keys_t.compute_root().fuse(g, b, tasks).parallel(tasks).vectorize(key, lanes);
  f.values_t.compute_root().fuse(g, b, tasks).parallel(tasks).vectorize(key, lanes);
  f.delta.compute_root().fuse(i, b, rows).parallel(rows);

  // dk and dv: a task per key tile of one KV head. Its pairs over every row of the KV head's
  // query heads first (key_tile x Sq x group (P, dS) pairs, in L2), then register blocks of
  // kv_block_keys keys x every column, summed over those rows.
  Var tile("tile"), key_in("key_in"), key_block("key_block"), key_reg("key_reg");
  f.kv_sums.compute_root()
      .split(key, tile, key_in, key_tile, TailStrategy::GuardWithIf)
      .split(key_in, key_block, key_reg, kv_block_keys, TailStrategy::GuardWithIf)
      .reorder(c, key_reg, key_block, tile, g, b)
      .fuse(tile, g, tasks)
      .fuse(tasks, b, tasks)
      .parallel(tasks)
      .vectorize(c, columns);
  f.kv_block.compute_at(f.kv_sums, key_block).vectorize(c, columns).unroll(key);
  f.kv_block.update().reorder(c, key, f.over_rows.x, f.over_rows.y).vectorize(c, columns).unroll(key);
  schedule_pairs(f.pairs_kv, f.scores_kv, f.over_head_dim, f.dp_kv, f.over_value_dim,
                 LoopLevel(f.kv_sums, tasks), key, i, h, lanes);

  // dq: a task per query tile of one head. Its pairs over every key first (query_tile x Sk),
  // then register blocks of dq_block_rows rows x head_dim, summed over the keys.
  Var query_tile_var("query_tile"), row_in("row_in"), row_block("row_block"), row_reg("row_reg");
  f.dq_sums.compute_root()
      .split(i, query_tile_var, row_in, query_tile, TailStrategy::GuardWithIf)
      .split(row_in, row_block, row_reg, dq_block_rows, TailStrategy::GuardWithIf)
      .reorder(d, row_reg, row_block, query_tile_var, h, b)
      .fuse(query_tile_var, h, tasks)
      .fuse(tasks, b, tasks)
      .parallel(tasks)
      .vectorize(d, columns);
  f.dq_block.compute_at(f.dq_sums, row_block).vectorize(d, columns).unroll(i);
  f.dq_block.update().reorder(d, i, f.over_keys.x).vectorize(d, columns).unroll(i);
  schedule_pairs(f.pairs_q, f.scores_q, f.over_head_dim_q, f.dp_q, f.over_value_dim_q,
                 LoopLevel(f.dq_sums, tasks), key, i, h, lanes);

  for (Func *grad : {&f.dq, &f.dk, &f.dv}) {
    const Var inner = grad->args()[0], rows_var = grad->args()[2], batch = grad->args()[3];
    grad->compute_root().fuse(rows_var, batch, rows).parallel(rows);
    vectorize_unrolled(*grad, inner, columns);
  }
}

}  // namespace attnc
