// The attention backward on GPU targets (CUDA, OpenCL): a block per key tile (dk, dv), per query tile (dq).
//
// Not measured on a GPU: PoCL runs it in `make test` for correctness only, and this is the plain
// first design, the algorithm's two passes (backward_algorithm.h) mapped onto GPU blocks as they
// stand. dk and dv: a GPU block per (key tile of key_tile keys, KV head, batch), a thread per (key,
// group of column_vectors columns). The block walks the row blocks the mask keeps (the CPU's RDom
// predicates); per row block its threads first compute the block's pairs (P and X for row_block
// rows of each of the KV head's query heads, each dot product over head_dim and value_dim in a
// thread's register) into shared memory together, then each thread sums dS q and P dout over them
// for its key and columns in registers and adds them to the tile's sums (kv_sums, in global memory:
// one read and write per thread and row block). dq alike: a GPU block per (query tile, head, batch),
// a thread per (query row, group of dim_vectors dims), per key chunk the chunk's dS in shared
// memory, then each thread's dS k sums in registers. q scaled, k, v transposed, k made finite and
// delta are computed first, each a kernel of its own (16 x 16 threads, as the forward's elementwise
// stages), and the gradients last, read from the sums and stored on the device. Each thread's
// storage (its sums, a pair's dot products) and each shared allocation (bound to the tile) has a
// constant size, as a GPU kernel needs.
#include "attnc/schedule_backward_gpu.h"

#include <algorithm>
#include <vector>

#include "attnc/schedule_gpu.h"

namespace attnc {
namespace {

using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;

// At most this many threads along a tile's columns (dims): 8, so 32 keys make 256 threads.
constexpr int column_threads_max = 8;

// The columns per thread: the fewest that divide `dim` in at most column_threads_max threads (a
// divisor, so that no thread reads past a row: v and dout have exactly `dim` columns).
int columns_per_thread(int dim) {
  int per_thread = (dim + column_threads_max - 1) / column_threads_max;
  while (dim % per_thread != 0) ++per_thread;
  return per_thread;
}

// A 4-d pure Func (x, y, a, b) computed at the root on the GPU with x and y as the thread grid
// and a, b fused into the third block dim.
void schedule_grid_gpu(Func f, const Var &x, const Var &y, const Var &a, const Var &b) {
  Var fused("fused");
  f.reorder(x, y, a, b).fuse(a, b, fused);
  schedule_elementwise_gpu(f, x, y, fused);
}

// A pass's sums (both stages) on the GPU: a block per `blocks` (tile, head, batch), a thread per
// (group of per_thread of `dim`, row), its group unrolled; the update's loop over `chunks` (row
// blocks, key chunks) serial in the block, outside the threads, so that the threads can stage each
// chunk's pairs together. thread names the threads' dim for compute_at.
void schedule_sums_gpu(Func sums, const Var &dim, const Var &thread, int per_thread, const Var &row,
                       const Halide::RVar &chunks, const std::vector<Var> &blocks) {
  Var own("own");
  auto by_threads = [&](Halide::Stage stage, std::vector<Halide::VarOrRVar> order) {
    order.insert(order.end(), blocks.begin(), blocks.end());
    stage.split(dim, thread, own, per_thread)
        .reorder(order)
        .gpu_blocks(blocks[0], blocks[1], blocks[2])
        .gpu_threads(thread, row)
        .unroll(own);
  };
  by_threads(sums, {own, thread, row});
  by_threads(sums.update(), {own, thread, row, chunks});
}

}  // namespace

int gpu_backward_shared_floats(const attn::Spec &s, const BackwardTiles &t) {
  const int group = s.heads / s.kv_heads;
  return std::max(2 * t.key_tile * t.row_block * group, t.key_chunk * t.query_tile);
}

BackwardTiles backward_tiles_gpu(const attn::Spec &s) {
  // Not measured on a GPU; PoCL correctness only. A tile's threads own whole keys (query rows) and
  // a few columns each; the row block halves until its pairs fit the shared memory budget (a
  // large query-head group: MQA), then the key tile.
  BackwardTiles t{};
  t.column_lanes = 1;
  t.key_block = 1;
  t.query_block = 1;
  t.column_vectors = columns_per_thread(std::max(s.head_dim, s.head_dim_v));
  t.dim_vectors = columns_per_thread(s.head_dim);
  t.key_tile = 32;
  t.row_block = 16;
  t.query_tile = 16;
  t.key_chunk = 32;
  auto fits = [&] { return gpu_backward_shared_floats(s, t) * 4 <= gpu_backward_shared_bytes; };
  while (t.row_block > 1 && !fits()) t.row_block /= 2;
  while (t.key_tile > 1 && !fits()) t.key_tile /= 2;
  return t;
}

void schedule_backward_gpu(BackwardFuncs &f, const attn::Spec &s) {
  const BackwardTiles &bt = f.tiles;
  const Var &c = f.c, &d = f.d, &key = f.key, &i = f.i, &h = f.h, &g = f.g, &b = f.b;
  const int group = s.heads / s.kv_heads;
  // Checked on the host, once, before any kernel runs.
  for (Func &check : f.value_checks) check.compute_root();

  schedule_grid_gpu(f.q_scaled, d, i, h, b);
  schedule_grid_gpu(f.keys, d, key, g, b);
  schedule_grid_gpu(f.keys_t, key, d, g, b);
  schedule_grid_gpu(f.values_t, key, c, g, b);
  // delta: a thread per (query row, head), its sum over value_dim serial.
  schedule_elementwise_gpu(f.delta, i, h, b);
  {
    Var i_block("i_block"), h_block("h_block"), i_in("i_in"), h_in("h_in");
    f.delta.update()
        .split(i, i_block, i_in, 16, TailStrategy::GuardWithIf)
        .split(h, h_block, h_in, 16, TailStrategy::GuardWithIf)
        .reorder(i_in, h_in, i_block, h_block, b)
        .gpu_blocks(i_block, h_block, b)
        .gpu_threads(i_in, h_in);
  }

  // dk and dv: threads (column group, key); the loop over row blocks serial in the GPU block.
  const int columns = std::max(f.head_dim, f.value_dim);
  const int column_threads = columns / bt.column_vectors;
  const Var &kr = f.kr, &kt = f.kt;
  const Halide::RVar row_blocks = f.over_row_blocks.x;
  Var column_thread("column_thread");
  f.kv_sums.compute_root().bound(c, 0, columns).bound(kr, 0, bt.key_tile);
  schedule_sums_gpu(f.kv_sums, c, column_thread, bt.column_vectors, kr, row_blocks, {kt, g, b});
  // A thread's sums over a row block: column_vectors registers each for dk and dv.
  for (Func part : {f.dk_part, f.dv_part}) {
    part.compute_at(LoopLevel(f.kv_sums, column_thread)).bound_extent(c, bt.column_vectors).unroll(c);
    part.update().reorder(c, kr, f.over_block_rows.x, f.over_block_rows.y).unroll(c);
  }
  // The row block's pairs in shared memory: a thread per (key, row), serial over the rows past
  // column_threads and over the group's heads; each pair's scores and dP sums in its registers.
  Var key_outer("key_outer"), key_thread("key_thread"), row_round("row_round"), row_thread("row_thread");
  f.pairs_kv.compute_at(LoopLevel(f.kv_sums, row_blocks))
      .store_in(Halide::MemoryType::GPUShared)
      .bound_storage(key, bt.key_tile)
      .bound_storage(i, bt.row_block)
      .bound_storage(h, group)
      .bound_storage(b, 1)
      .split(key, key_outer, key_thread, bt.key_tile, TailStrategy::GuardWithIf)
      .split(i, row_round, row_thread, column_threads, TailStrategy::GuardWithIf)
      .reorder(h, row_round, row_thread, key_thread, key_outer, b)
      .gpu_threads(row_thread, key_thread);
  f.scores_kv.compute_at(f.pairs_kv, h);
  f.dp_kv.compute_at(f.pairs_kv, h);
  // Dropout: each pair's thread its Philox words (one call's four: the pair's 8 keys' bits).
  if (f.dropout_kv.words.defined()) f.dropout_kv.words.compute_at(f.pairs_kv, h);

  // dq: threads (dim group, query row); the loop over key chunks serial in the GPU block.
  const int dim_threads = f.head_dim / bt.dim_vectors;
  const Var &r = f.r, &qt = f.t;
  const Halide::RVar key_chunks = f.over_key_chunks.x;
  Var dim_thread("dim_thread");
  f.dq_sums.compute_root().bound(d, 0, f.head_dim).bound(r, 0, bt.query_tile);
  schedule_sums_gpu(f.dq_sums, d, dim_thread, bt.dim_vectors, r, key_chunks, {qt, h, b});
  f.dq_part.compute_at(LoopLevel(f.dq_sums, dim_thread)).bound_extent(d, bt.dim_vectors).unroll(d);
  f.dq_part.update().reorder(d, r, f.over_chunk_keys.x).unroll(d);
  // The chunk's dS in shared memory: a thread per (key, row), serial over the keys past
  // dim_threads.
  Var key_round("key_round"), row_outer("row_outer"), row_in("row_in");
  f.ds_q.compute_at(LoopLevel(f.dq_sums, key_chunks))
      .store_in(Halide::MemoryType::GPUShared)
      .bound_storage(key, bt.key_chunk)
      .bound_storage(i, bt.query_tile)
      .bound_storage(h, 1)
      .bound_storage(b, 1)
      .split(key, key_round, key_thread, dim_threads, TailStrategy::GuardWithIf)
      .split(i, row_outer, row_in, bt.query_tile, TailStrategy::GuardWithIf)
      .reorder(key_round, key_thread, row_in, row_outer, h, b)
      .gpu_threads(key_thread, row_in);
  f.scores_q.compute_at(f.ds_q, key_round);
  f.dp_q.compute_at(f.ds_q, key_round);
  if (f.dropout_q.words.defined()) f.dropout_q.words.compute_at(f.ds_q, key_round);

  // The gradients, read from the sums: a thread per (dim, row).
  schedule_grid_gpu(f.dq, d, i, h, b);
  schedule_grid_gpu(f.dk, d, key, g, b);
  schedule_grid_gpu(f.dv, c, key, g, b);
  // dscore_bias: a thread per (key, row), its scores and dP sums in its registers.
  if (f.dscore_bias.defined()) {
    schedule_grid_gpu(f.dscore_bias, key, i, h, b);
    const Var thread("x_in");  // schedule_elementwise_gpu's innermost thread var
    f.scores_bias.compute_at(f.dscore_bias, thread);
    f.dp_bias.compute_at(f.dscore_bias, thread);
    if (f.dropout_bias.words.defined()) f.dropout_bias.words.compute_at(f.dscore_bias, thread);
  }
}

}  // namespace attnc
