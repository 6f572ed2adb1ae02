// attnc/arguments.h: the tensors a kernel takes, derived from its spec (the public contract).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/spec.h"

namespace attnc {

// One dimension: a size fixed by the spec, or a runtime size named "B", "Sq", "Sk" or "S".
struct ArgDim {
  int64_t fixed = 0;  // > 0 when fixed
  std::string symbol;
};

// Shapes are outermost first, as the caller sees them; the innermost dim is contiguous.
struct ArgSpec {
  std::string name;
  std::string dtype = "f32";
  bool is_output = false;
  std::vector<ArgDim> dims;
};

// core:  q [B,Sq,H,D], k [B,Sk,KVH,D], v [B,Sk,KVH,Dv] -> out [B,Sq,H,Dv]
// block: x [B,S,d_model], w_q/w_k/w_v or w_qkv, b_* when proj_bias, w_o, b_o -> out [B,S,d_model]
std::vector<ArgSpec> kernel_arguments(const attn::Spec &resolved);

}  // namespace attnc
