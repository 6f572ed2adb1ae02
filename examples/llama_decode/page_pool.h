// page_pool.h: a paged KV cache's page allocator (a free list) and each sequence's block table.
#pragma once

#include <cstdint>
#include <vector>

namespace llama {

// Hands out page ids in [0, pages) from a free list; pages released go back to it. The pool
// knows nothing of what a page holds: every layer's k_cache/v_cache [pages, P, KVH, D] uses the
// same ids, as in vLLM.
class PagePool {
 public:
  // The free list starts in the order of `order` (a permutation of [0, pages)), so that a
  // sequence's pages are scattered as in a pool that has served many requests.
  PagePool(int pages, int page_tokens, const std::vector<int32_t> &order);
  PagePool(int pages, int page_tokens);  // free list 0, 1, 2, ...

  int page_tokens() const { return page_tokens_; }
  int pages() const { return pages_; }
  int used() const { return pages_ - static_cast<int>(free_.size()); }

  // A free page's id, or -1 when none is left.
  int32_t allocate();
  // Gives a page back; false (and nothing changes) for an id outside the pool or already free.
  bool release(int32_t page);

 private:
  int pages_, page_tokens_;
  std::vector<int32_t> free_;  // taken from the back
  std::vector<bool> in_use_;
};

// One sequence's place in the cache: its tokens so far and the pages that hold them, in order.
struct SequencePages {
  std::vector<int32_t> pages;  // block table row: page of tokens [i·P, (i+1)·P)
  int length = 0;              // tokens in the cache

  // Takes pages until `tokens` fit; false (pages taken so far kept) when the pool runs out.
  bool reserve(PagePool &pool, int tokens);
  // Returns every page to the pool.
  void release(PagePool &pool);
  // The cache slot of token t: (page id, row in the page).
  int32_t page_of(int t, int page_tokens) const { return pages[t / page_tokens]; }
};

// block_table [B, max_pages] int32 for these sequences, rows padded with page 0 (never read:
// beyond each sequence's length).
std::vector<int32_t> block_table(const std::vector<const SequencePages *> &sequences, int max_pages);

}  // namespace llama
