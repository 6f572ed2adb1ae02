// GPU tile sizes: one pure function for CUDA and OpenCL.
#include "attnc/tile_config_gpu.h"

namespace attnc {

int gpu_shared_floats(const attn::Spec &resolved, int query_tile, int key_block) {
  return 3 * query_tile * resolved.head_dim_v + key_block * (resolved.head_dim + resolved.head_dim_v);
}

GpuTiles gpu_tiles(const attn::Spec &resolved) {
  // Not measured on a GPU; PoCL correctness only. The most rows (threads) that fit, then the
  // most keys: the block's shared memory (the tile's softmax state and one key block's K and V)
  // must fit in 48 KiB, the most a CUDA block gets without opting in (Halide 21's runtime does not).
  GpuTiles t{};
  t.pv_rows = 1;
  // Decode: 128 keys per block gives a B64 H32 Sk8192 decode 2^17 blocks of 128 threads.
  t.split_keys_chunk = 128;
  t.split_keys_group = 32;
  t.proj_rows = 16;
  t.proj_tokens = 16;
  auto fits = [&](int rows, int keys) {
    return gpu_shared_floats(resolved, rows, keys) * 4 <= gpu_shared_bytes;
  };
  for (t.query_tile = 128; t.query_tile > 1 && !fits(t.query_tile, 16);) t.query_tile /= 2;
  for (t.key_block = 32; t.key_block > 1 && !fits(t.query_tile, t.key_block);) t.key_block /= 2;
  return t;
}

}  // namespace attnc
