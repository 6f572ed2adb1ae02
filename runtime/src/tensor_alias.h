// tensor_alias.h: refuses a call whose output or in-out tensor shares memory with another tensor.
#pragma once

#include <vector>

#include "attn/kernel_abi.h"

namespace attn::detail {

// Each output and in-out tensor's bytes, from its first element to the end of its last, must not
// overlap any other given tensor's (host tensors and CUDA device pointers by address, OpenCL
// buffers, which start at offset 0, by handle): a kernel writing one while reading or writing the
// other gives garbage. given[i] is desc.args[i]'s argument or null (an optional input left out).
// For tensors whose ranks, shapes and strides passed their checks; else ATTN_ERR_ALIASED with a
// message naming both.
attn_status check_no_aliasing(const attn_kernel_desc &desc, const std::vector<const attn_arg *> &given);

}  // namespace attn::detail
