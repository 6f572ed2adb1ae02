// weights.cpp: random decoder weights from the config's seed.
#include "weights.h"

#include <cmath>
#include <random>

namespace llama {

size_t Weights::bytes() const {
  size_t floats = embedding.size() + final_norm.size() + lm_head.size();
  for (const LayerWeights &l : layers)
    for (const std::vector<float> *w :
         {&l.attention_norm, &l.w_q, &l.w_k, &l.w_v, &l.w_o, &l.mlp_norm, &l.w_gate, &l.w_up, &l.w_down})
      floats += w->size();
  return floats * sizeof(float);
}

Weights random_weights(const Config &c) {
  std::mt19937 rng(c.seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto random = [&](size_t rows, size_t cols, float scale) {
    std::vector<float> w(rows * cols);
    for (float &e : w) e = uniform(rng) * scale;
    return w;
  };
  auto norm = [&](size_t n) {
    std::vector<float> w(n);
    for (float &e : w) e = 1.0f + 0.1f * uniform(rng);
    return w;
  };
  const size_t m = c.d_model, q = size_t(c.heads) * c.head_dim, kv = size_t(c.kv_heads) * c.head_dim;
  const float in_m = 1.0f / std::sqrt(float(m)), in_q = 1.0f / std::sqrt(float(q)),
              in_f = 1.0f / std::sqrt(float(c.ffn));
  Weights w;
  w.embedding = random(c.vocab, m, 1.0f);
  for (int i = 0; i < c.layers; ++i)
    w.layers.push_back({norm(m), random(q, m, in_m), random(kv, m, in_m), random(kv, m, in_m),
                        random(m, q, in_q), norm(m), random(c.ffn, m, in_m), random(c.ffn, m, in_m),
                        random(m, c.ffn, in_f)});
  w.final_norm = norm(m);
  w.lm_head = random(c.vocab, m, in_m);
  return w;
}

}  // namespace llama
