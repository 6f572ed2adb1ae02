// GPU tile sizes: one pure function for CUDA and OpenCL.
#include "attnc/tile_config_gpu.h"

namespace attnc {

int gpu_shared_floats(const attn::Spec &resolved, int threads, int value_columns, int key_block) {
  return threads * (value_columns + 2) + key_block * (resolved.head_dim + resolved.head_dim_v);
}

int gpu_projection_shared_floats(const GpuTiles &t) {
  return t.proj_rows * t.proj_tokens + t.proj_chunk * (t.proj_rows + t.proj_tokens);
}

GpuTiles gpu_tiles(const attn::Spec &resolved) {
  // Not measured on a GPU; PoCL correctness only. Registers first: 8 accumulators per thread
  // (fewer where 8 does not divide Dv), then the most rows whose threads (rows x Dv / columns) stay
  // within gpu_core_threads, then the most keys whose K and V rows fit, beside the state, the
  // 48 KiB of shared memory a CUDA block gets without opting in (Halide 21's runtime does not).
  GpuTiles t{};
  t.pv_rows = 1;
  // Decode: 128 keys per block gives a B64 H32 Sk8192 decode 2^17 blocks of 128 threads.
  t.split_keys_chunk = 128;
  t.split_keys_group = 32;
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
    return gpu_shared_floats(resolved, t.threads, t.value_columns, keys) * 4 <= gpu_shared_bytes;
  };
  for (t.key_block = 32; t.key_block > 1 && !fits(t.key_block);) t.key_block /= 2;
  return t;
}

}  // namespace attnc
