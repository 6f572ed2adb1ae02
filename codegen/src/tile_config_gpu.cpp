// GPU tile sizes: one pure function for CUDA and OpenCL.
#include "attnc/tile_config_gpu.h"

namespace attnc {

int gpu_shared_floats(const attn::Spec &resolved, int query_tile, int threads, int value_columns,
                      int key_block) {
  return threads * (value_columns + 2) + query_tile * resolved.head_dim + query_tile * key_block +
         key_block * (resolved.head_dim + resolved.head_dim_v);
}

GpuTiles gpu_tiles(const attn::Spec &resolved) {
  // Not measured on a GPU; PoCL correctness only. Registers first: 8 accumulators per thread
  // (fewer where 8 does not divide Dv), then the most rows whose threads (rows x Dv / columns) stay
  // within gpu_core_threads, then the most keys whose K and V rows (and scores) fit, beside the
  // states and the tile's q rows, the 48 KiB of shared memory a CUDA block gets without opting in
  // (Halide 21's runtime does not).
  GpuTiles t{};
  t.pv_rows = 1;
  // Decode: 128 keys per block gives a B64 H32 Sk8192 decode 2^17 blocks of 128 threads.
  t.split_keys_chunk = 128;
  t.split_keys_group = 32;
  t.proj_rows = 16;
  t.proj_tokens = 16;
  for (t.value_columns = 8; resolved.head_dim_v % t.value_columns != 0;) t.value_columns /= 2;
  const int column_groups = resolved.head_dim_v / t.value_columns;
  for (t.query_tile = 128; t.query_tile > 1 && t.query_tile * column_groups > gpu_core_threads;)
    t.query_tile /= 2;
  t.threads = t.query_tile * column_groups;
  auto fits = [&](int keys) {
    return gpu_shared_floats(resolved, t.query_tile, t.threads, t.value_columns, keys) * 4 <=
           gpu_shared_bytes;
  };
  for (t.key_block = 32; t.key_block > 1 && !fits(t.key_block);) t.key_block /= 2;
  return t;
}

}  // namespace attnc
