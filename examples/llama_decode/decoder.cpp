// decoder.cpp: embedding → layers (RMSNorm, GQA attention with RoPE, SwiGLU MLP) → greedy head.
#include "decoder.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "ops.h"
#include "reference.h"

namespace llama {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void compare(const std::vector<double> &ref, const float *out, CheckResult &check) {
  for (size_t i = 0; i < ref.size(); ++i) {
    check.max_error =
        std::isfinite(out[i]) ? std::max(check.max_error, std::fabs(out[i] - ref[i])) : INFINITY;
    check.max_reference = std::max(check.max_reference, std::fabs(ref[i]));
  }
}

}  // namespace

std::string Decoder::step(const std::vector<Sequence *> &batch, int sq, PagePool &pool, Attention &attention,
                          std::vector<int> &next, CheckResult *check) {
  const auto start = std::chrono::steady_clock::now();
  const int B = static_cast<int>(batch.size()), T = B * sq, M = c_.d_model, F = c_.ffn;
  const int QW = c_.heads * c_.head_dim, KW = c_.kv_heads * c_.head_dim;
  for (Sequence *s : batch) {
    if (static_cast<int>(s->tokens.size()) < s->cache.length + sq)
      return "a sequence has fewer tokens than the step";
    if (!s->cache.reserve(pool, s->cache.length + sq))
      return "the page pool is out of pages (all " + std::to_string(pool.pages()) + " pages of " +
             std::to_string(pool.page_tokens()) + " tokens are in use)";
  }
  x_.resize(size_t(T) * M);
  h_.resize(size_t(T) * M);
  q_.resize(size_t(T) * QW);
  attn_.resize(size_t(T) * QW);
  k_.resize(size_t(T) * KW);
  v_.resize(size_t(T) * KW);
  gate_.resize(size_t(T) * F);
  up_.resize(size_t(T) * F);
  for (int b = 0; b < B; ++b)
    for (int i = 0; i < sq; ++i) {
      const int token = batch[b]->tokens[batch[b]->cache.length + i];
      std::copy_n(&w_.embedding[size_t(token) * M], M, &x_[(size_t(b) * sq + i) * M]);
    }
  const AttentionShape shape{c_.heads, c_.kv_heads, c_.head_dim, c_.rope_theta};
  for (int layer = 0; layer < c_.layers; ++layer) {
    const LayerWeights &l = w_.layers[layer];
    rms_norm(x_.data(), T, M, l.attention_norm.data(), c_.norm_eps, h_.data());
    linear(h_.data(), T, M, l.w_q.data(), QW, q_.data(), c_.threads);
    linear(h_.data(), T, M, l.w_k.data(), KW, k_.data(), c_.threads);
    linear(h_.data(), T, M, l.w_v.data(), KW, v_.data(), c_.threads);
    for (int b = 0; b < B; ++b) {  // the un-rotated history, for the fp64 check
      Sequence &s = *batch[b];
      s.k_history.resize(c_.layers);
      s.v_history.resize(c_.layers);
      s.k_history[layer].insert(s.k_history[layer].end(), &k_[size_t(b) * sq * KW],
                                &k_[size_t(b + 1) * sq * KW]);
      s.v_history[layer].insert(s.v_history[layer].end(), &v_[size_t(b) * sq * KW],
                                &v_[size_t(b + 1) * sq * KW]);
    }
    const auto attention_start = std::chrono::steady_clock::now();
    const std::string error =
        attention.attend({layer, sq, batch, q_.data(), k_.data(), v_.data(), attn_.data()});
    attention_seconds += seconds_since(attention_start);
    if (!error.empty()) return error;
    if (check != nullptr)
      for (int b = 0; b < B; ++b) {
        const Sequence &s = *batch[b];
        const std::vector<double> ref =
            attention_reference(&q_[size_t(b) * sq * QW], sq, s.k_history[layer].data(),
                                s.v_history[layer].data(), s.cache.length + sq, shape);
        compare(ref, &attn_[size_t(b) * sq * QW], *check);
        check->rows += sq * c_.heads;
      }
    linear(attn_.data(), T, QW, l.w_o.data(), M, h_.data(), c_.threads);
    for (size_t i = 0; i < x_.size(); ++i) x_[i] += h_[i];
    rms_norm(x_.data(), T, M, l.mlp_norm.data(), c_.norm_eps, h_.data());
    linear(h_.data(), T, M, l.w_gate.data(), F, gate_.data(), c_.threads);
    linear(h_.data(), T, M, l.w_up.data(), F, up_.data(), c_.threads);
    swiglu(gate_.data(), up_.data(), gate_.size());
    linear(gate_.data(), T, F, l.w_down.data(), M, h_.data(), c_.threads);
    for (size_t i = 0; i < x_.size(); ++i) x_[i] += h_[i];
  }
  for (Sequence *s : batch) s->cache.length += sq;
  // The head on each sequence's last position only.
  std::vector<float> last(size_t(B) * M);
  for (int b = 0; b < B; ++b)
    rms_norm(&x_[(size_t(b) * sq + sq - 1) * M], 1, M, w_.final_norm.data(), c_.norm_eps,
             &last[size_t(b) * M]);
  logits_.resize(size_t(B) * c_.vocab);
  linear(last.data(), B, M, w_.lm_head.data(), c_.vocab, logits_.data(), c_.threads);
  next.resize(B);
  for (int b = 0; b < B; ++b) next[b] = argmax(&logits_[size_t(b) * c_.vocab], c_.vocab);
  total_seconds += seconds_since(start);
  return {};
}

}  // namespace llama
