// attnc/tile_config_gpu.h: GPU tile sizes (CUDA and OpenCL) for a spec, as one pure function.
#pragma once

#include "attn/spec.h"

namespace attnc {

struct GpuTiles {
  int query_tile;   // query rows per GPU block, one thread each (the block's threads)
  int key_block;    // keys per running-max/sum update; a thread's scores and probs for one block
  int pv_rows;      // query rows of a P.V group: 1, each thread trims its keys to its own row
  int proj_rows;    // output features per GPU block of a projection (threads along features)
  int proj_tokens;  // tokens per GPU block of a projection (threads along tokens)
};

// One thread per query row: its q row, softmax state (running max, sum and Dv accumulators) and
// one key block's scores stay in that thread's registers/private memory; the block's threads read
// the same K and V rows, which the caches broadcast. Not measured on a GPU yet (PoCL runs them for
// correctness only); the sizes are the usual ones for this shape of kernel: 64 threads per block
// keeps more blocks resident when Dv is large (each thread holds ~3 Dv floats).
GpuTiles gpu_tiles(const attn::Spec &resolved);

}  // namespace attnc
