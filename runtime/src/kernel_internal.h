// kernel_internal.h: the attn_kernel handle and the checks shared by the registry and libraries.
#pragma once

#include <string>
#include <vector>

#include "attn/kernel_abi.h"
#include "attn/runtime.h"

// A handle the runtime hands out: a generated kernel's table. Registry kernels live until the
// process exits; library kernels until attn_library_close.
struct attn_kernel {
  const attn_kernel_desc *desc;
};

namespace attn::detail {

// Whether a table whose abi_version already matched is usable (ids, names, ranks, run entry);
// on false, why names the first problem.
bool desc_is_well_formed(const attn_kernel_desc &desc, std::string *why);

// Records ATTN_ERR_UNKNOWN_KERNEL naming id and up to ten of the known kernels; where says
// whose kernels they are ("linked into this application", "in library 'x.so'").
attn_status unknown_kernel(const char *id, const std::vector<const attn_kernel *> &known, const char *where);

}  // namespace attn::detail
