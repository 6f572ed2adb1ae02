// attnc/emit_device.h: the GPU part of a kernel library's entry source (device tensors, copies, context
// hooks).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "attnc/emit.h"

namespace attnc {

bool has_gpu_variant(const std::vector<KernelRecord> &kernels);

// The C expression giving a GPU target's Halide device interface (CUDA or OpenCL).
const char *device_interface_call(const std::string &target);

// attn_device_wrap / attn_device_finish, and the context hooks of the library's GPU APIs.
void write_device_support(std::ostringstream &o, const std::vector<KernelRecord> &kernels,
                          const std::string &basename);
// The statements the load-time constructor runs for them.
void write_device_install(std::ostringstream &o, const std::vector<KernelRecord> &kernels,
                          const std::string &basename);

}  // namespace attnc
