// The split-keys core (decode: few queries, many keys) on a GPU: a block per key chunk, then a combine.
//
// Not measured on a GPU; PoCL correctness only (tools/gpu_check.sh times the decode against a
// device copy's bandwidth). A GPU block per (chunk, query, split_keys_heads query heads of one KV
// head, batch). Its threads read the chunk's K rows split_keys_lanes to a row (neighbouring threads,
// neighbouring floats), each K element used for all the block's heads (with GQA the chunk's K and V
// leave DRAM once per KV head, not once per query head); then a thread per key adds its lanes into
// the scores, each head's chunk max and sum are one thread's serial loops, and a thread per (value
// column, head) computes P.V, the scores and probabilities in shared memory between them. A
// second kernel combines each query's chunks, a thread per value column. Every (batch, KV head)
// has Sk / chunk blocks, so a decode of one query still fills the GPU. The previous schedule (a
// block per query head, a thread per key reading its whole K row) is in git history.
#include "attnc/schedule_gpu.h"

namespace attnc {

using Halide::TailStrategy;
using Halide::Var;

void schedule_split_keys_gpu(SplitKeysFuncs &f, const GpuTiles &t) {
  for (Halide::Func &check : f.value_checks) check.compute_root();
  // gpu_tiles() divides the spec's group; a core of another group (never today) takes 1.
  const int heads = f.query_group % t.split_keys_heads == 0 ? t.split_keys_heads : 1;

  // A GPU has three block dims: the query and the head blocks share one. h = (kv head, its query
  // heads): heads is a multiple of the split, so no head is computed twice.
  Var head_block("head_block"), head_in("head_in"), query_heads("query_heads");
  f.partial.compute_root()
      .bound(f.h, 0, f.heads)
      .split(f.h, head_block, head_in, heads)
      .reorder(f.dv, head_in, f.c, f.i, head_block, f.b)
      .fuse(f.i, head_block, query_heads)
      .gpu_blocks(f.c, query_heads, f.b)
      .gpu_threads(f.dv, head_in);

  // q . k in two steps. First per (lane, key): split_keys_lanes neighbouring threads read a K row's
  // neighbouring floats (coalesced), each summing every lanes-th product for all the block's heads
  // in registers (innermost, unrolled: one K element, `heads` products), then storing the sums in
  // shared memory (lane_sums), its lane count padded by one so that the scores' threads (a key
  // each) read different banks. The threads are the partial's (dim 0: value columns, at least the
  // chunk's 128 keys; dim 1: heads): lanes x keys_in_row fill dim 0, rows of keys dim 1, and
  // the rest of the chunk is serial.
  const int lanes = t.split_keys_lanes;
  const int keys_in_row = std::max(1, t.split_keys_chunk / lanes);
  Var lane_key("lane_key"), key_in("key_in"), key_row("key_row"), key_round("key_round");
  Halide::Func lane_sums = f.dot_lanes.in(f.scores);
  lane_sums.compute_at(f.partial, f.c)
      .store_in(Halide::MemoryType::GPUShared)
      .bound_storage(f.lane, lanes + 1)
      .bound_storage(f.key, t.split_keys_chunk)
      .bound_storage(f.h, heads)
      .split(f.key, key_round, key_in, keys_in_row * heads, TailStrategy::GuardWithIf)
      .split(key_in, key_row, key_in, keys_in_row)
      .fuse(f.lane, key_in, lane_key)
      .reorder(f.h, lane_key, key_row, key_round)
      .gpu_threads(lane_key, key_row)
      .unroll(f.h, heads);
  f.dot_lanes.compute_at(lane_sums, lane_key)
      .store_in(Halide::MemoryType::Register)
      .bound_storage(f.h, heads)
      .unroll(f.h, heads);
  f.dot_lanes.update().reorder(f.h, f.lane, f.key, f.over_head_vectors.x).unroll(f.h, heads);

  // Then the chunk's scores and probabilities: a thread per key, each over the block's heads, in
  // shared memory. (Their key range is trimmed to the mask's hull per chunk: bounded, the shared
  // memory is a constant rather than a size the host works out per call.)
  for (Halide::Func per_key : {f.scores, f.probs}) {
    per_key.compute_at(f.partial, f.c)
        .bound_storage(f.key, t.split_keys_chunk)
        .bound_storage(f.h, heads)
        .reorder(f.h, f.key)
        .gpu_threads(f.key);
  }
  f.scores.update().reorder(f.over_lanes.x, f.h, f.key).gpu_threads(f.key);
  if (f.dropout.words.defined()) {
    // Dropout: a thread per 8 keys computes their words for the block's heads, a thread per key
    // then its kept probabilities.
    f.dropout.words.compute_at(f.partial, f.c)
        .bound_storage(f.dropout.group, t.split_keys_chunk / 8 + 1)
        .bound_storage(f.dropout.h, heads)
        .reorder(f.dropout.h, f.dropout.group)
        .gpu_threads(f.dropout.group);
    f.pv_probs.compute_at(f.partial, f.c)
        .bound_storage(f.key, t.split_keys_chunk)
        .bound_storage(f.h, heads)
        .reorder(f.h, f.key)
        .gpu_threads(f.key);
  }
  // Each head's chunk max and sum: a thread per head, serial over the chunk's keys.
  for (Halide::Func per_chunk : {f.chunk_max, f.chunk_sum}) {
    per_chunk.compute_at(f.partial, f.c).bound_storage(f.h, heads).gpu_threads(f.h);
    per_chunk.update().gpu_threads(f.h);
  }
  // P.V: a thread per (value column, head) over the chunk's key groups; the heads' threads read the
  // same V elements (from L1 after the first).
  f.chunk_pv.compute_at(f.partial, f.c).bound_storage(f.h, heads).gpu_threads(f.dv, f.h);
  f.chunk_pv.update().gpu_threads(f.dv, f.h);
  f.group_pv.compute_at(f.chunk_pv, f.over_groups.x);

  // The combine: a block per (head, query, batch), a thread per value column.
  f.out.compute_root().reorder(f.dv, f.h, f.i, f.b).gpu_blocks(f.h, f.i, f.b).gpu_threads(f.dv);
  f.total_max.compute_at(f.out, f.h).gpu_threads(f.i);
  f.total_max.update().gpu_threads(f.i);
  f.combined.compute_at(f.out, f.h).gpu_threads(f.dv);
  f.combined.update().gpu_threads(f.dv);
}

}  // namespace attnc
