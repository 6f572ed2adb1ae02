// The attention backward on CPU targets: two parallel passes over tiles, each sum in register blocks.
#include "attnc/schedule_backward_cpu.h"

#include <algorithm>
#include <vector>

namespace attnc {
namespace {

using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;

// Keys per dk/dv task and query rows per dq task: their pairs stay in L2 (key_tile x Sq x group
// and query_tile x Sk (P, dS) pairs).
constexpr int key_tile = 32;
constexpr int query_tile = 16;

// A register block of `outer` rows (keys for dk/dv, query rows for dq) x `vectors` vectors of
// the inner dim (c or d), accumulated over the reduction: the vectors a block spans (the largest
// divisor of the dim's vector count up to 4) and as many rows as the registers left hold.
struct RegisterBlock {
  int vectors, rows;
};
RegisterBlock register_block(int dim, int lanes, int registers) {
  const int total = dim / lanes;
  int vectors = std::min(total, 4);
  while (total % vectors != 0) --vectors;
  const int rows = std::clamp((registers - vectors - 2) / vectors, 1, 8);
  return {vectors, rows};
}

// A pass's pairs over (key, i) tiles of two key vectors x rows, their scores and dP sums
// computed per tile as register blocks: keys vectorized, rows unrolled, the reduction over
// head_dim (value_dim) outermost.
void schedule_pairs(Func pairs, Func scores, const Halide::RDom &over_d, Func dp, const Halide::RDom &over_v,
                    const LoopLevel &at, const Var &key, const Var &i, const Var &h, int lanes, int registers) {
  const int rows = std::clamp((registers - 4) / 2, 1, 8);
  Var key_outer("key_outer"), key_inner("key_inner"), row_outer("row_outer"), row_inner("row_inner");
  pairs.compute_at(at)
      .split(key, key_outer, key_inner, 2 * lanes, TailStrategy::RoundUp)
      .split(i, row_outer, row_inner, rows, TailStrategy::RoundUp)
      .reorder(key_inner, row_inner, key_outer, row_outer, h)
      .vectorize(key_inner, lanes)
      .unroll(row_inner);
  const LoopLevel tile(pairs, key_outer);
  Var key_vector("key_vector"), key_lane("key_lane");
  for (auto [sums, over] : {std::pair{scores, over_d}, std::pair{dp, over_v}}) {
    sums.compute_at(tile).bound_extent(i, rows).bound_extent(key, 2 * lanes).vectorize(key, lanes).unroll(i);
    sums.update()
        .split(key, key_vector, key_lane, lanes)
        .reorder(key_lane, key_vector, i, over.x)
        .vectorize(key_lane)
        .unroll(key_vector)
        .unroll(i);
  }
}

// An accumulator block computed at `at` over block.rows x block.vectors vectors, the reduction
// outermost so that the sums stay in registers.
void schedule_register_block(Func sums, const LoopLevel &at, const Var &inner, const Var &outer,
                             const std::vector<Halide::RVar> &reduction, const RegisterBlock &block, int lanes) {
  Var vector("vector"), lane("lane");
  sums.compute_at(at)
      .bound_extent(inner, block.vectors * lanes)
      .bound_extent(outer, block.rows)
      .vectorize(inner, lanes)
      .unroll(inner)
      .unroll(outer);
  std::vector<Halide::VarOrRVar> order = {lane, vector, outer};
  order.insert(order.end(), reduction.begin(), reduction.end());
  sums.update().split(inner, vector, lane, lanes).reorder(order).vectorize(lane).unroll(vector).unroll(outer);
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
  // query heads first, then register blocks of keys x columns, summed over those rows.
  const RegisterBlock kv = register_block(std::max(f.head_dim, f.value_dim), columns, t.vector_registers);
  Var tile("tile"), key_in("key_in"), key_block("key_block"), key_reg("key_reg"), column_block("column_block");
  Var column("column");
  f.kv_sums.compute_root()
      .split(key, tile, key_in, key_tile, TailStrategy::GuardWithIf)
      .split(key_in, key_block, key_reg, kv.rows, TailStrategy::GuardWithIf)
      .split(c, column_block, column, kv.vectors * columns)
      .reorder(column, key_reg, column_block, key_block, tile, g, b)
      .fuse(tile, g, tasks)
      .fuse(tasks, b, tasks)
      .parallel(tasks)
      .vectorize(column, columns);
  const std::vector<Halide::RVar> rows_reduction = {f.over_rows.x, f.over_rows.y};
  for (Func block : {f.dk_block, f.dv_block})
    schedule_register_block(block, LoopLevel(f.kv_sums, column_block), c, key, rows_reduction, kv, columns);
  schedule_pairs(f.pairs_kv, f.scores_kv, f.over_head_dim, f.dp_kv, f.over_value_dim, LoopLevel(f.kv_sums, tasks),
                 key, i, h, lanes, t.vector_registers);

  // dq: a task per query tile of one head. Its pairs over every key first, then register blocks
  // of query rows x head_dim, summed over the keys.
  const RegisterBlock qb = register_block(f.head_dim, columns, t.vector_registers);
  Var query_tile_var("query_tile"), row_in("row_in"), row_block("row_block"), row_reg("row_reg");
  Var dim_block("dim_block"), dim("dim");
  f.dq_sums.compute_root()
      .split(i, query_tile_var, row_in, query_tile, TailStrategy::GuardWithIf)
      .split(row_in, row_block, row_reg, qb.rows, TailStrategy::GuardWithIf)
      .split(d, dim_block, dim, qb.vectors * columns)
      .reorder(dim, row_reg, dim_block, row_block, query_tile_var, h, b)
      .fuse(query_tile_var, h, tasks)
      .fuse(tasks, b, tasks)
      .parallel(tasks)
      .vectorize(dim, columns);
  schedule_register_block(f.dq_block, LoopLevel(f.dq_sums, dim_block), d, i, {f.over_keys.x}, qb, columns);
  schedule_pairs(f.ds_q, f.scores_q, f.over_head_dim_q, f.dp_q, f.over_value_dim_q, LoopLevel(f.dq_sums, tasks),
                 key, i, h, lanes, t.vector_registers);

  for (Func *grad : {&f.dq, &f.dk, &f.dv}) {
    const Var inner = grad->args()[0], rows_var = grad->args()[2], batch = grad->args()[3];
    grad->compute_root().fuse(rows_var, batch, rows).parallel(rows).vectorize(inner, columns);
  }
}

}  // namespace attnc
