// gathered_attention.cpp: RoPE and the page table in C++, attention in attnc's core kernel.
#include "gathered_attention.h"

#include <algorithm>

#include "rope.h"

namespace llama {

std::string GatheredAttention::attend(const AttentionStep &step) {
  const int H = heads_, KVH = cache_.kv_heads, D = cache_.head_dim, sq = step.sq;
  const size_t q_row = size_t(H) * D, kv_row = size_t(KVH) * D;
  for (size_t b = 0; b < step.batch.size(); ++b) {
    const SequencePages &pages = step.batch[b]->cache;
    const int start = pages.length, length = start + sq;
    q_.assign(step.q + b * sq * q_row, step.q + (b + 1) * sq * q_row);
    for (int i = 0; i < sq; ++i) {
      for (int h = 0; h < H; ++h) rope_neox(&q_[i * q_row + h * D], start + i, D, rope_theta_);
      float *k = cache_.k_row(step.layer, pages, start + i), *v = cache_.v_row(step.layer, pages, start + i);
      std::copy_n(step.k_new + (b * sq + i) * kv_row, kv_row, k);
      std::copy_n(step.v_new + (b * sq + i) * kv_row, kv_row, v);
      for (int g = 0; g < KVH; ++g) rope_neox(k + g * D, start + i, D, rope_theta_);
    }
    k_.resize(length * kv_row);
    v_.resize(length * kv_row);
    for (int t = 0; t < length; ++t) {
      std::copy_n(cache_.k_row(step.layer, pages, t), kv_row, &k_[t * kv_row]);
      std::copy_n(cache_.v_row(step.layer, pages, t), kv_row, &v_[t * kv_row]);
    }
    const int64_t q_shape[] = {1, sq, H, D}, kv_shape[] = {1, length, KVH, D};
    const attn_arg args[] = {{"q", {q_.data(), ATTN_F32, 4, q_shape, nullptr}},
                             {"k", {k_.data(), ATTN_F32, 4, kv_shape, nullptr}},
                             {"v", {v_.data(), ATTN_F32, 4, kv_shape, nullptr}},
                             {"out", {step.out + b * sq * q_row, ATTN_F32, 4, q_shape, nullptr}}};
    if (attn_run(core_, args, 4) != ATTN_OK) return attn_last_error();
  }
  return {};
}

}  // namespace llama
