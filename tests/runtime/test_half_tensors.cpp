// test_half_tensors.cpp: f16 and bf16 tensors reach a kernel as 16-bit Halide buffers with strides
// in elements, and a tensor of any other dtype is refused by name.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "attn/kernel_abi.h"
#include "attn/runtime.hpp"

namespace {

using attn::rt::bf16;
using attn::rt::f16;

// Hand-written tables standing in for a dtype=bf16 / dtype=f16 kernel, with the mixed argument
// types such a kernel has: x [B, S, 4] and out [B, S, 4] in the storage type, lengths [B] i32, lse
// [B, S] f32. run copies x's 16-bit patterns to out, addressing both through their Halide strides,
// and writes lse[b, s] = lengths[b], so the result shows where the runtime pointed each buffer.
constexpr int width = 4;

struct Seen {
  int runs = 0;
  uint8_t x_code = 0, x_bits = 0, out_code = 0, out_bits = 0, lse_code = 0, lse_bits = 0;
  int32_t x_stride[3] = {}, out_stride[3] = {};
};
Seen seen;

int run_copy(attn_call_context *, void **buffers) {
  const auto *x = static_cast<const halide_buffer_t *>(buffers[0]);
  const auto *lengths = static_cast<const halide_buffer_t *>(buffers[1]);
  const auto *out = static_cast<const halide_buffer_t *>(buffers[2]);
  const auto *lse = static_cast<const halide_buffer_t *>(buffers[3]);
  seen.runs++;
  seen.x_code = x->type.code;
  seen.x_bits = x->type.bits;
  seen.out_code = out->type.code;
  seen.out_bits = out->type.bits;
  seen.lse_code = lse->type.code;
  seen.lse_bits = lse->type.bits;
  for (int d = 0; d < 3; ++d) {
    seen.x_stride[d] = x->dim[d].stride;
    seen.out_stride[d] = out->dim[d].stride;
  }
  const auto *x_bits = reinterpret_cast<const uint16_t *>(x->host);
  auto *out_bits = reinterpret_cast<uint16_t *>(out->host);
  for (int32_t b = 0; b < out->dim[2].extent; ++b) {
    for (int32_t s = 0; s < out->dim[1].extent; ++s) {
      for (int32_t e = 0; e < out->dim[0].extent; ++e) {
        out_bits[e * out->dim[0].stride + s * out->dim[1].stride + b * out->dim[2].stride] =
            x_bits[e * x->dim[0].stride + s * x->dim[1].stride + b * x->dim[2].stride];
      }
      reinterpret_cast<float *>(lse->host)[s * lse->dim[0].stride + b * lse->dim[1].stride] =
          static_cast<float>(reinterpret_cast<const int32_t *>(lengths->host)[b * lengths->dim[0].stride]);
    }
  }
  return 0;
}

void set_threads(int) {}

constexpr attn_arg_info bf16_args[] = {
    {"x", ATTN_BF16, 3, 0, {0, 0, width}, {"B", "S", "d_model"}},
    {"lengths", ATTN_I32, 1, 0, {0}, {"B"}},
    {"out", ATTN_BF16, 3, 1, {0, 0, width}, {"B", "S", "d_model"}},
    {"lse", ATTN_F32, 2, 1, {0, 0}, {"B", "S"}},
};
constexpr attn_arg_info f16_args[] = {
    {"x", ATTN_F16, 3, 0, {0, 0, width}, {"B", "S", "d_model"}},
    {"lengths", ATTN_I32, 1, 0, {0}, {"B"}},
    {"out", ATTN_F16, 3, 1, {0, 0, width}, {"B", "S", "d_model"}},
    {"lse", ATTN_F32, 2, 1, {0, 0}, {"B", "S"}},
};
const attn_kernel_desc bf16_kernel{ATTN_ABI_VERSION, "fake_copy_bf16", "dtype=bf16", "host", "", 4,
                                   bf16_args,        run_copy,         set_threads};
const attn_kernel_desc f16_kernel{ATTN_ABI_VERSION, "fake_copy_f16", "dtype=f16", "host", "", 4,
                                  f16_args,         run_copy,        set_threads};
const bool registered = (attn_register_kernel(&bf16_kernel), attn_register_kernel(&f16_kernel), true);

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

// One call with B 2, S 3: x holds distinct patterns, out a sentinel every refused call leaves.
struct HalfCall {
  static constexpr uint16_t sentinel = 0xDEAD;
  attn_dtype dtype;
  const attn_kernel *kernel = nullptr;
  std::vector<int64_t> x_shape{2, 3, width}, lengths_shape{2}, out_shape{2, 3, width}, lse_shape{2, 3};
  std::vector<uint16_t> x, out;
  std::vector<int32_t> lengths{7, 9};
  std::vector<float> lse;
  std::vector<attn_arg> args;

  explicit HalfCall(attn_dtype dtype_) : dtype(dtype_) {
    REQUIRE(registered);
    REQUIRE(attn_find_kernel(dtype == ATTN_BF16 ? "fake_copy_bf16" : "fake_copy_f16", &kernel) == ATTN_OK);
    x.resize(2 * 3 * width);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint16_t>(0x3C00 + i);
    out.assign(x.size(), sentinel);
    lse.assign(6, -1.0f);
    args = {{"x", {x.data(), dtype, 3, x_shape.data(), nullptr}},
            {"lengths", {lengths.data(), ATTN_I32, 1, lengths_shape.data(), nullptr}},
            {"out", {out.data(), dtype, 3, out_shape.data(), nullptr}},
            {"lse", {lse.data(), ATTN_F32, 2, lse_shape.data(), nullptr}}};
  }
  attn_status run() { return attn_run(kernel, args.data(), static_cast<int>(args.size())); }
  bool out_untouched() const {
    return std::all_of(out.begin(), out.end(), [](uint16_t v) { return v == sentinel; });
  }
};

}  // namespace

TEST_CASE("f16 and bf16 tensors reach the kernel as 16-bit Halide buffers") {
  for (const attn_dtype dtype : {ATTN_BF16, ATTN_F16}) {
    CAPTURE(dtype);
    HalfCall call(dtype);
    REQUIRE_MESSAGE(call.run() == ATTN_OK, attn_last_error());
    const uint8_t code = dtype == ATTN_BF16 ? halide_type_bfloat : halide_type_float;
    CHECK(seen.x_code == code);
    CHECK(seen.x_bits == 16);
    CHECK(seen.out_code == code);
    CHECK(seen.out_bits == 16);
    CHECK(seen.lse_code == halide_type_float);
    CHECK(seen.lse_bits == 32);
    // Strides count elements, not bytes, whatever the element size.
    CHECK(seen.out_stride[0] == 1);
    CHECK(seen.out_stride[1] == width);
    CHECK(seen.out_stride[2] == 3 * width);
    CHECK(call.out == call.x);
    CHECK(call.lse == std::vector<float>{7, 7, 7, 9, 9, 9});
  }
}

TEST_CASE("padded 16-bit tensors: strides in elements are read and written where they point") {
  HalfCall call(ATTN_BF16);
  // x with each row padded to 6 elements and out to 5; the padding must stay as it is.
  const int64_t x_strides[] = {3 * 6, 6, 1}, out_strides[] = {3 * 5, 5, 1};
  std::vector<uint16_t> padded_x(2 * 3 * 6, 0x7FC0), padded_out(2 * 3 * 5, HalfCall::sentinel);
  for (int b = 0; b < 2; ++b)
    for (int s = 0; s < 3; ++s)
      for (int e = 0; e < width; ++e) padded_x[b * 18 + s * 6 + e] = call.x[(b * 3 + s) * width + e];
  call.args[0].tensor.data = padded_x.data();
  call.args[0].tensor.strides = x_strides;
  call.args[2].tensor.data = padded_out.data();
  call.args[2].tensor.strides = out_strides;
  REQUIRE_MESSAGE(call.run() == ATTN_OK, attn_last_error());
  CHECK(seen.x_stride[1] == 6);
  CHECK(seen.out_stride[1] == 5);
  for (int b = 0; b < 2; ++b)
    for (int s = 0; s < 3; ++s)
      for (int e = 0; e < 5; ++e) {
        CAPTURE(b);
        CAPTURE(s);
        CAPTURE(e);
        const uint16_t got = padded_out[b * 15 + s * 5 + e];
        CHECK(got == (e < width ? call.x[(b * 3 + s) * width + e] : HalfCall::sentinel));
      }
}

TEST_CASE("a tensor of another dtype is refused by name, and out stays untouched") {
  struct Case {
    const char *what;
    attn_dtype kernel;
    int arg;
    attn_dtype given;
    const char *message;
  };
  const Case cases[] = {
      {"f32 for bf16", ATTN_BF16, 0, ATTN_F32, "tensor 'x' has dtype f32, kernel expects bf16"},
      {"f16 for bf16", ATTN_BF16, 0, ATTN_F16, "tensor 'x' has dtype f16, kernel expects bf16"},
      {"bf16 for f16", ATTN_F16, 0, ATTN_BF16, "tensor 'x' has dtype bf16, kernel expects f16"},
      {"f32 for an f16 out", ATTN_F16, 2, ATTN_F32, "tensor 'out' has dtype f32, kernel expects f16"},
      {"bf16 for the f32 lse", ATTN_BF16, 3, ATTN_BF16, "tensor 'lse' has dtype bf16, kernel expects f32"},
      {"f16 for i32 lengths", ATTN_F16, 1, ATTN_F16, "tensor 'lengths' has dtype f16, kernel expects i32"},
  };
  for (const Case &c : cases) {
    CAPTURE(c.what);
    HalfCall call(c.kernel);
    call.args[static_cast<size_t>(c.arg)].tensor.dtype = c.given;
    const int runs_before = seen.runs;
    CHECK(call.run() == ATTN_ERR_DTYPE);
    const std::string message = attn_last_error();
    CAPTURE(message);
    CHECK(contains(message, c.message));
    CHECK(call.out_untouched());
    CHECK(seen.runs == runs_before);
  }
}

TEST_CASE("the C++ wrapper passes attn::rt::bf16 and f16 vectors with their dtype") {
  const auto kernel = attn::rt::Kernel::find("fake_copy_bf16");
  REQUIRE(kernel.ok());
  std::vector<float> values(2 * 3 * width);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.1f * static_cast<float>(i);
  const std::vector<bf16> x = attn::rt::to_bf16(values);
  std::vector<bf16> out(x.size());
  std::vector<int32_t> lengths{1, 2};
  std::vector<float> lse(6);
  const attn::rt::Tensor x_tensor(x.data(), {2, 3, width}), lengths_tensor(lengths.data(), {2});
  attn::rt::Tensor out_tensor(out.data(), {2, 3, width}), lse_tensor(lse.data(), {2, 3});
  const attn::rt::Status ok = attn::rt::run(
      *kernel, {{"x", x_tensor}, {"lengths", lengths_tensor}, {"out", out_tensor}, {"lse", lse_tensor}});
  REQUIRE_MESSAGE(ok.ok(), ok.message());
  CHECK(out == x);
  CHECK(attn::rt::to_float(out)[5] == attn::rt::to_float(attn::rt::to_bf16(0.5f)));

  // A float buffer given where the kernel stores bf16: the named dtype error, not a reinterpretation.
  const attn::rt::Tensor x_as_f32(values.data(), {2, 3, width});
  const attn::rt::Status refused = attn::rt::run(
      *kernel, {{"x", x_as_f32}, {"lengths", lengths_tensor}, {"out", out_tensor}, {"lse", lse_tensor}});
  CHECK(refused.code() == ATTN_ERR_DTYPE);
  CHECK(contains(refused.message(), "tensor 'x' has dtype f32, kernel expects bf16"));

  const auto f16_kernel = attn::rt::Kernel::find("fake_copy_f16");
  REQUIRE(f16_kernel.ok());
  const std::vector<f16> x16 = attn::rt::to_f16(values);
  std::vector<f16> out16(x16.size());
  const attn::rt::Tensor x16_tensor(x16.data(), {2, 3, width});
  attn::rt::Tensor out16_tensor(out16.data(), {2, 3, width});
  const attn::rt::Status ok16 = attn::rt::run(
      *f16_kernel,
      {{"x", x16_tensor}, {"lengths", lengths_tensor}, {"out", out16_tensor}, {"lse", lse_tensor}});
  REQUIRE_MESSAGE(ok16.ok(), ok16.message());
  CHECK(out16 == x16);
}
