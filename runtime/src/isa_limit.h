// isa_limit.h: the process-wide limit on instruction sets and the kernel variant it selects.
#pragma once

#include <string>

#include "attn/kernel_abi.h"
#include "device.h"
#include "kernel_internal.h"

namespace attn::detail {

// The variant of the kernel that attn_run runs now: the first (most capable first) whose features
// this CPU has (kernel.cpu_variants, read once) and the limit allows; 0 for a kernel without
// variants. On failure (no variant left, or ATTN_MAX_ISA holds an unknown name) records the
// message and returns its status. tensors: the API of the call's device tensors (none: all on the
// host); a call with device tensors runs the kernel's variant for that API, or fails
// (ATTN_ERR_DEVICE_TENSOR, or ATTN_ERR_NO_DEVICE where its device is missing).
attn_status select_variant(const attn_kernel &kernel, DeviceApi tensors, int *variant);

// Bit v set where variant v's CPU features are present (v < 32).
uint32_t cpu_variant_bits(const attn_kernel_desc &desc);

}  // namespace attn::detail
