// adam.h: the Adam optimizer over the model's four matrices.
#pragma once

#include <array>
#include <vector>

#include "model.h"

class Adam {
 public:
  // The usual betas; learning_rate is the step size.
  Adam(const Parameters &parameters, double learning_rate);

  // One update of every weight from its gradient.
  void step(Parameters &parameters, Parameters &grads);

 private:
  double learning_rate_;
  double beta1_ = 0.9, beta2_ = 0.999, epsilon_ = 1e-8;
  int steps_ = 0;
  std::array<std::vector<double>, 4> mean_;      // running mean of each gradient
  std::array<std::vector<double>, 4> variance_;  // running mean of its square
};
