// model.cpp: the layer's forward, loss and backward around the attnc attention kernels.
#include "model.h"

#include <algorithm>
#include <cmath>

#include "linear.h"

namespace {

constexpr int query_width = heads * head_dim;   // q and the merged output: H*D
constexpr int key_width = kv_heads * head_dim;  // k and v: KVH*D

}  // namespace

std::array<NamedMatrix, 4> matrices(Parameters &parameters) {
  return {NamedMatrix{"w_q", &parameters.w_q}, NamedMatrix{"w_k", &parameters.w_k},
          NamedMatrix{"w_v", &parameters.w_v}, NamedMatrix{"w_o", &parameters.w_o}};
}

Parameters Model::initial_parameters(Random &random) const {
  const int m = shape_.d_model;
  const double from_tokens = 1.0 / std::sqrt(m), from_heads = 1.0 / std::sqrt(query_width);
  return {random.normals(size_t(query_width) * m, from_tokens),
          random.normals(size_t(key_width) * m, from_tokens),
          random.normals(size_t(key_width) * m, from_tokens),
          random.normals(size_t(shape_.values) * query_width, from_heads)};
}

Activations Model::forward(const Parameters &parameters, const Batch &batch) const {
  const int rows = batch.count * shape_.seq_len(), m = shape_.d_model;
  Activations act;
  act.q.resize(size_t(rows) * query_width);
  act.k.resize(size_t(rows) * key_width);
  act.v.resize(size_t(rows) * key_width);
  linear(batch.x, parameters.w_q, rows, m, query_width, act.q);
  linear(batch.x, parameters.w_k, rows, m, key_width, act.k);
  linear(batch.x, parameters.w_v, rows, m, key_width, act.v);
  attend_and_score(parameters, batch, act);
  return act;
}

void Model::attend_and_score(const Parameters &parameters, const Batch &batch, Activations &act) const {
  const int seq = shape_.seq_len(), pairs = shape_.pairs, values = shape_.values;
  act.out.resize(size_t(batch.count) * seq * query_width);
  act.lse.resize(size_t(batch.count) * seq * heads);
  attention_.forward(batch.count, seq, act.q, act.k, act.v, act.out, act.lse);

  act.probs.assign(size_t(batch.count) * pairs * values, 0.0);
  act.loss = 0;
  act.correct = 0;
  std::vector<double> logits(values);
  for (int b = 0; b < batch.count; ++b) {
    for (int j = 0; j < pairs; ++j) {
      const float *row = act.out.data() + (size_t(b) * seq + pairs + j) * query_width;
      for (int c = 0; c < values; ++c) {
        double acc = 0;
        for (int e = 0; e < query_width; ++e)
          acc += double(parameters.w_o[size_t(c) * query_width + e]) * row[e];
        logits[c] = acc;
      }
      const double top = *std::max_element(logits.begin(), logits.end());
      double sum = 0;
      for (double logit : logits) sum += std::exp(logit - top);
      const int target = batch.targets[size_t(b) * pairs + j];
      act.loss += top + std::log(sum) - logits[target];
      double *probs = act.probs.data() + (size_t(b) * pairs + j) * values;
      for (int c = 0; c < values; ++c) probs[c] = std::exp(logits[c] - top) / sum;
      act.correct += std::max_element(logits.begin(), logits.end()) - logits.begin() == target;
    }
  }
  act.loss /= double(batch.count) * pairs;
}

Gradients Model::backward(const Parameters &parameters, const Batch &batch, const Activations &act) const {
  const int seq = shape_.seq_len(), pairs = shape_.pairs, values = shape_.values, m = shape_.d_model;
  const int rows = batch.count * seq;
  Gradients grads;

  // The logits' gradient of the mean cross-entropy, (probs - one_hot(target)) / tokens, and the
  // output rows it multiplies: only query tokens reach the loss.
  const int tokens = batch.count * pairs;
  std::vector<float> dlogits(size_t(tokens) * values), query_rows(size_t(tokens) * query_width);
  for (int t = 0; t < tokens; ++t) {
    const int b = t / pairs, j = t % pairs;
    for (int c = 0; c < values; ++c) {
      const double one_hot = c == batch.targets[t] ? 1.0 : 0.0;
      dlogits[size_t(t) * values + c] =
          static_cast<float>((act.probs[size_t(t) * values + c] - one_hot) / tokens);
    }
    std::copy_n(act.out.data() + (size_t(b) * seq + pairs + j) * query_width, query_width,
                query_rows.data() + size_t(t) * query_width);
  }
  grads.weights.w_o.resize(parameters.w_o.size());
  linear_weight_grad(dlogits, query_rows, tokens, query_width, values, grads.weights.w_o);

  // dout: the query rows' gradient in place, zero at the pair tokens.
  std::vector<float> dquery_rows(size_t(tokens) * query_width), dout(act.out.size(), 0.0f);
  linear_input_grad(dlogits, parameters.w_o, tokens, query_width, values, dquery_rows);
  for (int t = 0; t < tokens; ++t) {
    const int b = t / pairs, j = t % pairs;
    std::copy_n(dquery_rows.data() + size_t(t) * query_width, query_width,
                dout.data() + (size_t(b) * seq + pairs + j) * query_width);
  }

  grads.dq.resize(act.q.size());
  grads.dk.resize(act.k.size());
  grads.dv.resize(act.v.size());
  attention_.backward(batch.count, seq, act.q, act.k, act.v, act.out, dout, act.lse, grads.dq, grads.dk,
                      grads.dv);

  grads.weights.w_q.resize(parameters.w_q.size());
  grads.weights.w_k.resize(parameters.w_k.size());
  grads.weights.w_v.resize(parameters.w_v.size());
  linear_weight_grad(grads.dq, batch.x, rows, m, query_width, grads.weights.w_q);
  linear_weight_grad(grads.dk, batch.x, rows, m, key_width, grads.weights.w_k);
  linear_weight_grad(grads.dv, batch.x, rows, m, key_width, grads.weights.w_v);
  return grads;
}
