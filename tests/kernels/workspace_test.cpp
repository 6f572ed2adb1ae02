// Kernels keep their large scratch blocks between calls: a call that reuses another's blocks, or
// runs after attn_kernel_release_memory, still matches the reference bit for bit; the blocks are
// asked of Halide's default allocator once, not per call, and a release gives them back.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>

#include "kernel_test_support.h"

namespace {

using namespace attnc::test;

struct Shape {
  int batch, seq_q, seq_k;
};

// Packed shapes (Sk >= 1024, B x heads >= 8): each task copies its head's keys and values into
// blocks of 64 KiB and more. The larger shape runs first so that the smaller reuses its blocks,
// holding another call's keys.
TEST_CASE("calls that reuse held scratch blocks, or run after a release, give the same output") {
  const attn::Spec spec = parse("heads=2 head_dim=16 mask=causal");
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  for (const Shape shape : {Shape{4, 97, 1500}, Shape{4, 150, 1100}, Shape{4, 300, 1031}}) {
    CAPTURE(shape.seq_k);
    std::mt19937 rng(static_cast<unsigned>(shape.seq_k));
    Call call = make_core_call(spec, shape.batch, shape.seq_q, shape.seq_k, false, rng);
    const Expected expected = expected_result(spec, call);

    REQUIRE(call.run(kernel) == ATTN_OK);
    const Tensor first = call.tensors.at("out");
    const Comparison result = compare(first, expected);
    CAPTURE(result);
    CHECK(result.pass());

    call.tensors.at("out").fill(-777.0f);
    REQUIRE(call.run(kernel) == ATTN_OK);
    CHECK(differing_elements(first, call.tensors.at("out")) == 0);

    REQUIRE(attn_kernel_release_memory(kernel) == ATTN_OK);
    call.tensors.at("out").fill(-777.0f);
    REQUIRE(call.run(kernel) == ATTN_OK);
    CHECK(differing_elements(first, call.tensors.at("out")) == 0);
  }
}

// Halide's default allocator (weak in its runtime) replaced for this binary, counting the
// blocks of 64 KiB and up that the held-block cache asks it for and still holds.
struct LargeBlocks {
  std::atomic<int> allocated{0};
  std::atomic<int> live{0};
} large_blocks;

constexpr size_t large_bytes = size_t{64} << 10;
constexpr size_t alignment = 128;

}  // namespace

// Aligned to 128 bytes, with room to read past both ends (what Halide asks of halide_malloc).
// The raw pointer and the size sit in the 128 bytes before the block.
extern "C" void *halide_default_malloc(void *, size_t bytes) {
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  auto *raw = static_cast<unsigned char *>(std::malloc(rounded + 3 * alignment));
  if (raw == nullptr) return nullptr;
  const uintptr_t start = (reinterpret_cast<uintptr_t>(raw) + 2 * alignment - 1) / alignment * alignment;
  auto *header = reinterpret_cast<uintptr_t *>(start) - 2;
  header[0] = reinterpret_cast<uintptr_t>(raw);
  header[1] = bytes;
  if (bytes >= large_bytes) {
    ++large_blocks.allocated;
    ++large_blocks.live;
  }
  return reinterpret_cast<void *>(start);
}

extern "C" void halide_default_free(void *, void *ptr) {
  if (ptr == nullptr) return;
  const uintptr_t *header = static_cast<const uintptr_t *>(ptr) - 2;
  if (header[1] >= large_bytes) --large_blocks.live;
  std::free(reinterpret_cast<void *>(header[0]));
}

namespace {

// A packed call of B4 H2 S1024 D64: each of the 8 (head, batch) tasks copies its head's keys and
// values into two blocks of 256 KiB. At most 8 tasks run at once, so with the blocks held the
// calls together ask for at most 16; without, every call asked for 16 again.
TEST_CASE("packed calls reuse held scratch blocks, and a release frees them") {
  const attn::Spec spec = parse("heads=2 head_dim=64 mask=causal");
  const attn_kernel *kernel = find_kernel(spec);
  REQUIRE(kernel != nullptr);
  REQUIRE(attn_kernel_set_threads(kernel, 2) == ATTN_OK);
  std::mt19937 rng(7);
  Call call = make_core_call(spec, 4, 1024, 1024, false, rng);
  REQUIRE(attn_kernel_release_memory(kernel) == ATTN_OK);
  REQUIRE(large_blocks.live.load() == 0);

  const int allocated_before = large_blocks.allocated.load();
  constexpr int calls = 6;
  for (int n = 0; n < calls; ++n) REQUIRE(call.run(kernel) == ATTN_OK);
  const int allocated = large_blocks.allocated.load() - allocated_before;
  MESSAGE(allocated, " blocks of 64 KiB and up allocated in ", calls, " calls; ", large_blocks.live.load(),
          " held");
  CHECK(allocated >= 2);
  CHECK(allocated <= 16);
  CHECK(large_blocks.live.load() == allocated);  // nothing in use between calls: all held
  const Expected expected = expected_result(spec, call);
  const Comparison result = compare(call.tensors.at("out"), expected);
  CAPTURE(result);
  CHECK(result.pass());

  REQUIRE(attn_kernel_release_memory(kernel) == ATTN_OK);
  CHECK(large_blocks.live.load() == 0);
  // The next call allocates afresh and computes the same.
  call.tensors.at("out").fill(-777.0f);
  REQUIRE(call.run(kernel) == ATTN_OK);
  CHECK(large_blocks.live.load() >= 2);
  CHECK(compare(call.tensors.at("out"), expected).pass());
  REQUIRE(attn_kernel_release_memory(kernel) == ATTN_OK);
  REQUIRE(attn_kernel_set_threads(kernel, 0) == ATTN_OK);  // back to one per core
}

TEST_CASE("releasing memory needs a kernel") {
  CHECK(attn_kernel_release_memory(nullptr) == ATTN_ERR_INVALID_ARGUMENT);
  CHECK(last_error().find("null") != std::string::npos);
}

}  // namespace
