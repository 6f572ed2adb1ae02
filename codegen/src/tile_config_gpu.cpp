// GPU tile sizes: one pure function for CUDA and OpenCL.
#include "attnc/tile_config_gpu.h"

namespace attnc {

GpuTiles gpu_tiles(const attn::Spec &resolved) {
  GpuTiles t{};
  // Each thread holds ~(D + 3 Dv + 2 key_block) floats; past 64 Dv floats a 128-thread block
  // would spill most of that to local memory, so large heads take 64 threads.
  const int widest = resolved.head_dim > resolved.head_dim_v ? resolved.head_dim : resolved.head_dim_v;
  t.query_tile = widest > 64 ? 64 : 128;
  t.key_block = 32;
  t.pv_rows = 1;
  t.proj_rows = 16;
  t.proj_tokens = 16;
  return t;
}

}  // namespace attnc
