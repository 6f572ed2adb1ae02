// Device tensors on the OpenCL variant (PoCL): OpenCL buffers of the application's own context
// passed without copies, alone or mixed with host tensors (index and mask tensors read back to the
// host), against the fp64 reference and bitwise against the host-tensor run; and every way a call's device
// tensors can be wrong, refused with ATTN_ERR_DEVICE_TENSOR before anything is written. Every kernel here
// runs in one context, the test's, set before the first OpenCL call (Halide keeps each kernel's program in
// the context of its first call: the runtime holds a process to that one).
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "device_call.h"
#include "kernel_test_support.h"
#include "opencl_app.h"

namespace {

using namespace attnc::test;

constexpr const char *core_spec = "heads=4 kv_heads=2 head_dim=64 mask=causal";
constexpr const char *padded_spec = "heads=2 kv_heads=1 head_dim=32 mask=causal&padding lse=true";
// Index (segment ids) and mask (u8) tensors, which the pipelines read on the host.
constexpr const char *masked_spec = "heads=2 kv_heads=1 head_dim=16 mask=document&tensor";
constexpr const char *block_spec = "d_model=64 heads=2 form=block qkv=fused proj_bias=true mask=none";

// The application: one context for the whole test program, given to attnc before any kernel runs.
OpenClApp &app() { return process_app(); }

struct AutoDevice {
  ~AutoDevice() { attn_set_device(nullptr); }
};

using ClCall = DeviceCall<OpenClApp>;

Call core_call(const char *spec_text, int seed, int seq_q, int seq_k) {
  std::mt19937 rng(seed);
  const attn::Spec spec = parse(spec_text);
  Call call = make_core_call(spec, 2, seq_q, seq_k, /*padded=*/true, rng);
  add_runtime_inputs(spec, call, 2, seq_q, seq_k, true, MaskShape::sq_sk, rng);
  return call;
}

void check_against_reference(const char *spec_text, Call &call) {
  const attn::Spec spec = parse(spec_text);
  const Expected expected = expected_result(spec, call);
  const Comparison c = compare(call.tensors.at("out"), expected);
  CAPTURE(c);
  CHECK(c.pass());
  if (spec.lse) {
    const LseComparison l = compare_lse(call.tensors.at("lse"), expected);
    CAPTURE(l);
    CHECK(l.pass());
  }
}

TEST_CASE(
    "OpenCL buffers of the application's context run without copies, alone or mixed with host tensors") {
  app();  // before any kernel runs
  struct Case {
    const char *spec;
    std::set<std::string> on_device;
  };
  const std::vector<Case> cases = {
      {core_spec, {"q", "k", "v", "out"}},
      {core_spec, {"k", "out"}},
      {core_spec, {"q", "v"}},
      {padded_spec, {"q", "k", "v", "out", "lse"}},
      {padded_spec, {"out"}},
      // Index and mask tensors on the device: read back to the host before the kernel runs.
      {padded_spec, {"q", "key_lengths"}},
      {padded_spec, {"key_lengths"}},
      {masked_spec, {"q", "k", "v", "out", "segment_ids_q", "segment_ids_k", "mask"}},
      {masked_spec, {"mask", "segment_ids_k"}},
  };
  for (const Case &c : cases) {
    CAPTURE(c.spec);
    CAPTURE(std::vector<std::string>(c.on_device.begin(), c.on_device.end()));
    const attn_kernel *kernel = find_kernel(parse(c.spec));
    REQUIRE(kernel != nullptr);
    for (auto [seq_q, seq_k] : {std::pair{37, 37}, std::pair{5, 70}}) {
      CAPTURE(seq_q);
      CAPTURE(seq_k);
      Call host = core_call(c.spec, 3, seq_q, seq_k);
      Call device = core_call(c.spec, 3, seq_q, seq_k);
      REQUIRE(host.run(kernel) == ATTN_OK);
      ClCall run{app(), device, ATTN_OPENCL_BUFFER};
      const attn_status status = run.run(kernel, c.on_device);
      INFO(last_error());
      REQUIRE(status == ATTN_OK);
      check_against_reference(c.spec, device);
      for (const char *name : {"out", "lse"})
        if (device.tensors.count(name))
          CHECK(differing_elements(device.tensors.at(name), host.tensors.at(name)) == 0);
    }
  }
}

TEST_CASE("the block form takes its input, weights and output as OpenCL buffers") {
  const attn::Spec spec = parse(block_spec);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(5);
  Call call = make_block_call(spec, 2, 29, true, rng);
  std::set<std::string> all;
  for (auto &[name, t] : call.tensors) all.insert(name);
  ClCall run{app(), call, ATTN_OPENCL_BUFFER};
  const attn_status status = run.run(kernel, all);
  INFO(last_error());
  REQUIRE(status == ATTN_OK);
  const Comparison c = compare(call.tensors.at("out"), expected_result(spec, call));
  CAPTURE(c);
  CHECK(c.pass());
}

TEST_CASE("device tensors a call cannot take are refused before anything is written") {
  AutoDevice reset;
  OpenClApp &app = ::app();
  OpenClApp other;
  REQUIRE(other.ok());
  const attn_kernel *kernel = find_kernel(parse(core_spec));
  REQUIRE(kernel != nullptr);
  auto refused = [&](ClCall &run, const std::set<std::string> &on_device, attn_status want,
                     const char *says) {
    const attn_status status = run.run(kernel, on_device);
    CHECK(status_name(status) == status_name(want));
    CHECK_MESSAGE(last_error().find(says) != std::string::npos, last_error());
    CHECK(run.call.tensors.at("out").all_padding());
  };

  SUBCASE("buffers of a context other than the one kernels run in") {
    Call call = core_call(core_spec, 1, 9, 9);
    ClCall run{other, call, ATTN_OPENCL_BUFFER};
    refused(run, {"q", "out"}, ATTN_ERR_DEVICE_TENSOR, "another context");
  }
  SUBCASE("a buffer smaller than the tensor") {
    Call call = core_call(core_spec, 1, 9, 9);
    Tensor &v = call.tensors.at("v");
    void *small = app.upload(v.data(), span_bytes(v) / 2);
    REQUIRE(small != nullptr);
    std::vector<attn_arg> args;
    for (auto &[name, t] : call.tensors) args.push_back({name.c_str(), t.c_tensor()});
    for (attn_arg &a : args)
      if (std::strcmp(a.name, "v") == 0) {
        a.tensor.data = small;
        a.tensor.memory = ATTN_OPENCL_BUFFER;
      }
    CHECK(attn_run(kernel, args.data(), static_cast<int>(args.size())) == ATTN_ERR_DEVICE_TENSOR);
    CHECK_MESSAGE(last_error().find("last element ends at byte") != std::string::npos, last_error());
    CHECK(call.tensors.at("out").all_padding());
    app.release(small);
  }
  SUBCASE("a CUDA pointer for a kernel without a CUDA variant, two APIs in one call, an unknown memory") {
    Call call = core_call(core_spec, 1, 9, 9);
    ClCall cuda{app, call, ATTN_OPENCL_BUFFER, {{"q", ATTN_CUDA_DEVICE}}};
    refused(cuda, {"q"}, ATTN_ERR_DEVICE_TENSOR, "has no cuda variant");
    ClCall mixed{app, call, ATTN_OPENCL_BUFFER, {{"v", ATTN_CUDA_DEVICE}}};
    refused(mixed, {"k", "v"}, ATTN_ERR_DEVICE_TENSOR, "one call takes one GPU API");
    ClCall unknown{app, call, ATTN_OPENCL_BUFFER, {{"q", 7}}};
    refused(unknown, {"q"}, ATTN_ERR_DEVICE_TENSOR, "has memory 7");
  }
  SUBCASE("an index tensor in a buffer smaller than it, before it is read back") {
    const attn_kernel *padded = find_kernel(parse(padded_spec));
    REQUIRE(padded != nullptr);
    Call call = core_call(padded_spec, 1, 9, 9);
    IndexTensor &lengths = call.index_tensors.at("key_lengths");
    void *small = app.upload(lengths.data(), sizeof(int32_t));
    REQUIRE(small != nullptr);
    std::vector<attn_arg> args;
    for (auto &[name, t] : call.tensors) args.push_back({name.c_str(), t.c_tensor()});
    attn_tensor on_device = lengths.c_tensor();
    on_device.data = small;
    on_device.memory = ATTN_OPENCL_BUFFER;
    args.push_back({"key_lengths", on_device});
    CHECK(attn_run(padded, args.data(), static_cast<int>(args.size())) == ATTN_ERR_DEVICE_TENSOR);
    CHECK_MESSAGE(last_error().find("last element ends at byte") != std::string::npos, last_error());
    CHECK(call.tensors.at("out").all_padding());
    app.release(small);
  }
  SUBCASE("bad values in an index tensor read back from the device") {
    const attn_kernel *padded = find_kernel(parse(padded_spec));
    REQUIRE(padded != nullptr);
    Call call = core_call(padded_spec, 1, 9, 9);
    call.index_tensors.at("key_lengths").logical(0) = 10;  // > Sk
    ClCall run{app, call, ATTN_OPENCL_BUFFER};
    CHECK(run.run(padded, {"key_lengths"}) == ATTN_ERR_INVALID_VALUE);
    CHECK(call.tensors.at("out").all_padding());
  }
  SUBCASE("OpenCL buffers while the device is forced to the CPU") {
    REQUIRE(attn_set_device("cpu") == ATTN_OK);
    Call call = core_call(core_spec, 1, 9, 9);
    ClCall run{app, call, ATTN_OPENCL_BUFFER};
    refused(run, {"q"}, ATTN_ERR_DEVICE_TENSOR, "forced to cpu");
  }
}

TEST_CASE(
    "attn_set_opencl_context takes a context and a queue of it, and keeps the first context kernels ran in") {
  OpenClApp &app = ::app();
  OpenClApp other;
  REQUIRE(other.ok());
  CHECK(attn_set_opencl_context(app.context(), nullptr) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_set_opencl_context(nullptr, app.queue()) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_set_opencl_context(app.context(), other.queue()) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK_MESSAGE(last_error().find("is not a queue of context") != std::string::npos, last_error());
  // Host tensors run in the application's context too.
  const attn::Spec spec = parse(core_spec);
  Call call = core_call(core_spec, 2, 33, 33);
  REQUIRE(call.run(find_kernel(spec)) == ATTN_OK);
  check_against_reference(core_spec, call);
  // Kernels ran in app's context: another one, or the runtime's default, is refused.
  CHECK(attn_set_opencl_context(other.context(), other.queue()) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK_MESSAGE(last_error().find("already ran in context") != std::string::npos, last_error());
  CHECK(attn_set_opencl_context(nullptr, nullptr) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(attn_set_opencl_context(app.context(), app.queue()) == ATTN_OK);
}

}  // namespace
