// reference.h: the fp64 reference of one sequence's attention over its whole history.
#pragma once

#include <vector>

namespace llama {

struct AttentionShape {
  int heads, kv_heads, head_dim;
  float rope_theta;
};

// The newest sq queries of a sequence attending causally over its `length` tokens, in double,
// from what the model computed before any rotation: q [sq, H, D] (query i at position
// length − sq + i), k_history and v_history [length, KVH, D]. RoPE (neox, rope_dim = D) in
// double at the fp32 angles; scale 1/sqrt(D); GQA kvh(h) = h / (H / KVH). Returns [sq, H, D].
std::vector<double> attention_reference(const float *q, int sq, const float *k_history,
                                        const float *v_history, int length, const AttentionShape &shape);

}  // namespace llama
