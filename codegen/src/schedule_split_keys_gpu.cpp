// The split-keys core (decode: few queries, many keys) on a GPU: a block per key chunk, then a combine.
//
// Not measured on a GPU; PoCL correctness only (tools/gpu_check.sh times the decode against a
// device copy's bandwidth). A GPU block per (chunk, query, head, batch): its threads compute the
// chunk's scores one key each and its P.V one value column each, the scores and probabilities in
// shared memory between them; the chunk's max and sum are one thread's serial loops. A second
// kernel combines each query's chunks, a thread per value column. Every (batch, head) has
// Sk / chunk blocks, so a decode of one query still fills the GPU.
#include "attnc/schedule_gpu.h"

namespace attnc {

using Halide::Var;

void schedule_split_keys_gpu(SplitKeysFuncs &f, const GpuTiles &t) {
  for (Halide::Func &check : f.value_checks) check.compute_root();

  // A GPU has three block dims: the query and the head share one.
  Var query_head("query_head");
  f.partial.compute_root()
      .reorder(f.dv, f.c, f.i, f.h, f.b)
      .fuse(f.i, f.h, query_head)
      .gpu_blocks(f.c, query_head, f.b)
      .gpu_threads(f.dv);

  // The chunk's scores and probabilities: a thread per key, in shared memory.
  // (Their key range is trimmed to the mask's hull per chunk: bounded, the shared memory is a
  // constant rather than a size the host works out per call.)
  for (Halide::Func per_key : {f.scores, f.probs})
    per_key.compute_at(f.partial, f.c).bound_storage(f.key, t.split_keys_chunk).gpu_threads(f.key);
  f.scores.update().gpu_threads(f.key);
  f.dot_lanes.compute_at(f.scores, f.key);
  // The chunk's max and sum: one thread each (c has extent 1 here: a thread loop of one).
  for (Halide::Func per_chunk : {f.chunk_max, f.chunk_sum}) {
    per_chunk.compute_at(f.partial, f.c).gpu_threads(f.c);
    per_chunk.update().gpu_threads(f.c);
  }
  // P.V: a thread per value column over the chunk's key groups.
  f.chunk_pv.compute_at(f.partial, f.c).gpu_threads(f.dv);
  f.chunk_pv.update().gpu_threads(f.dv);
  f.group_pv.compute_at(f.chunk_pv, f.over_groups.x);

  // The combine: a block per (head, query, batch), a thread per value column.
  f.out.compute_root().reorder(f.dv, f.h, f.i, f.b).gpu_blocks(f.h, f.i, f.b).gpu_threads(f.dv);
  f.total_max.compute_at(f.out, f.h).gpu_threads(f.i);
  f.total_max.update().gpu_threads(f.i);
  f.combined.compute_at(f.out, f.h).gpu_threads(f.dv);
  f.combined.update().gpu_threads(f.dv);
}

}  // namespace attnc
