// The run-time scale (runtime_scale=true) against the fp64 reference: given (rank 0 or [1]) or left
// out (the spec's scale), with masks and the modifiers that follow it, on every core path (whole
// rows, split keys, the long-key block core, bf16 pairs) and the block form; non-finite scales
// refused before anything is written.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "api_gaps_cases.h"
#include "api_gaps_specs.h"
#include "kernel_test_support.h"
#include "low_precision.h"

namespace {

using namespace attnc::test;

struct ScaleCase {
  std::string spec;
  int batch, seq_q, seq_k;
  bool padded;
  std::optional<float> scale;  // none: left out
  bool rank0;                  // given as a rank-0 tensor, else as shape [1]
};

std::ostream &operator<<(std::ostream &os, const ScaleCase &c) {
  os << "{\"" << c.spec << "\", B=" << c.batch << ", Sq=" << c.seq_q << ", Sk=" << c.seq_k
     << (c.padded ? ", padded" : "");
  if (c.scale) return os << ", scale " << *c.scale << (c.rank0 ? " (rank 0)}" : " ([1])}");
  return os << ", scale left out}";
}

void give_scale(Call &call, float value, bool rank0) {
  if (rank0) {
    call.scalars["scale"] = value;
    return;
  }
  Tensor t({1}, false, NAN);
  t.logical(0) = value;
  call.tensors.emplace("scale", std::move(t));
}

Call make_case_call(const attn::Spec &spec, const ScaleCase &c) {
  std::mt19937 rng(static_cast<unsigned>(c.batch * 7919 + c.seq_q * 104729 + c.seq_k * 13 + c.spec.size()));
  Call call = make_call(spec, c.batch, c.seq_q, c.seq_k, c.padded, rng);
  const int seq_k = spec.form == attn::Form::core ? c.seq_k : c.seq_q;
  add_runtime_inputs(spec, call, c.batch, c.seq_q, seq_k, c.padded, MaskShape::b_one_sq_sk, rng);
  if (c.scale) give_scale(call, *c.scale, c.rank0);
  return call;
}

struct Sizes {
  int batch, seq_q, seq_k;
  bool padded;
};
// Odd lengths; Sq 1 and 8 take the split-keys core, 9 and up the tiled ones.
constexpr Sizes sizes[] = {
    {2, 13, 29, false}, {1, 1, 300, true}, {3, 8, 8, false}, {1, 37, 70, true}, {2, 9, 257, false}};
// Negative and zero scales are valid (uniform attention at 0); 3 pushes scores into the softcap.
constexpr float scales[] = {0.37f, -0.8f, 0.0f, 3.0f};

TEST_CASE("runtime scale: the suite's list and the linked kernels agree") {
  check_spec_list(spec_list_drift(api_gaps_specs()), "tests/kernels/api_gaps_specs.h");
}

TEST_CASE("runtime scale: the kernel declares an optional rank-0 f32 input defaulting to the spec's scale") {
  for (const char *text : runtime_scale_specs) {
    CAPTURE(text);
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    bool found = false;
    for (int i = 0; i < attn_kernel_arg_count(kernel); ++i) {
      attn_arg_info info{};
      REQUIRE(attn_kernel_arg(kernel, i, &info) == ATTN_OK);
      if (std::string(info.name) != "scale") {
        CHECK(info.is_optional == 0);
        continue;
      }
      found = true;
      CHECK(info.is_optional == 1);
      CHECK(info.rank == 0);
      CHECK(info.dtype == ATTN_F32);
      CHECK(info.is_output == 0);
      CHECK(static_cast<float>(info.default_value) == spec.scale);
    }
    CHECK(found);
  }
}

TEST_CASE("runtime scale: given or left out, against the fp64 reference") {
  int n = 0;
  for (const char *text : runtime_scale_specs) {
    const bool core = parse(text).form == attn::Form::core;
    for (const Sizes &s : sizes_to_run(sizes)) {
      const int seq_k = core ? s.seq_k : s.seq_q;
      check_case(ScaleCase{text, s.batch, s.seq_q, seq_k, s.padded, std::nullopt, false});
      for (float scale : scales)
        check_case(ScaleCase{text, s.batch, s.seq_q, seq_k, s.padded, scale, ++n % 2 == 0});
    }
  }
  CHECK(n >= 3 * static_cast<int>(sizes_to_run(sizes).size() * std::size(scales)));
}

TEST_CASE("runtime scale: past the whole-row core's key limit (the block-core pipeline)") {
  // 16400 keys > whole_row_max_keys (2048): the whole-row spec's entry runs its block-core pipeline.
  const char *text = runtime_scale_specs[0];
  check_case(ScaleCase{text, 1, 11, 16400, false, std::nullopt, false});
  check_case(ScaleCase{text, 1, 11, 16400, false, -0.45f, true});
}

TEST_CASE("runtime scale: the spec's own scale given gives the same bits as leaving it out") {
  for (const char *text : runtime_scale_specs) {
    const attn::Spec spec = parse(text);
    if (spec.dtype != attn::DType::f32) continue;
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    for (const Sizes &s : sizes_to_run(sizes)) {
      const int seq_k = spec.form == attn::Form::core ? s.seq_k : s.seq_q;
      const ScaleCase left_out{text, s.batch, s.seq_q, seq_k, s.padded, std::nullopt, false};
      const ScaleCase given{text, s.batch, s.seq_q, seq_k, s.padded, spec.scale, true};
      CAPTURE(given);
      Call a = make_case_call(spec, left_out), b = make_case_call(spec, given);
      REQUIRE(a.run(kernel) == ATTN_OK);
      REQUIRE(b.run(kernel) == ATTN_OK);
      CHECK(differing_elements(a.tensors.at("out"), b.tensors.at("out")) == 0);
    }
  }
}

TEST_CASE("runtime scale: NaN and infinities are refused before anything is written") {
  const float refused[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()};
  for (const char *text : runtime_scale_specs) {
    const attn::Spec spec = parse(text);
    if (spec.dtype != attn::DType::f32) continue;
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    int n = 0;
    for (float scale : refused) {
      for (const Sizes &s : sizes_to_run(sizes)) {
        const int seq_k = spec.form == attn::Form::core ? s.seq_k : s.seq_q;
        const ScaleCase c{text, s.batch, s.seq_q, seq_k, s.padded, scale, ++n % 2 == 0};
        CAPTURE(c);
        Call call = make_case_call(spec, c);
        const attn_status status = call.run(kernel);
        CHECK(status_name(status) == status_name(ATTN_ERR_INVALID_VALUE));
        CHECK(last_error().find("scale must be a finite number") != std::string::npos);
        CHECK(call.tensors.at("out").all_padding());
        if (spec.lse) CHECK(call.tensors.at("lse").all_padding());
      }
    }
  }
}

TEST_CASE("runtime scale: a scale of the wrong shape, rank or dtype is refused by name") {
  const attn::Spec spec = parse(runtime_scale_specs[0]);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  const ScaleCase c{runtime_scale_specs[0], 2, 13, 29, false, std::nullopt, false};
  SUBCASE("two elements") {
    Call call = make_case_call(spec, c);
    call.tensors.emplace("scale", Tensor({2}, false, 0.5f));
    CHECK(status_name(call.run(kernel)) == status_name(ATTN_ERR_SHAPE));
    CHECK(last_error().find("tensor 'scale': dim 0 is 2, kernel expects 1 (a scalar)") != std::string::npos);
    CHECK(call.tensors.at("out").all_padding());
  }
  SUBCASE("rank 2") {
    Call call = make_case_call(spec, c);
    call.tensors.emplace("scale", Tensor({1, 1}, false, 0.5f));
    CHECK(status_name(call.run(kernel)) == status_name(ATTN_ERR_RANK));
    CHECK(last_error().find("tensor 'scale' has rank 2, kernel expects a scalar") != std::string::npos);
  }
  SUBCASE("i32") {
    Call call = make_case_call(spec, c);
    call.index_tensors.emplace("scale", IndexTensor({1}, false, 1));
    CHECK(status_name(call.run(kernel)) == status_name(ATTN_ERR_DTYPE));
    CHECK(last_error().find("tensor 'scale' has dtype i32, kernel expects f32") != std::string::npos);
  }
}

}  // namespace
