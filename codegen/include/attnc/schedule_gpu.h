// attnc/schedule_gpu.h: where and in what order a GPU (CUDA, OpenCL) computes the core and the projections.
#pragma once

#include <Halide.h>

#include "attnc/core_algorithm.h"
#include "attnc/projection.h"
#include "attnc/split_keys_algorithm.h"
#include "attnc/tile_config_gpu.h"

namespace attnc {

// Whether a target's kernels run on a GPU (CUDA or OpenCL): those take the GPU schedules and
// the block core, whatever the CPU would have picked.
bool runs_on_gpu(const Halide::Target &target);

// GPU blocks over (query tile, head, batch), threads over (value column group, query row); the
// block walks the key blocks the mask keeps (the same RDom predicates as on the CPU), staging each
// block's K and V rows in shared memory with all its threads, each thread's softmax state in shared
// memory too and its P.V sums over a key block in registers. core was defined with gpu_tiles()'
// key_block, query_tile, pv_rows and value_columns.
void schedule_core_gpu(CoreFuncs &core, const GpuTiles &tiles);

// The split-keys core (Sq <= split_keys_max_queries) on a GPU: a block per (key chunk, query,
// split_keys_heads query heads of one KV head, batch), split_keys_lanes threads per key reading
// its K row for all the block's heads, then a thread per key for the scores and per (value
// column, head) for P.V, then a combine kernel. split was defined with gpu_tiles()'
// split_keys_chunk, split_keys_group and split_keys_lanes.
void schedule_split_keys_gpu(SplitKeysFuncs &split, const GpuTiles &tiles);

// y(row, token, b) as a GPU matrix product: blocks of proj_rows features x proj_tokens tokens,
// threads of proj_thread_rows x proj_thread_tokens outputs, chunks of proj_chunk input features of
// x and w staged in shared memory. linear was defined with panel_rows 0 (no weights_t).
void schedule_linear_gpu(LinearFuncs &linear, const GpuTiles &tiles);

// A pure Func of (x, y, z) computed at the root on the GPU: 16 x 16 threads per block, z a block dim.
void schedule_elementwise_gpu(Halide::Func f, const Halide::Var &x, const Halide::Var &y,
                              const Halide::Var &z);

}  // namespace attnc
