// attnc/schedule_cpu.h: where and in what order the CPU computes the core and the projections.
#pragma once

#include <Halide.h>

#include "attnc/core_algorithm.h"
#include "attnc/projection.h"
#include "attnc/split_keys_algorithm.h"
#include "attnc/tile_config.h"

namespace attnc {

// Parallel over (batch, head, query tile); per tile and key block: QK^T, block max, exp, sum and
// PV in L1-sized pieces, register-blocked and vectorized at the target's width.
void schedule_core_cpu(CoreFuncs &core, const CpuTiles &tiles);

// Parallel over (batch, head, query, key chunk); the combine of the chunks is parallel over
// (batch, query) with the heads inside.
void schedule_split_keys_cpu(SplitKeysFuncs &split, const CpuTiles &tiles);

// Parallel over (batch, token block); register blocks of proj_rows tokens x proj_cols features.
// rows: the layer's output features (fixed).
void schedule_linear_cpu(LinearFuncs &linear, const CpuTiles &tiles, int rows);

// The output features of one register block (and weight panel) of a linear layer with `rows`
// output features: proj_cols where it divides rows, else the widest lanes that do.
int linear_panel_rows(const CpuTiles &tiles, int rows);

}  // namespace attnc
