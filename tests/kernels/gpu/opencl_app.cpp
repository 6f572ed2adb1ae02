// opencl_app.cpp: OpenCL 1.2 entry points by dlopen, for the tests' application side.
#include "opencl_app.h"

#include <dlfcn.h>
#include <doctest/doctest.h>

#include "attn/runtime.h"

namespace attnc::test {
namespace {

using GetPlatforms = int32_t (*)(uint32_t, void **, uint32_t *);
using GetDevices = int32_t (*)(void *, uint64_t, uint32_t, void **, uint32_t *);
using CreateContext = void *(*)(const intptr_t *, uint32_t, void *const *, void *, void *, int32_t *);
using CreateQueue = void *(*)(void *, void *, uint64_t, int32_t *);
using CreateBuffer = void *(*)(void *, uint64_t, size_t, void *, int32_t *);
using Transfer = int32_t (*)(void *, void *, uint32_t, size_t, size_t, void *, uint32_t, const void *,
                             void *);
using Release = int32_t (*)(void *);

constexpr uint64_t all_devices = 0xFFFFFFFF, read_write = 1u << 0, copy_host = 1u << 5;

template <typename Fn>
Fn symbol(void *library, const char *name) {
  return library == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

OpenClApp::OpenClApp() {
  library_ = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  auto platforms = symbol<GetPlatforms>(library_, "clGetPlatformIDs");
  auto devices = symbol<GetDevices>(library_, "clGetDeviceIDs");
  auto create_context = symbol<CreateContext>(library_, "clCreateContext");
  auto create_queue = symbol<CreateQueue>(library_, "clCreateCommandQueue");
  if (!platforms || !devices || !create_context || !create_queue) {
    why_ = "no OpenCL ICD loader";
    return;
  }
  void *platform = nullptr, *device = nullptr;
  uint32_t count = 0;
  if (platforms(1, &platform, &count) != 0 || count == 0 ||
      devices(platform, all_devices, 1, &device, &count) != 0) {
    why_ = "no OpenCL platform or device";
    return;
  }
  int32_t error = 0;
  context_ = create_context(nullptr, 1, &device, nullptr, nullptr, &error);
  if (context_ == nullptr) {
    why_ = "clCreateContext failed: " + std::to_string(error);
    return;
  }
  queue_ = create_queue(context_, device, 0, &error);
  if (queue_ == nullptr) why_ = "clCreateCommandQueue failed: " + std::to_string(error);
}

OpenClApp::~OpenClApp() {
  if (auto release = symbol<Release>(library_, "clReleaseCommandQueue"); release && queue_) release(queue_);
  if (auto release = symbol<Release>(library_, "clReleaseContext"); release && context_) release(context_);
}

void *OpenClApp::upload(const void *host, size_t bytes) {
  auto create = symbol<CreateBuffer>(library_, "clCreateBuffer");
  if (create == nullptr || context_ == nullptr) return nullptr;
  int32_t error = 0;
  void *buffer =
      create(context_, read_write | (host ? copy_host : 0), bytes, const_cast<void *>(host), &error);
  return error == 0 ? buffer : nullptr;
}

bool OpenClApp::download(void *buffer, void *host, size_t bytes) {
  auto read = symbol<Transfer>(library_, "clEnqueueReadBuffer");
  return read != nullptr && read(queue_, buffer, /*blocking=*/1, 0, bytes, host, 0, nullptr, nullptr) == 0;
}

void OpenClApp::release(void *buffer) {
  if (auto release = symbol<Release>(library_, "clReleaseMemObject"); release && buffer) release(buffer);
}

OpenClApp &process_app() {
  static OpenClApp instance;
  static const bool set = [] {
    REQUIRE_MESSAGE(instance.ok(), instance.why());
    REQUIRE(attn_set_opencl_context(instance.context(), instance.queue()) == ATTN_OK);
    return true;
  }();
  (void)set;
  return instance;
}

}  // namespace attnc::test
