// The probs output against the fp64 reference: masks, modifiers, fully masked rows, odd sizes, both forms.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernel_test_support.h"
#include "probs_specs.h"

namespace {

using namespace attnc::test;

struct Lengths {
  int batch, seq_q, seq_k;  // the block form takes S = seq_q
};
// Decode-sized rows (the split-keys core), odd prefill sizes, more queries than keys (bottom-right
// alignment leaves rows with no key), one query and one key, and a long row.
constexpr Lengths lengths[] = {{2, 3, 41}, {3, 37, 29}, {1, 1, 1}, {2, 65, 17}, {1, 130, 1030}};

Call probs_call(const attn::Spec &spec, const Lengths &l, std::mt19937 &rng) {
  const int seq_k = spec.form == attn::Form::block ? l.seq_q : l.seq_k;
  Call call = make_call(spec, l.batch, l.seq_q, seq_k, l.seq_q % 2 == 1, rng);
  add_runtime_inputs(spec, call, l.batch, l.seq_q, seq_k, l.seq_q % 2 == 1, MaskShape::b_one_sq_sk, rng);
  return call;
}

TEST_CASE("the spec list matches the linked kernels") {
  check_spec_list(spec_list_drift({std::begin(probs_specs), std::end(probs_specs)}), "probs_specs.h");
}

// Rows of probs after a run: masked keys (the reference's zeros: no kept key's weight underflows
// at these scales) must be exactly 0 (NaN counts as nonzero), a row sums to 1, or to 0 when the
// reference keeps no key in it.
struct RowCounts {
  int64_t masked_keys = 0, empty_rows = 0, nonzero_masked = 0, bad_sums = 0;
};
RowCounts count_rows(const Tensor &probs, const std::vector<double> &exact) {
  REQUIRE(static_cast<int64_t>(exact.size()) == probs.elements());
  RowCounts c;
  const int64_t seq_k = probs.shape()[3];
  for (int64_t row = 0; row * seq_k < probs.elements(); ++row) {
    double sum = 0, exact_sum = 0;
    for (int64_t j = 0; j < seq_k; ++j) {
      const int64_t n = row * seq_k + j;
      if (exact[static_cast<size_t>(n)] == 0.0) {
        ++c.masked_keys;
        c.nonzero_masked += probs.logical(n) != 0.0f;
      }
      sum += probs.logical(n);
      exact_sum += exact[static_cast<size_t>(n)];
    }
    c.empty_rows += exact_sum == 0.0;
    const double want = exact_sum == 0.0 ? 0.0 : 1.0;
    c.bad_sums += !(std::abs(sum - want) <= 1e-5 * static_cast<double>(seq_k));
  }
  return c;
}

TEST_CASE("probs, out and lse match the fp64 reference; masked keys and empty rows are exactly 0") {
  int64_t masked_keys = 0, empty_rows = 0;
  for (const char *spec_text : probs_specs) {
    const attn::Spec spec = parse(spec_text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (const Lengths &l : lengths) {
      const std::string spec_name = spec_text;
      CAPTURE(spec_name);
      CAPTURE(l.batch);
      CAPTURE(l.seq_q);
      CAPTURE(l.seq_k);
      std::mt19937 rng(static_cast<unsigned>(l.seq_q * 131 + l.seq_k));
      Call call = probs_call(spec, l, rng);
      run_and_check(spec, kernel, call);
      const RowCounts rows = count_rows(call.tensors.at("probs"), expected_result(spec, call).exact_probs);
      CHECK(rows.nonzero_masked == 0);
      CHECK(rows.bad_sums == 0);
      masked_keys += rows.masked_keys;
      empty_rows += rows.empty_rows;
    }
  }
  CHECK(masked_keys > 0);
  CHECK(empty_rows > 0);  // padding's key length 0, and rows before key 0 under causal
}

TEST_CASE("a masked key's NaN never reaches probs") {
  // Padding with key length 1 per batch: every k and v past key 0 is NaN.
  const attn::Spec spec = parse(probs_specs[0]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(5);
  Call call = make_core_call(spec, 2, 9, 12, false, rng);
  call.index_tensors.emplace("key_lengths", IndexTensor({2}, false, 0));
  call.index_tensors.at("key_lengths").fill(1);
  for (const char *name : {"k", "v"}) {
    Tensor &t = call.tensors.at(name);
    const int64_t per_key = t.elements() / (2 * 12);
    for (int64_t n = 0; n < t.elements(); ++n)
      if ((n / per_key) % 12 != 0) t.logical(n) = NAN;
  }
  REQUIRE(call.run(kernel) == ATTN_OK);
  const Tensor &probs = call.tensors.at("probs");
  int64_t nan = 0, ones = 0;
  for (int64_t n = 0; n < probs.elements(); ++n) {
    nan += std::isnan(probs.logical(n));
    ones += probs.logical(n) == 1.0f;
  }
  CHECK(nan == 0);
  // Key 0 is kept from the last query row only (q' = 0 under bottom-right alignment): one per (b, h).
  CHECK(ones == 2 * 2);
}

}  // namespace
