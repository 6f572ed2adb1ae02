// attnc/block_projections.h: the block form's linear layers: q/k/v (or qkv) projections and out_proj.
#pragma once

#include <Halide.h>

#include <map>
#include <string>
#include <vector>

#include "attnc/pipeline_context.h"
#include "attnc/projection.h"

namespace attnc {

// The q, k and v projections' outputs, each y(row, i, b), and the first row of each part in its
// Func (fused: all three are the one w_qkv projection, q rows, then k rows, then v rows).
struct ProjectedRows {
  Halide::Func q, k, v;
  int q_first = 0, k_first = 0, v_first = 0;
};

// An activation input (x or x_kv [B,S,d_model]) as f32. f16 and bf16 are converted once per
// call: read in place, every projection FMA also converted its x element (f16 W6 ran at
// 0.64-0.92x of its fp32 kernel, docs/PERFORMANCE.md).
Halide::Func activations_f32(const PipelineContext &ctx, const std::string &name);

// The input projections: w_q/w_k/w_v, or w_qkv, over all heads (with groups: every group's rows),
// of sources ("x", and "x_kv" under cross-attention; kv_source names the keys' and values').
// Each projection's LinearFuncs is appended to layers (scheduled).
ProjectedRows project_qkv(const PipelineContext &ctx, const std::map<std::string, Halide::Func> &sources,
                          const std::string &kv_source, std::vector<LinearFuncs> &layers);

// A linear layer of `rows` outputs over `tokens` tokens of x (x(c, token, b), w(c, row),
// bias(row) or undefined): on AMX tiles, bf16 pairs or fp32 panels as the target and x_bf16 /
// w_bf16 allow. On GPU targets, x, w and the bias are read at coordinates clamped to their
// edges: a GPU block's tiles and chunks overhang them at odd sizes.
LinearFuncs linear(const PipelineContext &ctx, const Halide::Func &x, const Halide::Func &w,
                   const Halide::Func &bias, int in_features, int rows, const Halide::Expr &tokens,
                   const std::string &name, const Halide::Func &x_bf16 = Halide::Func(),
                   const Halide::Func &w_bf16 = Halide::Func());

// The schedule of a layer from linear(): GPU, AMX or CPU panels.
void schedule_linear(const PipelineContext &ctx, LinearFuncs &layer, int rows);

}  // namespace attnc
