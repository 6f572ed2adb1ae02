// The OpenCL variant's device handling on PoCL: it is the variant chosen, its device scratch
// is released between calls without changing results, and a forced CPU has no variant to run.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

constexpr const char *spec_text = "heads=4 kv_heads=2 head_dim=64 mask=causal";

struct AutoDevice {
  ~AutoDevice() { attn_set_device(nullptr); }
};

Tensor run_once(const attn_kernel *kernel, attn_status *status) {
  std::mt19937 rng(11);
  Call call = make_core_call(parse(spec_text), 2, 70, 70, true, rng);
  *status = call.run(kernel);
  return call.tensors.at("out");
}

TEST_CASE("the OpenCL variant runs, and releasing its device scratch changes no result") {
  const attn_kernel *kernel = find_kernel(parse(spec_text));
  REQUIRE(kernel != nullptr);
  CHECK(std::string(attn_kernel_selected_target(kernel)).find("opencl") != std::string::npos);
  attn_status first_status = ATTN_OK, second_status = ATTN_OK;
  const Tensor first = run_once(kernel, &first_status);
  INFO(last_error());
  REQUIRE(first_status == ATTN_OK);
  CHECK(attn_kernel_release_memory(kernel) == ATTN_OK);
  const Tensor second = run_once(kernel, &second_status);
  REQUIRE(second_status == ATTN_OK);
  CHECK(differing_elements(first, second) == 0);
}

TEST_CASE("an OpenCL-only kernel forced onto the CPU returns ATTN_ERR_NO_DEVICE") {
  AutoDevice reset;
  const attn_kernel *kernel = find_kernel(parse(spec_text));
  REQUIRE(kernel != nullptr);
  REQUIRE(attn_set_device("cpu") == ATTN_OK);
  attn_status status = ATTN_OK;
  const Tensor out = run_once(kernel, &status);
  CHECK(status == ATTN_ERR_NO_DEVICE);
  CHECK(last_error().find("GPU variants only") != std::string::npos);
  CHECK(out.all_padding());
  REQUIRE(attn_set_device("opencl") == ATTN_OK);
  run_once(kernel, &status);
  CHECK(status == ATTN_OK);
}

}  // namespace
