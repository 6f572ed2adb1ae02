// guarded_memory.h: tensor storage between inaccessible pages, with sentinel slack before it, so a
// kernel's access past a tensor's end faults and a write before its start shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnc::test {

// `bytes` of storage whose end touches an inaccessible page and whose start follows sentinel
// slack (at least slack_bytes, up to the page boundary) after another inaccessible page. The
// storage starts zero-filled and is mapped lazily (MAP_NORESERVE): a table of 2^29 int32 costs
// only the pages written.
class GuardedBuffer {
 public:
  static constexpr uint8_t sentinel = 0xA5;
  static constexpr size_t slack_bytes = 256;

  explicit GuardedBuffer(size_t bytes);
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;
  GuardedBuffer(GuardedBuffer &&other) noexcept;
  GuardedBuffer &operator=(GuardedBuffer &&other) noexcept;
  ~GuardedBuffer();

  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  size_t size() const { return bytes_; }
  // Whether every slack byte before the storage still holds the sentinel.
  bool slack_intact() const;
  // The storage's bytes, for a before / after comparison (small tensors only).
  std::vector<uint8_t> snapshot() const { return {data_, data_ + bytes_}; }

 private:
  void release();
  uint8_t *mapping_ = nullptr;
  size_t mapping_bytes_ = 0;
  uint8_t *data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace attnc::test
