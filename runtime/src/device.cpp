// device.cpp: GPU drivers found by dlopen (the runtime links no GPU library), and the device choice.
#include "device.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>

#include "attn/runtime.h"
#include "status_internal.h"

namespace attn::detail {
namespace {

struct Probe {
  std::once_flag once;
  bool available = false;
  std::string missing;
  void *library = nullptr;  // the driver, where it loaded
};

void *open_first(std::initializer_list<const char *> names) {
  for (const char *name : names)
    if (void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return handle;
  return nullptr;
}

// The handles stay open: Halide's runtime opens the same libraries for the kernels.
void probe_cuda(Probe &p) {
  void *lib = open_first({"libcuda.so.1", "libcuda.so"});
  if (lib == nullptr) {
    p.missing = "libcuda.so.1 not found (no NVIDIA driver installed)";
    return;
  }
  p.library = lib;
  using Init = int (*)(unsigned);
  using Count = int (*)(int *);
  auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  if (init == nullptr || count == nullptr) {
    p.missing = "libcuda.so has no cuInit/cuDeviceGetCount";
    return;
  }
  if (int error = init(0); error != 0) {
    p.missing = "cuInit failed with CUDA error " + std::to_string(error) + " (no usable CUDA device or driver)";
    return;
  }
  int devices = 0;
  if (count(&devices) != 0 || devices == 0) {
    p.missing = "no CUDA device";
    return;
  }
  p.available = true;
}

void probe_opencl(Probe &p) {
  void *lib = open_first({"libOpenCL.so.1", "libOpenCL.so"});
  if (lib == nullptr) {
    p.missing = "libOpenCL.so.1 not found (no OpenCL ICD loader installed)";
    return;
  }
  p.library = lib;
  using Platforms = int32_t (*)(uint32_t, void **, uint32_t *);
  using Devices = int32_t (*)(void *, uint64_t, uint32_t, void **, uint32_t *);
  auto platforms = reinterpret_cast<Platforms>(dlsym(lib, "clGetPlatformIDs"));
  auto devices = reinterpret_cast<Devices>(dlsym(lib, "clGetDeviceIDs"));
  if (platforms == nullptr || devices == nullptr) {
    p.missing = "libOpenCL.so has no clGetPlatformIDs/clGetDeviceIDs";
    return;
  }
  uint32_t platform_count = 0;
  if (platforms(0, nullptr, &platform_count) != 0 || platform_count == 0) {
    p.missing = "no OpenCL platform (no ICD installed, such as pocl-opencl-icd)";
    return;
  }
  std::vector<void *> ids(platform_count);
  platforms(platform_count, ids.data(), nullptr);
  constexpr uint64_t all_device_types = 0xFFFFFFFF;
  for (void *platform : ids) {
    uint32_t device_count = 0;
    if (devices(platform, all_device_types, 0, nullptr, &device_count) == 0 && device_count > 0) {
      p.available = true;
      return;
    }
  }
  p.missing = "no OpenCL device on any platform";
}

constexpr int unread = -1;
std::atomic<int> chosen{unread};

DeviceChoice parse_choice(std::string_view text) {
  if (text.empty() || text == "auto") return DeviceChoice::auto_choice;
  if (text == "cpu") return DeviceChoice::cpu;
  if (text == "cuda") return DeviceChoice::cuda;
  if (text == "opencl") return DeviceChoice::opencl;
  return DeviceChoice::invalid;
}

}  // namespace

DeviceApi device_api_of(const char *halide_target) {
  DeviceApi api = DeviceApi::none;
  std::string_view rest = halide_target == nullptr ? "" : halide_target;
  while (!rest.empty()) {
    const size_t dash = rest.find('-');
    const std::string_view token = rest.substr(0, dash);
    if (token == "cuda") api = DeviceApi::cuda;
    if (token == "opencl") api = DeviceApi::opencl;
    rest = dash == std::string_view::npos ? "" : rest.substr(dash + 1);
  }
  return api;
}

const char *device_api_name(DeviceApi api) {
  return api == DeviceApi::cuda ? "cuda" : api == DeviceApi::opencl ? "opencl" : "cpu";
}

namespace {

Probe &probed(DeviceApi api) {
  static Probe cuda, opencl;
  Probe &p = api == DeviceApi::cuda ? cuda : opencl;
  std::call_once(p.once, [&] { api == DeviceApi::cuda ? probe_cuda(p) : probe_opencl(p); });
  return p;
}

}  // namespace

bool device_available(DeviceApi api, std::string *missing) {
  if (api == DeviceApi::none) return true;
  const Probe &p = probed(api);
  if (!p.available && missing != nullptr) *missing = p.missing;
  return p.available;
}

void *driver_symbol(DeviceApi api, const char *name) {
  if (api == DeviceApi::none) return nullptr;
  const Probe &p = probed(api);
  return p.available && p.library != nullptr ? dlsym(p.library, name) : nullptr;
}

const char *device_environment_text() {
  const char *text = std::getenv("ATTN_DEVICE");
  return text == nullptr ? "" : text;
}

DeviceChoice device_choice() {
  int value = chosen.load(std::memory_order_acquire);
  if (value == unread) {
    const int from_environment = static_cast<int>(parse_choice(device_environment_text()));
    chosen.compare_exchange_strong(value, from_environment, std::memory_order_acq_rel);
    value = chosen.load(std::memory_order_acquire);
  }
  return static_cast<DeviceChoice>(value);
}

}  // namespace attn::detail

extern "C" attn_status attn_set_device(const char *device) {
  const attn::detail::DeviceChoice choice = attn::detail::parse_choice(device == nullptr ? "" : device);
  if (choice == attn::detail::DeviceChoice::invalid) {
    return attn::detail::fail(ATTN_ERR_INVALID_ARGUMENT, "device '%s' is not one of cpu, cuda, opencl or auto",
                              device);
  }
  attn::detail::chosen.store(static_cast<int>(choice), std::memory_order_release);
  return ATTN_OK;
}
