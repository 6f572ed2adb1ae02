// attnc/projection.h: a linear layer y = x W^T + b (nn.Linear convention) as a Halide algorithm.
#pragma once

#include <Halide.h>

namespace attnc {

struct LinearFuncs {
  Halide::Var row{"row"}, token{"token"}, b{"b"}, col{"col"};
  Halide::RDom over_inputs;
  Halide::Func weights_t;  // weights_t(row, c) = w(c, row): output features innermost (lanes)
  Halide::Func y;          // y(row, token, b), row in [0, rows)
};

// x(c, token, b) with c in [0, in_features); w(c, row): weight row `row` of [rows, in_features];
// bias(row) or an undefined Func for none.
LinearFuncs define_linear(const Halide::Func &x, const Halide::Func &w, const Halide::Func &bias, int in_features,
                          const std::string &name);

}  // namespace attnc
