// attnc/schedule_cpu.h: where and in what order the CPU computes the core and the projections.
#pragma once

#include <Halide.h>

#include <optional>
#include <vector>

#include "attnc/core_algorithm.h"
#include "attnc/projection.h"
#include "attnc/split_keys_algorithm.h"
#include "attnc/tile_config.h"

namespace attnc {

// Parallel over (batch, head, query tile); per tile and key block: QK^T, block max, exp, sum and
// PV in L1-sized pieces, register-blocked and vectorized at the target's width.
void schedule_core_cpu(CoreFuncs &core, const CpuTiles &tiles);

// The tasks of both cores: out(dv, h, i, b) computed at the root, one task per (head, batch) in
// parallel, its query tiles (query_block, of query_tile rows) in a nested parallel loop.
void schedule_core_tasks(Halide::Func out, const Halide::Var &i, const Halide::Var &dv, const Halide::Var &h,
                         const Halide::Var &b, const Halide::Var &query_block,
                         const Halide::Var &query_in_tile, const Halide::Var &task, const CpuTiles &tiles);

// The QK^T register blocks of both cores: score_block (scores.in(), already placed by the caller)
// swept as score_rows keys x (score_vectors x lanes) queries, each block computed in registers
// (scores(row, key, ...) over head_dim) and stored once into score_block.
// With pair (bf16 dot products), over_head_dim counts pairs of head_dim elements and the update
// sums over pair too, vectorized with an atomic update: Halide's vdpbf16ps idiom.
void schedule_score_register_blocks(Halide::Func score_block, Halide::Func scores, const Halide::Var &row,
                                    const Halide::Var &key, const Halide::RVar &over_head_dim,
                                    const CpuTiles &tiles, std::optional<Halide::RVar> pair = std::nullopt);

// One update of a P.V register block: its loop over keys, or over key pairs with the pair element.
struct PvKeyLoop {
  Halide::RVar keys;
  std::optional<Halide::RVar> pair;
};

// The P.V register blocks of both cores: pv_block (pv.in(), already placed by the caller) swept
// by slices of pv_vectors x pv_vector of dv, every group of pv_rows rows inside a slice; each
// group's sums (pv(dv, group_row, pv_group, ...) over its keys, update s over over_keys[s])
// computed in registers.
void schedule_pv_register_blocks(Halide::Func pv_block, Halide::Func pv, const Halide::Var &dv,
                                 const Halide::Var &group_row, const Halide::Var &pv_group,
                                 const std::vector<PvKeyLoop> &over_keys, const CpuTiles &tiles);

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
