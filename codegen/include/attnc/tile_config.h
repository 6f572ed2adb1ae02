// attnc/tile_config.h: CPU tile sizes for a spec and a vector width, as one pure function.
#pragma once

#include "attn/spec.h"

namespace attnc {

struct CpuTiles {
  int key_block;       // keys per block: one running-max/sum update per block
  int query_tile;      // queries per parallel task; their q rows and state stay in L1
  int vector_width;    // f32 lanes of the target's vectors
  int score_rows;      // query rows of the QK^T register block (x key_block/vector_width vectors)
  int pv_rows;         // query rows of the PV register block (x head_dim_v/pv_vector vectors)
  int pv_vector;       // lanes used along head_dim_v (divides head_dim_v, <= vector_width)
  int head_vector;     // lanes used along head_dim where a loop runs over it
  int proj_rows;       // rows (tokens) of a projection register block
  int proj_cols;       // output features of a projection register block (a multiple of lanes)
  int proj_token_task; // tokens per parallel projection task (a multiple of proj_rows)
};

// native_lanes: f32 lanes of the target (16 for AVX-512, 8 for AVX2/NEON-pairs, 4 for SSE).
CpuTiles cpu_tiles(const attn::Spec &resolved, int native_lanes);

// The largest of {native, native/2, ..., 1} lanes that divides n.
int lanes_dividing(int n, int native_lanes);

}  // namespace attnc
