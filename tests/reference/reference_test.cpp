// The fp64 reference against cases small enough to work out by hand.
#include "reference.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace {

using attnc::reference::BlockShape;
using attnc::reference::BlockWeights;
using attnc::reference::TensorView;
namespace ref = attnc::reference;

TEST_CASE("keeps evaluates windows bottom-right aligned, and & / | trees") {
  CHECK(ref::keeps(attn::no_mask(), 0, 100));
  CHECK(ref::keeps(attn::causal(), 5, 5));
  CHECK(ref::keeps(attn::causal(), 5, 0));
  CHECK_FALSE(ref::keeps(attn::causal(), 5, 6));
  CHECK_FALSE(ref::keeps(attn::causal(), -1, 0));  // a query before every key
  CHECK(ref::keeps(attn::window(2, 1), 5, 3));
  CHECK(ref::keeps(attn::window(2, 1), 5, 6));
  CHECK_FALSE(ref::keeps(attn::window(2, 1), 5, 2));
  CHECK_FALSE(ref::keeps(attn::window(2, 1), 5, 7));
  CHECK(ref::keeps(attn::window(-1, -1), 0, 1000));
  const attn::Mask either = attn::window(4, 4) | attn::causal();  // k <= q + 4
  CHECK(ref::keeps(either, 10, 0));
  CHECK(ref::keeps(either, 10, 14));
  CHECK_FALSE(ref::keeps(either, 10, 15));
  const attn::Mask both = (attn::window(16, 0) | attn::window(0, 3)) & attn::window(4, -1);  // q-4 .. q+3
  CHECK_FALSE(ref::keeps(both, 10, 5));
  CHECK(ref::keeps(both, 10, 6));
  CHECK(ref::keeps(both, 10, 13));
  CHECK_FALSE(ref::keeps(both, 10, 14));
}

TEST_CASE("one key: the output is its value") {
  const std::vector<float> q = {0.3f, -2.0f}, k = {1.5f, 0.25f}, v = {7.0f, -3.0f, 0.5f};
  const auto out = ref::core_reference(TensorView::dense(q.data(), {1, 1, 1, 2}),
                                       TensorView::dense(k.data(), {1, 1, 1, 2}),
                                       TensorView::dense(v.data(), {1, 1, 1, 3}), 0.7, attn::no_mask());
  REQUIRE(out.size() == 3);
  CHECK(out[0] == 7.0);
  CHECK(out[1] == -3.0);
  CHECK(out[2] == 0.5);
}

TEST_CASE("scores log(1) and log(3) weigh the values 1:3") {
  const std::vector<float> q = {1.0f}, k = {0.0f, static_cast<float>(std::log(3.0))}, v = {4.0f, 8.0f};
  const auto out = ref::core_reference(TensorView::dense(q.data(), {1, 1, 1, 1}),
                                       TensorView::dense(k.data(), {1, 2, 1, 1}),
                                       TensorView::dense(v.data(), {1, 2, 1, 1}), 1.0, attn::no_mask());
  CHECK(out[0] == doctest::Approx((4.0 + 3 * 8.0) / 4).epsilon(1e-7));
}

TEST_CASE("NaN and Inf: a kept key's propagate, a masked key's never reach the output") {
  const float nan = std::nanf(""), inf = INFINITY;
  // Keys 0..2 and two queries under causal: row 0 sits at position 1, so key 2 is masked for it.
  std::vector<float> q = {1.0f, 1.0f}, k = {0.5f, 0.25f, nan}, v = {1.0f, 2.0f, nan};
  auto run = [&] {
    return ref::core_reference(TensorView::dense(q.data(), {1, 2, 1, 1}), TensorView::dense(k.data(), {1, 3, 1, 1}),
                               TensorView::dense(v.data(), {1, 3, 1, 1}), 1.0, attn::causal());
  };
  CHECK(std::isnan(run()[1]));  // row 1 keeps key 2
  const double w0 = std::exp(0.5 - 0.5), w1 = std::exp(0.25 - 0.5);
  CHECK(run()[0] == doctest::Approx((w0 * 1 + w1 * 2) / (w0 + w1)).epsilon(1e-12));
  k[1] = nan;  // a kept key's NaN k, after the max so far: the row is NaN
  CHECK(std::isnan(run()[0]));
  k[1] = inf;  // a score of +Inf: exp(Inf - Inf) is NaN
  CHECK(std::isnan(run()[0]));
  k[1] = -inf;  // a score of -Inf: weight 0
  CHECK(run()[0] == 1.0);
  k[1] = 0.25f;
  v[0] = inf;  // a kept key's Inf v
  CHECK(run()[0] == inf);
}

TEST_CASE("causal with zero queries averages the kept keys; bottom-right alignment; masked rows are 0") {
  const std::vector<float> v = {1.0f, 2.0f, 4.0f, 8.0f};
  const std::vector<float> k(4, 0.5f), q(4, 0.0f);
  SUBCASE("Sq = Sk: row i averages keys 0..i") {
    const auto out = ref::core_reference(TensorView::dense(q.data(), {1, 4, 1, 1}),
                                         TensorView::dense(k.data(), {1, 4, 1, 1}),
                                         TensorView::dense(v.data(), {1, 4, 1, 1}), 1.0, attn::causal());
    CHECK(out[0] == doctest::Approx(1.0));
    CHECK(out[1] == doctest::Approx(1.5));
    CHECK(out[2] == doctest::Approx(7.0 / 3));
    CHECK(out[3] == doctest::Approx(15.0 / 4));
  }
  SUBCASE("Sq = 1 < Sk: the one query sits at the last key and sees every key") {
    const auto out = ref::core_reference(TensorView::dense(q.data(), {1, 1, 1, 1}),
                                         TensorView::dense(k.data(), {1, 4, 1, 1}),
                                         TensorView::dense(v.data(), {1, 4, 1, 1}), 1.0, attn::causal());
    CHECK(out[0] == doctest::Approx(15.0 / 4));
  }
  SUBCASE("Sq = 4 > Sk = 2: rows 0 and 1 sit before every key and are 0") {
    const auto out = ref::core_reference(TensorView::dense(q.data(), {1, 4, 1, 1}),
                                         TensorView::dense(k.data(), {1, 2, 1, 1}),
                                         TensorView::dense(v.data(), {1, 2, 1, 1}), 1.0, attn::causal());
    CHECK(out[0] == 0.0);
    CHECK(out[1] == 0.0);
    CHECK(out[2] == doctest::Approx(1.0));
    CHECK(out[3] == doctest::Approx(1.5));
  }
}

TEST_CASE("GQA: query head h reads kv head h / (H / KVH)") {
  // H = 4, KVH = 2: heads 0, 1 read kv head 0 and heads 2, 3 kv head 1. Each kv head has one key.
  const std::vector<float> q(4, 1.0f), k = {0.0f, 0.0f}, v = {10.0f, 20.0f};
  const auto out = ref::core_reference(TensorView::dense(q.data(), {1, 1, 4, 1}),
                                       TensorView::dense(k.data(), {1, 1, 2, 1}),
                                       TensorView::dense(v.data(), {1, 1, 2, 1}), 1.0, attn::no_mask());
  CHECK(out == std::vector<double>{10.0, 10.0, 20.0, 20.0});
}

TEST_CASE("a strided view reads the same values as a dense copy") {
  // [B=2, S=3, H=1, D=2] dense, and the same values with padded head, seq and batch strides.
  std::vector<float> dense(12);
  for (size_t i = 0; i < dense.size(); ++i) dense[i] = std::sin(static_cast<float>(i));
  const int64_t head_stride = 5, seq_stride = 7, batch_stride = 30;
  std::vector<float> padded(60, NAN);
  for (int b = 0; b < 2; ++b)
    for (int s = 0; s < 3; ++s)
      for (int d = 0; d < 2; ++d) padded[b * batch_stride + s * seq_stride + d] = dense[(b * 3 + s) * 2 + d];
  const TensorView x = TensorView::dense(dense.data(), {2, 3, 1, 2});
  const TensorView y =
      TensorView::strided(padded.data(), {2, 3, 1, 2}, {batch_stride, seq_stride, head_stride, 1});
  CHECK(ref::core_reference(x, x, x, 0.5, attn::causal()) ==
        ref::core_reference(y, y, y, 0.5, attn::causal()));
}

TEST_CASE("block: zero q/k weights average the values; fused rows equal separate weights") {
  // d_model 2, one head of 2: w_q = w_k = 0 (uniform weights), w_v = w_o = identity.
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};  // [1, 3, 2]
  const std::vector<float> zero(4, 0.0f), identity = {1, 0, 0, 1}, b_v = {0.5f, -0.5f}, b_o = {10, 20};
  const std::vector<float> no_bias(2, 0.0f);
  BlockWeights w;
  w.w_q = TensorView::dense(zero.data(), {2, 2});
  w.w_k = TensorView::dense(zero.data(), {2, 2});
  w.w_v = TensorView::dense(identity.data(), {2, 2});
  w.b_v = TensorView::dense(b_v.data(), {2});
  w.b_q = w.b_k = TensorView::dense(no_bias.data(), {2});
  w.w_o = TensorView::dense(identity.data(), {2, 2});
  w.b_o = TensorView::dense(b_o.data(), {2});
  const BlockShape shape{1, 1, 2, 2};
  const TensorView xv = TensorView::dense(x.data(), {1, 3, 2});
  const auto out = ref::block_reference(xv, w, shape, 1.0, attn::causal());
  // Row s averages x[0..s] (+ b_v), then adds b_o.
  CHECK(out[0] == doctest::Approx(1 + 0.5 + 10));
  CHECK(out[1] == doctest::Approx(2 - 0.5 + 20));
  CHECK(out[2] == doctest::Approx(2 + 0.5 + 10));
  CHECK(out[5] == doctest::Approx(4 - 0.5 + 20));

  // The same weights stacked as w_qkv rows: q rows, then k rows, then v rows.
  std::vector<float> w_qkv, b_qkv;
  for (const auto *part : {&zero, &zero, &identity}) w_qkv.insert(w_qkv.end(), part->begin(), part->end());
  for (const auto *part : {&no_bias, &no_bias, &b_v}) b_qkv.insert(b_qkv.end(), part->begin(), part->end());
  BlockWeights fused;
  fused.w_qkv = TensorView::dense(w_qkv.data(), {6, 2});
  fused.b_qkv = TensorView::dense(b_qkv.data(), {6});
  fused.w_o = w.w_o;
  fused.b_o = w.b_o;
  CHECK(ref::block_reference(xv, fused, shape, 1.0, attn::causal()) == out);
}

TEST_CASE("the naive fp32 twin agrees with the fp64 reference to float precision") {
  std::vector<float> q(2 * 5 * 2 * 3), k(2 * 7 * 1 * 3), v(2 * 7 * 1 * 4);
  for (size_t i = 0; i < q.size(); ++i) q[i] = std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < k.size(); ++i) k[i] = std::cos(0.3f * static_cast<float>(i));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(1.3f * static_cast<float>(i) + 1);
  const TensorView qv = TensorView::dense(q.data(), {2, 5, 2, 3});
  const TensorView kv = TensorView::dense(k.data(), {2, 7, 1, 3});
  const TensorView vv = TensorView::dense(v.data(), {2, 7, 1, 4});
  const auto exact = ref::core_reference(qv, kv, vv, 0.6, attn::window(2, 0));
  const auto naive = ref::core_naive_f32(qv, kv, vv, 0.6f, attn::window(2, 0));
  REQUIRE(exact.size() == naive.size());
  for (size_t i = 0; i < exact.size(); ++i) CHECK(std::abs(naive[i] - exact[i]) < 1e-6);
}

}  // namespace
