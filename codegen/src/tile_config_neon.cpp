// The AArch64 entry of the CPU tile choice: NEON's 128-bit vectors (4 f32 lanes) and 32
// registers (v0-v31).
//
// No AArch64 machine was available when these were chosen, so no number here is measured: each
// comment says what the size assumes. They follow the x86 measurements (tile_config.cpp) where
// the reasoning carries over, and size every register block to the 32-register budget (AVX2 has
// 16, so its blocks are not reused: at 4 lanes they would leave half the registers idle; the SSE
// baseline's, sized for 16 xmm registers, would do the same). `attnc tune` on an ARM machine
// (tile_candidates with neon_vectors) is how to replace them with measured ones.
#include "attnc/tile_config.h"

namespace attnc {

CpuTiles neon_tiles_blocks(const attn::Spec &s) {
  CpuTiles t{};
  t.vector_width = neon_vectors.lanes;
  t.vector_registers = neon_vectors.registers;
  // QK^T: 4 query vectors (16 queries) x 6 keys = 24 accumulators, plus 4 registers of query
  // values and 1 broadcast key element: 29 of 32. Each head_dim step loads 4 + 6 = 10 values for
  // 24 FMAs, 0.42 loads per FMA, within the two loads per cycle a Neoverse N1/V1 core issues
  // beside its two (N1) or four (V1) 128-bit FMA pipes. The AVX2 block (3 x 4) would load 0.58.
  t.score_vectors = 4;
  t.score_rows = 6;
  // 48 queries: a multiple of the QK^T block's 16 and of the PV block's 6 rows; as on AVX2,
  // whose 48-query tile measured 3-5% ahead of 32 (tile_config.cpp), K and V rows of a key
  // block are reused by three QK^T groups. Its q rows, 48 x D x 4 bytes (12 KiB at D = 64), and
  // the block's scores stay in a 64 KiB L1 data cache (N1, V1; 128 KiB on Apple cores).
  t.query_tile = 48;
  // A multiple of score_rows (6); 96 keys as AVX2's causal choice: 48 x 96 scores and
  // probabilities are 36 KiB, inside L1 with the q rows.
  t.key_block = 96;
  t.pv_vector = lanes_dividing(s.head_dim_v, neon_vectors.lanes);
  t.head_vector = lanes_dividing(s.head_dim, neon_vectors.lanes);
  // PV: 6 query rows x 4 vectors of head_dim_v (16 values) = 24 accumulators, plus 4 vectors of V
  // and 1 broadcast probability: 29 of 32; 10 loads per 24 FMAs as for QK^T. Fewer vectors where
  // head_dim_v has fewer (head_dim_v = 8: 2 vectors, 12 rows).
  const int dv_vectors = s.head_dim_v / t.pv_vector;
  t.pv_vectors = 4;
  while (dv_vectors % t.pv_vectors != 0) t.pv_vectors /= 2;
  t.pv_rows = 24 / t.pv_vectors;
  while (t.query_tile % t.pv_rows != 0) --t.pv_rows;
  // Decode (split keys): the x86 choices, which are about memory order and the lane sums'
  // transposes rather than registers: 256-key chunks, 8 keys per q . k block summed in 4 lanes
  // (one vector), P.V over up to 8 vectors of head_dim_v (8 accumulators, a broadcast, a V row).
  t.split_keys_chunk = 256;
  t.split_keys_dots = 8;
  t.split_keys_lanes = lanes_dividing(s.head_dim, neon_vectors.lanes);
  t.split_keys_pv_vectors = 8;
  while (dv_vectors % t.split_keys_pv_vectors != 0) t.split_keys_pv_vectors /= 2;
  t.split_keys_heads = 1;
  t.split_keys_max_queries = 8;
  // Projections: 4 tokens x 4 vectors (16 features) = 16 accumulators, 4 weight vectors and a
  // broadcast: 21 of 32. The projection schedule loads two vectors of a panel at a time
  // (schedule_cpu.cpp), so wider panels gain little at 4 lanes.
  t.proj_rows = 4;
  t.proj_cols = 4 * neon_vectors.lanes;
  t.proj_token_task = 64;
  return t;
}

CpuTiles neon_tiles_short(const attn::Spec &s) {
  CpuTiles t = neon_tiles_blocks(s);
  // Short sequences, as on x86: a 32-query tile and 64-key blocks pad fewer scores. The QK^T
  // block drops to 4 x 4 (16 accumulators): 64 keys are not a multiple of 6.
  t.query_tile = 32;
  t.key_block = 64;
  t.score_vectors = 4;
  t.score_rows = 4;
  t.pv_rows = 24 / t.pv_vectors;
  while (t.query_tile % t.pv_rows != 0) --t.pv_rows;
  return t;
}

}  // namespace attnc
