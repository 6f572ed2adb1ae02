// attnc/arguments.h: the tensors a kernel takes, derived from its spec (the public contract).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attn/spec.h"

namespace attnc {

// One dimension: a size fixed by the spec, or a runtime size named "B", "Sq", "Sk" or "S".
struct ArgDim {
  int64_t fixed = 0;   // > 0 when fixed
  std::string symbol;  // the runtime size's name; for a fixed size, its label ("H", "D", ...)
};

// Shapes are outermost first, as the caller sees them; the innermost dim is contiguous.
struct ArgSpec {
  std::string name;
  std::string dtype = "f32";  // f32, i32, u8
  bool is_output = false;
  std::vector<ArgDim> dims;
  uint32_t broadcast_dims = 0;  // bit i (outermost = 0): the caller may give size 1
  int min_rank = 0;             // fewest dims a caller may give (0: exactly all)
};

// core:  q [B,Sq,H,D], k [B,Sk,KVH,D], v [B,Sk,KVH,Dv] -> out [B,Sq,H,Dv]
// block: x [B,S,d_model], w_q/w_k/w_v or w_qkv, b_* when proj_bias, w_o, b_o -> out [B,S,d_model]
// then, as the mask and modifiers need them: key_lengths [B], prefix_lengths [B],
// segment_ids_q [B,Sq], segment_ids_k [B,Sk], mask [B,H,Sq,Sk] u8, alibi_slopes [H],
// score_bias [B,H,Sq,Sk] (B and H broadcast); and the outputs lse [B,Sq,H] and probs
// [B,H,Sq,Sk] f32 (block form: Sq = Sk = S) when asked for.
std::vector<ArgSpec> kernel_arguments(const attn::Spec &resolved);

}  // namespace attnc
