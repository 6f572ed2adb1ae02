// isa_limit.h: the process-wide limit on instruction sets and the kernel variant it selects.
#pragma once

#include <string>

#include "attn/kernel_abi.h"

namespace attn::detail {

// The variant of desc that attn_run runs now: the first (most capable first) whose features this
// CPU has and the limit allows; 0 for a kernel without variants. On failure (no variant left, or
// ATTN_MAX_ISA holds an unknown name) records the message and returns its status.
attn_status select_variant(const attn_kernel_desc &desc, int *variant);

}  // namespace attn::detail
