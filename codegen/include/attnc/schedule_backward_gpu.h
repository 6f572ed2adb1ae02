// attnc/schedule_backward_gpu.h: the GPU (CUDA, OpenCL) schedule of the attention backward.
#pragma once

#include "attn/spec.h"
#include "attnc/backward_algorithm.h"

namespace attnc {

// The backward's tiles on a GPU: a thread per (key, group of column_vectors columns) of a 32-key
// tile for dk and dv, per (query row, group of dim_vectors dims) of a 16-row tile for dq, at most
// 8 column groups (256 threads); row_block shrinks with the KV head's group so that a row block's
// P and X fit gpu_backward_shared_bytes. column_lanes, key_block and query_block are 1.
BackwardTiles backward_tiles_gpu(const attn::Spec &resolved);

// The shared memory a dk/dv block keeps: a row block's P and X for the group's query heads.
int gpu_backward_shared_floats(const attn::Spec &resolved, const BackwardTiles &tiles);
// What backward_tiles_gpu keeps that shared memory within (bytes): 32 KiB, below CUDA's 48.
inline constexpr int gpu_backward_shared_bytes = 32 * 1024;

// dk and dv: a GPU block per (key tile, KV head, batch), walking the row blocks that meet the tile;
// dq: a GPU block per (query tile, head, batch), walking the key chunks that meet the tile. Per row
// block (key chunk) all the block's threads compute its pairs into shared memory, then each thread
// adds its gradient elements over them in registers. The inputs' f32 copies and delta are kernels
// of their own, the gradients too (stored on the device).
void schedule_backward_gpu(BackwardFuncs &f, const attn::Spec &resolved);

}  // namespace attnc
