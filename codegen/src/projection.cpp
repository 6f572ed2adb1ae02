// Linear layers: weights repacked into panels whose output features are contiguous vector lanes.
#include "attnc/projection.h"

namespace attnc {

LinearFuncs define_linear(const Halide::Func &x, const Halide::Func &w, const Halide::Func &bias,
                          int in_features, int panel_rows, const std::string &name) {
  LinearFuncs f;
  f.panel_rows = panel_rows;
  f.over_inputs = Halide::RDom(0, in_features, name + "_over_inputs");
  f.weights_t = Halide::Func(name + "_weights_t");
  f.y = Halide::Func(name);
  f.weights_t(f.lane, f.col, f.panel) = w(f.col, f.panel * panel_rows + f.lane);
  f.y(f.row, f.token, f.b) = bias.defined() ? bias(f.row) : Halide::Expr(0.0f);
  f.y(f.row, f.token, f.b) +=
      x(f.over_inputs.x, f.token, f.b) * f.weights_t(f.row % panel_rows, f.over_inputs.x, f.row / panel_rows);
  return f;
}

}  // namespace attnc
