// device_context.cpp: GPU contexts for calls (the application's, else defaults) through the driver
// entry points device.cpp loads; the runtime links no GPU library.
#include "device_context.h"

#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "status_internal.h"

namespace attn::detail {
namespace {

// The application's contexts; a mutex, as a context and its queue are set together.
struct AppContexts {
  std::mutex lock;
  void *cuda_context = nullptr, *cuda_stream = nullptr;
  void *opencl_context = nullptr, *opencl_queue = nullptr;
};
AppContexts &app() {
  static AppContexts contexts;
  return contexts;
}

template <typename Fn>
Fn entry(DeviceApi api, const char *name) {
  return reinterpret_cast<Fn>(driver_symbol(api, name));
}

// --- CUDA (the driver API, as libcuda.so exports it) ---
using CuContext = void *;
using CuDevicePtr = unsigned long long;
constexpr int cuda_success = 0;

// The calling thread's current context, else device 0's primary context (retained once: the CUDA
// runtime API, and so PyTorch, allocate in it).
attn_status resolve_cuda_context(CuContext *out) {
  auto get_current = entry<int (*)(CuContext *)>(DeviceApi::cuda, "cuCtxGetCurrent");
  auto device_get = entry<int (*)(int *, int)>(DeviceApi::cuda, "cuDeviceGet");
  auto retain = entry<int (*)(CuContext *, int)>(DeviceApi::cuda, "cuDevicePrimaryCtxRetain");
  if (get_current == nullptr || device_get == nullptr || retain == nullptr)
    return fail(ATTN_ERR_NO_DEVICE,
                "libcuda.so lacks cuCtxGetCurrent, cuDeviceGet or cuDevicePrimaryCtxRetain");
  CuContext current = nullptr;
  if (get_current(&current) == cuda_success && current != nullptr) {
    *out = current;
    return ATTN_OK;
  }
  static std::once_flag once;
  static CuContext primary = nullptr;
  static int error = 0;
  std::call_once(once, [&] {
    int device = 0;
    error = device_get(&device, 0);
    if (error == cuda_success) error = retain(&primary, device);
  });
  if (error != cuda_success || primary == nullptr)
    return fail(ATTN_ERR_NO_DEVICE,
                "the primary context of CUDA device 0 could not be retained (CUDA error %d)", error);
  *out = primary;
  return ATTN_OK;
}

attn_status check_cuda_pointer(const attn_call_context &context, const char *name, void *data,
                               uint64_t bytes) {
  auto push = entry<int (*)(CuContext)>(DeviceApi::cuda, "cuCtxPushCurrent_v2");
  auto pop = entry<int (*)(CuContext *)>(DeviceApi::cuda, "cuCtxPopCurrent_v2");
  auto range =
      entry<int (*)(CuDevicePtr *, size_t *, CuDevicePtr)>(DeviceApi::cuda, "cuMemGetAddressRange_v2");
  if (push == nullptr || pop == nullptr || range == nullptr)
    return fail(ATTN_ERR_NO_DEVICE,
                "libcuda.so lacks cuCtxPushCurrent_v2, cuCtxPopCurrent_v2 or cuMemGetAddressRange_v2");
  CuDevicePtr base = 0;
  size_t size = 0;
  int error = push(static_cast<CuContext>(context.cuda_context));
  if (error == cuda_success) {
    error = range(&base, &size, reinterpret_cast<CuDevicePtr>(data));
    CuContext popped = nullptr;
    pop(&popped);
  }
  if (error != cuda_success) {
    return fail(ATTN_ERR_DEVICE_TENSOR,
                "tensor '%s' is a CUDA device pointer (%p) that is not inside an allocation of the context "
                "kernels run in (CUDA error %d; attn_set_cuda_context sets the context)",
                name, data, error);
  }
  const uint64_t offset = reinterpret_cast<CuDevicePtr>(data) - base;
  if (offset + bytes > size) {
    return fail(ATTN_ERR_DEVICE_TENSOR,
                "tensor '%s' is a CUDA device pointer %" PRIu64
                " bytes into an allocation of %zu bytes, but its "
                "last element ends at byte %" PRIu64 " of it",
                name, offset, size, offset + bytes);
  }
  return ATTN_OK;
}

// The copy on the call's stream (0: the legacy default stream), then a wait for that stream.
attn_status read_cuda_pointer(const attn_call_context &context, const char *name, void *data, uint64_t bytes,
                              void *host) {
  auto push = entry<int (*)(CuContext)>(DeviceApi::cuda, "cuCtxPushCurrent_v2");
  auto pop = entry<int (*)(CuContext *)>(DeviceApi::cuda, "cuCtxPopCurrent_v2");
  auto copy = entry<int (*)(void *, CuDevicePtr, size_t, void *)>(DeviceApi::cuda, "cuMemcpyDtoHAsync_v2");
  auto wait = entry<int (*)(void *)>(DeviceApi::cuda, "cuStreamSynchronize");
  if (push == nullptr || pop == nullptr || copy == nullptr || wait == nullptr)
    return fail(ATTN_ERR_NO_DEVICE,
                "libcuda.so lacks cuCtxPushCurrent_v2, cuCtxPopCurrent_v2, cuMemcpyDtoHAsync_v2 or "
                "cuStreamSynchronize");
  int error = push(static_cast<CuContext>(context.cuda_context));
  if (error == cuda_success) {
    error = copy(host, reinterpret_cast<CuDevicePtr>(data), static_cast<size_t>(bytes), context.cuda_stream);
    if (error == cuda_success) error = wait(context.cuda_stream);
    CuContext popped = nullptr;
    pop(&popped);
  }
  if (error != cuda_success)
    return fail(ATTN_ERR_DEVICE_TENSOR, "tensor '%s': reading it back to the host failed (CUDA error %d)",
                name, error);
  return ATTN_OK;
}

// --- OpenCL (the ICD loader's entry points) ---
using ClPlatform = void *;
using ClDevice = void *;
using ClContext = void *;
using ClQueue = void *;
using ClMem = void *;
constexpr int32_t cl_success = 0;
constexpr uint32_t cl_platform_name = 0x0902, cl_device_max_compute_units = 0x1002;
constexpr uint32_t cl_mem_size = 0x1102, cl_mem_context = 0x1106, cl_queue_context = 0x1090;
constexpr uint64_t cl_device_type_cpu = 1u << 1, cl_device_type_gpu = 1u << 2,
                   cl_device_type_accelerator = 1u << 3, cl_device_type_all = 0xFFFFFFFF;

// The device types HL_OCL_DEVICE_TYPE names ("cpu", "gpu", "acc", combined), all when unset.
uint64_t requested_device_types() {
  const char *text = std::getenv("HL_OCL_DEVICE_TYPE");
  uint64_t types = 0;
  if (text != nullptr) {
    if (std::strstr(text, "cpu")) types |= cl_device_type_cpu;
    if (std::strstr(text, "gpu")) types |= cl_device_type_gpu;
    if (std::strstr(text, "acc")) types |= cl_device_type_accelerator;
  }
  return types == 0 ? cl_device_type_all : types;
}

struct DefaultOpenCl {
  std::once_flag once;
  ClContext context = nullptr;
  ClQueue queue = nullptr;
  std::string failure;
};
DefaultOpenCl &default_opencl() {
  static DefaultOpenCl d;
  return d;
}

// Halide 21's OpenCL runtime builds each kernel's program once, in the context of its first call,
// and uses it in every later one: so all OpenCL calls of a process run in one context, the first.
std::mutex first_lock;
ClContext first_opencl_context = nullptr;

attn_status check_first_opencl_context(ClContext context, bool record) {
  std::lock_guard<std::mutex> hold(first_lock);
  if (first_opencl_context == nullptr) {
    if (record) first_opencl_context = context;
    return ATTN_OK;
  }
  if (context == first_opencl_context) return ATTN_OK;
  return fail(ATTN_ERR_INVALID_ARGUMENT,
              "OpenCL kernels already ran in context %p, and Halide's OpenCL runtime keeps each kernel's "
              "program in the context of its first call: set the application's context "
              "(attn_set_opencl_context) before the first OpenCL call, and keep it",
              first_opencl_context);
}

// The context and queue kernels use where the application gave none, chosen as Halide's own
// default would: the platform HL_OCL_PLATFORM_NAME names (a substring), else the first; of its
// devices of the requested types, the one with the most compute units (the last of equals).
void create_default_opencl(DefaultOpenCl &d) {
  auto platforms =
      entry<int32_t (*)(uint32_t, ClPlatform *, uint32_t *)>(DeviceApi::opencl, "clGetPlatformIDs");
  auto platform_info = entry<int32_t (*)(ClPlatform, uint32_t, size_t, void *, size_t *)>(
      DeviceApi::opencl, "clGetPlatformInfo");
  auto devices = entry<int32_t (*)(ClPlatform, uint64_t, uint32_t, ClDevice *, uint32_t *)>(DeviceApi::opencl,
                                                                                            "clGetDeviceIDs");
  auto device_info =
      entry<int32_t (*)(ClDevice, uint32_t, size_t, void *, size_t *)>(DeviceApi::opencl, "clGetDeviceInfo");
  auto create_context =
      entry<ClContext (*)(const intptr_t *, uint32_t, const ClDevice *, void *, void *, int32_t *)>(
          DeviceApi::opencl, "clCreateContext");
  auto create_queue =
      entry<ClQueue (*)(ClContext, ClDevice, uint64_t, int32_t *)>(DeviceApi::opencl, "clCreateCommandQueue");
  if (!platforms || !platform_info || !devices || !device_info || !create_context || !create_queue) {
    d.failure = "libOpenCL.so lacks an entry point of OpenCL 1.2";
    return;
  }
  ClPlatform ids[16];
  uint32_t count = 0;
  if (platforms(16, ids, &count) != cl_success || count == 0) {
    d.failure = "no OpenCL platform";
    return;
  }
  if (count > 16) count = 16;
  ClPlatform platform = ids[0];
  if (const char *wanted = std::getenv("HL_OCL_PLATFORM_NAME"); wanted != nullptr && wanted[0] != '\0') {
    platform = nullptr;
    for (uint32_t i = 0; i < count && platform == nullptr; ++i) {
      char name[256] = {};
      if (platform_info(ids[i], cl_platform_name, sizeof(name) - 1, name, nullptr) == cl_success &&
          std::strstr(name, wanted) != nullptr)
        platform = ids[i];
    }
    if (platform == nullptr) {
      d.failure = std::string("no OpenCL platform's name contains HL_OCL_PLATFORM_NAME '") + wanted + "'";
      return;
    }
  }
  ClDevice found[64];
  uint32_t device_count = 0;
  if (devices(platform, requested_device_types(), 64, found, &device_count) != cl_success ||
      device_count == 0) {
    d.failure = "no OpenCL device of the requested type (HL_OCL_DEVICE_TYPE) on the platform";
    return;
  }
  if (device_count > 64) device_count = 64;
  ClDevice device = found[0];
  uint32_t best = 0;
  for (uint32_t i = 0; i < device_count; ++i) {
    uint32_t units = 0;
    if (device_info(found[i], cl_device_max_compute_units, sizeof(units), &units, nullptr) == cl_success &&
        units >= best) {
      best = units;
      device = found[i];
    }
  }
  const intptr_t properties[] = {0x1084 /* CL_CONTEXT_PLATFORM */, reinterpret_cast<intptr_t>(platform), 0};
  int32_t error = 0;
  d.context = create_context(properties, 1, &device, nullptr, nullptr, &error);
  if (d.context == nullptr || error != cl_success) {
    d.failure = "clCreateContext failed with OpenCL error " + std::to_string(error);
    d.context = nullptr;
    return;
  }
  d.queue = create_queue(d.context, device, 0, &error);
  if (d.queue == nullptr || error != cl_success) {
    d.failure = "clCreateCommandQueue failed with OpenCL error " + std::to_string(error);
    d.queue = nullptr;
  }
}

attn_status check_opencl_buffer(const attn_call_context &context, const char *name, void *data,
                                uint64_t bytes) {
  auto info =
      entry<int32_t (*)(ClMem, uint32_t, size_t, void *, size_t *)>(DeviceApi::opencl, "clGetMemObjectInfo");
  if (info == nullptr) return fail(ATTN_ERR_NO_DEVICE, "libOpenCL.so lacks clGetMemObjectInfo");
  ClContext owner = nullptr;
  size_t size = 0;
  const int32_t error = info(static_cast<ClMem>(data), cl_mem_context, sizeof(owner), &owner, nullptr);
  if (error != cl_success) {
    return fail(ATTN_ERR_DEVICE_TENSOR,
                "tensor '%s' is not an OpenCL buffer (%p): clGetMemObjectInfo failed with %d", name, data,
                error);
  }
  if (owner != context.opencl_context) {
    return fail(ATTN_ERR_DEVICE_TENSOR,
                "tensor '%s' is an OpenCL buffer of another context than the one kernels run in "
                "(attn_set_opencl_context sets it)",
                name);
  }
  info(static_cast<ClMem>(data), cl_mem_size, sizeof(size), &size, nullptr);
  if (bytes > size) {
    return fail(ATTN_ERR_DEVICE_TENSOR,
                "tensor '%s' is an OpenCL buffer of %zu bytes, but its last element ends at byte %" PRIu64,
                name, size, bytes);
  }
  return ATTN_OK;
}

// A blocking read on the call's queue (in order: after the work queued before it).
attn_status read_opencl_buffer(const attn_call_context &context, const char *name, void *data, uint64_t bytes,
                               void *host) {
  auto read =
      entry<int32_t (*)(ClQueue, ClMem, uint32_t, size_t, size_t, void *, uint32_t, const void *, void *)>(
          DeviceApi::opencl, "clEnqueueReadBuffer");
  if (read == nullptr) return fail(ATTN_ERR_NO_DEVICE, "libOpenCL.so lacks clEnqueueReadBuffer");
  const int32_t error = read(static_cast<ClQueue>(context.opencl_queue), static_cast<ClMem>(data),
                             /*blocking=*/1, 0, static_cast<size_t>(bytes), host, 0, nullptr, nullptr);
  if (error != cl_success)
    return fail(ATTN_ERR_DEVICE_TENSOR, "tensor '%s': reading it back to the host failed (OpenCL error %d)",
                name, error);
  return ATTN_OK;
}

}  // namespace

DeviceApi memory_api(attn_memory memory) {
  return memory == ATTN_CUDA_DEVICE     ? DeviceApi::cuda
         : memory == ATTN_OPENCL_BUFFER ? DeviceApi::opencl
                                        : DeviceApi::none;
}

const char *memory_text(attn_memory memory) {
  return memory == ATTN_CUDA_DEVICE     ? "a CUDA device pointer"
         : memory == ATTN_OPENCL_BUFFER ? "an OpenCL buffer"
                                        : "a host pointer";
}

attn_status set_call_device_context(DeviceApi api, bool with_device_tensors, attn_call_context *context) {
  AppContexts &a = app();
  if (api == DeviceApi::cuda) {
    {
      std::lock_guard<std::mutex> hold(a.lock);
      context->cuda_context = a.cuda_context;
      context->cuda_stream = a.cuda_stream;
    }
    if (context->cuda_context == nullptr && with_device_tensors) {
      CuContext resolved = nullptr;
      if (attn_status s = resolve_cuda_context(&resolved); s != ATTN_OK) return s;
      context->cuda_context = resolved;
    }
    return ATTN_OK;
  }
  if (api == DeviceApi::opencl) {
    {
      std::lock_guard<std::mutex> hold(a.lock);
      context->opencl_context = a.opencl_context;
      context->opencl_queue = a.opencl_queue;
    }
    if (context->opencl_context == nullptr) {
      DefaultOpenCl &fallback = default_opencl();
      std::call_once(fallback.once, [&] { create_default_opencl(fallback); });
      if (fallback.queue == nullptr)
        return fail(ATTN_ERR_NO_DEVICE, "no OpenCL context for the kernels: %s", fallback.failure.c_str());
      context->opencl_context = fallback.context;
      context->opencl_queue = fallback.queue;
    }
    return check_first_opencl_context(context->opencl_context, /*record=*/true);
  }
  return ATTN_OK;
}

attn_status check_device_tensor(DeviceApi api, const attn_call_context &context, const char *name, void *data,
                                uint64_t bytes) {
  if (api == DeviceApi::cuda) return check_cuda_pointer(context, name, data, bytes);
  if (api == DeviceApi::opencl) return check_opencl_buffer(context, name, data, bytes);
  return ATTN_OK;
}

attn_status read_device_tensor(DeviceApi api, const attn_call_context &context, const char *name, void *data,
                               uint64_t bytes, void *host) {
  if (api == DeviceApi::cuda) return read_cuda_pointer(context, name, data, bytes, host);
  if (api == DeviceApi::opencl) return read_opencl_buffer(context, name, data, bytes, host);
  return ATTN_OK;
}

}  // namespace attn::detail

extern "C" attn_status attn_set_cuda_context(void *cu_context, void *cu_stream) {
  if (cu_context == nullptr && cu_stream != nullptr)
    return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT, "a CUDA stream without its context");
  attn::detail::AppContexts &a = attn::detail::app();
  std::lock_guard<std::mutex> hold(a.lock);
  a.cuda_context = cu_context;
  a.cuda_stream = cu_stream;
  return ATTN_OK;
}

extern "C" attn_status attn_set_opencl_context(void *cl_context, void *cl_queue) {
  using namespace attn::detail;
  if ((cl_context == nullptr) != (cl_queue == nullptr))
    return fail(ATTN_ERR_INVALID_ARGUMENT,
                "an OpenCL context and its command queue go together (both or neither)");
  if (cl_context != nullptr) {
    std::string missing;
    if (!device_available(DeviceApi::opencl, &missing))
      return fail(ATTN_ERR_NO_DEVICE, "an OpenCL context was given, but OpenCL cannot run here: %s",
                  missing.c_str());
    auto queue_info = entry<int32_t (*)(ClQueue, uint32_t, size_t, void *, size_t *)>(
        DeviceApi::opencl, "clGetCommandQueueInfo");
    ClContext owner = nullptr;
    if (queue_info == nullptr ||
        queue_info(cl_queue, cl_queue_context, sizeof(owner), &owner, nullptr) != cl_success ||
        owner != cl_context)
      return fail(ATTN_ERR_INVALID_ARGUMENT, "the OpenCL command queue %p is not a queue of context %p",
                  cl_queue, cl_context);
  }
  // The context later calls would run in: the one given, else the default (where made).
  DefaultOpenCl &fallback = default_opencl();
  ClContext next = cl_context;
  if (next == nullptr) std::call_once(fallback.once, [&] { create_default_opencl(fallback); });
  if (next == nullptr) next = fallback.context;
  if (attn_status s = check_first_opencl_context(next, /*record=*/false); s != ATTN_OK) return s;
  AppContexts &a = app();
  std::lock_guard<std::mutex> hold(a.lock);
  a.opencl_context = cl_context;
  a.opencl_queue = cl_queue;
  return ATTN_OK;
}
