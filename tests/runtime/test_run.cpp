// test_run.cpp: successful runs see the right Halide buffers; kernel failures and thread settings.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "fake_kernel.h"

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

void check_out(const fake::CoreCall &call) {
  for (int64_t b = 0; b < call.batch; ++b) {
    for (int64_t s = 0; s < call.seq_q; ++s) {
      for (int64_t h = 0; h < fake::heads; ++h) {
        for (int64_t e = 0; e < fake::head_dim_v; ++e) {
          CAPTURE(b);
          CAPTURE(s);
          CAPTURE(h);
          CAPTURE(e);
          const size_t i =
              static_cast<size_t>(((b * call.seq_q + s) * fake::heads + h) * fake::head_dim_v + e);
          CHECK(call.out[i] == call.expected(b, s, h, e));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("a contiguous call reaches the kernel as Halide buffers, innermost dim first") {
  fake::CoreCall call;
  REQUIRE(call.run() == ATTN_OK);
  const fake::Observed &seen = fake::observed;
  CHECK(seen.dimensions == 4);
  CHECK(seen.extent[0] == fake::head_dim_v);
  CHECK(seen.extent[1] == fake::heads);
  CHECK(seen.extent[2] == call.seq_q);
  CHECK(seen.extent[3] == call.batch);
  CHECK(seen.stride[0] == 1);
  CHECK(seen.stride[1] == fake::head_dim_v);
  CHECK(seen.stride[2] == fake::heads * fake::head_dim_v);
  CHECK(seen.stride[3] == call.seq_q * fake::heads * fake::head_dim_v);
  CHECK(seen.type_code == 2);  // halide_type_float
  CHECK(seen.type_bits == 32);
  CHECK(seen.type_lanes == 1);
  CHECK(seen.host == call.out.data());
  check_out(call);
}

TEST_CASE("padded outer strides are read and written where they point") {
  fake::CoreCall call;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // q with each head padded to 5 floats and each row to 12: the padding holds NaN, so any read
  // of it would show in out.
  const int64_t q_strides[] = {call.seq_q * 12, 12, 5, 1};
  std::vector<float> padded_q(static_cast<size_t>(call.batch * call.seq_q * 12), nan);
  for (int64_t b = 0; b < call.batch; ++b)
    for (int64_t s = 0; s < call.seq_q; ++s)
      for (int64_t h = 0; h < fake::heads; ++h)
        for (int64_t e = 0; e < fake::head_dim; ++e)
          padded_q[static_cast<size_t>(b * q_strides[0] + s * 12 + h * 5 + e)] =
              call.q[static_cast<size_t>(((b * call.seq_q + s) * fake::heads + h) * fake::head_dim + e)];
  call.args[0].tensor.data = padded_q.data();
  call.args[0].tensor.strides = q_strides;

  SUBCASE("into a contiguous out") {
    REQUIRE(call.run() == ATTN_OK);
    check_out(call);
  }
  SUBCASE("into a padded out, leaving its padding alone") {
    const int64_t out_strides[] = {call.seq_q * 8, 8, 4, 1};
    std::vector<float> padded_out(static_cast<size_t>(call.batch * call.seq_q * 8), fake::CoreCall::sentinel);
    call.args[3].tensor.data = padded_out.data();
    call.args[3].tensor.strides = out_strides;
    REQUIRE(call.run() == ATTN_OK);
    CHECK(fake::observed.stride[1] == 4);
    CHECK(fake::observed.stride[2] == 8);
    for (int64_t b = 0; b < call.batch; ++b)
      for (int64_t s = 0; s < call.seq_q; ++s)
        for (int64_t h = 0; h < fake::heads; ++h)
          for (int64_t e = 0; e < 4; ++e) {
            const float got = padded_out[static_cast<size_t>(b * out_strides[0] + s * 8 + h * 4 + e)];
            if (e < fake::head_dim_v)
              CHECK(got == call.expected(b, s, h, e));
            else
              CHECK(got == fake::CoreCall::sentinel);
          }
  }
  SUBCASE("with k broadcast over the batch (stride 0 is fine for inputs)") {
    const int64_t k_strides[] = {0, fake::head_dim, fake::head_dim, 1};
    call.args[1].tensor.strides = k_strides;
    REQUIRE(call.run() == ATTN_OK);
    // batch 1 reads batch 0's k: the expected value for b = 1 uses k[0, 0, 0, 3].
    const float k_term_batch0 = 100 * call.k[3],
                k_term_batch1 = 100 * call.k[static_cast<size_t>(call.seq_k * 4 + 3)];
    const size_t first_of_batch1 = static_cast<size_t>(call.seq_q * fake::heads * fake::head_dim_v);
    CHECK(call.out[first_of_batch1] == call.expected(1, 0, 0, 0) - k_term_batch1 + k_term_batch0);
  }
}

TEST_CASE("a kernel that reports an error fails the call with its message") {
  fake::CoreCall call;
  CHECK(call.run(fake::failing) == ATTN_ERR_KERNEL_FAILED);
  CHECK(contains(attn_last_error(), "fake kernel ran out of memory"));
  CHECK(contains(attn_last_error(), "fake_failing"));
  CHECK(call.run(fake::silent_failure) == ATTN_ERR_KERNEL_FAILED);
  CHECK(contains(attn_last_error(), "kernel returned Halide error -3"));
}

TEST_CASE("threads") {
  const attn_kernel *kernel = fake::find("fake_core");
  REQUIRE(kernel != nullptr);
  CHECK(attn_kernel_set_threads(kernel, 4) == ATTN_OK);
  CHECK(fake::observed.threads == 4);
  CHECK(attn_kernel_set_threads(kernel, 0) == ATTN_OK);
  CHECK(fake::observed.threads == 0);
  CHECK(attn_kernel_set_threads(kernel, -1) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(contains(attn_last_error(), "threads is -1"));
  CHECK(fake::observed.threads == 0);
  CHECK(attn_kernel_set_threads(nullptr, 2) == ATTN_ERR_INVALID_ARGUMENT);
  // Issue 32: past Halide's pool limit is refused, not clamped (2^31 - 1 started 256 threads).
  CHECK(attn_kernel_set_threads(kernel, ATTN_MAX_THREADS) == ATTN_OK);
  CHECK(fake::observed.threads == 256);
  for (int threads : {ATTN_MAX_THREADS + 1, 2147483647}) {
    CAPTURE(threads);
    CHECK(attn_kernel_set_threads(kernel, threads) == ATTN_ERR_INVALID_ARGUMENT);
    CHECK(contains(attn_last_error(), "must be 0 (one per core) to 256"));
    CHECK(fake::observed.threads == 256);
  }
  CHECK(attn_kernel_set_threads(kernel, 0) == ATTN_OK);
}
