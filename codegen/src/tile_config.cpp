// CPU tile sizes. Register budget: 32 zmm (AVX-512) or 16 ymm (AVX2).
//
// AVX2 numbers below: Zen 1 (2 cores, FMA peak 39.4 GFLOP/s per core measured by
// bench/fma_peak.cpp), B1 H12 S1024 D64 no mask, one thread, medians of 5 (attn-run --bench).
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
  // A task's query rows. K and V rows of a key block are read once per task, so a larger tile
  // reads them less often; QK^T and PV sweep the tile in register-block groups. AVX2:
  // 16 rows 202 ms, 32 rows 190 ms, 64 rows 191 ms (before the PV blocks below).
  t.query_tile = 32;
  // QK^T accumulators = score_vectors query vectors x score_rows keys, leaving registers for
  // the query vectors and one broadcast: 2 x 8 = 16 zmm; 2 x 6 = 12 ymm (16 spilled on AVX2).
  // AVX2: 2 x 6 (tile 32) 143 ms, 3 x 4 (tile 48) 148 ms, 1 x 12 157 ms, 2 x 4 164 ms.
  t.score_vectors = 2;
  t.score_rows = wide ? 8 : 6;
  // A multiple of score_rows. Larger blocks amortize the per-block rescale of the running
  // state; scores and probs of a block stay in L1 (2 x 12 KiB for 32 queries x 96 keys).
  // AVX2: 48 keys 146 ms, 96 keys 143 ms, 144 keys 152 ms, 192 keys 156 ms.
  t.key_block = 96;
  const int accumulators = wide ? 16 : 12;
  t.pv_vector = lanes_dividing(s.head_dim_v, native_lanes);
  t.head_vector = lanes_dividing(s.head_dim, native_lanes);
  // PV register block: pv_rows x pv_vectors accumulators over a slice of head_dim_v, so the
  // slice of V stays in L1 while every row group reads it. AVX2 (tile 32): 1 row x 8 vectors
  // 190 ms, 2 x 4 168 ms, 4 x 2 153 ms, 8 x 1 166 ms.
  const int dv_vectors = s.head_dim_v / t.pv_vector;
  t.pv_vectors = wide ? 4 : 2;
  while (dv_vectors % t.pv_vectors != 0) t.pv_vectors /= 2;
  // Rows: a power of two, so they divide the tile.
  t.pv_rows = 1;
  while (t.pv_rows * 2 * t.pv_vectors <= accumulators && t.pv_rows < 8) t.pv_rows *= 2;
  // Decode: few queries, many keys; memory bound. A task takes a chunk of keys for every head and
  // query, so it reads K and V in address order; Sk = 4096 makes 16 tasks per batch. AVX2, B1
  // H32 Sq1 Sk4096 D128, 2 threads: one task per (chunk, head) 29 ms (4.6 GB/s of K and V),
  // per chunk with the heads inside 7.3 ms (18.5 GB/s; bench/read_bandwidth.cpp read 13-21
  // GB/s on this VM the same hour). The tiled core took 103 ms.
  t.split_keys_chunk = 256;
  t.split_keys_dots = wide ? 16 : 8;
  t.split_keys_max_queries = 8;
  // Projection accumulators: 4 tokens x 4 vectors = 16 zmm; 4 x 3 = 12 ymm.
  t.proj_rows = 4;
  t.proj_cols = native_lanes * (wide ? 4 : 3);
  t.proj_token_task = 64;
  return t;
}

}  // namespace attnc
