// CPU tile sizes. Register budget: 32 zmm (AVX-512) or 16 ymm (AVX2).
#include "attnc/tile_config.h"

#include <algorithm>

namespace attnc {

int lanes_dividing(int n, int native_lanes) {
  int lanes = native_lanes;
  while (lanes > 1 && n % lanes != 0) lanes /= 2;
  return lanes;
}

CpuTiles cpu_tiles(const attn::Spec &s, int native_lanes) {
  CpuTiles t{};
  t.vector_width = native_lanes;
  const bool wide = native_lanes >= 16;  // 32 vector registers (AVX-512) rather than 16
  // QK^T accumulators = (query_tile / lanes) x score_rows keys, leaving registers for the
  // query vectors and one broadcast: 2 x 8 = 16 zmm; 2 x 6 = 12 ymm (16 spilled on AVX2).
  t.query_tile = wide ? 32 : 16;
  t.score_rows = wide ? 8 : 6;
  // A multiple of score_rows. Larger blocks amortize the per-block rescale of the running
  // state (two exps per output vector); scores and probs of a block stay in L1 (2 x 12 KiB
  // for 32 queries x 96 keys). Measured on AVX2 (Zen 1, B1 H12 S1024 D64 causal, no skipping):
  // 48 keys 119 ms, 96 keys 115 ms.
  t.key_block = 96;
  const int accumulators = wide ? 16 : 12;
  t.pv_vector = lanes_dividing(s.head_dim_v, native_lanes);
  t.head_vector = lanes_dividing(s.head_dim, native_lanes);
  const int pv_vectors = s.head_dim_v / t.pv_vector;
  // Fewer rows when head_dim_v spans many vectors; a power of two, so rows divide the tile.
  t.pv_rows = 1;
  while (t.pv_rows * 2 * pv_vectors <= accumulators && t.pv_rows < 8) t.pv_rows *= 2;
  // Projection accumulators: 4 tokens x 4 vectors = 16 zmm; 4 x 3 = 12 ymm.
  t.proj_rows = 4;
  t.proj_cols = native_lanes * (wide ? 4 : 3);
  t.proj_token_task = 64;
  return t;
}

}  // namespace attnc
