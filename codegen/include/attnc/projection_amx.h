// attnc/projection_amx.h: a bf16 linear layer y = x W^T + b on AMX tiles, algorithm and schedule.
#pragma once

#include <Halide.h>

#include "attnc/projection.h"
#include "attnc/tile_config.h"

namespace attnc {

// Whether a layer of `rows` outputs over in_features inputs fits AMX tiles: in_features whole
// steps of 32 products, rows whole tiles of 16 (else define_linear's vdpbf16ps pairs).
bool amx_linear_fits(int in_features, int rows);

// x_bf16(c, token, b) and w_bf16(c, row) as stored (bf16), bias(row) f32 or undefined; tokens:
// x's token extent. The sums are 16 x 16 tiles (16 tokens x 16 outputs), each over in_features
// in steps of 32: x's rows (copied per task, the token clamped) times w in pairs
// (weights_t(pair, row, c) = w(2 c + pair, row), repacked once per call).
LinearFuncs define_linear_amx(const Halide::Func &x_bf16, const Halide::Func &w_bf16,
                              const Halide::Func &bias, int in_features, const Halide::Expr &tokens,
                              const std::string &name);

// Parallel over (batch, token task) as schedule_linear_cpu; inside a task, a tile of sums per
// 16 outputs x 16 tokens, staged through a buffer of its own (Halide stores an AMX tile only
// into a plain strided copy) before the bias is added.
void schedule_linear_amx(LinearFuncs &linear, const CpuTiles &tiles, int rows);

}  // namespace attnc
