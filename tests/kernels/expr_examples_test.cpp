// The issue-34 examples (score_mod / mask_mod with captured tensors) against the fp64 reference on
// every core family (split keys for Sq <= 8, whole rows, the block core) and the block form; the
// hand-written twins of built-ins; NaN in masked keys, a NaN made by score_mod, a fully masked row;
// and a captured index far out of range (clamped, never read out of bounds).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "expr_specs.h"
#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

using Shape = CallShape;

// Split keys (Sq <= 8), odd lengths around the tiles, Sq != Sk both ways, and lengths past the
// relative tables (63 entries: |q - k| up to 31), whose indices clamp.
constexpr Shape core_shapes[] = {{2, 1, 17}, {1, 5, 29}, {2, 37, 37}, {1, 20, 45}, {1, 45, 20}, {1, 70, 70}};
constexpr Shape block_shapes[] = {{2, 1, 1}, {1, 17, 17}, {2, 37, 37}, {1, 70, 70}};

// Sorted document ids (up to 4 documents) per batch.
void fill_documents(IndexTensor &ids, std::mt19937 &rng) {
  const int64_t batch = ids.shape()[0], seq = ids.shape()[1];
  for (int64_t b = 0; b < batch; ++b) {
    int32_t doc = 0;
    for (int64_t t = 0; t < seq; ++t) {
      if (t > 0 && rng() % 7 == 0) ++doc;
      ids.logical(b * seq + t) = doc;
    }
  }
}

// The call's inputs, with the examples' tensors that need meaning: prefix lengths in [0, Sk],
// document ids sorted, ALiBi-like slopes positive.
Call example_call(const attn::Spec &spec, const Shape &shape, bool padded, std::mt19937 &rng) {
  Call call = make_call(spec, shape.batch, shape.seq_q, shape.seq_k, padded, rng);
  add_runtime_inputs(spec, call, shape.batch, shape.seq_q, shape.seq_k, padded, MaskShape::b_h_sq_sk, rng);
  if (auto it = call.index_tensors.find("prefix"); it != call.index_tensors.end())
    for (int64_t b = 0; b < shape.batch; ++b)
      it->second.logical(b) = static_cast<int32_t>(rng() % (shape.seq_k + 1));
  if (auto it = call.index_tensors.find("doc"); it != call.index_tensors.end())
    fill_documents(it->second, rng);
  return call;
}

// out (and lse) against the reference: the plain pass rule where the reference is finite, else
// NaN exactly where it has NaN. Returns the reference's count of NaN outputs.
int64_t check_against_reference(const attn::Spec &spec, Call &call) {
  const Expected expected = expected_result(spec, call);
  const Tensor &out = call.tensors.at("out");
  int64_t nans = 0;
  for (const double v : expected.exact) nans += std::isnan(v);
  if (nans == 0) {
    const Comparison c = compare(out, expected);
    CAPTURE(c);
    CHECK(c.pass());
    check_lse_nonfinite(spec, call, expected);
  } else {
    check_nonfinite(spec, call, expected);
  }
  if (spec.probs) {
    const Comparison p = compare(call.tensors.at("probs"), probs_expected(expected));
    CAPTURE(p);
    CHECK(p.pass());
  }
  return nans;
}

TEST_CASE("every example against the fp64 reference, on every core family and the block form") {
  std::mt19937 rng(34);
  for (const char *text : expr_example_specs) {
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    const bool core = spec.form == attn::Form::core;
    const std::vector<Shape> shapes =
        core ? std::vector<Shape>(std::begin(core_shapes), std::end(core_shapes))
             : std::vector<Shape>(std::begin(block_shapes), std::end(block_shapes));
    for (size_t n = 0; n < shapes.size(); ++n) {
      const bool padded = n % 2 == 1;
      CAPTURE(text);
      CAPTURE(shapes[n]);
      CAPTURE(padded);
      Call call = example_call(spec, shapes[n], padded, rng);
      const attn_status status = call.run(kernel);
      INFO("attn_run: ", status_name(status), ": ", last_error());
      REQUIRE(status == ATTN_OK);
      check_against_reference(spec, call);
    }
  }
}

// The kernel of a hand-written twin, run on the built-in's inputs (and its tensors as captured).
TEST_CASE("hand-written twins of built-ins give the built-ins' outputs within the pass rule") {
  std::mt19937 rng(35);
  for (const ExprTwin &twin : expr_twins) {
    const attn::Spec hand = parse(twin.hand), built_in = parse(twin.built_in);
    const attn_kernel *hand_kernel = find_kernel(hand), *built_in_kernel = find_kernel(built_in);
    REQUIRE(hand_kernel != nullptr);
    REQUIRE(built_in_kernel != nullptr);
    for (const Shape &shape : core_shapes) {
      CAPTURE(twin.hand);
      CAPTURE(shape);
      Call call = example_call(built_in, shape, false, rng);
      REQUIRE(call.run(built_in_kernel) == ATTN_OK);
      const Expected expected = expected_result(built_in, call);
      const Comparison built_in_result = compare(call.tensors.at("out"), expected);
      CHECK(built_in_result.pass());
      Call hand_call = call;
      if (hand.captured.count > 0) {  // ALiBi: the built-in's slopes, captured
        hand_call.tensors.insert_or_assign("slopes", call.tensors.at("alibi_slopes"));
        hand_call.tensors.erase("alibi_slopes");
      }
      hand_call.tensors.at("out").fill(output_sentinel);
      REQUIRE(hand_call.run(hand_kernel) == ATTN_OK);
      const Comparison hand_result = compare(hand_call.tensors.at("out"), expected);
      CAPTURE(hand_result);
      CHECK(hand_result.pass());
    }
  }
}

// Element n of a [d0, d1, d2, d3] tensor in row-major order.
int64_t at4(const Tensor &t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
  const std::vector<int64_t> &s = t.shape();
  return ((i0 * s[1] + i1) * s[2] + i2) * s[3] + i3;
}

TEST_CASE("masked keys' NaN never reaches an output; kept ones and a score_mod's NaN propagate") {
  std::mt19937 rng(36);
  constexpr float nan_value = std::numeric_limits<float>::quiet_NaN();
  // The dilated window: key 10's k and v are NaN; rows that keep key 10 (q - 10 even, < 24) are NaN,
  // the others finite and right.
  const attn::Spec dilated = parse(expr_example_specs[3]);
  const attn_kernel *kernel = find_kernel(dilated);
  REQUIRE(kernel != nullptr);
  for (const Shape &shape : {Shape{1, 5, 29}, Shape{2, 37, 37}, Shape{1, 45, 20}}) {
    CAPTURE(shape);
    Call call = example_call(dilated, shape, false, rng);
    Tensor &k = call.tensors.at("k");
    Tensor &v = call.tensors.at("v");
    for (int64_t b = 0; b < shape.batch; ++b)
      for (int64_t g = 0; g < k.shape()[2]; ++g) {
        for (int64_t d = 0; d < k.shape()[3]; ++d) k.logical(at4(k, b, 10, g, d)) = nan_value;
        for (int64_t e = 0; e < v.shape()[3]; ++e) v.logical(at4(v, b, 10, g, e)) = nan_value;
      }
    REQUIRE(call.run(kernel) == ATTN_OK);
    const int64_t nans = check_against_reference(dilated, call);
    const int64_t outputs = static_cast<int64_t>(call.tensors.at("out").elements());
    CHECK(nans > 0);        // some rows keep key 10
    CHECK(nans < outputs);  // and some mask it
  }
  // sqrt of a negative number at key 2, kept by rows 0 and 1: NaN; row i = 2 is fully masked:
  // zeros and lse -inf.
  const attn::Spec made_nan = parse(expr_example_specs[12]);
  const attn_kernel *nan_kernel = find_kernel(made_nan);
  REQUIRE(nan_kernel != nullptr);
  for (const Shape &shape : {Shape{1, 5, 29}, Shape{2, 37, 37}, Shape{1, 20, 45}}) {
    CAPTURE(shape);
    Call call = example_call(made_nan, shape, false, rng);
    REQUIRE(call.run(nan_kernel) == ATTN_OK);
    CHECK(check_against_reference(made_nan, call) > 0);
    const Tensor &out = call.tensors.at("out"), &lse = call.tensors.at("lse");
    const int64_t heads = made_nan.heads, dv = made_nan.head_dim_v;
    for (int64_t h = 0; h < heads; ++h) {
      CHECK(std::isinf(lse.logical((0 * shape.seq_q + 2) * heads + h)));
      for (int64_t e = 0; e < dv; ++e)
        CHECK(out.logical(((0 * shape.seq_q + 2) * heads + h) * dv + e) == 0.0f);
    }
  }
}

TEST_CASE("a captured index far outside its tensor reads the nearest element (clamped)") {
  // rel [H, 63] indexed at q - k + 31 for |q - k| up to 199: the reference clamps too, and a
  // guarded tensor (NaN padding around it) shows that nothing outside was read.
  std::mt19937 rng(37);
  const attn::Spec rel = parse(expr_example_specs[0]);
  const attn_kernel *kernel = find_kernel(rel);
  REQUIRE(kernel != nullptr);
  for (const Shape &shape : {Shape{1, 200, 200}, Shape{1, 3, 200}}) {
    CAPTURE(shape);
    Call call = example_call(rel, shape, true, rng);
    REQUIRE(call.tensors.at("rel").shape() == std::vector<int64_t>{rel.heads, 63});
    REQUIRE(call.run(kernel) == ATTN_OK);
    CHECK(check_against_reference(rel, call) == 0);
  }
}

}  // namespace
