// paged_attention.cpp: one attn_run per layer and step, for the whole batch.
#include "paged_attention.h"

namespace llama {

std::string PagedAttention::attend(const AttentionStep &step) {
  const int64_t B = static_cast<int64_t>(step.batch.size()), P = cache_.page_tokens;
  StepTables tables = step_tables(step, static_cast<int>(P));
  const int64_t H = heads_, KVH = cache_.kv_heads, D = cache_.head_dim;
  const int64_t q_shape[] = {B, step.sq, H, D}, new_shape[] = {B, step.sq, KVH, D},
                cache_shape[] = {cache_.pages, P, KVH, D}, table_shape[] = {B, tables.max_pages},
                lengths_shape[] = {B};
  const attn_arg args[] = {
      {"q", {const_cast<float *>(step.q), ATTN_F32, 4, q_shape, nullptr}},
      {"k_new", {const_cast<float *>(step.k_new), ATTN_F32, 4, new_shape, nullptr}},
      {"v_new", {const_cast<float *>(step.v_new), ATTN_F32, 4, new_shape, nullptr}},
      {"k_cache", {cache_.k[step.layer].data(), ATTN_F32, 4, cache_shape, nullptr}},
      {"v_cache", {cache_.v[step.layer].data(), ATTN_F32, 4, cache_shape, nullptr}},
      {"block_table", {tables.block_table.data(), ATTN_I32, 2, table_shape, nullptr}},
      {"cache_seqlens", {tables.cache_seqlens.data(), ATTN_I32, 1, lengths_shape, nullptr}},
      {"out", {step.out, ATTN_F32, 4, q_shape, nullptr}},
  };
  if (attn_run(kernel_, args, sizeof args / sizeof args[0]) != ATTN_OK) return attn_last_error();
  return {};
}

}  // namespace llama
