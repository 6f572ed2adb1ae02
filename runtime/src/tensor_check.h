// tensor_check.h: checks one call's tensors against a kernel table and builds its Halide buffers.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "HalideRuntime.h"
#include "attn/kernel_abi.h"
#include "device.h"

namespace attn::detail {

// What desc->run takes: pointers[i] is &buffers[i], the buffer of desc.args[i] at its declared
// rank, broadcast dims at full extent with stride 0. Built only after every check passed; dims
// holds ATTN_MAX_RANK entries per argument, innermost first; defaults[i] is the element an
// optional input left out points at (its attn_arg_info default_value).
// Device tensors (attn_tensor.memory) get host NULL and their handle as device (kernel_abi.h);
// device_api is their API (none: every tensor is on the host), device_args their indices;
// read_back holds the host copies of device index and mask tensors (run.cpp), a deque so that
// adding one moves none.
struct CallBuffers {
  DeviceApi device_api = DeviceApi::none;
  std::vector<int> device_args;
  std::deque<std::vector<uint8_t>> read_back;
  std::vector<float> defaults;
  std::vector<halide_dimension_t> dims;
  std::vector<halide_buffer_t> buffers;
  std::vector<void *> pointers;
};

// Checks names, presence, data, dtype, rank, sizes and strides of every tensor, in the kernel's
// argument order, recording the first problem as the thread's error. out is filled on ATTN_OK.
// Broadcasting follows attn_arg_info in attn/runtime.h. Device tensors must all be of one API and
// of rank 1 or more (a scalar is read on the host).
attn_status check_call(const attn_kernel_desc &desc, const attn_arg *args, int arg_count, CallBuffers *out);

}  // namespace attn::detail
