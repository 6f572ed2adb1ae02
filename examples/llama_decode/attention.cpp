// attention.cpp: the paged cache's storage.
#include "attention.h"

#include <algorithm>

namespace llama {

PagedCache::PagedCache(int layers, int pages, int page_tokens, int kv_heads, int head_dim)
    : layers(layers),
      pages(pages),
      page_tokens(page_tokens),
      kv_heads(kv_heads),
      head_dim(head_dim),
      k(layers, std::vector<float>(size_t(pages) * page_tokens * kv_heads * head_dim)),
      v(layers, std::vector<float>(size_t(pages) * page_tokens * kv_heads * head_dim)) {}

float *PagedCache::k_row(int layer, const SequencePages &s, int t) {
  const size_t slot = size_t(s.page_of(t, page_tokens)) * page_tokens + t % page_tokens;
  return k[layer].data() + slot * kv_heads * head_dim;
}

float *PagedCache::v_row(int layer, const SequencePages &s, int t) {
  const size_t slot = size_t(s.page_of(t, page_tokens)) * page_tokens + t % page_tokens;
  return v[layer].data() + slot * kv_heads * head_dim;
}

StepTables step_tables(const AttentionStep &step, int page_tokens) {
  StepTables t;
  std::vector<const SequencePages *> sequences;
  for (const Sequence *s : step.batch) {
    sequences.push_back(&s->cache);
    t.cache_seqlens.push_back(s->cache.length);
    t.max_pages = std::max<int64_t>(t.max_pages, (s->cache.length + step.sq + page_tokens - 1) / page_tokens);
  }
  t.block_table = block_table(sequences, static_cast<int>(t.max_pages));
  return t;
}

}  // namespace llama
