// cache_layout.h: where a KV cache test call's tokens live: contiguous [B, Smax] rows, or pages handed out
// shuffled.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "attn/spec.h"
#include "kernel_test_support.h"

namespace attnc::test {

struct CacheLayout {
  int batch = 0, seq_q = 0;     // the call's B and Sq
  std::vector<int32_t> cached;  // cache_seqlens
  attn::KvCache kind = attn::KvCache::contiguous;
  int page_size = 0;             // paged: P
  int smax = 0;                  // contiguous: the longest sequence after the call, plus 3 spare slots
  int pages = 0, max_pages = 0;  // paged: the pages used plus 3 spare; table columns, one to spare
  std::vector<std::vector<int32_t>> table;  // paged: [B][max_pages], entries past a sequence's pages 12345

  // The slot of (b, position): [B, Smax] or [num_pages, P] flattened.
  int64_t slot(int b, int64_t position) const;
  // The cache's outer dims: [B, Smax] or [num_pages, P].
  int64_t outer() const;
  int64_t slots() const;
  // block_table [B, max_pages] as an i32 tensor.
  IndexTensor block_table() const;
};

// The layout of a call appending seq_q tokens to sequences holding `cached` tokens (the spare
// slots and pages stay garbage); paged: pages in a shuffled order (rng).
CacheLayout make_cache_layout(const attn::Spec &resolved, int batch, int seq_q,
                              const std::vector<int32_t> &cached, std::mt19937 &rng);

}  // namespace attnc::test
