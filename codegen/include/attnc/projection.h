// attnc/projection.h: a linear layer y = x W^T + b (nn.Linear convention) as a Halide algorithm.
#pragma once

#include <Halide.h>

namespace attnc {

struct LinearFuncs {
  Halide::Var row{"row"}, token{"token"}, b{"b"}, lane{"lane"}, col{"col"}, panel{"panel"}, pair{"pair"};
  // Over input features; with bf16 pairs (x: the pair element, y: the pair of input features).
  Halide::RDom over_inputs;
  bool bf16_pairs = false;
  // weights_t(lane, c, panel) = w(c, panel * panel_rows + lane): each panel of panel_rows output
  // features is contiguous, features innermost (vector lanes), so a register block streams it.
  // With bf16 pairs: weights_t(pair, lane, c, panel) = w(2 c + pair, panel * panel_rows + lane),
  // the two input features of a pair side by side (one vdpbf16ps operand per 16 features).
  // Undefined where panel_rows is 0 (GPU targets: their schedule stages w's rows itself).
  Halide::Func weights_t;
  Halide::Func inputs, weights;  // x and w as given: the GPU schedule stages chunks of them
  Halide::Func y;                // y(row, token, b), row in [0, rows)
  int panel_rows = 0;
  // On AMX tiles (projection_amx.h): weights_t(pair, row, c) instead of panels, x's rows per
  // task, and y = y_tile + bias with y_tile the tiles' sums.
  bool amx = false;
  Halide::Func x_rows, y_tile;
};

// x(c, token, b) with c in [0, in_features); w(c, row): weight row `row` of [rows, in_features];
// bias(row) or an undefined Func for none. panel_rows divides rows, or is 0 for no panels and no bf16
// pairs (y reads w itself: GPU targets, which stage w's rows in shared memory). x and w are f32; where
// x_bf16 and w_bf16 are defined (bf16 inputs on a target with bf16 dot products) and
// in_features is even, the products are bf16 pairs summed in fp32 from those instead.
LinearFuncs define_linear(const Halide::Func &x, const Halide::Func &w, const Halide::Func &bias,
                          int in_features, int panel_rows, const std::string &name,
                          const Halide::Func &x_bf16 = Halide::Func(), const Halide::Func &w_bf16 = Halide::Func());

}  // namespace attnc
