// reference.h: an fp64 attention reference (and its naive fp32 twin) written from the kernel contract.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "attn/mask.h"
#include "dropout_reference.h"

namespace attnc::reference {

// A read-only view of T data of rank 1..4, outermost dim first, strides in elements.
template <class T>
struct View {
  const T *data = nullptr;
  int rank = 0;
  std::array<int64_t, 4> shape{};
  std::array<int64_t, 4> strides{};

  // A row-major view of data with this shape.
  static View dense(const T *data, std::initializer_list<int64_t> shape) {
    if (shape.size() == 0 || shape.size() > 4) throw std::invalid_argument("View: rank must be 1..4");
    View t;
    t.data = data;
    t.rank = static_cast<int>(shape.size());
    int d = 0;
    for (int64_t s : shape) t.shape[d++] = s;
    int64_t stride = 1;
    for (d = t.rank - 1; d >= 0; --d) {
      t.strides[d] = stride;
      stride *= t.shape[d];
    }
    return t;
  }
  // A view with the given outer-first strides.
  static View strided(const T *data, std::initializer_list<int64_t> shape,
                      std::initializer_list<int64_t> strides) {
    if (shape.size() != strides.size())
      throw std::invalid_argument("View: shape and strides must have one entry per dim");
    View t = dense(data, shape);
    int d = 0;
    for (int64_t s : strides) t.strides[d++] = s;
    return t;
  }

  bool empty() const { return data == nullptr; }
  int64_t size(int dim) const { return shape[dim]; }
  T at(int64_t i0) const { return data[i0 * strides[0]]; }
  T at(int64_t i0, int64_t i1) const { return data[i0 * strides[0] + i1 * strides[1]]; }
  T at(int64_t i0, int64_t i1, int64_t i2) const {
    return data[i0 * strides[0] + i1 * strides[1] + i2 * strides[2]];
  }
  T at(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
    return data[i0 * strides[0] + i1 * strides[1] + i2 * strides[2] + i3 * strides[3]];
  }
};

using TensorView = View<float>;
using IndexView = View<int32_t>;
using ByteView = View<uint8_t>;

// The element (b, h, i, k) of a tensor shaped like the mask: [Sq, Sk], [H, Sq, Sk] or [B, H, Sq, Sk]
// (aligned from the right, as NumPy broadcasts); a B or H dim of size 1, or one left out, broadcasts.
template <class T>
T broadcast_at(const View<T> &t, int64_t b, int64_t h, int64_t i, int64_t k) {
  switch (t.rank) {
    case 2:
      return t.at(i, k);
    case 3:
      return t.at(t.shape[0] == 1 ? 0 : h, i, k);
    case 4:
      return t.at(t.shape[0] == 1 ? 0 : b, t.shape[1] == 1 ? 0 : h, i, k);
    default:
      throw std::invalid_argument("a mask-shaped tensor must have rank 2, 3 or 4");
  }
}

// The runtime inputs of the mask terms and score modifiers, as a kernel takes them. Leave empty the
// ones a spec does not use.
struct RuntimeInputs {
  IndexView key_lengths;     // [B], 0 <= value <= Sk: padding (also sets Lk)
  IndexView prefix_lengths;  // [B], 0 <= value <= Sk: prefix
  IndexView segment_ids_q;   // [B, Sq]: document
  IndexView segment_ids_k;   // [B, Sk]
  ByteView mask;             // [Sq, Sk], [H, Sq, Sk] or [B, H, Sq, Sk], B and H may be 1: tensor
  TensorView alibi_slopes;   // [H]: alibi
  TensorView score_bias;     // shaped and broadcast as mask: score_bias
};

struct Pair;

// Everything a spec asks of the attention besides q, k and v.
struct Options {
  double scale = 1.0;
  attn::Mask mask{};
  int mask_block = 0;       // > 0: structural terms keep whole mask_block x mask_block blocks
  double softcap = 0.0;     // > 0: s = softcap * tanh(s / softcap)
  bool alibi = false;       // s -= alibi_slopes[h] * |q' - k|
  bool score_bias = false;  // s += score_bias[b, h, i, k]
  bool top_left = false;    // q' = i (PyTorch's is_causal) instead of i + Lk - Sq
  bool probs = false;       // also return the probabilities (Result::probs), before dropout
  Dropout dropout;          // P.V multiplies each probability by dropout_factor
  RuntimeInputs inputs;
  // Issue 34: a score_mod (the scaled score -> the new score, before softcap) in double and in
  // float, and a mask_mod ANDed with the mask (expr_reference.h makes them from a spec); empty: none.
  std::function<double(double, const Pair &)> score_mod_f64;
  std::function<float(float, const Pair &)> score_mod_f32;
  std::function<bool(const Pair &)> mask_mod;
};

// One (query, key) pair: batch, head, query row i (0 <= i < Sq), key k, the row's key position
// q' = i + Lk - Sq (i when top-left aligned), and Lk (key_lengths[b] when the mask uses padding, else Sk).
struct Pair {
  int64_t batch = 0, head = 0, row = 0, key = 0, q_pos = 0, key_length = 0;
};

// Whether the mask keeps the pair. Runtime terms read inputs; the structural terms (window, causal,
// global) keep whole (query block, key block) pairs when mask_block > 0; random stays per element
// at its own block size.
bool keeps(const attn::Mask &mask, int mask_block, const RuntimeInputs &inputs, const Pair &pair);
// Windows and global only, per element: whether key k is kept for a query at key position q_pos.
// Throws std::invalid_argument for a mask with random or runtime terms.
bool keeps(const attn::Mask &mask, int64_t q_pos, int64_t k);

// The N key blocks random(BS, N, seed) draws for one query block (docs/DSL.md; draws may repeat).
std::vector<int64_t> random_key_blocks(uint32_t seed, int64_t query_block, int n_blocks, int64_t key_blocks);

// The scale a spec gets when it names none: 1 / sqrt(head_dim), in double.
double default_scale(int head_dim);

// out: dense [B, Sq, H, Dv] (core) or [B, S, M] (block); lse: dense [B, Sq, H], -inf for a row
// with no kept key (whose out is 0); with Options::probs, probs: dense [B, H, Sq, Sk], the
// softmax of each row over its kept keys, 0 for a masked key (all 0 in a row with none kept).
template <class T>
struct Result {
  std::vector<T> out;
  std::vector<T> lse;
  std::vector<T> probs;
};

// q: [B, Sq, H, D], k: [B, Sk, KVH, D], v: [B, Sk, KVH, Dv]. Head h reads k/v head h / (H / KVH).
Result<double> core_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                              const Options &options);
// The same loops in float with std::exp / tanh / log: what a careful naive fp32 implementation gets.
Result<float> core_naive_f32(const TensorView &q, const TensorView &k, const TensorView &v,
                             const Options &options);

// Masks of windows only, no modifiers: out alone.
std::vector<double> core_reference(const TensorView &q, const TensorView &k, const TensorView &v,
                                   double scale, const attn::Mask &mask);
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

// x: [B, S, M] -> out [B, S, M]: project, split heads (head h uses rows h*D .. h*D+D-1 of its
// projection), attend (Sq = Sk = S), merge heads, project out. lse as in the core form.
Result<double> block_reference(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                               const Options &options);
Result<float> block_naive_f32(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                              const Options &options);

// Cross-attention (encoder-decoder): queries from x [B, Sq, M], keys and values from x_kv
// [B, Sk, M] (with w_qkv, its q rows project x and its k and v rows x_kv) -> out [B, Sq, M]; the
// mask and positions as in the core form with Sq != Sk. lse [B, Sq, H].
Result<double> block_cross_reference(const TensorView &x, const TensorView &x_kv, const BlockWeights &w,
                                     const BlockShape &shape, const Options &options);
Result<float> block_cross_naive_f32(const TensorView &x, const TensorView &x_kv, const BlockWeights &w,
                                    const BlockShape &shape, const Options &options);

// Masks of windows only, no modifiers: out alone.
std::vector<double> block_reference(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                    double scale, const attn::Mask &mask);
std::vector<float> block_naive_f32(const TensorView &x, const BlockWeights &w, const BlockShape &shape,
                                   float scale, const attn::Mask &mask);

// One group of heads of one size (the block form's head_groups): heads query heads of head_dim,
// kv_heads k/v heads of head_dim (values as wide as keys), and the group's scale.
struct HeadGroupShape {
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  double scale = 1.0;
};

// The block form with head groups, in this order. Rows of w_q/b_q: group by group, head by head
// (group g's head h at rows Σ_{g'<g} H_g'·D_g' + h·D_g ..); w_k/b_k and w_v/b_v likewise with the
// groups' kv heads; w_qkv/b_qkv: every group's q rows, then every group's k rows, then v rows.
// w_o's columns are the merged heads in the order of w_q's rows. options.scale is not used (each
// group has its own); head-indexed inputs (mask, score_bias, alibi_slopes) are over all heads, as
// is lse [B, S, H].
Result<double> block_groups_reference(const TensorView &x, const BlockWeights &w,
                                      const std::vector<HeadGroupShape> &groups, const Options &options);
Result<float> block_groups_naive_f32(const TensorView &x, const BlockWeights &w,
                                     const std::vector<HeadGroupShape> &groups, const Options &options);

}  // namespace attnc::reference
