// layout_hint.h: recognises a head-major [B,H,S,D] tensor given where a kernel takes [B,S,H,D].
#pragma once

#include <string>

#include "attn/runtime.h"

namespace attn::detail {

// When `t` looks like `info` with its dims 1 and 2 swapped (dim 1 a run-time size, dim 2 fixed,
// and the caller's dim 1 holding that fixed size where its dim 2 does not): a sentence naming the
// layout the caller gave and the one the kernel takes, to add to a shape error. Otherwise "".
std::string head_major_hint(const attn_arg_info &info, const attn_tensor &t);

}  // namespace attn::detail
