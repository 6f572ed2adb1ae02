// cuda_app.cpp: CUDA driver entry points by dlopen, for the tests' application side.
#include "cuda_app.h"

#include <dlfcn.h>

namespace attnc::test {
namespace {

using DevicePtr = unsigned long long;

template <typename Fn>
Fn symbol(void *library, const char *name) {
  return library == nullptr ? nullptr : reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

CudaApp::CudaApp() {
  library_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library_ == nullptr) {
    why_ = "libcuda.so.1 not found";
    return;
  }
  auto init = symbol<int (*)(unsigned)>(library_, "cuInit");
  auto device_get = symbol<int (*)(int *, int)>(library_, "cuDeviceGet");
  auto retain = symbol<int (*)(void **, int)>(library_, "cuDevicePrimaryCtxRetain");
  auto set_current = symbol<int (*)(void *)>(library_, "cuCtxSetCurrent");
  int device = 0;
  void *context = nullptr;
  if (!init || !device_get || !retain || !set_current || init(0) != 0 || device_get(&device, 0) != 0 ||
      retain(&context, device) != 0 || set_current(context) != 0) {
    why_ = "no usable CUDA device";
    return;
  }
  context_ = context;
}

CudaApp::~CudaApp() {
  if (auto destroy = symbol<int (*)(void *)>(library_, "cuStreamDestroy_v2"); destroy && stream_)
    destroy(stream_);
}

void *CudaApp::stream() {
  auto create = symbol<int (*)(void **, unsigned)>(library_, "cuStreamCreate");
  if (stream_ == nullptr && create != nullptr && context_ != nullptr &&
      create(&stream_, /*non-blocking=*/1) != 0)
    stream_ = nullptr;
  return stream_;
}

void *CudaApp::upload(const void *host, size_t bytes) {
  auto alloc = symbol<int (*)(DevicePtr *, size_t)>(library_, "cuMemAlloc_v2");
  auto copy = symbol<int (*)(DevicePtr, const void *, size_t)>(library_, "cuMemcpyHtoD_v2");
  DevicePtr device = 0;
  if (!alloc || !copy || alloc(&device, bytes) != 0) return nullptr;
  if (copy(device, host, bytes) != 0) return nullptr;
  return reinterpret_cast<void *>(device);
}

bool CudaApp::download(void *device, void *host, size_t bytes) {
  auto sync = symbol<int (*)(void)>(library_, "cuCtxSynchronize");
  auto copy = symbol<int (*)(void *, DevicePtr, size_t)>(library_, "cuMemcpyDtoH_v2");
  return sync && copy && sync() == 0 && copy(host, reinterpret_cast<DevicePtr>(device), bytes) == 0;
}

void CudaApp::release(void *device) {
  if (auto free = symbol<int (*)(DevicePtr)>(library_, "cuMemFree_v2"); free && device)
    free(reinterpret_cast<DevicePtr>(device));
}

}  // namespace attnc::test
