// quantized_attention.cpp: one attn_run per layer and step over int8 or E4M3 codes.
#include "quantized_attention.h"

namespace llama {

QuantizedPagedAttention::QuantizedPagedAttention(const attn_kernel *kernel, const PagedCache &shape,
                                                 int heads, bool int8)
    : kernel_(kernel),
      pages_(shape.pages),
      page_tokens_(shape.page_tokens),
      kv_heads_(shape.kv_heads),
      head_dim_(shape.head_dim),
      heads_(heads),
      int8_(int8) {
  const size_t slots = size_t(pages_) * page_tokens_ * kv_heads_;
  k_codes_.assign(shape.layers, std::vector<uint8_t>(slots * head_dim_));
  v_codes_.assign(shape.layers, std::vector<uint8_t>(slots * head_dim_));
  if (int8_) {
    k_scales_.assign(shape.layers, std::vector<float>(slots));
    v_scales_.assign(shape.layers, std::vector<float>(slots));
  }
}

size_t QuantizedPagedAttention::bytes() const {
  size_t total = 0;
  for (size_t l = 0; l < k_codes_.size(); ++l) total += k_codes_[l].size() + v_codes_[l].size();
  for (size_t l = 0; l < k_scales_.size(); ++l)
    total += (k_scales_[l].size() + v_scales_[l].size()) * sizeof(float);
  return total;
}

std::string QuantizedPagedAttention::attend(const AttentionStep &step) {
  const int64_t B = static_cast<int64_t>(step.batch.size()), P = page_tokens_;
  StepTables tables = step_tables(step, static_cast<int>(P));
  const int64_t H = heads_, KVH = kv_heads_, D = head_dim_;
  const int64_t q_shape[] = {B, step.sq, H, D}, new_shape[] = {B, step.sq, KVH, D},
                cache_shape[] = {pages_, P, KVH, D}, scale_shape[] = {pages_, P, KVH},
                table_shape[] = {B, tables.max_pages}, lengths_shape[] = {B};
  const attn_dtype codes = int8_ ? ATTN_I8 : ATTN_U8;
  float scalar_scale = fp8_scale;
  const attn_arg args[] = {
      {"q", {const_cast<float *>(step.q), ATTN_F32, 4, q_shape, nullptr}},
      {"k_new", {const_cast<float *>(step.k_new), ATTN_F32, 4, new_shape, nullptr}},
      {"v_new", {const_cast<float *>(step.v_new), ATTN_F32, 4, new_shape, nullptr}},
      {"k_cache", {k_codes_[step.layer].data(), codes, 4, cache_shape, nullptr}},
      {"v_cache", {v_codes_[step.layer].data(), codes, 4, cache_shape, nullptr}},
      {"k_scale", int8_ ? attn_tensor{k_scales_[step.layer].data(), ATTN_F32, 3, scale_shape, nullptr}
                        : attn_tensor{&scalar_scale, ATTN_F32, 0, nullptr, nullptr}},
      {"v_scale", int8_ ? attn_tensor{v_scales_[step.layer].data(), ATTN_F32, 3, scale_shape, nullptr}
                        : attn_tensor{&scalar_scale, ATTN_F32, 0, nullptr, nullptr}},
      {"block_table", {tables.block_table.data(), ATTN_I32, 2, table_shape, nullptr}},
      {"cache_seqlens", {tables.cache_seqlens.data(), ATTN_I32, 1, lengths_shape, nullptr}},
      {"out", {step.out, ATTN_F32, 4, q_shape, nullptr}},
  };
  if (attn_run(kernel_, args, sizeof args / sizeof args[0]) != ATTN_OK) return attn_last_error();
  return {};
}

}  // namespace llama
