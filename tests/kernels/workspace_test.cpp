// Kernels keep their large scratch blocks between calls: a call that reuses another's blocks, or
// runs after attn_kernel_release_memory, still matches the reference bit for bit.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>

#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

struct Shape {
  int batch, seq_q, seq_k;
};

int64_t differing_elements(const Tensor &a, const Tensor &b) {
  int64_t differing = 0;
  for (int64_t n = 0; n < a.elements(); ++n) {
    const float x = a.logical(n), y = b.logical(n);
    differing += std::memcmp(&x, &y, sizeof x) != 0;
  }
  return differing;
}

// Packed shapes (Sk >= 1024, B x heads >= 8): each task copies its head's keys and values into
// blocks of 64 KiB and more. The larger shape runs first so that the smaller reuses its blocks,
// holding another call's keys.
TEST_CASE("calls that reuse held scratch blocks, or run after a release, give the same output") {
  const attn::Spec spec = parse("heads=2 head_dim=16 mask=causal");
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  for (const Shape shape : {Shape{4, 97, 1500}, Shape{4, 150, 1100}, Shape{4, 300, 1031}}) {
    CAPTURE(shape.seq_k);
    std::mt19937 rng(static_cast<unsigned>(shape.seq_k));
    Call call = make_core_call(spec, shape.batch, shape.seq_q, shape.seq_k, false, rng);
    const Expected expected = expected_result(spec, call);

    REQUIRE(call.run(kernel) == ATTN_OK);
    const Tensor first = call.tensors.at("out");
    const Comparison result = compare(first, expected);
    CAPTURE(result);
    CHECK(result.pass());

    call.tensors.at("out").fill(-777.0f);
    REQUIRE(call.run(kernel) == ATTN_OK);
    CHECK(differing_elements(first, call.tensors.at("out")) == 0);

    REQUIRE(attn_kernel_release_memory(kernel) == ATTN_OK);
    call.tensors.at("out").fill(-777.0f);
    REQUIRE(call.run(kernel) == ATTN_OK);
    CHECK(differing_elements(first, call.tensors.at("out")) == 0);
  }
}

TEST_CASE("releasing memory needs a kernel") {
  CHECK(attn_kernel_release_memory(nullptr) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(last_error().find("null") != std::string::npos);
}

}  // namespace
