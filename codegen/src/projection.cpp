// Linear layers: weights repacked into panels whose output features are contiguous vector lanes.
#include "attnc/projection.h"

namespace attnc {

LinearFuncs define_linear(const Halide::Func &x, const Halide::Func &w, const Halide::Func &bias,
                          int in_features, int panel_rows, const std::string &name, const Halide::Func &x_bf16,
                          const Halide::Func &w_bf16) {
  LinearFuncs f;
  f.panel_rows = panel_rows;
  f.inputs = x;
  f.weights = w;
  f.bf16_pairs = x_bf16.defined() && w_bf16.defined() && in_features % 2 == 0;
  f.weights_t = Halide::Func(name + "_weights_t");
  f.y = Halide::Func(name);
  f.y(f.row, f.token, f.b) = bias.defined() ? bias(f.row) : Halide::Expr(0.0f);
  if (f.bf16_pairs) {
    f.over_inputs = Halide::RDom({{0, 2}, {0, in_features / 2}}, name + "_over_inputs");
    const Halide::Expr element = f.over_inputs.x, input_pair = f.over_inputs.y;
    f.weights_t(f.pair, f.lane, f.col, f.panel) = w_bf16(2 * f.col + f.pair, f.panel * panel_rows + f.lane);
    f.y(f.row, f.token, f.b) +=
        Halide::cast<float>(x_bf16(2 * input_pair + element, f.token, f.b)) *
        Halide::cast<float>(f.weights_t(element, f.row % panel_rows, input_pair, f.row / panel_rows));
    return f;
  }
  f.over_inputs = Halide::RDom(0, in_features, name + "_over_inputs");
  if (panel_rows == 0) {
    f.y(f.row, f.token, f.b) += x(f.over_inputs.x, f.token, f.b) * w(f.over_inputs.x, f.row);
    return f;
  }
  f.weights_t(f.lane, f.col, f.panel) = w(f.col, f.panel * panel_rows + f.lane);
  f.y(f.row, f.token, f.b) +=
      x(f.over_inputs.x, f.token, f.b) * f.weights_t(f.row % panel_rows, f.over_inputs.x, f.row / panel_rows);
  return f;
}

}  // namespace attnc
