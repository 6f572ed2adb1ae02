// sequence_reference.h: rotary embeddings and one sequence's attention, in fp64 (and the naive
// fp32 twin), written from docs/DSL.md for the KV cache, RoPE and varlen kernels (issue 24).
#pragma once

#include <cstdint>
#include <vector>

#include "attn/spec.h"
#include "reference.h"

namespace attnc::reference {

struct RopeOptions {
  attn::Rope kind = attn::Rope::none;
  float theta = 10000.0f;
  int dim = 0;  // rotated elements (even, <= head_dim)
};

// The documented angle of pair i at `position`, in fp32: position * theta^(-2i / rope_dim).
float rope_angle(const RopeOptions &rope, int64_t position, int pair);

// x[0 .. head_dim) rotated in place at `position` (cos and sin of rope_angle in T).
template <class T>
void rope_rotate(T *x, int head_dim, int64_t position, const RopeOptions &rope);

// One sequence, tensors row-major: q [Sq, H, D], k [Sk, KVH, D], v [Sk, KVH, Dv] (already
// rotated where the spec rotates), out [Sq, H, Dv] and lse [Sq, H] (-inf and zeros for a row with
// no kept key). Query row i sits at key position Sk - Sq + i (bottom-right). options: scale, mask
// (structural terms only), mask_block, softcap, alibi (inputs.alibi_slopes).
template <class T>
void attend_sequence(const std::vector<T> &q, const std::vector<T> &k, const std::vector<T> &v, int seq_q,
                     int seq_k, int heads, int kv_heads, int head_dim, int head_dim_v, const Options &options,
                     T *out, T *lse);

}  // namespace attnc::reference
