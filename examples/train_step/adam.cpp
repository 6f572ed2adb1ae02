// adam.cpp: Adam's moment updates, with the bias correction of the first steps.
#include "adam.h"

#include <cmath>

Adam::Adam(const Parameters &parameters, double learning_rate) : learning_rate_(learning_rate) {
  const std::array<const std::vector<float> *, 4> weights = {&parameters.w_q, &parameters.w_k,
                                                             &parameters.w_v, &parameters.w_o};
  for (size_t i = 0; i < weights.size(); ++i) {
    mean_[i].assign(weights[i]->size(), 0.0);
    variance_[i].assign(weights[i]->size(), 0.0);
  }
}

void Adam::step(Parameters &parameters, Parameters &grads) {
  ++steps_;
  const double mean_correction = 1.0 - std::pow(beta1_, steps_);
  const double variance_correction = 1.0 - std::pow(beta2_, steps_);
  const std::array<NamedMatrix, 4> weights = matrices(parameters), gradients = matrices(grads);
  for (size_t i = 0; i < weights.size(); ++i) {
    std::vector<float> &w = *weights[i].values;
    const std::vector<float> &g = *gradients[i].values;
    for (size_t n = 0; n < w.size(); ++n) {
      mean_[i][n] = beta1_ * mean_[i][n] + (1.0 - beta1_) * g[n];
      variance_[i][n] = beta2_ * variance_[i][n] + (1.0 - beta2_) * double(g[n]) * g[n];
      const double update =
          (mean_[i][n] / mean_correction) / (std::sqrt(variance_[i][n] / variance_correction) + epsilon_);
      w[n] = static_cast<float>(w[n] - learning_rate_ * update);
    }
  }
}
