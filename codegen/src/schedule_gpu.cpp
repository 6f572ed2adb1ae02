// GPU schedules (CUDA, OpenCL): one family, sized by gpu_tiles().
//
// Not measured on a GPU: PoCL (OpenCL on the CPU) runs them in `make test` for correctness only,
// and tools/gpu_check.sh times the CUDA build against PyTorch's scaled_dot_product_attention (and
// the decode against a device copy's bandwidth) where an NVIDIA GPU is lent. The block core: a GPU
// block per (query tile, head, batch), a thread per (query row, group of value_columns value
// columns), walks the key blocks the mask keeps (the CPU's RDom predicates, so masked blocks are
// never visited); per key block its threads first copy the block's K rows and the tile's scaled q
// rows into shared memory together, then compute the block's scores into shared memory together
// (a row's keys spread over its column groups' threads, each dot product in a register: the QK^T
// products are done once, not once per column group), then copy the block's V rows; then each
// thread takes its row's max, probabilities and sum from the shared scores (alike in each of the
// row's column groups: key_block exps, redundant) and its columns' P.V sums in registers, and
// folds them into its softmax state (max, sum and value_columns accumulators: define_core's GPU
// state, pure in column group and row, so the threads never race), kept in shared memory across
// key blocks (why not registers: see schedule_core_gpu). Earlier cores (a thread per query row;
// then each column group computing its row's scores itself) are in git history. Calls with few
// queries (decode) take the split-keys core instead (schedule_split_keys_gpu.cpp).
#include "attnc/schedule_gpu.h"

namespace attnc {

using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;

bool runs_on_gpu(const Halide::Target &target) {
  return target.has_feature(Halide::Target::CUDA) || target.has_feature(Halide::Target::OpenCL);
}

namespace {

// Sweep n's state update (stage n + 1): a serial loop over key blocks in the GPU block, each
// iteration staging the block's K rows, the tile's q rows, the block's scores and its V rows in
// shared memory with all the block's threads (Halide puts a barrier after each), then updating
// every (row, column group)'s state in its own thread. The per-thread stages are bounded to one
// block of one row so their storage is a constant-size private array (a GPU kernel cannot
// allocate storage of run-time size).
void schedule_sweep_gpu(CoreFuncs &f, BlockSweep &w, int stage, const GpuTiles &t) {
  const int column_groups = t.threads / t.query_tile;
  const RVar over_blocks = w.over_blocks.x;
  f.state.update(stage - 1)
      .reorder(f.column_group, f.row, over_blocks, f.tile, f.h, f.b)
      .gpu_threads(f.column_group, f.row);
  // (No stage index: Halide 21 validates compute_at sites without one.)
  const Halide::LoopLevel in_thread(f.state, f.column_group), in_block(f.state, over_blocks);

  // The block's K (V) rows: key_block x head_dim floats, head_dim fastest, the loads spread over
  // all the block's threads so neighbouring threads read neighbouring floats, in the state
  // update's shape (column groups x rows: Halide sizes a kernel's thread block by the largest
  // extent of each thread dim over its stages, so a flat copy of t.threads lanes would multiply the
  // block). Each sweep takes its own copy (a wrapper per consumer): a Func has one place to be computed.
  auto staged = [&](Halide::Func rows, Halide::Func consumer, const Var &dim) {
    Var key_in("key_in"), key_outer("key_outer"), element("element"), lane("lane"), round("round");
    Var lane_row("lane_row"), lane_column("lane_column");
    rows.in(consumer)
        .compute_at(in_block)
        .store_in(Halide::MemoryType::GPUShared)
        .bound_storage(f.key, t.key_block)
        .bound_storage(f.h, 1)
        .bound_storage(f.b, 1)
        .split(f.key, key_outer, key_in, t.key_block, TailStrategy::GuardWithIf)
        .fuse(dim, key_in, element)
        .split(element, round, lane, t.threads, TailStrategy::GuardWithIf)
        .split(lane, lane_row, lane_column, column_groups)
        .reorder(lane_column, lane_row, round, key_outer)
        .gpu_threads(lane_column, lane_row);
  };
  staged(f.head_keys, w.scores, f.d);
  staged(f.head_values, w.block_pv, f.dv);
  // Rows of the tile in shared memory (the q rows, the block's scores), staged per key block by a
  // thread per (lane, row) in the state's shape, `spread` split over a row's column-group lanes.
  auto shared_rows = [&](Halide::Func fn, const Var &spread, const Var &round, const Var &lane) {
    return fn.compute_at(in_block)
        .store_in(Halide::MemoryType::GPUShared)
        .bound_storage(f.row, t.query_tile)
        .bound_storage(f.tile, 1)
        .bound_storage(f.h, 1)
        .bound_storage(f.b, 1)
        .split(spread, round, lane, column_groups, TailStrategy::GuardWithIf)
        .reorder(round, lane, f.row)
        .gpu_threads(lane, f.row);
  };
  // The tile's scaled q rows, reloaded per key block (from L1/L2). Staged once per GPU block,
  // before the loop over key blocks, they were overwritten: Halide 21 gives shared memory a
  // lifetime in barrier stages, blind to the loop, so a Func allocated before the loop and last
  // read in its first stages shares its space with Funcs the loop's later stages allocate.
  Var d_round("d_round"), d_lane("d_lane");
  shared_rows(f.query_tile.in(w.scores), f.d, d_round, d_lane);

  auto per_thread = [&](Halide::Func fn) {
    fn.compute_at(in_thread)
        .bound_storage(f.tile, 1)
        .bound_storage(f.h, 1)
        .bound_storage(f.b, 1)
        .bound_storage(f.kb, 1);
    return fn;
  };
  // The block's scores: a thread per (key lane, row) in the state's shape, each summing its keys'
  // products (key_lane, key_lane + column_groups, ...) over head_dim in a register, then storing
  // the sum in shared memory (a copy: scores itself, a reduction, would store every partial sum).
  // Always the whole key block (bound), not the span hull the per-thread stages read (in_hull in
  // core_algorithm.cpp): copying the hull, a run-time extent (each thread's loop over key_round a
  // trip count of its own), PoCL's default work-group method (loopvec) ran the kernel wrong
  // (global(4) at key_block 32: a row's probabilities all alike), while the same kernel was right
  // under POCL_WORK_GROUP_METHOD=loops or cbs and its shared memory layout had no overlap. The
  // probabilities past the hull now read scores that are computed, if never used.
  Var key_round("key_round"), key_lane("key_lane");
  Halide::Func shared_scores = shared_rows(w.scores.in(), f.key, key_round, key_lane);
  shared_scores.bound(f.key, 0, t.key_block).bound_storage(f.key, t.key_block).bound_storage(f.kb, 1);
  w.scores.compute_at(shared_scores, key_round);
  if (f.has_modifiers) per_thread(w.logits).bound_storage(f.row, 1).bound_storage(f.key, t.key_block);
  if (w.key_penalty.defined())
    w.key_penalty.compute_at(in_thread).bound_storage(f.key, t.key_block).bound_storage(f.kb, 1);
  per_thread(w.probs).bound_storage(f.row, 1).bound_storage(f.key, t.key_block);
  if (w.dropout.words.defined()) {
    // Dropout: each thread its row's words for the block's keys, then its kept probabilities.
    w.dropout.words.compute_at(in_thread)
        .bound_storage(w.dropout.i, 1)
        .bound_storage(w.dropout.group, t.key_block / 8 + 1)
        .bound_storage(w.dropout.h, 1)
        .bound_storage(w.dropout.b, 1);
    per_thread(w.pv_probs).bound_storage(f.row, 1).bound_storage(f.key, t.key_block);
  }
  per_thread(w.block_max).bound_storage(f.row, 1);
  per_thread(w.block_sum).bound_storage(f.row, 1);
  // The group's value columns innermost and unrolled: per key one probability, value_columns
  // products, the sums in registers.
  per_thread(w.block_pv)
      .bound_storage(f.group_row, 1)
      .bound_storage(f.pv_group, 1)
      .bound_extent(f.dv, t.value_columns)
      .unroll(f.dv);
  for (size_t n = 0; n < w.over_group_block.size(); ++n)
    w.block_pv.update(static_cast<int>(n)).reorder(f.dv, w.over_group_block[n].x).unroll(f.dv);
}

}  // namespace

void schedule_core_gpu(CoreFuncs &f, const GpuTiles &t) {
  const int column_groups = t.threads / t.query_tile;
  Var query_block("query_block"), query_in_tile("query_in_tile"), column("column"), column_in("column_in");
  f.out.compute_root()
      .bound(f.dv, 0, column_groups * t.value_columns)
      .split(f.i, query_block, query_in_tile, t.query_tile, TailStrategy::GuardWithIf)
      .split(f.dv, column, column_in, t.value_columns)
      .reorder(column_in, column, query_in_tile, query_block, f.h, f.b)
      .gpu_blocks(query_block, f.h, f.b)
      .gpu_threads(column, query_in_tile)
      .unroll(column_in);

  // Checked on the host, once, before any kernel runs.
  for (Halide::Func &check : f.value_checks) check.compute_root();

  // The tile's state lives in the GPU block's shared memory across its loop over key blocks, each
  // thread reading and writing its own (column group, row) element once per key block; within a
  // key block a thread's value_columns P.V sums are registers (block_pv, unrolled). Registers
  // across key blocks would need Halide to give each thread only its own element of a block-level
  // register allocation: Halide 21 gives each thread a private copy of the whole tile's state,
  // indexed by the thread id, which PTX puts in local memory (10 KiB a thread at Dv 64, read and
  // written per key block under a mask's block predicate). Later Halide shrinks such allocations
  // to a thread's registers (halide/Halide#9343): then store_in(Register) here, to be measured.
  // out's threads read their own elements.
  f.state.compute_at(f.out, query_block)
      .store_in(Halide::MemoryType::GPUShared)
      .bound_storage(f.column_group, column_groups)
      .bound_storage(f.row, t.query_tile)
      .bound_storage(f.tile, 1)
      .bound_storage(f.h, 1)
      .bound_storage(f.b, 1)
      .reorder(f.column_group, f.row, f.tile, f.h, f.b)
      .gpu_threads(f.column_group, f.row);
  for (size_t n = 0; n < f.sweeps.size(); ++n) schedule_sweep_gpu(f, f.sweeps[n], static_cast<int>(n) + 1, t);
}

// The classic shared-memory matrix product. Not measured on a GPU (PoCL runs it for correctness
// only; the thread-per-output loop it replaced, each thread reading its whole x and w rows from
// global memory, is in git history). y's consumers read a root wrapper: a GPU block per
// proj_rows x proj_tokens outputs (64 x 64), a thread per proj_thread_rows x proj_thread_tokens
// (4 x 4) contiguous outputs (16 x 16 threads). The block keeps its outputs' sums in shared memory and walks
// the input features in chunks of proj_chunk: per chunk its threads together copy the chunk of x
// (the tile's tokens) and of w (the tile's rows) into shared memory, neighbouring threads reading
// neighbouring features, then each thread sums its 4 x 4 outputs over the chunk in registers (an
// rfactor of the sum, unrolled) and adds them to its sums. Why not registers across chunks: the
// same as schedule_core_gpu's state (Halide 21 gives each thread the whole block's allocation).
// Tails (token counts, rows, in_features not multiples of the tiles) are guarded where outputs are
// written; a block's sums and copies may overhang the edges, so the generator's GPU linear layers
// read x, w and the bias at clamped coordinates.
void schedule_linear_gpu(LinearFuncs &f, const GpuTiles &t) {
  const int row_threads = t.proj_rows / t.proj_thread_rows;
  const int token_threads = t.proj_tokens / t.proj_thread_tokens;
  Var row_block("row_block"), token_block("token_block"), row_in("row_in"), token_in("token_in");
  Var row_thread("row_thread"), token_thread("token_thread"), row_own("row_own"), token_own("token_own");
  // A stage over the block's outputs: a thread per proj_thread_rows x proj_thread_tokens of them.
  auto by_threads = [&](auto stage, const Var &row, const Var &token) {
    stage.split(row, row_thread, row_own, t.proj_thread_rows, TailStrategy::GuardWithIf)
        .split(token, token_thread, token_own, t.proj_thread_tokens, TailStrategy::GuardWithIf)
        .reorder(row_own, token_own, row_thread, token_thread)
        .gpu_threads(row_thread, token_thread)
        .unroll(row_own)
        .unroll(token_own);
  };
  Halide::Func outputs = f.y.in();
  outputs.compute_root()
      .split(f.row, row_block, row_in, t.proj_rows, TailStrategy::GuardWithIf)
      .split(f.token, token_block, token_in, t.proj_tokens, TailStrategy::GuardWithIf)
      .reorder(row_in, token_in, row_block, token_block, f.b)
      .gpu_blocks(row_block, token_block, f.b);
  by_threads(outputs, row_in, token_in);

  // The block's sums, in shared memory across the chunks; the bias (or 0) first.
  f.y.compute_at(outputs, row_block)
      .store_in(Halide::MemoryType::GPUShared)
      .bound_storage(f.row, t.proj_rows)
      .bound_storage(f.token, t.proj_tokens)
      .bound_storage(f.b, 1);
  by_threads(f.y, f.row, f.token);
  RVar chunk("chunk"), feature("feature");
  Var chunk_index("chunk_index");
  f.y.update().split(f.over_inputs.x, chunk, feature, t.proj_chunk, TailStrategy::GuardWithIf);
  Halide::Func chunk_sums = f.y.update().rfactor(chunk, chunk_index);
  by_threads(f.y.update(), f.row, f.token);
  // (The chunk loop was innermost, as an RVar: a full reorder puts it outside the threads.)
  f.y.update().reorder(row_own, token_own, row_thread, token_thread, f.b, chunk);

  // A thread's chunk sums: registers (constant indices once unrolled), features outermost.
  chunk_sums.compute_at(f.y, row_thread)
      .bound_storage(f.row, t.proj_thread_rows)
      .bound_storage(f.token, t.proj_thread_tokens)
      .bound_storage(f.b, 1)
      .bound_storage(chunk_index, 1)
      .unroll(f.row, t.proj_thread_rows, TailStrategy::GuardWithIf)
      .unroll(f.token, t.proj_thread_tokens, TailStrategy::GuardWithIf);
  chunk_sums.update()
      .reorder(f.row, f.token, feature)
      .unroll(f.row, t.proj_thread_rows, TailStrategy::GuardWithIf)
      .unroll(f.token, t.proj_thread_tokens, TailStrategy::GuardWithIf);

  // A chunk of x (tokens) or w (rows): proj_chunk features fastest, the copy spread over the
  // block's threads in their 16 x 16 shape (Halide sizes a kernel's thread block by the largest
  // extent of each thread dim over its stages).
  auto staged = [&](Halide::Func source, int outer_extent) {
    Halide::Func chunk_copy = source.in(chunk_sums);
    const std::vector<Var> args = chunk_copy.args();
    Var element("element"), round("round"), lane("lane"), lane_row("lane_row"), lane_token("lane_token");
    chunk_copy.compute_at(f.y, chunk)
        .store_in(Halide::MemoryType::GPUShared)
        .bound_storage(args[0], t.proj_chunk)
        .bound_storage(args[1], outer_extent);
    for (size_t d = 2; d < args.size(); ++d) chunk_copy.bound_storage(args[d], 1);
    chunk_copy.fuse(args[0], args[1], element)
        .split(element, round, lane, row_threads * token_threads, TailStrategy::GuardWithIf)
        .split(lane, lane_token, lane_row, row_threads)
        .reorder(lane_row, lane_token, round)
        .gpu_threads(lane_row, lane_token);
    return chunk_copy;
  };
  staged(f.inputs, t.proj_tokens);
  // w's chunk stored rows fastest: a thread's reads of its rows, neighbouring threads' rows
  // proj_thread_rows apart, then spread over the banks.
  Halide::Func weights_chunk = staged(f.weights, t.proj_rows);
  weights_chunk.reorder_storage(weights_chunk.args()[1], weights_chunk.args()[0]);
}

void schedule_elementwise_gpu(Halide::Func f, const Halide::Var &x, const Halide::Var &y,
                              const Halide::Var &z) {
  Var x_block("x_block"), y_block("y_block"), x_in("x_in"), y_in("y_in");
  f.compute_root()
      .split(x, x_block, x_in, 16, TailStrategy::GuardWithIf)
      .split(y, y_block, y_in, 16, TailStrategy::GuardWithIf)
      .reorder(x_in, y_in, x_block, y_block, z)
      .gpu_blocks(x_block, y_block, z)
      .gpu_threads(x_in, y_in);
}

}  // namespace attnc
