// attn/kernel_id.h: the one name of a kernel, derived from its spec, used as symbol, file and key.
#pragma once

#include <string>

#include "attn/spec.h"

namespace attn {

// e.g. "attn_core_h12_kv12_d64_f32_causal", "attn_block_m768_h12_kv12_d64_f32_causal_fused_bias".
// Defaults are resolved first, so specs that compute the same thing share an id; the name label
// is not part of it. A valid C identifier of at most 120 characters.
std::string kernel_id(const Spec &spec);

}  // namespace attn
