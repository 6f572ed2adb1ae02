// attnc/schedule_backward_cpu.h: the CPU schedule of the attention backward (backward_algorithm.h).
#pragma once

#include "attnc/backward_algorithm.h"
#include "attnc/tile_config.h"

namespace attnc {

// Key tiles of one KV head in parallel for dk and dv (P and dS recomputed per tile of query
// rows), then query tiles of one head in parallel for dq (per block of keys); the pairs' scores
// and dP sums are register blocks vectorized over keys.
void schedule_backward_cpu(BackwardFuncs &f, const CpuTiles &tiles);

}  // namespace attnc
