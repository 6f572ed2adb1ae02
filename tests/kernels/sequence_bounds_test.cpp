// The KV cache and varlen kernels driven with index values at the int32 and int64 edges (issue 32),
// every tensor in guarded memory: each call is refused with a named status and writes nothing
// (outputs and caches bit for bit as before, sentinel slack intact), or gives exactly what the
// same call without the edge value gives and writes nothing outside its tensors.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/validate.h"
#include "guarded_memory.h"
#include "kernel_test_support.h"
#include "sequence_specs.h"

namespace {

using namespace attnc::test;

constexpr int32_t i32_max = std::numeric_limits<int32_t>::max();
constexpr int32_t i32_min = std::numeric_limits<int32_t>::min();
constexpr int64_t i64_max = std::numeric_limits<int64_t>::max();
constexpr int64_t i64_min = std::numeric_limits<int64_t>::min();

// One tensor of a call, in guarded memory. written: an output or in-out (out, lse, the caches).
struct GuardedTensor {
  std::string name;
  attn_dtype dtype;
  std::vector<int64_t> shape;
  bool written;
  GuardedBuffer storage;

  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  int32_t *i32() { return reinterpret_cast<int32_t *>(storage.data()); }
  float *f32() { return reinterpret_cast<float *>(storage.data()); }
};

// A shape or strides that one call gives a tensor instead of its own (row-major) ones, and where
// its data is (data_of: another tensor's storage, else its own).
struct Override {
  std::string name;
  std::vector<int64_t> shape, strides;
  std::string data_of;
};

class GuardedCall {
 public:
  GuardedTensor &add(const std::string &name, attn_dtype dtype, std::vector<int64_t> shape, bool written,
                     std::mt19937 &rng) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    GuardedTensor &t = tensors_.emplace_back(
        GuardedTensor{name, dtype, std::move(shape), written, GuardedBuffer(size_t(n) * 4)});
    if (dtype == ATTN_F32) {
      std::normal_distribution<float> normal;
      for (int64_t e = 0; e < n; ++e)
        t.f32()[e] = written && name != "k_cache" && name != "v_cache" ? -777.0f : normal(rng);
    }
    return t;
  }
  GuardedTensor &at(const std::string &name) {
    for (GuardedTensor &t : tensors_)
      if (t.name == name) return t;
    FAIL("no tensor ", name);
    return tensors_.front();
  }
  attn_status run(const attn_kernel *kernel, const Override *change = nullptr) {
    std::vector<attn_arg> args;
    for (GuardedTensor &t : tensors_) {
      const bool changed = change != nullptr && change->name == t.name;
      const std::vector<int64_t> &shape = changed ? change->shape : t.shape;
      const int64_t *strides = changed && !change->strides.empty() ? change->strides.data() : nullptr;
      uint8_t *data =
          changed && !change->data_of.empty() ? at(change->data_of).storage.data() : t.storage.data();
      args.push_back(
          {t.name.c_str(), {data, t.dtype, int32_t(shape.size()), shape.data(), strides, ATTN_HOST}});
    }
    return attn_run(kernel, args.data(), int(args.size()));
  }
  // Every written tensor's bytes, in call order.
  std::vector<std::vector<uint8_t>> written() const {
    std::vector<std::vector<uint8_t>> bytes;
    for (const GuardedTensor &t : tensors_)
      if (t.written) bytes.push_back(t.storage.snapshot());
    return bytes;
  }
  // The tensors whose slack before them changed (empty: none).
  std::string slack_changed() const {
    std::string names;
    for (const GuardedTensor &t : tensors_)
      if (!t.storage.slack_intact()) names += t.name + " ";
    return names;
  }

 private:
  std::deque<GuardedTensor> tensors_;  // a deque: adding never moves the tensors already there
};

// A small cache call: B sequences of Sq new tokens after `cached` ones; contiguous with Smax past
// the longest by 3, paged with one spare page id column and each sequence's pages in order.
// max_pages and pages (paged) may be given, else derived; block_table entries past a sequence's
// pages are 0.
struct CacheShape {
  int batch, seq_q;
  std::vector<int32_t> cached;
  int64_t max_pages = 0, pages = 0, smax = 0;
};

CacheShape complete(const attn::Spec &s, CacheShape shape) {
  const int64_t page = s.page_size;
  int64_t longest = 0, used = 0;
  for (int32_t n : shape.cached) {
    longest = std::max(longest, int64_t{n} + shape.seq_q);
    used += (int64_t{n} + shape.seq_q + page - 1) / std::max<int64_t>(page, 1);
  }
  if (s.kv_cache == attn::KvCache::contiguous && shape.smax == 0) shape.smax = longest + 3;
  if (s.kv_cache == attn::KvCache::paged) {
    if (shape.max_pages == 0) shape.max_pages = (longest + page - 1) / page + 1;
    if (shape.pages == 0) shape.pages = used + 2;
  }
  return shape;
}

void add_cache_tensors(GuardedCall &call, const attn::Spec &s, const CacheShape &c, std::mt19937 &rng) {
  const int64_t b = c.batch, sq = c.seq_q, h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  const bool paged = s.kv_cache == attn::KvCache::paged;
  call.add("q", ATTN_F32, {b, sq, h, d}, false, rng);
  call.add("k_new", ATTN_F32, {b, sq, kvh, d}, false, rng);
  call.add("v_new", ATTN_F32, {b, sq, kvh, dv}, false, rng);
  const int64_t outer = paged ? c.pages : b, slots = paged ? s.page_size : c.smax;
  call.add("k_cache", ATTN_F32, {outer, slots, kvh, d}, true, rng);
  call.add("v_cache", ATTN_F32, {outer, slots, kvh, dv}, true, rng);
  GuardedTensor &lengths = call.add("cache_seqlens", ATTN_I32, {b}, false, rng);
  for (int64_t n = 0; n < b; ++n) lengths.i32()[n] = c.cached[size_t(n)];
  if (paged) {
    GuardedTensor &table = call.add("block_table", ATTN_I32, {b, c.max_pages}, false, rng);
    // Sequence by sequence, the next free pages; only filled where small enough to write.
    if (b * c.max_pages <= (int64_t{1} << 20)) {
      int32_t next = 0;
      for (int64_t row = 0; row < b; ++row)
        for (int64_t p = 0; p < (c.cached[size_t(row)] + sq + s.page_size - 1) / s.page_size; ++p)
          table.i32()[row * c.max_pages + p] = next++;
    }
  }
  if (s.alibi) {
    GuardedTensor &slopes = call.add("alibi_slopes", ATTN_F32, {h}, false, rng);
    for (int64_t n = 0; n < h; ++n) slopes.f32()[n] = 0.05f + 0.2f * float(n);
  }
  call.add("out", ATTN_F32, {b, sq, h, dv}, true, rng);
  if (s.lse) call.add("lse", ATTN_F32, {b, sq, h}, true, rng);
}

// A varlen call over `lengths` (Sq, Sk) pairs.
void add_varlen_tensors(GuardedCall &call, const attn::Spec &s,
                        const std::vector<std::pair<int, int>> &lengths, std::mt19937 &rng) {
  std::vector<int32_t> cu_q{0}, cu_k{0};
  for (auto [sq, sk] : lengths) {
    cu_q.push_back(cu_q.back() + sq);
    cu_k.push_back(cu_k.back() + sk);
  }
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  call.add("q", ATTN_F32, {cu_q.back(), h, d}, false, rng);
  call.add("k", ATTN_F32, {cu_k.back(), kvh, d}, false, rng);
  call.add("v", ATTN_F32, {cu_k.back(), kvh, dv}, false, rng);
  GuardedTensor &q_sums = call.add("cu_seqlens_q", ATTN_I32, {int64_t(cu_q.size())}, false, rng);
  GuardedTensor &k_sums = call.add("cu_seqlens_k", ATTN_I32, {int64_t(cu_k.size())}, false, rng);
  std::memcpy(q_sums.i32(), cu_q.data(), cu_q.size() * 4);
  std::memcpy(k_sums.i32(), cu_k.data(), cu_k.size() * 4);
  call.add("out", ATTN_F32, {cu_q.back(), h, dv}, true, rng);
  if (s.lse) call.add("lse", ATTN_F32, {cu_q.back(), h}, true, rng);
}

// Why the kernel must refuse a cache call's values, by DSL.md's rules computed here in 64-bit
// ("" when it must run): 0 <= cache_seqlens[b], cache_seqlens[b] + Sq <= Smax or max_pages * P
// and <= 2^31 - 1, and every page id the sequence uses in [0, num_pages).
std::string cache_violation(const attn::Spec &s, GuardedCall &call, const CacheShape &c) {
  const bool paged = s.kv_cache == attn::KvCache::paged;
  const int64_t capacity = paged ? c.max_pages * s.page_size : c.smax;
  const int32_t *lengths = call.at("cache_seqlens").i32();
  for (int b = 0; b < c.batch; ++b) {
    const int64_t keys = int64_t{lengths[b]} + c.seq_q;
    if (lengths[b] < 0 || keys > capacity || keys > i32_max)
      return "cache_seqlens[" + std::to_string(b) + "]";
    if (!paged) continue;
    for (int64_t p = 0; p * s.page_size < keys; ++p) {
      const int32_t id = call.at("block_table").i32()[b * c.max_pages + p];
      if (id < 0 || id >= c.pages) return "block_table[" + std::to_string(b) + "][" + std::to_string(p) + "]";
    }
  }
  return "";
}

// Whether a varlen call's prefix sums are refused: not starting at 0, decreasing, or not ending at
// the total.
std::string varlen_violation(GuardedCall &call) {
  for (const char *name : {"cu_seqlens_q", "cu_seqlens_k"}) {
    GuardedTensor &sums = call.at(name);
    const int64_t total = call.at(name == std::string("cu_seqlens_q") ? "q" : "k").shape[0];
    const int64_t n = sums.shape[0];
    if (sums.i32()[0] != 0 || sums.i32()[n - 1] != total) return name;
    for (int64_t i = 1; i < n; ++i)
      if (sums.i32()[i] < sums.i32()[i - 1]) return name;
  }
  return "";
}

// A refused call: the status, the message naming the value, and nothing written anywhere.
void check_refused(GuardedCall &call, const attn_kernel *kernel, attn_status want, const std::string &names,
                   const Override *change = nullptr) {
  const std::vector<std::vector<uint8_t>> before = call.written();
  const attn_status status = call.run(kernel, change);
  const std::string error = last_error();
  CAPTURE(error);
  CHECK(status_name(status) == status_name(want));
  CHECK(error.find(names) != std::string::npos);
  CHECK(call.written() == before);
  CHECK(call.slack_changed() == "");
}

const attn_kernel *kernel_of(const char *spec_text, attn::Spec *spec) {
  *spec = attn::resolve(parse(spec_text));
  return find_kernel(*spec);
}

TEST_CASE("a paged cache past 2^31 positions with a bad last page id is refused before any write") {
  // Issue 32, defect 1: (cache_seqlens + Sq + P - 1) / P wrapped negative in int32, so no page id
  // was checked, and the call wrote one page past k_cache and v_cache (here: into the guard page).
  for (const char *text : {paged_window_spec, paged_interleaved_spec}) {
    CAPTURE(text);
    attn::Spec s;
    const attn_kernel *kernel = kernel_of(text, &s);
    REQUIRE(kernel != nullptr);
    const int64_t page = s.page_size, max_pages = (int64_t{1} << 31) / page;
    std::mt19937 rng(1);
    CacheShape c = complete(s, {1, 1, {int32_t((int64_t{1} << 31) - page)}, max_pages, 1, 0});
    GuardedCall call;  // one call for every value: its table's pages are mapped once
    add_cache_tensors(call, s, c, rng);
    // The two values (one page past the end; far past it): i32_max and negative ids are
    // the small sweep's, since each call here scans 2^28 or 2^29 table entries.
    for (int32_t last : {1, 100000}) {
      CAPTURE(last);
      call.at("block_table").i32()[max_pages - 1] = last;  // every other entry: page 0
      check_refused(call, kernel, ATTN_ERR_INVALID_VALUE,
                    "block_table[0][" + std::to_string(max_pages - 1) + "] is " + std::to_string(last));
    }
  }
}

TEST_CASE("a sequence whose keys would pass 2^31 - 1 is refused before an earlier one is written") {
  // Issue 32, defect 2: sequence 1's Lk = 2^31 + 1 fits max_pages * P but no int32 extent; the call
  // used to append sequence 0's keys and write its out rows, then fail in the pipeline.
  attn::Spec s;
  const attn_kernel *kernel = kernel_of(paged_window_spec, &s);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(2);
  const int64_t max_pages = (int64_t{1} << 31) / s.page_size + 1;
  CacheShape c = complete(s, {2, 2, {0, i32_max}, max_pages, 1, 0});
  GuardedCall call;
  add_cache_tensors(call, s, c, rng);
  check_refused(call, kernel, ATTN_ERR_INVALID_VALUE, "cache_seqlens[1] is 2147483647");
}

TEST_CASE("Sq beyond the cache is refused as such") {
  attn::Spec s;
  const attn_kernel *kernel = kernel_of(cache_neox_spec, &s);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(3);
  CacheShape c = complete(s, {2, 5, {0, 0}, 0, 0, 4});
  GuardedCall call;
  add_cache_tensors(call, s, c, rng);
  check_refused(call, kernel, ATTN_ERR_INVALID_VALUE, "Sq (5) is more than Smax (4)");
}

// The int32 edges (and values just inside them) an index input may hold.
std::vector<int32_t> edge_values(int seq_q) {
  return {i32_min, i32_min + 1, -2, -1, i32_max, i32_max - 1, i32_max - seq_q + 1, int32_t{1} << 30};
}

TEST_CASE("every cache index input at the int32 edges: refused and nothing written, or unchanged results") {
  int refused = 0, ran = 0;
  for (const char *text : {cache_neox_spec, paged_interleaved_spec, paged_window_spec}) {
    CAPTURE(text);
    attn::Spec s;
    const attn_kernel *kernel = kernel_of(text, &s);
    REQUIRE(kernel != nullptr);
    const CacheShape c = complete(s, {2, 3, {5, 2}, 0, 0, 0});
    // The call without any edge value: what a call that must run gives.
    GuardedCall baseline;
    std::mt19937 rng(4);
    add_cache_tensors(baseline, s, c, rng);
    REQUIRE(baseline.run(kernel) == ATTN_OK);
    const std::vector<std::vector<uint8_t>> want = baseline.written();
    std::vector<std::pair<std::string, int64_t>> inputs;
    for (int64_t b = 0; b < c.batch; ++b) inputs.push_back({"cache_seqlens", b});
    if (s.kv_cache == attn::KvCache::paged)
      for (int64_t e = 0; e < c.batch * c.max_pages; ++e) inputs.push_back({"block_table", e});
    for (const std::pair<std::string, int64_t> &input : inputs) {
      // Named copies, not structured bindings: Clang before 16 cannot capture those (CAPTURE).
      const std::string name = input.first;
      const int64_t element = input.second;
      for (int32_t value : edge_values(c.seq_q)) {
        CAPTURE(name);
        CAPTURE(element);
        CAPTURE(value);
        GuardedCall call;
        std::mt19937 same(4);
        add_cache_tensors(call, s, c, same);
        call.at(name).i32()[element] = value;
        const std::string violation = cache_violation(s, call, c);
        if (!violation.empty()) {
          check_refused(call, kernel, ATTN_ERR_INVALID_VALUE, violation + " is " + std::to_string(value));
          ++refused;
          continue;
        }
        const attn_status status = call.run(kernel);
        CAPTURE(last_error());
        CHECK(status == ATTN_OK);
        CHECK(call.written() == want);
        CHECK(call.slack_changed() == "");
        ++ran;
      }
    }
  }
  MESSAGE(refused, " calls refused, ", ran, " ran");
  CHECK(ran > 0);
}

TEST_CASE("every cu_seqlens entry at the int32 edges is refused and nothing written") {
  attn::Spec s;
  const attn_kernel *kernel = kernel_of(varlen_spec, &s);
  REQUIRE(kernel != nullptr);
  const std::vector<std::pair<int, int>> lengths = {{3, 5}, {0, 2}, {2, 0}, {4, 4}};
  int refused = 0;
  for (const char *name : {"cu_seqlens_q", "cu_seqlens_k"}) {
    for (int64_t element = 0; element <= int64_t(lengths.size()); ++element) {
      for (int32_t value : edge_values(1)) {
        CAPTURE(name);
        CAPTURE(element);
        CAPTURE(value);
        GuardedCall call;
        std::mt19937 rng(5);
        add_varlen_tensors(call, s, lengths, rng);
        call.at(name).i32()[element] = value;
        REQUIRE(varlen_violation(call) == name);
        check_refused(call, kernel, ATTN_ERR_INVALID_VALUE, name);
        ++refused;
      }
    }
  }
  MESSAGE(refused, " calls refused");
}

TEST_CASE("index tensor shapes and strides near 2^63 are refused and nothing written") {
  struct Family {
    const char *spec;
    std::vector<const char *> indices;
  };
  int refused = 0;
  for (const Family &family : {Family{cache_neox_spec, {"cache_seqlens"}},
                               Family{paged_interleaved_spec, {"cache_seqlens", "block_table"}},
                               Family{varlen_spec, {"cu_seqlens_q", "cu_seqlens_k"}}}) {
    attn::Spec s;
    const attn_kernel *kernel = kernel_of(family.spec, &s);
    REQUIRE(kernel != nullptr);
    for (const char *name : family.indices) {
      GuardedCall call;
      std::mt19937 rng(6);
      if (s.layout == attn::Layout::varlen)
        add_varlen_tensors(call, s, {{2, 3}, {1, 1}}, rng);
      else
        add_cache_tensors(call, s, complete(s, {2, 1, {1, 3}, 0, 0, 0}), rng);
      const std::vector<int64_t> shape = call.at(name).shape;
      const int64_t outer = shape[0];
      // Sizes past int32 (2^32 + the right size truncates to it), and strides past it.
      for (int64_t size :
           {i64_max, i64_min, i64_max - outer + 1, (int64_t{1} << 32) + outer, int64_t{1} << 31}) {
        CAPTURE(name);
        CAPTURE(size);
        Override change{name, shape, {}};
        change.shape[0] = size;
        check_refused(call, kernel, ATTN_ERR_SHAPE, name, &change);
        ++refused;
      }
      std::vector<int64_t> dense(shape.size(), 1);
      for (size_t d = shape.size() - 1; d > 0; --d) dense[d - 1] = dense[d] * shape[d];
      for (int64_t stride : {i64_max, i64_min, (int64_t{1} << 32) + dense[0], int64_t{1} << 31}) {
        CAPTURE(name);
        CAPTURE(stride);
        Override change{name, shape, dense};
        change.strides[0] = stride;
        check_refused(call, kernel, ATTN_ERR_STRIDE, name, &change);
        ++refused;
      }
    }
  }
  MESSAGE(refused, " calls refused");
}

TEST_CASE("caches and outputs that share memory with another tensor are refused (issue 32)") {
  // k_cache given as v_cache: each sequence's values would overwrite its keys mid-call.
  int refused = 0;
  for (const char *text : {cache_neox_spec, paged_window_spec, varlen_spec}) {
    CAPTURE(text);
    attn::Spec s;
    const attn_kernel *kernel = kernel_of(text, &s);
    REQUIRE(kernel != nullptr);
    GuardedCall call;
    std::mt19937 rng(7);
    if (s.layout == attn::Layout::varlen)
      add_varlen_tensors(call, s, {{2, 3}, {1, 1}}, rng);
    else
      add_cache_tensors(call, s, complete(s, {2, 1, {1, 3}, 0, 0, 0}), rng);
    std::vector<std::pair<std::string, std::string>> pairs = {{"out", "q"}};
    if (s.kv_cache != attn::KvCache::none)
      pairs.insert(pairs.end(), {{"v_cache", "k_cache"}, {"k_cache", "k_new"}});
    if (s.lse) pairs.push_back({"lse", "out"});
    for (const std::pair<std::string, std::string> &pair : pairs) {
      const std::string written = pair.first, other = pair.second;
      CAPTURE(written);
      CAPTURE(other);
      Override change{written, call.at(written).shape, {}, other};
      // The message names the written tensor that comes first in the kernel's argument order.
      check_refused(call, kernel, ATTN_ERR_ALIASED, "shares memory with tensor", &change);
      ++refused;
    }
  }
  MESSAGE(refused, " calls refused");
}

}  // namespace
