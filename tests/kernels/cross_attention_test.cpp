// Cross-attention in the block form (cross=true) against the fp64 reference: queries from x
// [B,Sq,d_model], keys and values from x_kv [B,Sk,d_model], Sq above, below and equal to Sk,
// separate and fused weights, every mask term with Sq != Sk (bottom-right and top-left), lse, bf16.
#include <doctest/doctest.h>

#include <cmath>
#include <ostream>
#include <random>
#include <string>

#include "api_gaps_cases.h"
#include "api_gaps_specs.h"
#include "kernel_test_support.h"
#include "low_precision.h"

namespace {

using namespace attnc::test;

struct CrossCase {
  std::string spec;
  int batch, seq_q, seq_k;
  bool padded;
};

std::ostream &operator<<(std::ostream &os, const CrossCase &c) {
  return os << "{\"" << c.spec << "\", B=" << c.batch << ", Sq=" << c.seq_q << ", Sk=" << c.seq_k
            << (c.padded ? ", padded}" : "}");
}

Call make_case_call(const attn::Spec &spec, const CrossCase &c) {
  std::mt19937 rng(static_cast<unsigned>(c.batch * 7919 + c.seq_q * 104729 + c.seq_k * 13 + c.spec.size()));
  Call call = make_block_call(spec, c.batch, c.seq_q, c.seq_k, c.padded, rng);
  add_runtime_inputs(spec, call, c.batch, c.seq_q, c.seq_k, c.padded, MaskShape::b_one_sq_sk, rng);
  return call;
}

// (Sq, Sk): more queries than keys, fewer, equal, a single query, a single key; odd lengths.
constexpr int lengths[][2] = {{13, 29}, {29, 13}, {7, 7}, {1, 40}, {40, 3}, {5, 1}, {33, 70}};

TEST_CASE("cross-attention: the suite's list and the linked kernels agree") {
  check_spec_list(spec_list_drift(api_gaps_specs()), "tests/kernels/api_gaps_specs.h");
}

TEST_CASE("cross-attention: x_kv's length is the key length, against the fp64 reference") {
  int n = 0;
  for (const char *text : cross_attention_specs) {
    for (const auto &[seq_q, seq_k] : sizes_to_run(lengths)) {
      ++n;
      check_case(CrossCase{text, 1 + n % 3, seq_q, seq_k, n % 2 == 0});
    }
  }
  CHECK(n >= 3 * static_cast<int>(sizes_to_run(lengths).size()));
}

TEST_CASE("cross-attention: the arguments name x [B,Sq,d_model] and x_kv [B,Sk,d_model]") {
  const attn::Spec spec = parse(cross_attention_specs[0]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  int seen = 0;
  for (int i = 0; i < attn_kernel_arg_count(kernel); ++i) {
    attn_arg_info info{};
    REQUIRE(attn_kernel_arg(kernel, i, &info) == ATTN_OK);
    const std::string name = info.name;
    if (name != "x" && name != "x_kv" && name != "out") continue;
    ++seen;
    CAPTURE(name);
    REQUIRE(info.rank == 3);
    CHECK(std::string(info.dim_names[0]) == "B");
    CHECK(std::string(info.dim_names[1]) == (name == "x_kv" ? "Sk" : "Sq"));
    CHECK(info.fixed_shape[2] == spec.d_model);
  }
  CHECK(seen == 3);
}

TEST_CASE("cross-attention: padded x_kv tokens never reach the output, whatever they hold") {
  // key_lengths counts x_kv's tokens: NaN in the ones past it must not leak (the reference skips
  // them, so any NaN in out fails the pass rule).
  const attn::Spec spec = parse(cross_attention_specs[0]);
  REQUIRE(spec.mask.uses(attn::MaskOp::padding));
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  for (const auto &[seq_q, seq_k] : sizes_to_run(lengths)) {
    const CrossCase c{cross_attention_specs[0], 3, seq_q, seq_k, false};
    CAPTURE(c);
    Call call = make_case_call(spec, c);
    const IndexTensor &key_lengths = call.index_tensors.at("key_lengths");
    Tensor &x_kv = call.tensors.at("x_kv");
    for (int64_t b = 0; b < c.batch; ++b)
      for (int64_t j = key_lengths.logical(b); j < seq_k; ++j)
        for (int64_t m = 0; m < spec.d_model; ++m) x_kv.logical((b * seq_k + j) * spec.d_model + m) = NAN;
    run_and_check(spec, kernel, call);
  }
}

TEST_CASE("cross-attention: x and x_kv that disagree are refused by name") {
  const attn::Spec spec = parse(cross_attention_specs[0]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  const CrossCase c{cross_attention_specs[0], 2, 13, 29, false};
  Call call = make_case_call(spec, c);
  SUBCASE("another batch") {
    call.tensors.erase("x_kv");
    call.tensors.emplace("x_kv", Tensor({3, 29, spec.d_model}, false, 0.5f));
    CHECK(status_name(call.run(kernel)) == status_name(ATTN_ERR_SHAPE));
    CHECK(last_error().find("tensor 'x_kv': dim 0 (B) is 3, but tensor 'x' set B to 2") != std::string::npos);
  }
  SUBCASE("another d_model") {
    call.tensors.erase("x_kv");
    call.tensors.emplace("x_kv", Tensor({2, 29, spec.d_model + 1}, false, 0.5f));
    CHECK(status_name(call.run(kernel)) == status_name(ATTN_ERR_SHAPE));
    CHECK(last_error().find("tensor 'x_kv': dim 2 (d_model)") != std::string::npos);
  }
  SUBCASE("left out") {
    call.tensors.erase("x_kv");
    CHECK(status_name(call.run(kernel)) == status_name(ATTN_ERR_MISSING_TENSOR));
    CHECK(last_error().find("tensor 'x_kv' is missing") != std::string::npos);
  }
  SUBCASE("key_lengths past x_kv's length") {
    call.index_tensors.at("key_lengths").logical(0) = 30;
    CHECK(status_name(call.run(kernel)) == status_name(ATTN_ERR_INVALID_VALUE));
    CHECK(last_error().find("key_lengths must lie in [0, Sk]") != std::string::npos);
  }
  CHECK(call.tensors.at("out").all_padding());
}

}  // namespace
