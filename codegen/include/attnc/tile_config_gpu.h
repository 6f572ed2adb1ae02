// attnc/tile_config_gpu.h: GPU tile sizes (CUDA and OpenCL) for a spec, as one pure function.
#pragma once

#include "attn/spec.h"

namespace attnc {

struct GpuTiles {
  int query_tile;     // query rows per GPU block
  int value_columns;  // value columns per thread: its accumulators (registers); divides head_dim_v
  int threads;        // threads per core block: query_tile x (head_dim_v / value_columns)
  int key_block;  // keys per running-max/sum update, staged in shared memory; a thread's scores for one block
  int pv_rows;    // query rows of a P.V group: 1, each thread trims its keys to its own row
  int split_keys_chunk;    // split-keys decode: keys per GPU block (a thread per key for the scores)
  int split_keys_group;    // split-keys decode: keys per P.V group of a value column's thread
  int split_keys_heads;    // split-keys decode: query heads of one KV head per GPU block (K, V read once)
  int split_keys_lanes;    // split-keys decode: threads along head_dim per key (neighbours read neighbours)
  int proj_rows;           // output features per GPU block of a projection
  int proj_tokens;         // tokens per GPU block of a projection
  int proj_thread_rows;    // output features per projection thread (its register tile's rows)
  int proj_thread_tokens;  // tokens per projection thread (its register tile's columns)
  int proj_chunk;          // input features per chunk of x and w staged in shared memory
};

// The shared memory (in floats) of a core block on a GPU: its threads' softmax states (max, sum and
// value_columns accumulators each), the tile's q rows, one key block's scores for the tile's rows
// and that key block's K and V rows.
int gpu_shared_floats(const attn::Spec &resolved, int query_tile, int threads, int value_columns,
                      int key_block);
// The shared memory (in floats) of a split-keys block on a GPU: per head, each key's lane sums
// (lanes, padded by one), scores and probabilities, and the P.V, max and sum of the chunk.
int gpu_split_keys_shared_floats(const attn::Spec &resolved, int chunk, int lanes, int heads);
// The shared memory (in floats) of a projection block: its outputs' sums and one chunk of x and w.
int gpu_projection_shared_floats(const GpuTiles &tiles);
// The shared memory a CUDA block may use without opting in to more.
inline constexpr int gpu_shared_bytes = 48 * 1024;
// The most threads a core block takes: 8 warps.
inline constexpr int gpu_core_threads = 256;

// A thread per (query row, group of value_columns value columns); in the block's shared memory sit
// each key block's K and V rows and the tile's q rows (loaded by all the block's threads together),
// the key block's scores (computed once per row, its keys spread over the row's threads) and each
// thread's softmax state (max, sum and its group's accumulators: read and written once per key
// block); the key block's P.V sums are in the thread's registers. Not measured on a GPU (PoCL runs
// them for correctness only): value_columns the most (up to 8) that divide head_dim_v, as 8 sums
// beside a key block's probabilities stay well inside a thread's registers; then the most rows (up
// to 128, a power of 2) within gpu_core_threads; then the most keys (up to 32) whose K and V rows
// and scores fit in gpu_shared_bytes beside the states and the q rows.
GpuTiles gpu_tiles(const attn::Spec &resolved);

}  // namespace attnc
