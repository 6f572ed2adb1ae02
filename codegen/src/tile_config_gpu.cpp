// GPU tile sizes: one pure function for CUDA and OpenCL.
#include "attnc/tile_config_gpu.h"

#include <algorithm>

namespace attnc {

int gpu_shared_floats(const attn::Spec &resolved, int query_tile, int threads, int value_columns,
                      int key_block) {
  return threads * (value_columns + 2) + query_tile * resolved.head_dim + query_tile * key_block +
         key_block * (resolved.head_dim + resolved.head_dim_v);
}

int gpu_split_keys_shared_floats(const attn::Spec &resolved, int chunk, int lanes, int heads) {
  return heads * (chunk * (lanes + 1 + 2) + resolved.head_dim_v + 2);
}

int gpu_projection_shared_floats(const GpuTiles &t) {
  return t.proj_rows * t.proj_tokens + t.proj_chunk * (t.proj_rows + t.proj_tokens);
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
  // K is read along head_dim by split_keys_lanes neighbouring threads per key (8: a 32-byte sector
  // of a row per key, 4 rows per warp instruction, rather than 32 rows 4 bytes each), the lanes'
  // sums added through shared memory.
  for (t.split_keys_lanes = 8; resolved.head_dim % t.split_keys_lanes != 0;) t.split_keys_lanes /= 2;
  // The query heads of a KV head (GQA) share its block, so its K and V chunk come from DRAM once:
  // the most heads, up to 8, that divide the group, with a thread per (value column, head) within
  // 1024 threads and the block's shared memory within 48 KiB.
  const int query_group = resolved.heads / resolved.kv_heads;
  t.split_keys_heads = 1;
  for (int n = 1; n <= 8 && n <= query_group; ++n)
    if (query_group % n == 0 && n * std::max(resolved.head_dim_v, t.split_keys_chunk) <= 1024 &&
        gpu_split_keys_shared_floats(resolved, t.split_keys_chunk, t.split_keys_lanes, n) * 4 <=
            gpu_shared_bytes)
      t.split_keys_heads = n;
  // Projections: the classic shared-memory matrix product, 64 x 64 outputs per block, 16 x 16
  // threads of 4 x 4 outputs each, 16 input features per staged chunk (24 KiB of shared memory).
  t.proj_rows = 64;
  t.proj_tokens = 64;
  t.proj_thread_rows = 4;
  t.proj_thread_tokens = 4;
  t.proj_chunk = 16;
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
