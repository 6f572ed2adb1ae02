// test_wrapper.cpp: the header-only C++ wrapper (attn/runtime.hpp) over the fake kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "attn/runtime.hpp"
#include "fake_kernel.h"

TEST_CASE("Kernel::find returns the kernel or the reason it is absent") {
  const attn::rt::Result<attn::rt::Kernel> found = attn::rt::Kernel::find("fake_core");
  REQUIRE(found.ok());
  CHECK(std::string(found->id()) == "fake_core");
  CHECK(found->args().size() == 4);
  CHECK(found->set_threads(-2).code() == ATTN_ERR_INVALID_ARGUMENT);

  const auto missing = attn::rt::Kernel::find("fake_absent");
  CHECK_FALSE(missing.ok());
  CHECK(missing.status().code() == ATTN_ERR_UNKNOWN_KERNEL);
  CHECK(std::string(missing.status().name()) == "ATTN_ERR_UNKNOWN_KERNEL");
  CHECK(missing.status().message().find("fake_absent") != std::string::npos);

  bool linked = false;
  for (const attn::rt::Kernel &kernel : attn::rt::Kernel::linked())
    linked = linked || std::string(kernel.id()) == "fake_core";
  CHECK(linked);
}

TEST_CASE("run takes named tensors") {
  fake::CoreCall call;
  const auto kernel = attn::rt::Kernel::find("fake_core");
  REQUIRE(kernel.ok());
  const attn::rt::Tensor q(call.q.data(), call.q_shape), k(call.k.data(), call.k_shape),
      v(call.v.data(), call.v_shape);
  attn::rt::Tensor out(call.out.data(), call.out_shape);
  CHECK(out.element_count() == static_cast<int64_t>(call.out.size()));

  const attn::rt::Status ok = attn::rt::run(*kernel, {{"q", q}, {"k", k}, {"v", v}, {"out", out}});
  CHECK(ok.ok());
  CHECK(call.out[0] == call.expected(0, 0, 0, 0));

  std::fill(call.out.begin(), call.out.end(), fake::CoreCall::sentinel);
  const attn::rt::Tensor short_v(call.v.data(), {call.batch, call.seq_k - 1, 1, fake::head_dim_v});
  const attn::rt::Status bad = attn::rt::run(*kernel, {{"q", q}, {"k", k}, {"v", short_v}, {"out", out}});
  CHECK(bad.code() == ATTN_ERR_SHAPE);
  CHECK(bad.message().find("'v'") != std::string::npos);
  CHECK(call.out_untouched());

  const std::vector<float> const_q(call.q.begin(), call.q.end());
  const attn::rt::Tensor from_const(const_q.data(), call.q_shape, {});
  CHECK(from_const.view().dtype == ATTN_F32);
  CHECK(from_const.view().strides == nullptr);
}
