// Every linked kernel, every bad call (bad_calls.h) at decode (split-keys core) and prefill sizes:
// refused with its status and a message, every output and in-out byte as before. Built once per
// kernel set (probs, mask, sequence; their OpenCL variants, host and device tensors; CUDA's
// no-device path): REFUSED_CALLS_OPENCL and REFUSED_CALLS_CUDA select the GPU parts.
#include <doctest/doctest.h>

#include <string>

#include "bad_calls.h"
#include "kernel_test_support.h"
#if REFUSED_CALLS_OPENCL
#include "opencl_app.h"
#endif
#ifndef REFUSED_CALLS_CUDA
#define REFUSED_CALLS_CUDA 0
#endif

namespace {

using namespace attnc::test;

#if REFUSED_CALLS_OPENCL
OpenClApp &app() {
  return process_app();
}
#endif

// ATTN_OK, or what the unspoiled call returns where it cannot run: ATTN_ERR_NO_DEVICE for a CUDA
// kernel without a driver here (every bad call must still be refused for what is bad in it first),
// ATTN_ERR_DEVICE_TENSOR for device tensors given to a kernel that takes host tensors only (the
// per-sequence kernels read cache_seqlens and cu_seqlens on the host).
attn_status good_status(const attn_kernel *kernel, const DevicePlacement *placement) {
  BadCall probe(kernel, decode_sizes());
  const attn_status status = probe.run(kernel, placement);
  if ((REFUSED_CALLS_CUDA && status == ATTN_ERR_NO_DEVICE) ||
      (placement != nullptr && status == ATTN_ERR_DEVICE_TENSOR))
    return status;
  return ATTN_OK;
}

void check_every_kernel(const DevicePlacement *placement, const std::string &where) {
  REQUIRE(attn_kernel_count() > 0);
  BadCallCounts counts;
  for (int i = 0; i < attn_kernel_count(); ++i) {
    const attn_kernel *kernel = attn_kernel_at(i);
    const attn_status good = good_status(kernel, placement);
    for (const DimSizes &sizes : {decode_sizes(), prefill_sizes()})
      check_bad_calls(kernel, sizes, &counts, placement, good);
  }
  MESSAGE(counts.refused, " bad calls refused (", counts.values, " for their values) on ",
          attn_kernel_count(), " kernels, ", where);
}

TEST_CASE("every bad call of every linked kernel is refused and writes nothing: host tensors") {
#if REFUSED_CALLS_OPENCL
  app();
#endif
  check_every_kernel(nullptr, "host tensors");
}

#if REFUSED_CALLS_OPENCL
TEST_CASE("every bad call of every linked kernel is refused and writes nothing: OpenCL buffers") {
  OpenClApp &cl = app();
  const DevicePlacement buffers{
      ATTN_OPENCL_BUFFER, [&](const void *host, size_t bytes) { return cl.upload(host, bytes); },
      [&](void *buffer, void *host, size_t bytes) { return cl.download(buffer, host, bytes); },
      [&](void *buffer) { cl.release(buffer); }};
  check_every_kernel(&buffers, "OpenCL buffers");
}
#endif

}  // namespace
