// attn_run on real kernels: every bad call returns its status with a message and leaves the output
// untouched; built from each kernel's own argument declarations (bad_calls.h), so every tensor and dim
// is tried, at decode (split-keys core) and prefill sizes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "attn/runtime.h"
#include "bad_calls.h"
#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

void check_bad_calls(const std::string &spec_text) {
  CAPTURE(spec_text);
  const attn_kernel *kernel = find_kernel(parse(spec_text));
  REQUIRE(kernel != nullptr);

  SUBCASE("an output right after an input's last element is not an overlap") {
    BadCall call(kernel, decode_sizes());
    Arg &out = call.arg("out");
    const Arg &q = call.args.front();
    REQUIRE(out.dense_elements() * out.element_bytes() <= (3 * q.dense_elements() + 64) * q.element_bytes());
    out.data_of = q.name;
    out.data_offset_bytes = q.dense_elements() * q.element_bytes();
    const attn_status status = call.run(kernel);
    INFO(last_error());
    CHECK(status == ATTN_OK);
  }

  SUBCASE("each bad call returns its status, says why, and leaves the outputs untouched") {
    BadCallCounts counts;
    for (const DimSizes &sizes : {decode_sizes(), prefill_sizes()}) check_bad_calls(kernel, sizes, &counts);
    MESSAGE(counts.refused, " bad calls of ", spec_text);
  }
}

TEST_CASE("bad calls of a GQA core kernel") {
  check_bad_calls("heads=4 kv_heads=2 head_dim=64 mask=causal");
}
TEST_CASE("bad calls of a block kernel with separate weights and biases") {
  check_bad_calls("d_model=96 heads=3 head_dim_v=16 form=block qkv=separate proj_bias=true mask=none");
}
TEST_CASE("bad calls of a block kernel with fused weights") {
  check_bad_calls("d_model=128 heads=4 kv_heads=2 form=block qkv=fused proj_bias=true mask=causal");
}

TEST_CASE("bad handles and argument lists") {
  const attn_kernel *kernel = find_kernel(parse("heads=4 kv_heads=2 head_dim=64 mask=causal"));
  REQUIRE(kernel != nullptr);
  BadCall call(kernel, decode_sizes());
  const std::vector<std::vector<uint8_t>> before = call.written();
  std::vector<attn_arg> c_args;
  for (Arg &a : call.args)
    c_args.push_back(
        {a.name.c_str(), attn_tensor{a.storage.data(), a.dtype, static_cast<int32_t>(a.shape.size()),
                                     a.shape.data(), nullptr}});

  CHECK(attn_run(nullptr, c_args.data(), static_cast<int>(c_args.size())) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(!last_error().empty());
  CHECK(attn_run(kernel, nullptr, 4) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_run(kernel, c_args.data(), -1) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_run(kernel, c_args.data(), 0) == ATTN_ERR_MISSING_TENSOR);
  CHECK(attn_run(kernel, c_args.data(), 3) == ATTN_ERR_MISSING_TENSOR);  // out left off
  CHECK(last_error().find("'out'") != std::string::npos);
  CHECK(call.written() == before);
  CHECK(attn_run(kernel, c_args.data(), static_cast<int>(c_args.size())) == ATTN_OK);
}

TEST_CASE("an unknown kernel id is refused with a message naming it") {
  const attn_kernel *kernel = nullptr;
  CHECK(attn_find_kernel("attn_core_h7_kv7_d8_f32", &kernel) == ATTN_ERR_UNKNOWN_KERNEL);
  CHECK(kernel == nullptr);
  CHECK(last_error().find("attn_core_h7_kv7_d8_f32") != std::string::npos);
  CHECK(attn_find_kernel(nullptr, &kernel) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_find_kernel("attn_core_h2_kv2_d16_f32", nullptr) == ATTN_ERR_INVALID_ARGUMENT);
}

}  // namespace
