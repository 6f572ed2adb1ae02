// attnc/tile_config_gpu.h: GPU tile sizes (CUDA and OpenCL) for a spec, as one pure function.
#pragma once

#include "attn/spec.h"

namespace attnc {

struct GpuTiles {
  int query_tile;  // query rows per GPU block, one thread each (the block's threads)
  int key_block;  // keys per running-max/sum update, staged in shared memory; a thread's scores for one block
  int pv_rows;    // query rows of a P.V group: 1, each thread trims its keys to its own row
  int split_keys_chunk;  // split-keys decode: keys per GPU block (a thread per key for the scores)
  int split_keys_group;  // split-keys decode: keys per P.V group of a value column's thread
  int proj_rows;         // output features per GPU block of a projection (threads along features)
  int proj_tokens;       // tokens per GPU block of a projection (threads along tokens)
};

// The shared memory (in floats) of a core block on a GPU: the query tile's softmax state (max, sum
// and Dv accumulators per row) and one key block's K and V rows.
int gpu_shared_floats(const attn::Spec &resolved, int query_tile, int key_block);
// The shared memory a CUDA block may use without opting in to more.
inline constexpr int gpu_shared_bytes = 48 * 1024;

// One thread per query row; the tile's softmax state and each key block's K and V rows sit in the
// block's shared memory (K and V loaded by all the block's threads together), a row's scores for one
// key block in its thread's registers. Not measured on a GPU (PoCL runs them for correctness only):
// the most rows (up to 128) whose state and a key block of 16 fit in gpu_shared_bytes, then the
// most keys (up to 32) that still fit.
GpuTiles gpu_tiles(const attn::Spec &resolved);

}  // namespace attnc
