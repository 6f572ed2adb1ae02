// The attention backward on CPU targets: two parallel passes over tiles, each sum in register blocks.
//
// Measured (bench/backward_paired.py, ae74bd0, 2-vCPU Sapphire Rapids class Xeon, 2 threads, FMA
// peak 428 GFLOP/s): W1 (B1 H12 S1024 D64) fp32 65.5 ms unmasked, 35.9 ms causal; PyTorch 2.15's
// CPU SDPA backward in the same run 35.3 / 27.4 ms (attnc 0.55x / 0.75x its speed).
#include "attnc/schedule_backward_cpu.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

namespace attnc {
namespace {

using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;

// A register block over `dim` (c or d): the vectors it spans (the largest divisor of the dim's
// vector count up to 4) and as many rows (keys or query rows) as the registers left hold.
std::pair<int, int> register_block(int dim, int lanes, int registers) {
  const int total = dim / lanes;
  int vectors = std::min(total, 4);
  while (total % vectors != 0) --vectors;
  return {vectors, std::clamp((registers - vectors - 2) / vectors, 1, 8)};
}

// A multiple of `unit` near `target`.
int multiple_near(int target, int unit) {
  return unit * std::max(1, (target + unit / 2) / unit);
}

// The rows of a pairs register block: two key vectors wide, as many rows as the registers hold.
int pair_rows(int registers) {
  return std::clamp((registers - 4) / 2, 1, 8);
}

// A tile's scores and dP sums (`rows` rows x two key vectors) computed at `tile`, keys vectorized,
// rows unrolled, the reduction over head_dim (value_dim) outermost: register blocks.
void schedule_pair_sums(Func scores, const Halide::RDom &over_d, Func dp, const Halide::RDom &over_v,
                        const LoopLevel &tile, const Var &key, const Var &i, int rows, int lanes) {
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

// A pass's pairs tile computed at `at`: keys vectorized, in register blocks of two key vectors x
// pair_rows rows whose scores and dP sums run with the reduction over head_dim (value_dim)
// outermost. keys x query_rows x heads: the tile's extent, for constant (stack) storage.
void schedule_pairs(Func pairs, Func scores, const Halide::RDom &over_d, Func dp, const Halide::RDom &over_v,
                    const LoopLevel &at, const Var &key, const Var &i, const Var &h, int lanes, int registers,
                    int keys, int query_rows, int heads) {
  const int rows = pair_rows(registers);
  auto round_up = [](int n, int unit) { return (n + unit - 1) / unit * unit; };
  Var key_outer("key_outer"), key_inner("key_inner"), row_outer("row_outer"), row_inner("row_inner");
  pairs.bound_storage(key, round_up(keys, 2 * lanes))
      .bound_storage(i, round_up(query_rows, rows))
      .bound_storage(h, heads)
      .bound_storage(pairs.args()[3], 1);
  pairs.compute_at(at)
      .split(key, key_outer, key_inner, 2 * lanes, TailStrategy::RoundUp)
      .split(i, row_outer, row_inner, rows, TailStrategy::RoundUp)
      .reorder(key_inner, row_inner, key_outer, row_outer, h)
      .vectorize(key_inner, lanes)
      .unroll(row_inner);
  schedule_pair_sums(scores, over_d, dp, over_v, LoopLevel(pairs, key_outer), key, i, rows, lanes);
}

// Dropout's words for a pass's tile, where its pairs are: one Philox per row and 8 keys, vectors
// across the rows.
void schedule_dropout_words(DropoutWords words, const LoopLevel &at, int lanes) {
  if (!words.words.defined()) return;
  words.words.compute_at(at).bound_storage(words.b, 1).vectorize(words.i, lanes, TailStrategy::GuardWithIf);
}

// A block's sums computed at `at` over `rows` rows x `vectors` vectors of `inner`, the reduction
// outermost so that they stay in registers.
void schedule_register_block(Func sums, const LoopLevel &at, const Var &inner, const Var &outer,
                             const std::vector<Halide::RVar> &reduction, int vectors, int rows, int lanes) {
  Var vector("vector"), lane("lane");
  sums.compute_at(at)
      .bound_extent(inner, vectors * lanes)
      .bound_extent(outer, rows)
      .vectorize(inner, lanes)
      .unroll(inner)
      .unroll(outer);
  // Every other dim is one coordinate: constant storage, so the block lives on the stack (and in
  // registers), not in a heap allocation per block.
  for (const Var &arg : sums.args())
    if (arg.name() != inner.name() && arg.name() != outer.name()) sums.bound_storage(arg, 1);
  std::vector<Halide::VarOrRVar> order = {lane, vector, outer};
  order.insert(order.end(), reduction.begin(), reduction.end());
  sums.update().split(inner, vector, lane, lanes).reorder(order).vectorize(lane).unroll(vector).unroll(outer);
}

// A pass's sums over tiles (kv_sums or dq_sums): both stages a task per (tile, head, batch), the
// update's chunks (row blocks, key chunks) serial in the task, within a chunk register blocks of
// block_rows rows (of `row`) x vectors vectors of `inner`, computed at `block` (returned). The
// update's task loops are nested parallel loops, not fused ones: fused, Halide bounded the tile
// var by [0, max(tile, extent - 1)], so every register block was a heap allocation sized by it.
LoopLevel schedule_tile_sums(Func sums, const Var &inner, const Var &row, const Halide::RVar &chunks,
                             const Var &tile, const Var &head, const Var &batch, int block_rows, int vectors,
                             int lanes) {
  Var tasks("tasks"), row_block("row_block"), row_reg("row_reg"), inner_block("inner_block"), lane("lane");
  sums.compute_root()
      .fuse(tile, head, tasks)
      .fuse(tasks, batch, tasks)
      .parallel(tasks)
      .vectorize(inner, lanes);
  sums.update()
      .split(row, row_block, row_reg, block_rows)
      .split(inner, inner_block, lane, vectors * lanes)
      .reorder(lane, row_reg, inner_block, row_block, chunks, tile, head, batch)
      .parallel(batch)
      .parallel(head)
      .parallel(tile)
      .vectorize(lane, lanes);
  return LoopLevel(sums, inner_block);
}

}  // namespace

BackwardTiles backward_tiles(const attn::Spec &s, const CpuTiles &t) {
  BackwardTiles b{};
  b.column_lanes = lanes_dividing(std::gcd(s.head_dim, s.head_dim_v), t.vector_width);
  const auto [column_vectors, keys] =
      register_block(std::max(s.head_dim, s.head_dim_v), b.column_lanes, t.vector_registers);
  const auto [dim_vectors, rows] = register_block(s.head_dim, b.column_lanes, t.vector_registers);
  b.column_vectors = column_vectors;
  b.dim_vectors = dim_vectors;
  b.key_block = keys;
  b.key_tile = multiple_near(32, keys);
  b.query_block = rows;
  // A multiple of the pairs' register block rows too, so that no pairs are computed past the tile.
  b.query_tile = multiple_near(16, std::lcm(rows, pair_rows(t.vector_registers)));
  b.row_block = 16;
  b.key_chunk = 64;
  return b;
}

void schedule_backward_cpu(BackwardFuncs &f, const CpuTiles &t) {
  const BackwardTiles &bt = f.tiles;
  const int lanes = t.vector_width, columns = f.column_lanes;
  const Var &c = f.c, &d = f.d, &key = f.key, &i = f.i, &h = f.h, &g = f.g, &b = f.b;
  for (Func &check : f.value_checks) check.compute_root();
  Var rows("rows"), tasks("tasks");

  f.q_scaled.compute_root().fuse(i, b, rows).parallel(rows).vectorize(d, columns);
  f.keys_t.compute_root().fuse(g, b, tasks).parallel(tasks).vectorize(key, lanes);
  f.keys.compute_root().fuse(key, b, rows).parallel(rows).vectorize(d, columns);
  f.values_t.compute_root().fuse(g, b, tasks).parallel(tasks).vectorize(key, lanes);
  f.delta.compute_root().fuse(i, b, rows).parallel(rows);

  // dk and dv: a task per key tile of one KV head. Per block of query rows that meets the tile:
  // its pairs (key_tile x row_block x the group's heads), then register blocks of keys x columns
  // summed over the block's rows, added to the tile's sums.
  const Halide::RVar row_blocks = f.over_row_blocks.x;
  const LoopLevel kv_block = schedule_tile_sums(f.kv_sums, c, f.kr, row_blocks, f.kt, g, b, bt.key_block,
                                                bt.column_vectors, columns);
  const std::vector<Halide::RVar> block_rows = {f.over_block_rows.x, f.over_block_rows.y};
  for (Func part : {f.dk_part, f.dv_part})
    schedule_register_block(part, kv_block, c, f.kr, block_rows, bt.column_vectors, bt.key_block, columns);
  schedule_pairs(f.pairs_kv, f.scores_kv, f.over_head_dim, f.dp_kv, f.over_value_dim,
                 LoopLevel(f.kv_sums, row_blocks), key, i, h, lanes, t.vector_registers, bt.key_tile,
                 bt.row_block, f.group);
  schedule_dropout_words(f.dropout_kv, LoopLevel(f.kv_sums, row_blocks), lanes);

  // dq: a task per query tile of one head. Per chunk of keys that meets the tile: its dS
  // (key_chunk x query_tile), then register blocks of rows x head_dim summed over the chunk.
  const Halide::RVar key_chunks = f.over_key_chunks.x;
  const LoopLevel q_block =
      schedule_tile_sums(f.dq_sums, d, f.r, key_chunks, f.t, h, b, bt.query_block, bt.dim_vectors, columns);
  schedule_register_block(f.dq_part, q_block, d, f.r, {f.over_chunk_keys.x}, bt.dim_vectors, bt.query_block,
                          columns);
  schedule_pairs(f.ds_q, f.scores_q, f.over_head_dim_q, f.dp_q, f.over_value_dim_q,
                 LoopLevel(f.dq_sums, key_chunks), key, i, h, lanes, t.vector_registers, bt.key_chunk,
                 bt.query_tile, 1);
  schedule_dropout_words(f.dropout_q, LoopLevel(f.dq_sums, key_chunks), lanes);

  // dscore_bias: tiles of two key vectors x pair_rows rows in parallel, each tile's scores and dP
  // as the pairs' register blocks.
  if (f.dscore_bias.defined()) {
    const int rows_per_tile = pair_rows(t.vector_registers);
    Var key_outer("key_outer"), key_inner("key_inner"), row_outer("row_outer"), row_inner("row_inner");
    f.dscore_bias.compute_root()
        .split(key, key_outer, key_inner, 2 * lanes, TailStrategy::GuardWithIf)
        .split(i, row_outer, row_inner, rows_per_tile, TailStrategy::GuardWithIf)
        .reorder(key_inner, row_inner, key_outer, row_outer, h, b)
        .fuse(row_outer, h, tasks)
        .fuse(tasks, b, tasks)
        .parallel(tasks)
        .vectorize(key_inner, lanes)
        .unroll(row_inner);
    schedule_pair_sums(f.scores_bias, f.over_head_dim_bias, f.dp_bias, f.over_value_dim_bias,
                       LoopLevel(f.dscore_bias, key_outer), key, i, rows_per_tile, lanes);
    schedule_dropout_words(f.dropout_bias, LoopLevel(f.dscore_bias, key_outer), lanes);
  }

  for (Func *grad : {&f.dq, &f.dk, &f.dv}) {
    const Var inner = grad->args()[0], rows_var = grad->args()[2], batch = grad->args()[3];
    grad->compute_root().fuse(rows_var, batch, rows).parallel(rows).vectorize(inner, columns);
  }
}

}  // namespace attnc
