// attnc/schedule_backward_cpu.h: the CPU schedule of the attention backward (backward_algorithm.h).
#pragma once

#include "attn/spec.h"
#include "attnc/backward_algorithm.h"
#include "attnc/tile_config.h"

namespace attnc {

// The backward's tiles for a spec on a target: register blocks as wide as the target's registers
// allow, tasks of about 32 keys (dk, dv) and 16 query rows (dq).
BackwardTiles backward_tiles(const attn::Spec &resolved, const CpuTiles &tiles);

// Key tiles of one KV head in parallel for dk and dv (P and dS recomputed per block of query rows
// that meets the tile), then query tiles of one head in parallel for dq (per chunk of keys that
// meets the tile); the pairs' scores and dP sums and the gradients' sums are register blocks.
void schedule_backward_cpu(BackwardFuncs &f, const CpuTiles &tiles);

}  // namespace attnc
