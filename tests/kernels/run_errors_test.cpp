// attn_run on real kernels: every bad call returns its status with a message and leaves the output
// untouched; built from each kernel's own argument declarations, so every tensor and dim is tried.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/runtime.h"
#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

constexpr float output_sentinel = -777.0f;

// Runtime sizes, all different so that a mix-up of two of them is a shape error.
const std::map<std::string, int64_t> runtime_sizes = {{"B", 2}, {"Sq", 5}, {"Sk", 7}, {"S", 6}};

// One argument of a call, with storage to spare (4x) so that no bad variant can reach past it.
struct Arg {
  std::string name;
  attn_dtype dtype = ATTN_F32;
  bool is_output = false;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // empty: pass null (row-major)
  std::vector<float> storage;
  bool null_data = false;
  bool null_name = false;
  std::vector<std::string> dim_labels;  // "dim 1 (Sq)", "dim 3 (64)"
  std::string data_of;                  // non-empty: data points into that argument's storage
  int64_t data_offset = 0;              // elements past the start of data_of's storage

  int64_t dense_elements() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }
};

// A valid call of a kernel, to be spoiled one way at a time.
struct BadCall {
  std::vector<Arg> args;
  std::vector<Arg> extra;  // arguments the kernel does not declare

  explicit BadCall(const attn_kernel *kernel) {
    for (int i = 0; i < attn_kernel_arg_count(kernel); ++i) {
      attn_arg_info info{};
      REQUIRE(attn_kernel_arg(kernel, i, &info) == ATTN_OK);
      Arg a;
      a.name = info.name;
      a.dtype = info.dtype;
      a.is_output = info.is_output != 0;
      for (int d = 0; d < info.rank; ++d) {
        const bool fixed = info.fixed_shape[d] > 0;
        a.shape.push_back(fixed ? info.fixed_shape[d] : runtime_sizes.at(info.dim_names[d]));
        a.dim_labels.push_back(
            "dim " + std::to_string(d) + " (" +
            (fixed ? std::to_string(info.fixed_shape[d]) : std::string(info.dim_names[d])) + ")");
      }
      a.storage.resize(static_cast<size_t>(4 * a.dense_elements() + 64));
      for (size_t n = 0; n < a.storage.size(); ++n)
        a.storage[n] = a.is_output ? output_sentinel : 0.001f * static_cast<float>(n % 97);
      args.push_back(std::move(a));
    }
  }

  Arg &arg(const std::string &name) {
    for (Arg &a : args)
      if (a.name == name) return a;
    FAIL("no argument ", name);
    return args.front();
  }

  attn_status run(const attn_kernel *kernel) {
    std::vector<attn_arg> c_args;
    for (std::vector<Arg> *list : {&args, &extra})
      for (Arg &a : *list) {
        float *data = a.data_of.empty() ? a.storage.data() : arg(a.data_of).storage.data() + a.data_offset;
        attn_tensor t{a.null_data ? nullptr : data, a.dtype, static_cast<int32_t>(a.shape.size()),
                      a.shape.empty() ? nullptr : a.shape.data(),
                      a.strides.empty() ? nullptr : a.strides.data()};
        c_args.push_back(attn_arg{a.null_name ? nullptr : a.name.c_str(), t});
      }
    return attn_run(kernel, c_args.data(), static_cast<int>(c_args.size()));
  }

  // Every output element, spare storage included, still the sentinel.
  bool outputs_untouched() const {
    for (const Arg &a : args) {
      if (!a.is_output) continue;
      for (float x : a.storage)
        if (std::memcmp(&x, &output_sentinel, sizeof x) != 0) return false;
    }
    return true;
  }
};

struct BadVariant {
  std::string what;
  std::function<void(BadCall &)> spoil;
  attn_status expected;
  std::string message_names;  // a part the message must contain ("" for none)
};

std::vector<int64_t> dense_strides(const std::vector<int64_t> &shape, int64_t inner) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = inner;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

// Every way to spoil one tensor of the call, then the call-wide ones.
std::vector<BadVariant> bad_variants(const BadCall &good) {
  std::vector<BadVariant> v;
  for (const Arg &a : good.args) {
    const std::string n = a.name, quoted = "'" + a.name + "'";
    const int rank = static_cast<int>(a.shape.size());
    v.push_back(
        {n + ": null data", [n](BadCall &c) { c.arg(n).null_data = true; }, ATTN_ERR_NULL_DATA, quoted});
    v.push_back({n + ": dtype f16", [n](BadCall &c) { c.arg(n).dtype = ATTN_F16; }, ATTN_ERR_DTYPE, quoted});
    v.push_back({n + ": dtype i32", [n](BadCall &c) { c.arg(n).dtype = ATTN_I32; }, ATTN_ERR_DTYPE, quoted});
    v.push_back({n + ": rank one less", [n](BadCall &c) { c.arg(n).shape.erase(c.arg(n).shape.begin()); },
                 ATTN_ERR_RANK, quoted});
    v.push_back(
        {n + ": rank one more", [n](BadCall &c) { c.arg(n).shape.push_back(1); }, ATTN_ERR_RANK, quoted});
    v.push_back({n + ": rank 0", [n](BadCall &c) { c.arg(n).shape.clear(); }, ATTN_ERR_RANK, quoted});
    v.push_back({n + ": rank 9", [n](BadCall &c) { c.arg(n).shape.assign(9, 1); }, ATTN_ERR_RANK, quoted});
    for (int d = 0; d < rank; ++d) {
      const std::string dim = n + " " + a.dim_labels[d];
      // A runtime size off by one disagrees with another tensor's; a fixed one with the spec.
      v.push_back({dim + " one larger", [n, d](BadCall &c) { ++c.arg(n).shape[d]; }, ATTN_ERR_SHAPE, ""});
      if (a.shape[d] > 1)
        v.push_back({dim + " one smaller", [n, d](BadCall &c) { --c.arg(n).shape[d]; }, ATTN_ERR_SHAPE, ""});
      v.push_back({dim + " zero", [n, d](BadCall &c) { c.arg(n).shape[d] = 0; }, ATTN_ERR_SHAPE, quoted});
      v.push_back(
          {dim + " negative", [n, d](BadCall &c) { c.arg(n).shape[d] = -3; }, ATTN_ERR_SHAPE, quoted});
    }
    v.push_back({n + ": innermost stride 2",
                 [n](BadCall &c) { c.arg(n).strides = dense_strides(c.arg(n).shape, 2); }, ATTN_ERR_STRIDE,
                 quoted});
    v.push_back({n + ": innermost stride 0",
                 [n](BadCall &c) {
                   c.arg(n).strides = dense_strides(c.arg(n).shape, 1);
                   c.arg(n).strides.back() = 0;
                 },
                 ATTN_ERR_STRIDE, quoted});
    v.push_back({n + ": negative outer stride",
                 [n](BadCall &c) {
                   c.arg(n).strides = dense_strides(c.arg(n).shape, 1);
                   c.arg(n).strides.front() = -c.arg(n).strides.front();
                 },
                 ATTN_ERR_STRIDE, quoted});
    v.push_back({n + ": missing",
                 [n](BadCall &c) {
                   for (auto it = c.args.begin(); it != c.args.end(); ++it)
                     if (it->name == n) {
                       c.args.erase(it);
                       break;
                     }
                 },
                 ATTN_ERR_MISSING_TENSOR, quoted});
    v.push_back({n + ": given twice", [n](BadCall &c) { c.extra.push_back(c.arg(n)); },
                 ATTN_ERR_UNKNOWN_TENSOR, quoted});
  }
  v.push_back({"unknown tensor 'bias'",
               [](BadCall &c) {
                 c.extra.push_back(c.args.front());
                 c.extra.back().name = "bias";
               },
               ATTN_ERR_UNKNOWN_TENSOR, "'bias'"});
  v.push_back({"a tensor with a null name", [](BadCall &c) { c.args.front().null_name = true; },
               ATTN_ERR_UNKNOWN_TENSOR, ""});
  // Issue 32: an output or in-out sharing memory with any other tensor (out given as q, ...).
  for (const Arg &w : good.args) {
    if (!w.is_output) continue;
    for (const Arg &o : good.args) {
      if (o.name == w.name) continue;
      const std::string wn = w.name, on = o.name;
      // (A written tensor larger than on's storage may reach into another tensor's first: the
      // message names the first overlap in argument order.)
      v.push_back({wn + " at " + on + "'s address", [wn, on](BadCall &c) { c.arg(wn).data_of = on; },
                   ATTN_ERR_ALIASED, "'" + wn + "' shares memory with tensor '"});
      // Only the last element of o under the first of w: still an overlap.
      const int64_t last = o.dense_elements() - 1;
      v.push_back({wn + " from " + on + "'s last element",
                   [wn, on, last](BadCall &c) {
                     c.arg(wn).data_of = on;
                     c.arg(wn).data_offset = last;
                   },
                   ATTN_ERR_ALIASED, "'" + wn + "'"});
    }
  }
  v.push_back({"out overlaps itself: its second-innermost stride is half the innermost size",
               [](BadCall &c) {
                 Arg &out = c.arg("out");
                 out.strides = dense_strides(out.shape, 1);
                 out.strides[out.shape.size() - 2] = out.shape.back() / 2;
               },
               ATTN_ERR_STRIDE, "'out'"});
  v.push_back({"out overlaps itself: every outer stride 0",
               [](BadCall &c) {
                 Arg &out = c.arg("out");
                 out.strides.assign(out.shape.size(), 0);
                 out.strides.back() = 1;
               },
               ATTN_ERR_STRIDE, "'out'"});
  return v;
}

void check_bad_calls(const std::string &spec_text) {
  CAPTURE(spec_text);
  const attn_kernel *kernel = find_kernel(parse(spec_text));
  REQUIRE(kernel != nullptr);

  SUBCASE("the unspoiled call runs and writes every output element") {
    BadCall good(kernel);
    const attn_status status = good.run(kernel);
    INFO(last_error());
    REQUIRE(status == ATTN_OK);
    const Arg &out = good.arg("out");
    int64_t unwritten = 0;
    for (int64_t n = 0; n < out.dense_elements(); ++n)
      unwritten += out.storage[static_cast<size_t>(n)] == output_sentinel;
    CHECK(unwritten == 0);
    for (size_t n = static_cast<size_t>(out.dense_elements()); n < out.storage.size(); ++n)
      REQUIRE(out.storage[n] == output_sentinel);
  }

  SUBCASE("an output right after an input's last element is not an overlap") {
    BadCall call(kernel);
    Arg &out = call.arg("out");
    const Arg &q = call.arg(call.args.front().name);
    REQUIRE(out.dense_elements() <= 3 * q.dense_elements() + 64);  // within q's spare storage
    out.data_of = q.name;
    out.data_offset = q.dense_elements();
    const attn_status status = call.run(kernel);
    INFO(last_error());
    CHECK(status == ATTN_OK);
  }

  SUBCASE("each bad call returns its status, says why, and leaves the output untouched") {
    const std::vector<BadVariant> variants = bad_variants(BadCall(kernel));
    for (const BadVariant &variant : variants) {
      CAPTURE(variant.what);
      BadCall call(kernel);
      variant.spoil(call);
      const attn_status status = call.run(kernel);
      const std::string message = last_error();
      CAPTURE(message);
      CHECK_MESSAGE(status == variant.expected, "got ", status_name(status), ", expected ",
                    status_name(variant.expected));
      CHECK(!message.empty());
      if (!variant.message_names.empty()) CHECK(message.find(variant.message_names) != std::string::npos);
      CHECK(call.outputs_untouched());
    }
    MESSAGE(variants.size(), " bad calls of ", spec_text);
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
  BadCall call(kernel);
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
  CHECK(call.outputs_untouched());
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
