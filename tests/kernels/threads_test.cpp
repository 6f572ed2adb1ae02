// The thread count changes how work is split, not the result: 1 and 2 threads agree bit for bit.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

// Runs the same call with 1 and then 2 threads; both outputs must pass the reference.
void check_thread_counts(const std::string &spec_text, int batch, int seq_q, int seq_k) {
  CAPTURE(spec_text);
  const attn::Spec spec = parse(spec_text);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(12345);
  Call call = spec.form == attn::Form::core ? make_core_call(spec, batch, seq_q, seq_k, false, rng)
                                            : make_block_call(spec, batch, seq_q, false, rng);
  const Expected expected = expected_result(spec, call);

  REQUIRE(attn_kernel_set_threads(kernel, 1) == ATTN_OK);
  REQUIRE(call.run(kernel) == ATTN_OK);
  const Tensor one_thread = call.tensors.at("out");
  CHECK(compare(one_thread, expected).pass());

  REQUIRE(attn_kernel_set_threads(kernel, 2) == ATTN_OK);
  call.tensors.at("out").fill(-777.0f);
  REQUIRE(call.run(kernel) == ATTN_OK);
  const Tensor &two_threads = call.tensors.at("out");
  const Comparison result = compare(two_threads, expected);
  CAPTURE(result);
  CHECK(result.pass());

  const int64_t differing = differing_elements(one_thread, two_threads);
  CHECK_MESSAGE(differing == 0, differing, " elements differ between 1 and 2 threads");
  REQUIRE(attn_kernel_set_threads(kernel, 0) == ATTN_OK);  // back to one per core
}

TEST_CASE("1 and 2 threads give the same output") {
  check_thread_counts("heads=4 kv_heads=2 head_dim=64 mask=causal", 2, 300, 300);
  check_thread_counts("heads=2 head_dim=16 mask=none", 3, 129, 1000);
  check_thread_counts("d_model=128 heads=4 kv_heads=2 form=block qkv=fused proj_bias=true mask=causal", 2,
                      300, 300);
}

TEST_CASE("a negative thread count is refused") {
  const attn_kernel *kernel = find_kernel(parse("heads=2 head_dim=16 mask=none"));
  REQUIRE(kernel != nullptr);
  CHECK(attn_kernel_set_threads(kernel, -1) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(last_error().find("-1") != std::string::npos);
  CHECK(attn_kernel_set_threads(nullptr, 1) == ATTN_ERR_INVALID_ARGUMENT);
}

}  // namespace
