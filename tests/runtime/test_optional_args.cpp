// test_optional_args.cpp: optional scalar inputs (a run-time scale): given at rank 0 or as [1], or
// left out (the kernel reads the table's default), and the tables and calls the runtime refuses.
#include <doctest/doctest.h>

#include <iterator>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attn/kernel_abi.h"
#include "attn/runtime.hpp"

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

constexpr float default_scale = 0.5f;

// "fake_scaled": x f32 [4], scale f32 [] (optional, default 0.5) -> out f32 [4] = x * scale,
// read through the halide_buffer_t's alone; scale_dimensions records what the kernel got.
int scale_dimensions = -1;
int run_scaled(attn_call_context *, void **buffers) {
  auto *x = static_cast<halide_buffer_t *>(buffers[0]);
  auto *scale = static_cast<halide_buffer_t *>(buffers[1]);
  auto *out = static_cast<halide_buffer_t *>(buffers[2]);
  scale_dimensions = scale->dimensions;
  const float factor = *reinterpret_cast<const float *>(scale->host);
  for (int32_t e = 0; e < out->dim[0].extent; ++e) {
    reinterpret_cast<float *>(out->host)[e * out->dim[0].stride] =
        reinterpret_cast<const float *>(x->host)[e * x->dim[0].stride] * factor;
  }
  return 0;
}
void set_no_threads(int) {}

const attn_arg_info scaled_args[] = {
    {"x", ATTN_F32, 1, 0, {4}, {nullptr}, 0, 0, 0, 0.0},
    {"scale", ATTN_F32, 0, 0, {0}, {nullptr}, 0, 0, 1, default_scale},
    {"out", ATTN_F32, 1, 1, {4}, {nullptr}, 0, 0, 0, 0.0},
};
const attn_kernel_desc scaled = {ATTN_ABI_VERSION, "fake_scaled", "form=test",   "host", "", 3,
                                 scaled_args,      run_scaled,    set_no_threads};

struct ScaledCall {
  float x[4] = {1, -2, 3, 0.25f};
  float out[4] = {-7, -7, -7, -7};
  int64_t shape[1] = {4};
  std::vector<attn_arg> args = {{"x", {x, ATTN_F32, 1, shape, nullptr}},
                                {"out", {out, ATTN_F32, 1, shape, nullptr}}};

  attn_status run() {
    attn_register_kernel(&scaled);
    const attn_kernel *kernel = nullptr;
    REQUIRE(attn_find_kernel("fake_scaled", &kernel) == ATTN_OK);
    return attn_run(kernel, args.data(), static_cast<int>(args.size()));
  }
  bool out_is(float factor) const {
    for (int e = 0; e < 4; ++e)
      if (out[e] != x[e] * factor) return false;
    return true;
  }
  bool untouched() const { return out[0] == -7 && out[1] == -7 && out[2] == -7 && out[3] == -7; }
};

TEST_CASE("an optional input left out: the kernel reads its default") {
  ScaledCall call;
  REQUIRE_MESSAGE(call.run() == ATTN_OK, attn_last_error());
  CHECK(call.out_is(default_scale));
  CHECK(scale_dimensions == 0);
}

TEST_CASE("an optional input given at rank 0 or as one element") {
  ScaledCall call;
  float scale = -1.25f;
  int64_t one[1] = {1};
  SUBCASE("rank 0, shape and strides null") {
    call.args.push_back({"scale", {&scale, ATTN_F32, 0, nullptr, nullptr}});
  }
  SUBCASE("rank 1, shape [1]") {
    call.args.push_back({"scale", {&scale, ATTN_F32, 1, one, nullptr}});
  }
  SUBCASE("rank 1, shape [1], any stride") {
    int64_t stride[1] = {7};
    call.args.push_back({"scale", {&scale, ATTN_F32, 1, one, stride}});
  }
  REQUIRE_MESSAGE(call.run() == ATTN_OK, attn_last_error());
  CHECK(call.out_is(scale));
  CHECK(scale_dimensions == 0);
}

TEST_CASE("an optional input of the wrong shape, rank or dtype, or without data, is refused") {
  ScaledCall call;
  float values[2] = {1, 2};
  int32_t integer = 1;
  int64_t two[1] = {2}, one_one[2] = {1, 1};
  SUBCASE("two elements") {
    call.args.push_back({"scale", {values, ATTN_F32, 1, two, nullptr}});
    CHECK(call.run() == ATTN_ERR_SHAPE);
    CHECK(contains(attn_last_error(), "tensor 'scale': dim 0 is 2, kernel expects 1 (a scalar)"));
  }
  SUBCASE("rank 2") {
    call.args.push_back({"scale", {values, ATTN_F32, 2, one_one, nullptr}});
    CHECK(call.run() == ATTN_ERR_RANK);
    CHECK(contains(attn_last_error(),
                   "tensor 'scale' has rank 2, kernel expects a scalar: rank 0, or rank 1 of shape [1]"));
  }
  SUBCASE("rank 1 with a null shape") {
    call.args.push_back({"scale", {values, ATTN_F32, 1, nullptr, nullptr}});
    CHECK(call.run() == ATTN_ERR_RANK);
  }
  SUBCASE("i32") {
    call.args.push_back({"scale", {&integer, ATTN_I32, 0, nullptr, nullptr}});
    CHECK(call.run() == ATTN_ERR_DTYPE);
  }
  SUBCASE("null data: an error, not a silent default") {
    call.args.push_back({"scale", {nullptr, ATTN_F32, 0, nullptr, nullptr}});
    CHECK(call.run() == ATTN_ERR_NULL_DATA);
  }
  SUBCASE("given twice") {
    call.args.push_back({"scale", {values, ATTN_F32, 0, nullptr, nullptr}});
    call.args.push_back({"scale", {values, ATTN_F32, 0, nullptr, nullptr}});
    CHECK(call.run() == ATTN_ERR_UNKNOWN_TENSOR);
  }
  CHECK(call.untouched());
}

TEST_CASE("a required input is still required; the message marks the optional ones") {
  ScaledCall call;
  call.args.erase(call.args.begin());  // x
  CHECK(call.run() == ATTN_ERR_MISSING_TENSOR);
  CHECK(contains(attn_last_error(),
                 "tensor 'x' is missing (kernel 'fake_scaled' takes x, scale (optional), out)"));
  CHECK(call.untouched());
}

TEST_CASE("the C++ wrapper leaves an optional input out or gives it at rank 0") {
  attn_register_kernel(&scaled);
  const auto kernel = attn::rt::Kernel::find("fake_scaled");
  REQUIRE(kernel.ok());
  CHECK(kernel->args()[1].is_optional == 1);
  CHECK(kernel->args()[1].default_value == doctest::Approx(default_scale));
  float x[4] = {1, 2, 3, 4}, out[4] = {}, scale = 3.0f;
  const attn::rt::Tensor xt(x, {4}), st(&scale, {});
  attn::rt::Tensor ot(out, {4});
  CHECK(attn::rt::run(*kernel, {{"x", xt}, {"out", ot}}).ok());
  CHECK(out[3] == 4 * default_scale);
  CHECK(attn::rt::run(*kernel, {{"x", xt}, {"scale", st}, {"out", ot}}).ok());
  CHECK(out[3] == 12.0f);
}

TEST_CASE("tables whose optional or rank-0 arguments cannot work are refused") {
  struct Broken {
    const char *id;
    attn_arg_info arg;
    const char *why;
  };
  static const Broken broken[] = {
      {"fake_optional_rank_1",
       {"s", ATTN_F32, 1, 0, {1}, {nullptr}, 0, 0, 1, 1.0},
       "is optional but not a rank-0 f32 input"},
      {"fake_optional_i32",
       {"s", ATTN_I32, 0, 0, {0}, {nullptr}, 0, 0, 1, 1.0},
       "is optional but not a rank-0 f32 input"},
      {"fake_optional_output",
       {"s", ATTN_F32, 0, 1, {0}, {nullptr}, 0, 0, 1, 1.0},
       "is optional but not a rank-0 f32 input"},
      {"fake_rank_0_output", {"s", ATTN_F32, 0, 1, {0}, {nullptr}, 0, 0, 0, 0.0}, "is a rank-0 output"},
      {"fake_negative_rank", {"s", ATTN_F32, -1, 0, {0}, {nullptr}, 0, 0, 0, 0.0}, "valid ranks are 0.."},
  };
  static attn_kernel_desc descs[std::size(broken)];  // tables live as long as the registry
  for (size_t i = 0; i < std::size(broken); ++i) {
    const Broken &b = broken[i];
    CAPTURE(b.id);
    descs[i] = scaled;
    descs[i].id = b.id;
    descs[i].arg_count = 1;
    descs[i].args = &b.arg;
    attn_register_kernel(&descs[i]);
    const attn_kernel *kernel = nullptr;
    CHECK(attn_find_kernel(b.id, &kernel) == ATTN_ERR_ABI_MISMATCH);
    CHECK(contains(attn_last_error(), b.why));
  }
}

}  // namespace
