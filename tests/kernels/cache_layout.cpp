// The KV cache tests' slot layouts: contiguous rows or shuffled pages.
#include "cache_layout.h"

#include <algorithm>
#include <numeric>

namespace attnc::test {

int64_t CacheLayout::slot(int b, int64_t position) const {
  if (kind == attn::KvCache::contiguous) return int64_t{b} * smax + position;
  return int64_t{table[size_t(b)][size_t(position / page_size)]} * page_size + position % page_size;
}

int64_t CacheLayout::outer() const {
  return kind == attn::KvCache::contiguous ? batch : pages;
}

int64_t CacheLayout::slots() const {
  return kind == attn::KvCache::contiguous ? smax : page_size;
}

IndexTensor CacheLayout::block_table() const {
  IndexTensor t({batch, max_pages}, false, -1);
  for (int b = 0; b < batch; ++b)
    for (int p = 0; p < max_pages; ++p) t.logical(int64_t{b} * max_pages + p) = table[size_t(b)][size_t(p)];
  return t;
}

CacheLayout make_cache_layout(const attn::Spec &s, int batch, int seq_q, const std::vector<int32_t> &cached,
                              std::mt19937 &rng) {
  CacheLayout c;
  c.batch = batch;
  c.seq_q = seq_q;
  c.cached = cached;
  c.kind = s.kv_cache;
  c.page_size = s.page_size;
  if (s.kv_cache == attn::KvCache::contiguous) {
    for (int32_t n : cached) c.smax = std::max(c.smax, n + seq_q);
    c.smax += 3;  // room past every sequence's end: slots that stay garbage
    return c;
  }
  const int page = s.page_size;
  for (int32_t n : cached) c.max_pages = std::max(c.max_pages, (n + seq_q + page - 1) / page);
  c.max_pages += 1;
  int used = 0;
  for (int32_t n : cached) used += (n + seq_q + page - 1) / page;
  c.pages = used + 3;
  std::vector<int32_t> order(size_t(c.pages));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  size_t next = 0;
  for (int32_t n : cached) {
    std::vector<int32_t> row(size_t(c.max_pages), 12345);  // entries past a sequence's pages: never read
    for (int p = 0; p < (n + seq_q + page - 1) / page; ++p) row[size_t(p)] = order[next++];
    c.table.push_back(row);
  }
  return c;
}

}  // namespace attnc::test
