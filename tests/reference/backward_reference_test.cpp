// The fp64 backward reference against central differences of the fp64 forward reference itself.
#include "backward_reference.h"

#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "reference.h"

namespace {

namespace ref = attnc::reference;
using ref::TensorView;

// L = sum(out * dout) for the forward reference.
double loss(const std::vector<float> &q, const std::vector<float> &k, const std::vector<float> &v,
            const std::vector<float> &dout, const std::vector<int64_t> &qs, const std::vector<int64_t> &ks,
            const std::vector<int64_t> &vs, const ref::Options &o) {
  const auto r = ref::core_reference(TensorView::dense(q.data(), {qs[0], qs[1], qs[2], qs[3]}),
                                     TensorView::dense(k.data(), {ks[0], ks[1], ks[2], ks[3]}),
                                     TensorView::dense(v.data(), {vs[0], vs[1], vs[2], vs[3]}), o);
  double sum = 0;
  for (size_t n = 0; n < r.out.size(); ++n) sum += r.out[n] * dout[n];
  return sum;
}

// With dropout the forward's dropout mask is fixed by (seed, offset): L stays differentiable in q, k, v.
void check_derivative(bool dropout) {
  const int64_t B = 2, Sq = 5, Sk = 7, H = 4, KVH = 2, D = 3, Dv = 4;
  const std::vector<int64_t> qs{B, Sq, H, D}, ks{B, Sk, KVH, D}, vs{B, Sk, KVH, Dv};
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  auto random = [&](int64_t n) {
    std::vector<float> x(static_cast<size_t>(n));
    for (float &e : x) e = normal(rng);
    return x;
  };
  std::vector<float> q = random(B * Sq * H * D), k = random(B * Sk * KVH * D), v = random(B * Sk * KVH * Dv);
  const std::vector<float> dout = random(B * Sq * H * Dv), slopes = {0.1f, 0.3f, 0.05f, 0.2f};
  const std::vector<float> bias = random(B * H * Sq * Sk);
  const std::vector<int32_t> key_lengths = {6, 0};  // batch 1: every row fully masked
  ref::Options o;
  o.scale = 0.7;
  o.mask = attn::causal() & attn::padding();
  o.softcap = 1.5;
  o.alibi = true;
  o.score_bias = true;
  o.inputs.key_lengths = ref::IndexView::dense(key_lengths.data(), {B});
  o.inputs.alibi_slopes = TensorView::dense(slopes.data(), {H});
  o.inputs.score_bias = TensorView::dense(bias.data(), {B, H, Sq, Sk});
  if (dropout) o.dropout = ref::Dropout{true, 0.3f, 42, 5};
  const auto g = ref::core_backward_reference(
      TensorView::dense(q.data(), {B, Sq, H, D}), TensorView::dense(k.data(), {B, Sk, KVH, D}),
      TensorView::dense(v.data(), {B, Sk, KVH, Dv}), TensorView::dense(dout.data(), {B, Sq, H, Dv}), o);
  // Along a random direction u: (L(x + eps u) - L(x - eps u)) / (x+ - x-) . grad, using the
  // perturbation as stored in float, so only the truncation error (eps^2) remains.
  struct Input {
    std::vector<float> *x;
    const std::vector<double> *grad;
    const char *name;
  };
  double batch1_grad = 0;
  for (const Input in : {Input{&q, &g.dq, "q"}, Input{&k, &g.dk, "k"}, Input{&v, &g.dv, "v"}}) {
    const std::string name = in.name;
    CAPTURE(name);
    const std::vector<float> x = *in.x, u = random(static_cast<int64_t>(x.size()));
    const float eps = 1e-3f;
    std::vector<float> plus = x, minus = x;
    double predicted = 0;
    for (size_t n = 0; n < x.size(); ++n) {
      plus[n] = x[n] + eps * u[n];
      minus[n] = x[n] - eps * u[n];
      predicted += (double(plus[n]) - double(minus[n])) * (*in.grad)[n];
    }
    *in.x = plus;
    const double up = loss(q, k, v, dout, qs, ks, vs, o);
    *in.x = minus;
    const double down = loss(q, k, v, dout, qs, ks, vs, o);
    *in.x = x;
    CHECK(std::abs((up - down) - predicted) <= 1e-5 * (std::abs(predicted) + 1e-3));
    CHECK(std::abs(predicted) > 1e-4);  // the direction sees the gradient at all
  }
  // Batch 1 keeps no key: its rows' dq, and its keys' dk and dv, are exactly 0.
  for (int64_t n = B * Sq * H * D / 2; n < B * Sq * H * D; ++n) batch1_grad += std::abs(g.dq[n]);
  for (int64_t n = B * Sk * KVH * D / 2; n < B * Sk * KVH * D; ++n) batch1_grad += std::abs(g.dk[n]);
  for (int64_t n = B * Sk * KVH * Dv / 2; n < B * Sk * KVH * Dv; ++n) batch1_grad += std::abs(g.dv[n]);
  CHECK(batch1_grad == 0.0);
}

TEST_CASE("the backward reference is the derivative of the forward reference (GQA, Dv != D, modifiers)") {
  check_derivative(false);
}

TEST_CASE("with dropout too: the dropped pairs fixed by seed and offset") {
  check_derivative(true);
}

}  // namespace
