// guarded_memory.cpp: GuardedBuffer on mmap and mprotect.
#include "guarded_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace attnc::test {

GuardedBuffer::GuardedBuffer(size_t bytes) : bytes_(bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t body = (bytes + slack_bytes + page - 1) / page * page;
  mapping_bytes_ = body + 2 * page;
  void *mapping =
      mmap(nullptr, mapping_bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) throw std::bad_alloc();
  mapping_ = static_cast<uint8_t *>(mapping);
  if (mprotect(mapping_ + page, body, PROT_READ | PROT_WRITE) != 0) {
    munmap(mapping_, mapping_bytes_);
    throw std::bad_alloc();
  }
  // The storage ends at the trailing inaccessible page; the sentinel fills what lies before it.
  data_ = mapping_ + page + body - bytes;
  std::memset(mapping_ + page, sentinel, body - bytes);
}

GuardedBuffer::GuardedBuffer(GuardedBuffer &&other) noexcept {
  *this = std::move(other);
}

GuardedBuffer &GuardedBuffer::operator=(GuardedBuffer &&other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

GuardedBuffer::~GuardedBuffer() {
  release();
}

void GuardedBuffer::release() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  mapping_ = nullptr;
}

bool GuardedBuffer::slack_intact() const {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return std::all_of(mapping_ + page, data_, [](uint8_t b) { return b == sentinel; });
}

}  // namespace attnc::test
