// Attention dropout in the forward (dropout=P): against the fp64 reference on every core family and
// variant, the mask read back from the kernel bit for bit against docs/DSL.md's rule across variants
// and thread counts, its statistics, dropout=0 against no dropout, and masked garbage kept out.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dropout_reference.h"
#include "dropout_specs.h"
#include "kernel_test_support.h"
#include "low_precision.h"

namespace {

using namespace attnc::test;
namespace ref = attnc::reference;

std::vector<const char *> variant_caps() {
  return attnc::test::variant_caps(find_kernel(parse(dropout_specs[0])));
}

TEST_CASE("the spec list matches the linked kernels") {
  check_spec_list(spec_list_drift({std::begin(dropout_specs), std::begin(dropout_specs) + active_dropout_count}),
                  "dropout_specs.h");
}

struct Shape {
  int batch, seq_q, seq_k;
};

// Sizes that reach each core: Sq <= 8 the split-keys core, Sq 37 the whole-row (or, for narrow-row
// masks, block) core, Sk 1100 with 8 tasks the packed one; batch 3 of a padded spec keeps no key.
constexpr Shape core_shapes[] = {{1, 3, 45}, {3, 37, 45}, {1, 1, 1}, {2, 20, 1100}};
constexpr Shape block_shapes[] = {{2, 37, 37}, {1, 5, 5}, {3, 17, 17}};

TEST_CASE("dropout's forward matches the fp64 reference on every core family, dtype and variant") {
  int64_t cases = 0;
  for (const char *cap : variant_caps()) {
    REQUIRE(attn_set_max_isa(cap) == ATTN_OK);
    for (size_t n = 0; n < active_dropout_count; ++n) {
      const char *spec_text = dropout_specs[n];
      const attn::Spec spec = parse(spec_text);
      const attn_kernel *kernel = find_kernel(spec);
      REQUIRE(kernel != nullptr);
      const bool block = spec.form == attn::Form::block;
      for (const Shape &s : block ? std::vector<Shape>(std::begin(block_shapes), std::end(block_shapes))
                                  : std::vector<Shape>(std::begin(core_shapes), std::end(core_shapes))) {
        if (s.seq_k > 1000 && spec.heads * s.batch < 8) continue;  // the packed core wants 8 tasks
        const std::string spec_name = spec_text;
        CAPTURE(spec_name);
        CAPTURE(std::string(cap ? cap : "none"));
        CAPTURE(s.batch);
        CAPTURE(s.seq_q);
        CAPTURE(s.seq_k);
        std::mt19937 rng(static_cast<unsigned>(s.seq_q * 31 + s.seq_k));
        const bool padded = s.seq_q % 2 == 1;
        Call call = make_call(spec, s.batch, s.seq_q, s.seq_k, padded, rng);
        add_runtime_inputs(spec, call, s.batch, s.seq_q, s.seq_k, padded, MaskShape::b_one_sq_sk, rng);
        run_and_check_in_dtype(spec, kernel, call);
        ++cases;
      }
    }
  }
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  // At least three shapes a spec on one variant (the AArch64 share on a Cortex-A53 runs 17).
  CHECK(cases >= 3 * static_cast<int64_t>(active_dropout_count));
}

// The readout kernel (mask none, Sk = Dv = 64) with q = 0 and v one-hot (v[j] = e_j): every key has
// probability 1/64, so out[b, i, h, j] = Z(b, h, i, j) / 64 holds the dropout mask itself.
struct Readout {
  Call call;
  int batch, seq_q, heads;
  static constexpr int keys = 64;
  Readout(const attn::Spec &spec, int batch, int seq_q, uint64_t seed, uint64_t offset)
      : batch(batch), seq_q(seq_q), heads(spec.heads) {
    std::mt19937 rng(1);
    call = make_core_call(spec, batch, seq_q, keys, false, rng);
    call.tensors.at("q").fill(0.0f);
    Tensor &v = call.tensors.at("v");
    for (int64_t n = 0; n < v.elements(); ++n) {
      const int64_t e = n % keys, j = (n / (keys * heads)) % keys;
      v.logical(n) = e == j ? 1.0f : 0.0f;
    }
    call.u64_scalars["seed"] = seed;
    call.u64_scalars["offset"] = offset;
  }
  // The kept pairs, in [b, i, h, j] order, as the kernel's out holds them.
  std::vector<char> mask(const attn_kernel *kernel) {
    const attn_status status = call.run(kernel);
    INFO(status_name(status), ": ", last_error());
    REQUIRE(status == ATTN_OK);
    const Tensor &out = call.tensors.at("out");
    std::vector<char> kept(static_cast<size_t>(out.elements()));
    for (int64_t n = 0; n < out.elements(); ++n) kept[static_cast<size_t>(n)] = out.logical(n) != 0.0f;
    return kept;
  }
};

TEST_CASE("the mask is docs/DSL.md's rule, bit for bit on every variant and thread count; 1 - p are kept") {
  const attn::Spec spec = parse(dropout_specs[mask_readout_spec]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  // 2 x 512 x 16 x 64 = 2^20 pairs; offset near 2^64 so b * H + h + offset wraps.
  const uint64_t seed = 0xdeadbeef12345678ull, offset = ~uint64_t{0} - 20;
  Readout readout(spec, 2, 512, seed, offset);
  const float scale = 1.0f / (1.0f - spec.dropout);
  std::vector<char> first;
  for (const char *cap : variant_caps())
    for (int threads : {1, 2}) {
      CAPTURE(std::string(cap ? cap : "none"));
      CAPTURE(threads);
      REQUIRE(attn_set_max_isa(cap) == ATTN_OK);
      REQUIRE(attn_kernel_set_threads(kernel, threads) == ATTN_OK);
      const std::vector<char> kept = readout.mask(kernel);
      if (first.empty()) {
        first = kept;
        // Against the rule, and each kept value exactly 1 / (1 - p) / 64.
        const Tensor &out = readout.call.tensors.at("out");
        int64_t disagree = 0, wrong_value = 0, kept_count = 0;
        const ref::Dropout d{true, spec.dropout, seed, offset};
        for (int64_t n = 0; n < out.elements(); ++n) {
          const int64_t j = n % 64, h = (n / 64) % 16, i = (n / (64 * 16)) % 512, b = n / (64 * 16 * 512);
          const bool keeps = ref::dropout_keeps(d, 16, b, h, i, j);
          disagree += keeps != (kept[static_cast<size_t>(n)] != 0);
          wrong_value += keeps && std::abs(out.logical(n) - scale / 64.0f) > 1e-7f;
          kept_count += keeps;
        }
        CHECK(disagree == 0);
        CHECK(wrong_value == 0);
        const double n = static_cast<double>(out.elements()), p = spec.dropout;
        CHECK(std::abs(static_cast<double>(kept_count) / n - (1.0 - p)) < 4.0 * std::sqrt(p * (1.0 - p) / n));
      } else {
        CHECK(kept == first);
      }
    }
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
  REQUIRE(attn_kernel_set_threads(kernel, 0) == ATTN_OK);
  // Another offset (the next call's, advanced by B * H) draws another mask: about 2 p (1 - p) differ.
  Readout next(spec, 2, 512, seed, offset + 2 * 16);
  const std::vector<char> other = next.mask(kernel);
  int64_t differ = 0;
  for (size_t n = 0; n < other.size(); ++n) differ += other[n] != first[n];
  const double fraction = static_cast<double>(differ) / static_cast<double>(other.size());
  CHECK(fraction > 0.17);
  CHECK(fraction < 0.19);
}

TEST_CASE("the mean output over 400 seeds is the output without dropout, within 4 sigma") {
  const attn::Spec spec = parse(dropout_specs[1]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(5);
  const int batch = 1, seq_q = 2, seq_k = 9;
  Call call = make_core_call(spec, batch, seq_q, seq_k, false, rng);
  add_runtime_inputs(spec, call, batch, seq_q, seq_k, false, MaskShape::b_one_sq_sk, rng);
  call.index_tensors.at("key_lengths").logical(0) = seq_k;
  ref::Options o = reference_options(spec, call);
  o.dropout.on = false;
  auto view = [&](const char *name) { return call.tensors.at(name).view(); };
  const std::vector<double> plain = ref::core_reference(view("q"), view("k"), view("v"), o).out;
  const int runs = 400;
  std::vector<double> sum(plain.size(), 0.0), square(plain.size(), 0.0);
  for (int seed = 0; seed < runs; ++seed) {
    call.u64_scalars["seed"] = 1000003ull * static_cast<uint64_t>(seed);
    call.u64_scalars["offset"] = 7;
    REQUIRE(call.run(kernel) == ATTN_OK);
    const Tensor &out = call.tensors.at("out");
    for (int64_t n = 0; n < out.elements(); ++n) {
      sum[static_cast<size_t>(n)] += out.logical(n);
      square[static_cast<size_t>(n)] += double(out.logical(n)) * out.logical(n);
    }
  }
  double worst = 0, widest = 0;
  for (size_t n = 0; n < plain.size(); ++n) {
    const double mean = sum[n] / runs, variance = square[n] / runs - mean * mean;
    const double sigma = std::sqrt(std::max(variance, 0.0) / runs) + 1e-6;
    worst = std::max(worst, std::abs(mean - plain[n]) / sigma);
    widest = std::max(widest, variance);
  }
  CAPTURE(worst);
  CHECK(worst < 4.0);
  CHECK(widest > 1e-3);  // the outputs did vary with the seed
}

TEST_CASE("dropout=0 gives the output of the kernel without dropout, bit for bit") {
  const attn::Spec zero = parse(dropout_specs[zero_dropout_spec]),
                   none = parse(dropout_specs[no_dropout_spec]);
  for (const char *cap : variant_caps())
    for (const Shape &s : core_shapes) {
      CAPTURE(std::string(cap ? cap : "none"));
      CAPTURE(s.seq_q);
      CAPTURE(s.seq_k);
      REQUIRE(attn_set_max_isa(cap) == ATTN_OK);
      std::mt19937 rng(static_cast<unsigned>(s.seq_k));
      Call with = make_core_call(zero, s.batch, s.seq_q, s.seq_k, false, rng);
      Call without = with;
      with.u64_scalars["seed"] = 99;
      with.u64_scalars["offset"] = 3;
      REQUIRE(with.run(find_kernel(zero)) == ATTN_OK);
      REQUIRE(without.run(find_kernel(none)) == ATTN_OK);
      CHECK(differing_elements(with.tensors.at("out"), without.tensors.at("out")) == 0);
    }
  REQUIRE(attn_set_max_isa(nullptr) == ATTN_OK);
}

TEST_CASE("masked keys' garbage stays out with dropout on; a NaN in a kept key propagates") {
  const attn::Spec spec = parse(dropout_specs[1]);  // window(5,2) & padding
  const attn_kernel *kernel = find_kernel(spec);
  const int batch = 2, seq_q = 11, seq_k = 13;
  std::mt19937 rng(9);
  Call call = make_core_call(spec, batch, seq_q, seq_k, false, rng);
  add_runtime_inputs(spec, call, batch, seq_q, seq_k, false, MaskShape::b_one_sq_sk, rng);
  IndexTensor &lengths = call.index_tensors.at("key_lengths");
  lengths.logical(0) = 9;
  lengths.logical(1) = seq_k;
  const Expected e = expected_result(spec, call);
  // Keys 9.. of batch 0 are masked: NaN in their k and v.
  for (const char *name : {"k", "v"}) {
    Tensor &t = call.tensors.at(name);
    const int64_t row = t.elements() / (batch * seq_k);
    for (int64_t j = 9; j < seq_k; ++j)
      for (int64_t e = 0; e < row; ++e) t.logical(j * row + e) = NAN;
  }
  REQUIRE(call.run(kernel) == ATTN_OK);
  const Comparison c = compare(call.tensors.at("out"), e);
  CAPTURE(c);
  CHECK(c.pass());
  // A NaN in batch 1's key 12, which the last row keeps: that row's out turns NaN, dropped or not.
  call.tensors.at("v").logical((seq_k + 12) * spec.kv_heads * spec.head_dim_v) = NAN;
  REQUIRE(call.run(kernel) == ATTN_OK);
  const Tensor &out = call.tensors.at("out");
  const int64_t last_row = ((batch * seq_q) - 1) * spec.heads * spec.head_dim_v;
  CHECK(std::isnan(out.logical(last_row)));
  CHECK(!std::isnan(out.logical(0)));
}

}  // namespace
