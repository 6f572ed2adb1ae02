// kernel_internal.h: the attn_kernel handle and the checks shared by the registry and libraries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/kernel_abi.h"
#include "attn/runtime.h"

// A handle the runtime hands out: a generated kernel's table. Registry kernels live until the
// process exits; library kernels until attn_library_close.
struct attn_kernel {
  const attn_kernel_desc *desc;
  // Bit v: variant v's CPU features are present (read once; they never change). Tables with
  // more than 32 variants leave it 0 and are checked per call.
  uint32_t cpu_variants = 0;
};

namespace attn::detail {

// A handle for desc, its CPU check done.
attn_kernel make_kernel_handle(const attn_kernel_desc *desc);

// Whether a table whose abi_version already matched is usable (ids, names, ranks, run entry);
// on false, why names the first problem.
bool desc_is_well_formed(const attn_kernel_desc &desc, std::string *why);

// Records ATTN_ERR_UNKNOWN_KERNEL naming id and up to ten of the known kernels; where says
// whose kernels they are ("linked into this application", "in library 'x.so'").
attn_status unknown_kernel(const char *id, const std::vector<const attn_kernel *> &known, const char *where);

}  // namespace attn::detail
