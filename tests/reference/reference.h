// reference.h: an fp64 attention reference (and its naive fp32 twin) written from the kernel contract.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "attn/mask.h"

namespace attnc::reference {

// A read-only view of float data of rank 1..4, outermost dim first, strides in elements.
struct TensorView {
  const float *data = nullptr;
  int rank = 0;
  std::array<int64_t, 4> shape{};
  std::array<int64_t, 4> strides{};

  // A row-major view of data with this shape.
  static TensorView dense(const float *data, std::initializer_list<int64_t> shape);
  // A view with the given outer-first strides.
  static TensorView strided(const float *data, std::initializer_list<int64_t> shape,
                            std::initializer_list<int64_t> strides);

  bool empty() const { return data == nullptr; }
  int64_t size(int dim) const { return shape[dim]; }
  float at(int64_t i0) const { return data[i0 * strides[0]]; }
  float at(int64_t i0, int64_t i1) const { return data[i0 * strides[0] + i1 * strides[1]]; }
  float at(int64_t i0, int64_t i1, int64_t i2) const {
    return data[i0 * strides[0] + i1 * strides[1] + i2 * strides[2]];
  }
  float at(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return data[i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + i3 * strides[3]];
  }
};

// Whether the mask keeps key k for a query at key position q_pos (bottom-right aligned:
// q_pos = i + Sk - Sq). A window (l, r) keeps q_pos - l <= k <= q_pos + r, -1 unbounded.
bool keeps(const attn::Mask &mask, int64_t q_pos, int64_t k);

// The scale a spec gets when it names none: 1 / sqrt(head_dim), in double.
double default_scale(int head_dim);

// q: [B, Sq, H, D], k: [B, Sk, KVH, D], v: [B, Sk, KVH, Dv] -> dense [B, Sq, H, Dv].
// Head h reads k/v head h / (H / KVH). A row whose every key is masked is 0.
std::vector<double> core_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                                   double scale, const attn::Mask &mask);
// The same loops in float with std::exp: what a careful naive fp32 implementation gets.
std::vector<float> core_naive_f32(const TensorView &q, const TensorView &k, const TensorView &v, float scale,
                                  const attn::Mask &mask);

// The block form's sizes; d_model is x's last dim.
struct BlockShape {
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int head_dim_v = 0;
};

// Weights of the block form, each y = x · Wᵀ + b. Give w_q/w_k/w_v or w_qkv; biases are optional
// (empty views). M = d_model, H/KVH/D/Dv as in BlockShape.
struct BlockWeights {
  TensorView w_q;    // [H*D, M]
  TensorView w_k;    // [KVH*D, M]
  TensorView w_v;    // [KVH*Dv, M]
  TensorView w_qkv;  // [H*D + KVH*D + KVH*Dv, M]: all q heads, then k heads, then v heads
  TensorView b_q;    // [H*D]
  TensorView b_k;    // [KVH*D]
  TensorView b_v;    // [KVH*Dv]
  TensorView b_qkv;  // [H*D + KVH*D + KVH*Dv]
  TensorView w_o;    // [M, H*Dv]: merged heads, head h in columns h*Dv .. h*Dv+Dv-1
  TensorView b_o;    // [M]
};

// x: [B, S, M] -> dense [B, S, M]: project, split heads (head h uses rows h*D .. h*D+D-1 of its
// projection), attend (Sq = Sk = S), merge heads, project out.
std::vector<double> block_reference(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                    double scale, const attn::Mask &mask);
std::vector<float> block_naive_f32(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                   float scale, const attn::Mask &mask);

}  // namespace attnc::reference
