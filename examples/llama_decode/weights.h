// weights.h: a Llama-style decoder's weights, random from a fixed seed (no checkpoint needed).
#pragma once

#include <vector>

#include "config.h"

namespace llama {

// Matrices follow nn.Linear: [out_features, in_features], y = x · Wᵀ.
struct LayerWeights {
  std::vector<float> attention_norm;  // [d_model]
  std::vector<float> w_q;             // [H·D, d_model]
  std::vector<float> w_k, w_v;        // [KVH·D, d_model]
  std::vector<float> w_o;             // [d_model, H·D]
  std::vector<float> mlp_norm;        // [d_model]
  std::vector<float> w_gate, w_up;    // [ffn, d_model]
  std::vector<float> w_down;          // [d_model, ffn]
};

struct Weights {
  std::vector<float> embedding;  // [vocab, d_model]
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;  // [d_model]
  std::vector<float> lm_head;     // [vocab, d_model]

  size_t bytes() const;
};

// Uniform in nn.Linear's default range ±1/sqrt(in_features); norms near 1; embeddings ±1.
Weights random_weights(const Config &config);

}  // namespace llama
