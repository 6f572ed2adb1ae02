// The CUDA variant without a CUDA device: a GPU-only kernel says what is missing, a host+CUDA
// kernel runs its CPU variant, and a forced device is obeyed. Where a CUDA device is there (the
// GPU machine of tools/gpu_check.sh), the same kernels run on it and match the reference; the f16
// and bf16 ones by the low-precision pass rule (low_precision.h). CUDA device tensors need the
// device; where there is one they run in place, in device memory of the primary context, on the
// legacy stream and on an application stream.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "cuda_app.h"
#include "device_call.h"
#include "kernel_test_support.h"
#include "low_precision.h"

namespace {

using namespace attnc::test;

constexpr const char *cuda_only = "heads=2 head_dim=32 mask=causal";
constexpr const char *host_and_cuda = "heads=2 kv_heads=1 head_dim=16 mask=window(8,0)";
// attnc_cuda_sequence_kernels: CUDA-only kernels with a paged cache and RoPE, varlen, probs, and
// quantized caches (int8 paged, fp8 contiguous), dropout's forward and backward.
constexpr const char *cuda_sequence_specs[] = {
    "heads=4 kv_heads=2 head_dim=32 kv_cache=paged(16) rope=neox mask=causal",
    "heads=3 kv_heads=1 head_dim=16 mask=causal layout=varlen rope=neox lse=true",
    "heads=2 head_dim=16 mask=causal&padding probs=true",
    "heads=4 kv_heads=2 head_dim=32 kv_cache=paged(16) kv_dtype=int8 rope=neox mask=causal",
    "heads=2 head_dim=16 kv_cache=contiguous kv_dtype=fp8_e4m3 mask=causal",
    "heads=2 head_dim=16 mask=causal dropout=0.2 lse=true",
    "heads=2 head_dim=16 mask=causal dropout=0.2 backward=true"};

// 16-bit storage, read and written as bits by the CUDA kernels.
constexpr const char *cuda_16_bit[] = {
    "heads=2 kv_heads=1 head_dim=32 mask=causal&padding lse=true dtype=f16",
    "d_model=32 heads=2 form=block proj_bias=true mask=causal dtype=bf16"};

bool cuda_driver_here() {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  return lib != nullptr;
}

// Puts the device choice back to automatic whatever a case forced.
struct AutoDevice {
  ~AutoDevice() { attn_set_device(nullptr); }
};

// Runs the kernel on a small call; on success checks the output against the fp64 reference.
attn_status run_small(const char *spec_text, Call *call_out = nullptr) {
  const attn::Spec spec = parse(spec_text);
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(7);
  Call call = make_core_call(spec, 2, 37, 41, true, rng);
  const attn_status status = call.run(kernel);
  if (status == ATTN_OK) {
    const Comparison result = compare(call.tensors.at("out"), expected_result(spec, call));
    CAPTURE(result);
    CHECK(result.pass());
  }
  if (call_out != nullptr) *call_out = std::move(call);
  return status;
}

TEST_CASE("a CUDA-only kernel without a driver returns ATTN_ERR_NO_DEVICE and names what is missing") {
  AutoDevice reset;
  Call call;
  const attn_status status = run_small(cuda_only, &call);
  if (cuda_driver_here()) {
    INFO("a CUDA driver is here: ", last_error());
    CHECK((status == ATTN_OK || status == ATTN_ERR_NO_DEVICE));
    return;
  }
  CHECK(status == ATTN_ERR_NO_DEVICE);
  CHECK(last_error().find("libcuda.so.1 not found") != std::string::npos);
  CHECK(call.tensors.at("out").all_padding());  // untouched on error
  CHECK(std::string(attn_kernel_selected_target(find_kernel(parse(cuda_only)))).empty());
}

TEST_CASE("CUDA kernels with a KV cache, RoPE, varlen and probs are linked, their one variant CUDA") {
  for (const char *text : cuda_sequence_specs) {
    CAPTURE(std::string(text));
    const attn_kernel *kernel = find_kernel(parse(text));
    REQUIRE(kernel != nullptr);
    CHECK(std::string(attn_kernel_target(kernel)).find("cuda") != std::string::npos);
    if (!cuda_driver_here()) CHECK(std::string(attn_kernel_selected_target(kernel)).empty());
  }
}

TEST_CASE("a host+CUDA kernel runs its CPU variant without a device, and obeys a forced device") {
  AutoDevice reset;
  const attn_kernel *kernel = find_kernel(parse(host_and_cuda));
  REQUIRE(kernel != nullptr);
  if (cuda_driver_here()) return;  // the GPU machine: the auto choice may be the CUDA variant
  const std::string selected = attn_kernel_selected_target(kernel);
  CAPTURE(selected);
  CHECK(selected.find("cuda") == std::string::npos);
  CHECK(run_small(host_and_cuda) == ATTN_OK);

  REQUIRE(attn_set_device("cuda") == ATTN_OK);
  CHECK(run_small(host_and_cuda) == ATTN_ERR_NO_DEVICE);
  CHECK(last_error().find("forced to cuda") != std::string::npos);

  REQUIRE(attn_set_device("opencl") == ATTN_OK);
  CHECK(run_small(host_and_cuda) == ATTN_ERR_NO_DEVICE);
  CHECK(last_error().find("no opencl variant") != std::string::npos);

  REQUIRE(attn_set_device("cpu") == ATTN_OK);
  CHECK(run_small(host_and_cuda) == ATTN_OK);
  CHECK(run_small(cuda_only) == ATTN_ERR_NO_DEVICE);

  CHECK(attn_set_device("tpu") == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(last_error().find("'tpu'") != std::string::npos);
}

TEST_CASE("a CUDA device, where there is one, runs both kernels") {
  if (!cuda_driver_here()) return;
  AutoDevice reset;
  REQUIRE(attn_set_device("cuda") == ATTN_OK);
  const attn_status only = run_small(cuda_only);
  INFO(last_error());
  CHECK(only == ATTN_OK);
  CHECK(run_small(host_and_cuda) == ATTN_OK);
  CHECK(std::string(attn_kernel_selected_target(find_kernel(parse(host_and_cuda)))).find("cuda") !=
        std::string::npos);
}

TEST_CASE("f16 and bf16 CUDA kernels: no device here, ATTN_ERR_NO_DEVICE; on a CUDA device, the pass rule") {
  AutoDevice reset;
  for (const char *text : cuda_16_bit) {
    CAPTURE(text);
    const attn::Spec spec = parse(text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    std::mt19937 rng(11);
    Call call = make_call(spec, 2, 37, 41, true, rng);
    add_runtime_inputs(spec, call, 2, 37, 41, true, MaskShape::sq_sk, rng);
    if (cuda_driver_here()) {
      check_low_precision(spec, run_low_precision(spec, kernel, call));
    } else {
      CHECK(storage_call(spec, call).run(kernel) == ATTN_ERR_NO_DEVICE);
    }
  }
}

TEST_CASE("CUDA device tensors need a CUDA device, and run in place where there is one") {
  AutoDevice reset;
  struct Contexts {
    ~Contexts() { attn_set_cuda_context(nullptr, nullptr); }
  } contexts;
  int stream_marker = 0;
  CHECK(attn_set_cuda_context(nullptr, &stream_marker) == ATTN_ERR_INVALID_ARGUMENT);
  CudaApp app;
  for (const char *spec_text : {cuda_only, host_and_cuda}) {
    CAPTURE(spec_text);
    const attn::Spec spec = parse(spec_text);
    const attn_kernel *kernel = find_kernel(spec);
    REQUIRE(kernel != nullptr);
    std::mt19937 rng(9);
    Call call = make_core_call(spec, 2, 37, 41, true, rng);
    if (!app.ok()) {
      // Without a device the handles are never touched: any non-null value is refused first.
      std::vector<attn_arg> args;
      for (auto &[name, t] : call.tensors) args.push_back({name.c_str(), t.c_tensor()});
      args[0].tensor.memory = ATTN_CUDA_DEVICE;
      CHECK(attn_run(kernel, args.data(), static_cast<int>(args.size())) == ATTN_ERR_NO_DEVICE);
      CHECK_MESSAGE(last_error().find("the call passes CUDA device pointers") != std::string::npos,
                    last_error());
      CHECK(call.tensors.at("out").all_padding());
      continue;
    }
    for (bool on_stream : {false, true}) {
      CAPTURE(on_stream);
      Call device = make_core_call(spec, 2, 37, 41, true, rng);
      if (on_stream) REQUIRE(attn_set_cuda_context(app.context(), app.stream()) == ATTN_OK);
      DeviceCall<CudaApp> run{app, device, ATTN_CUDA_DEVICE};
      const attn_status status = run.run(kernel, {"q", "k", "v", "out"});
      INFO(last_error());
      REQUIRE(status == ATTN_OK);
      const Comparison result = compare(device.tensors.at("out"), expected_result(spec, device));
      CAPTURE(result);
      CHECK(result.pass());
    }
  }
}

}  // namespace
