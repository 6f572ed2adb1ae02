// attn/workspace_cache.h on its own: reuse, fit, the cap, eviction, release and threads, over a
// counting stand-in for Halide's default allocator (small limits so each rule is reachable).
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "workspace_cache_limits.h"

// The cache as a second kernel library's entry includes it (workspace_cache_second_entry.cpp).
extern "C" halide_malloc_fn second_entry_malloc(void);
extern "C" halide_free_fn second_entry_free(void);

namespace {

// The blocks the stand-in has handed out and not had back; a free of anything else is a bug.
struct DefaultAllocator {
  std::mutex mutex;
  std::set<void *> live;
  int mallocs = 0;
  int frees = 0;
  int bad_frees = 0;
} allocator;

}  // namespace

extern "C" void *halide_default_malloc(void *, size_t bytes) {
  void *block = std::malloc(bytes);
  std::lock_guard<std::mutex> lock(allocator.mutex);
  allocator.live.insert(block);
  ++allocator.mallocs;
  return block;
}

extern "C" void halide_default_free(void *, void *ptr) {
  std::lock_guard<std::mutex> lock(allocator.mutex);
  ++allocator.frees;
  if (allocator.live.erase(ptr) == 0) {
    ++allocator.bad_frees;
    return;
  }
  std::free(ptr);
}

namespace {

int default_mallocs() {
  std::lock_guard<std::mutex> lock(allocator.mutex);
  return allocator.mallocs;
}

size_t live_blocks() {
  std::lock_guard<std::mutex> lock(allocator.mutex);
  return allocator.live.size();
}

bool is_live(void *ptr) {
  std::lock_guard<std::mutex> lock(allocator.mutex);
  return allocator.live.count(ptr) != 0;
}

// Every test starts and ends with nothing held and nothing leaked.
struct Clean {
  Clean() { attn_workspace_release(); }
  ~Clean() {
    attn_workspace_release();
    CHECK(live_blocks() == 0);
    CHECK(allocator.bad_frees == 0);
  }
};

TEST_CASE("a freed large block serves the next request that fits it") {
  Clean clean;
  void *a = attn_workspace_malloc(nullptr, 4096);
  REQUIRE(a != nullptr);
  attn_workspace_free(nullptr, a);
  CHECK(is_live(a));  // held, not given back
  const int before = default_mallocs();
  void *b = attn_workspace_malloc(nullptr, 4096);
  CHECK(b == a);
  void *c = attn_workspace_malloc(nullptr, 3000);  // a is in use: a new block
  CHECK(c != a);
  CHECK(default_mallocs() == before + 1);
  attn_workspace_free(nullptr, b);
  attn_workspace_free(nullptr, c);
}

TEST_CASE("small and oversized requests bypass the cache") {
  Clean clean;
  void *small = attn_workspace_malloc(nullptr, 1023);
  attn_workspace_free(nullptr, small);
  CHECK_FALSE(is_live(small));
  void *huge = attn_workspace_malloc(nullptr, 16385);
  attn_workspace_free(nullptr, huge);
  CHECK_FALSE(is_live(huge));
}

TEST_CASE("the smallest held block that fits is chosen, and none twice its request") {
  Clean clean;
  void *big = attn_workspace_malloc(nullptr, 8192);
  void *mid = attn_workspace_malloc(nullptr, 4096);
  attn_workspace_free(nullptr, big);
  attn_workspace_free(nullptr, mid);
  void *a = attn_workspace_malloc(nullptr, 4000);
  CHECK(a == mid);
  void *b = attn_workspace_malloc(nullptr, 1500);  // 8192 would waste more than half
  CHECK(b != big);
  void *c = attn_workspace_malloc(nullptr, 5000);
  CHECK(c == big);
  for (void *p : {a, b, c}) attn_workspace_free(nullptr, p);
}

TEST_CASE("more than the cap is not held: the block held longest goes first") {
  Clean clean;
  void *first = attn_workspace_malloc(nullptr, 8192);
  void *second = attn_workspace_malloc(nullptr, 8192);
  void *third = attn_workspace_malloc(nullptr, 8192);
  attn_workspace_free(nullptr, first);
  attn_workspace_free(nullptr, second);  // 16384 held: at the cap
  CHECK(is_live(first));
  CHECK(is_live(second));
  attn_workspace_free(nullptr, third);  // 24576 would be held
  CHECK_FALSE(is_live(first));
  CHECK(is_live(second));
  CHECK(is_live(third));
}

TEST_CASE("with every slot taken a block is untracked; a full cache evicts its oldest") {
  Clean clean;
  void *blocks[5];
  for (void *&b : blocks) b = attn_workspace_malloc(nullptr, 2048);
  attn_workspace_free(nullptr, blocks[4]);  // the untracked fifth goes straight back
  CHECK_FALSE(is_live(blocks[4]));
  for (int i = 0; i < 4; ++i) attn_workspace_free(nullptr, blocks[i]);
  for (int i = 0; i < 4; ++i) CHECK(is_live(blocks[i]));
  void *larger = attn_workspace_malloc(nullptr, 6000);  // fits none: evicts blocks[0]
  CHECK_FALSE(is_live(blocks[0]));
  for (int i = 1; i < 4; ++i) CHECK(is_live(blocks[i]));
  attn_workspace_free(nullptr, larger);
}

TEST_CASE("release frees held blocks; a block in use is held once freed") {
  Clean clean;
  void *held = attn_workspace_malloc(nullptr, 2048);
  void *in_use = attn_workspace_malloc(nullptr, 2048);
  attn_workspace_free(nullptr, held);
  attn_workspace_release();
  CHECK_FALSE(is_live(held));
  CHECK(is_live(in_use));
  attn_workspace_free(nullptr, in_use);
  CHECK(is_live(in_use));
  attn_workspace_release();
  CHECK_FALSE(is_live(in_use));
}

TEST_CASE("pointers the cache never gave out go to the default free") {
  Clean clean;
  void *foreign = halide_default_malloc(nullptr, 4096);
  attn_workspace_free(nullptr, foreign);
  CHECK_FALSE(is_live(foreign));
  attn_workspace_free(nullptr, nullptr);
}

TEST_CASE("two entries including the cache share one cache") {
  Clean clean;
  REQUIRE((second_entry_malloc() == &attn_workspace_malloc));
  REQUIRE((second_entry_free() == &attn_workspace_free));
  void *block = second_entry_malloc()(nullptr, 4096);
  attn_workspace_free(nullptr, block);  // freed through the other entry: held, not lost
  CHECK(is_live(block));
  CHECK(attn_workspace_malloc(nullptr, 4096) == block);
  second_entry_free()(nullptr, block);
}

TEST_CASE("threads never share a block") {
  Clean clean;
  constexpr int threads = 4, rounds = 3000;
  std::atomic<int> overlaps{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([t, &overlaps] {
      uint32_t state = 12345u + 977u * static_cast<uint32_t>(t);
      for (int r = 0; r < rounds; ++r) {
        state = state * 1664525u + 1013904223u;
        const size_t bytes = 1024 + (state >> 8) % 8192;
        auto *block = static_cast<unsigned char *>(attn_workspace_malloc(nullptr, bytes));
        std::memset(block, t + 1, bytes);
        for (size_t i = 0; i < bytes; i += 64) overlaps += block[i] != t + 1;
        overlaps += block[bytes - 1] != t + 1;
        attn_workspace_free(nullptr, block);
      }
    });
  }
  for (std::thread &t : pool) t.join();
  CHECK(overlaps.load() == 0);
}

}  // namespace
