// device.h: which GPU API a kernel variant needs, whether this machine has it, and ATTN_DEVICE.
#pragma once

#include <string>

namespace attn::detail {

enum class DeviceApi { none, cuda, opencl };

// The GPU API of a Halide target string ("x86-64-linux-cuda-cuda_capability_86": cuda).
DeviceApi device_api_of(const char *halide_target);
const char *device_api_name(DeviceApi api);

// Whether the API's driver library loads and has at least one device; checked once per process
// (by the driver's own entry points: cuInit/cuDeviceGetCount, clGetPlatformIDs/clGetDeviceIDs).
// When not, *missing says what is missing ("libcuda.so.1 not found (no NVIDIA driver)", ...).
bool device_available(DeviceApi api, std::string *missing);

// A driver entry point (cuCtxGetCurrent, clCreateContext, ...) where device_available(api); else
// null.
void *driver_symbol(DeviceApi api, const char *name);

// The device choice in force: attn_set_device's, else ATTN_DEVICE's. auto_choice: a GPU variant
// where its device is there, else a CPU one.
enum class DeviceChoice { auto_choice, cpu, cuda, opencl, invalid };
DeviceChoice device_choice();
// ATTN_DEVICE's text, for messages.
const char *device_environment_text();

}  // namespace attn::detail
