// page_pool.cpp: the free-list page allocator and block tables.
#include "page_pool.h"

#include <algorithm>
#include <numeric>

namespace llama {

PagePool::PagePool(int pages, int page_tokens, const std::vector<int32_t> &order)
    : pages_(pages), page_tokens_(page_tokens), free_(order.rbegin(), order.rend()), in_use_(pages, false) {}

PagePool::PagePool(int pages, int page_tokens)
    : PagePool(pages, page_tokens, [pages] {
        std::vector<int32_t> order(pages);
        std::iota(order.begin(), order.end(), 0);
        return order;
      }()) {}

int32_t PagePool::allocate() {
  if (free_.empty()) return -1;
  const int32_t page = free_.back();
  free_.pop_back();
  in_use_[page] = true;
  return page;
}

bool PagePool::release(int32_t page) {
  if (page < 0 || page >= pages_ || !in_use_[page]) return false;
  in_use_[page] = false;
  free_.push_back(page);
  return true;
}

bool SequencePages::reserve(PagePool &pool, int tokens) {
  while (static_cast<int64_t>(pages.size()) * pool.page_tokens() < tokens) {
    const int32_t page = pool.allocate();
    if (page < 0) return false;
    pages.push_back(page);
  }
  return true;
}

void SequencePages::release(PagePool &pool) {
  for (int32_t page : pages) pool.release(page);
  pages.clear();
  length = 0;
}

std::vector<int32_t> block_table(const std::vector<const SequencePages *> &sequences, int max_pages) {
  std::vector<int32_t> table(sequences.size() * static_cast<size_t>(max_pages), 0);
  for (size_t b = 0; b < sequences.size(); ++b) {
    const std::vector<int32_t> &pages = sequences[b]->pages;
    std::copy_n(pages.begin(), std::min<size_t>(pages.size(), max_pages), table.begin() + b * max_pages);
  }
  return table;
}

}  // namespace llama
