// gradient_check.h: the analytic gradients against central differences of the loss.
#pragma once

#include <string>
#include <vector>

#include "model.h"

struct GradientCheck {
  std::string what;  // "w_q[37]", or "q along u" for a random direction u over all of q
  double analytic;   // from Model::backward: the attnc backward kernel and the hand-written products
  double numeric;    // (loss(+epsilon) - loss(-epsilon)) / (2 epsilon, or the step the fp32 weight took)
  // |analytic - numeric| / max(|analytic|, |numeric|); 0 when both are 0.
  double relative_error() const;
};

// entries random entries of each weight matrix, perturbed one at a time through the whole model;
// then q, k and v each along one random normal direction through the attnc forward kernel alone.
std::vector<GradientCheck> check_gradients(const Model &model, const Parameters &parameters,
                                           const Batch &batch, Random &random, int entries, double epsilon);
