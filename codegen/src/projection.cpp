// Linear layers: weights repacked so that output features are contiguous vector lanes.
#include "attnc/projection.h"

namespace attnc {

LinearFuncs define_linear(const Halide::Func &x, const Halide::Func &w, const Halide::Func &bias, int in_features,
                          const std::string &name) {
  LinearFuncs f;
  f.over_inputs = Halide::RDom(0, in_features, name + "_over_inputs");
  f.weights_t = Halide::Func(name + "_weights_t");
  f.y = Halide::Func(name);
  f.weights_t(f.row, f.col) = w(f.col, f.row);
  f.y(f.row, f.token, f.b) = bias.defined() ? bias(f.row) : Halide::Expr(0.0f);
  f.y(f.row, f.token, f.b) += x(f.over_inputs.x, f.token, f.b) * f.weights_t(f.row, f.over_inputs.x);
  return f;
}

}  // namespace attnc
