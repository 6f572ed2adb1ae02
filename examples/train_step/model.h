// model.h: one attention layer from token embeddings to value logits: its loss and its gradients.
#pragma once

#include <array>
#include <vector>

#include "attention.h"
#include "random.h"
#include "task.h"

// q = x·w_qᵀ, k = x·w_kᵀ, v = x·w_vᵀ split into heads; attention (causal, GQA) in attnc kernels;
// at each query token, logits = out·w_oᵀ over the values, and the loss is their mean
// cross-entropy against the targets.
struct Parameters {
  std::vector<float> w_q;  // [H*D, d_model]
  std::vector<float> w_k;  // [KVH*D, d_model]
  std::vector<float> w_v;  // [KVH*D, d_model]
  std::vector<float> w_o;  // [values, H*D]: the merged heads to the value logits
};

struct NamedMatrix {
  const char *name;
  std::vector<float> *values;
};
// The four matrices in a fixed order, for the optimizer and the gradient check.
std::array<NamedMatrix, 4> matrices(Parameters &parameters);

// What the forward keeps for the backward.
struct Activations {
  std::vector<float> q, k, v;  // [B,S,H,D], [B,S,KVH,D], [B,S,KVH,D]
  std::vector<float> out;      // [B,S,H,D]: the attention's output, read as merged heads [B,S,H*D]
  std::vector<float> lse;      // [B,S,H]: the forward kernel's, for the backward kernel
  std::vector<double> probs;   // [B, pairs, values]: the predicted distribution at each query token
  double loss = 0;             // mean cross-entropy over the query tokens
  int correct = 0;             // query tokens whose most likely value is the target
};

struct Gradients {
  Parameters weights;             // dloss/dw for each matrix, shaped like it
  std::vector<float> dq, dk, dv;  // dloss/dq, dk, dv from the backward kernel
};

class Model {
 public:
  Model(const Attention &attention, TaskShape shape) : attention_(attention), shape_(shape) {}

  // Normal weights scaled by 1/sqrt(fan-in).
  Parameters initial_parameters(Random &random) const;
  // The projections, then attend_and_score.
  Activations forward(const Parameters &parameters, const Batch &batch) const;
  // From q, k and v on: the attention forward kernel, the logits, the loss.
  void attend_and_score(const Parameters &parameters, const Batch &batch, Activations &act) const;
  // The loss's gradients: by hand through the output projection, the attention backward kernel,
  // by hand through the input projections.
  Gradients backward(const Parameters &parameters, const Batch &batch, const Activations &act) const;

 private:
  const Attention &attention_;
  TaskShape shape_;
};
