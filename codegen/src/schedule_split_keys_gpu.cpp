// The split-keys core (decode: few queries, many keys) on a GPU: a block per key chunk, then a combine.
//
// Not measured on a GPU; PoCL correctness only (tools/gpu_check.sh times the decode against a
// device copy's bandwidth). A GPU block per (chunk, query, split_keys_heads query heads of one KV
// head, batch): its threads compute the chunk's scores one key each, for all the block's heads at
// once (each K element loaded once, used for every head: with GQA the chunk's K and V leave DRAM
// once per KV head, not once per query head), and its P.V one (value column, head) each, the
// scores and probabilities in shared memory between them; each head's chunk max and sum are one
// thread's serial loops. A second kernel combines each query's chunks, a thread per value column.
// Every (batch, KV head) has Sk / chunk blocks, so a decode of one query still fills the GPU. The
// previous schedule (a block per query head, K and V read by each) is in git history.
#include "attnc/schedule_gpu.h"

namespace attnc {

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

  // The chunk's scores and probabilities: a thread per key, each over the block's heads (innermost,
  // unrolled: one K element, `heads` products), in shared memory.
  // (Their key range is trimmed to the mask's hull per chunk: bounded, the shared memory is a
  // constant rather than a size the host works out per call.)
  for (Halide::Func per_key : {f.scores, f.probs}) {
    per_key.compute_at(f.partial, f.c)
        .bound_storage(f.key, t.split_keys_chunk)
        .bound_storage(f.h, heads)
        .reorder(f.h, f.key)
        .gpu_threads(f.key);
  }
  f.scores.update().reorder(f.h, f.over_lanes.x, f.key).gpu_threads(f.key);
  f.dot_lanes.compute_at(f.scores, f.key).bound_storage(f.h, heads).unroll(f.h, heads);
  f.dot_lanes.update().reorder(f.h, f.lane, f.over_head_vectors.x).unroll(f.h, heads);
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
