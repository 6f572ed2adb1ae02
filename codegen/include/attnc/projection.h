// attnc/projection.h: a linear layer y = x W^T + b (nn.Linear convention) as a Halide algorithm.
#pragma once

#include <Halide.h>

namespace attnc {

struct LinearFuncs {
  Halide::Var row{"row"}, token{"token"}, b{"b"}, lane{"lane"}, col{"col"}, panel{"panel"};
  Halide::RDom over_inputs;
  // weights_t(lane, c, panel) = w(c, panel * panel_rows + lane): each panel of panel_rows output
  // features is contiguous, features innermost (vector lanes), so a register block streams it.
  Halide::Func weights_t;
  Halide::Func y;  // y(row, token, b), row in [0, rows)
  int panel_rows = 0;
};

// x(c, token, b) with c in [0, in_features); w(c, row): weight row `row` of [rows, in_features];
// bias(row) or an undefined Func for none. panel_rows divides rows.
LinearFuncs define_linear(const Halide::Func &x, const Halide::Func &w, const Halide::Func &bias,
                          int in_features, int panel_rows, const std::string &name);

}  // namespace attnc
