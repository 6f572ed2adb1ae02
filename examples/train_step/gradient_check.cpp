// gradient_check.cpp: central differences of the loss, by weight entry and along directions in q, k, v.
#include "gradient_check.h"

#include <algorithm>
#include <cmath>

double GradientCheck::relative_error() const {
  const double scale = std::max(std::fabs(analytic), std::fabs(numeric));
  return scale == 0 ? 0 : std::fabs(analytic - numeric) / scale;
}

std::vector<GradientCheck> check_gradients(const Model &model, const Parameters &parameters,
                                           const Batch &batch, Random &random, int entries, double epsilon) {
  const Activations act = model.forward(parameters, batch);
  Gradients grads = model.backward(parameters, batch, act);
  std::vector<GradientCheck> checks;

  Parameters shifted = parameters;
  const std::array<NamedMatrix, 4> weights = matrices(shifted), gradients = matrices(grads.weights);
  for (size_t m = 0; m < weights.size(); ++m) {
    std::vector<float> &w = *weights[m].values;
    for (int e = 0; e < entries; ++e) {
      const int n = random.below(static_cast<int>(w.size()));
      const float original = w[n], above = static_cast<float>(original + epsilon),
                  below = static_cast<float>(original - epsilon);
      w[n] = above;
      const double up = model.forward(shifted, batch).loss;
      w[n] = below;
      const double down = model.forward(shifted, batch).loss;
      w[n] = original;
      // Divided by the step the float weight took, not by 2 epsilon: w[n] + epsilon is rounded.
      checks.push_back({std::string(weights[m].name) + "[" + std::to_string(n) + "]",
                        (*gradients[m].values)[n], (up - down) / (double(above) - below)});
    }
  }

  // The attention's own inputs: loss(q + epsilon u) through the forward kernel against <dq, u>
  // from the backward kernel.
  const struct {
    const char *name;
    std::vector<float> Activations::*input;
    const std::vector<float> &gradient;
  } inputs[] = {
      {"q", &Activations::q, grads.dq}, {"k", &Activations::k, grads.dk}, {"v", &Activations::v, grads.dv}};
  for (const auto &input : inputs) {
    const std::vector<float> direction = random.normals((act.*input.input).size(), 1.0);
    double analytic = 0;
    for (size_t n = 0; n < direction.size(); ++n) analytic += double(input.gradient[n]) * direction[n];
    double loss[2];
    for (int side = 0; side < 2; ++side) {
      Activations moved = act;
      std::vector<float> &values = moved.*input.input;
      const double step = side == 0 ? epsilon : -epsilon;
      for (size_t n = 0; n < values.size(); ++n)
        values[n] = static_cast<float>(values[n] + step * direction[n]);
      model.attend_and_score(parameters, batch, moved);
      loss[side] = moved.loss;
    }
    checks.push_back({std::string(input.name) + " along u", analytic, (loss[0] - loss[1]) / (2 * epsilon)});
  }
  return checks;
}
