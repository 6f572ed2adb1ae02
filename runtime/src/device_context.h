// device_context.h: the GPU context a call runs in, and the checks of its device tensors.
#pragma once

#include <cstdint>

#include "attn/kernel_abi.h"
#include "device.h"

namespace attn::detail {

// The GPU API of a tensor's memory (ATTN_HOST: none).
DeviceApi memory_api(attn_memory memory);
// "a CUDA device pointer", "an OpenCL buffer", "a host pointer": for messages.
const char *memory_text(attn_memory memory);

// Fills context's GPU fields for a variant on api (a no-op for none): the application's context
// (attn_set_cuda_context / attn_set_opencl_context), else the defaults runtime.h describes.
// with_device_tensors: a CUDA call with device tensors resolves its context even where the
// application set none (the tensors must belong to it). Records the message on failure.
attn_status set_call_device_context(DeviceApi api, bool with_device_tensors, attn_call_context *context);

// A device tensor's handle must reach `bytes` bytes inside one allocation (CUDA) or buffer
// (OpenCL) of the call's context. Records the message on failure (ATTN_ERR_DEVICE_TENSOR).
attn_status check_device_tensor(DeviceApi api, const attn_call_context &context, const char *name, void *data,
                                uint64_t bytes);

// Copies a checked device tensor's first `bytes` bytes to `host`, after the work queued before on
// the call's stream (CUDA) or queue (OpenCL); returns when the copy is done. Records the message
// on failure (ATTN_ERR_DEVICE_TENSOR).
attn_status read_device_tensor(DeviceApi api, const attn_call_context &context, const char *name, void *data,
                               uint64_t bytes, void *host);

}  // namespace attn::detail
