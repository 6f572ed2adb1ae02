// Fuzzes the index inputs of a paged KV cache kernel (cache_seqlens, block_table) and a varlen one
// (cu_seqlens_q, cu_seqlens_k) with small values and values at the int32 edges, every tensor in
// guarded memory (an inaccessible page after it, sentinel slack before it): a call either is
// refused with ATTN_ERR_INVALID_VALUE exactly when DSL.md's rules say so, with the outputs and the
// caches bit for bit as before, or runs; either way nothing outside the tensors is written.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "attn/runtime.h"
#include "fuzz_check.h"
#include "guarded_memory.h"

namespace {

using attnc::test::GuardedBuffer;

// tests/kernels/sequence_specs.h's paged_interleaved_spec and varlen_spec.
constexpr const char *paged_id = "attn_core_h3_kv1_d16_dv8_f32_causal_kvp4_ropei12_th43fa0000";
constexpr const char *varlen_id = "attn_core_h3_kv1_d16_f32_causal_lse_ropen16_varlen";
constexpr int64_t page = 4, heads = 3, kv_heads = 1, head_dim = 16, head_dim_v = 8;

struct Tensor {
  std::string name;
  attn_dtype dtype;
  std::vector<int64_t> shape;
  bool written;
  GuardedBuffer storage;
  int32_t *i32() { return reinterpret_cast<int32_t *>(storage.data()); }
};

struct Call {
  std::deque<Tensor> tensors;
  Tensor &add(const char *name, attn_dtype dtype, std::vector<int64_t> shape, bool written) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    Tensor &t = tensors.emplace_back(Tensor{name, dtype, std::move(shape), written, GuardedBuffer(size_t(n) * 4)});
    // Floats from the byte pattern 0x3c: about 0.0115, finite, the same for every call.
    if (dtype == ATTN_F32) std::memset(t.storage.data(), 0x3c, t.storage.size());
    return t;
  }
  attn_status run(const char *id) {
    const attn_kernel *kernel = nullptr;
    FUZZ_CHECK(attn_find_kernel(id, &kernel) == ATTN_OK, "kernel %s is not linked: %s", id, attn_last_error());
    std::vector<attn_arg> args;
    for (Tensor &t : tensors)
      args.push_back({t.name.c_str(), {t.storage.data(), t.dtype, int32_t(t.shape.size()), t.shape.data(), nullptr,
                                       ATTN_HOST}});
    return attn_run(kernel, args.data(), int(args.size()));
  }
  std::vector<std::vector<uint8_t>> written() const {
    std::vector<std::vector<uint8_t>> bytes;
    for (const Tensor &t : tensors)
      if (t.written) bytes.push_back(t.storage.snapshot());
    return bytes;
  }
  bool slack_intact() const {
    for (const Tensor &t : tensors)
      if (!t.storage.slack_intact()) return false;
    return true;
  }
};

// A small value most of the time, else one at or near the int32 edges.
int32_t index_value(FuzzedDataProvider &in, int32_t small_limit) {
  static const int32_t edges[] = {INT32_MIN, INT32_MIN + 1, -2, -1, INT32_MAX, INT32_MAX - 1, INT32_MAX - 3,
                                  INT32_MAX - 4, 1 << 30, 1 << 29};
  if (in.ConsumeIntegralInRange<int>(0, 3) != 0) return in.ConsumeIntegralInRange<int32_t>(0, small_limit);
  return edges[in.ConsumeIntegralInRange<size_t>(0, sizeof(edges) / sizeof(edges[0]) - 1)];
}

long calls = 0, refused = 0;

void check_outcome(Call &call, const char *id, bool must_refuse) {
  const std::vector<std::vector<uint8_t>> before = call.written();
  const attn_status status = call.run(id);
  ++calls;
  FUZZ_CHECK(call.slack_intact(), "%s wrote before a tensor's start", id);
  if (must_refuse) {
    ++refused;
    FUZZ_CHECK(status == ATTN_ERR_INVALID_VALUE, "%s: expected ATTN_ERR_INVALID_VALUE, got %s: %s", id,
               attn_status_name(status), attn_last_error());
    FUZZ_CHECK(call.written() == before, "%s refused a call (%s) after writing", id, attn_last_error());
  } else {
    FUZZ_CHECK(status == ATTN_OK, "%s: expected ATTN_OK, got %s: %s", id, attn_status_name(status),
               attn_last_error());
  }
}

void fuzz_paged(FuzzedDataProvider &in) {
  const int64_t batch = in.ConsumeIntegralInRange<int>(1, 3), seq_q = in.ConsumeIntegralInRange<int>(1, 5);
  const int64_t pages = in.ConsumeIntegralInRange<int>(1, 6), max_pages = in.ConsumeIntegralInRange<int>(1, 5);
  Call call;
  call.add("q", ATTN_F32, {batch, seq_q, heads, head_dim}, false);
  call.add("k_new", ATTN_F32, {batch, seq_q, kv_heads, head_dim}, false);
  call.add("v_new", ATTN_F32, {batch, seq_q, kv_heads, head_dim_v}, false);
  call.add("k_cache", ATTN_F32, {pages, page, kv_heads, head_dim}, true);
  call.add("v_cache", ATTN_F32, {pages, page, kv_heads, head_dim_v}, true);
  Tensor &lengths = call.add("cache_seqlens", ATTN_I32, {batch}, false);
  Tensor &table = call.add("block_table", ATTN_I32, {batch, max_pages}, false);
  call.add("out", ATTN_F32, {batch, seq_q, heads, head_dim_v}, true);
  for (int64_t b = 0; b < batch; ++b) lengths.i32()[b] = index_value(in, int32_t(max_pages * page));
  for (int64_t e = 0; e < batch * max_pages; ++e) table.i32()[e] = index_value(in, int32_t(pages));
  // DSL.md's rules, in 64-bit: 0 <= cached, cached + Sq <= max_pages * P and <= 2^31 - 1, and each
  // page the sequence uses in [0, num_pages).
  bool bad = false;
  for (int64_t b = 0; b < batch && !bad; ++b) {
    const int64_t keys = int64_t{lengths.i32()[b]} + seq_q;
    bad = lengths.i32()[b] < 0 || keys > max_pages * page || keys > INT32_MAX;
    for (int64_t p = 0; !bad && p * page < keys; ++p) {
      const int32_t id = table.i32()[b * max_pages + p];
      bad = id < 0 || id >= pages;
    }
  }
  check_outcome(call, paged_id, bad);
}

void fuzz_varlen(FuzzedDataProvider &in) {
  const int64_t batch = in.ConsumeIntegralInRange<int>(1, 3);
  const int64_t total_q = in.ConsumeIntegralInRange<int>(1, 9), total_k = in.ConsumeIntegralInRange<int>(1, 9);
  Call call;
  call.add("q", ATTN_F32, {total_q, heads, head_dim}, false);
  call.add("k", ATTN_F32, {total_k, kv_heads, head_dim}, false);
  call.add("v", ATTN_F32, {total_k, kv_heads, head_dim}, false);
  Tensor &cu_q = call.add("cu_seqlens_q", ATTN_I32, {batch + 1}, false);
  Tensor &cu_k = call.add("cu_seqlens_k", ATTN_I32, {batch + 1}, false);
  call.add("out", ATTN_F32, {total_q, heads, head_dim}, true);
  call.add("lse", ATTN_F32, {total_q, heads}, true);
  bool bad = false;
  for (auto [sums, total] : {std::pair{&cu_q, total_q}, {&cu_k, total_k}}) {
    for (int64_t i = 0; i <= batch; ++i) sums->i32()[i] = index_value(in, int32_t(total));
    if (in.ConsumeBool()) sums->i32()[0] = 0;  // valid prefix sums more often
    if (in.ConsumeBool()) sums->i32()[batch] = int32_t(total);
    bad = bad || sums->i32()[0] != 0 || sums->i32()[batch] != total;
    for (int64_t i = 1; i <= batch; ++i) bad = bad || sums->i32()[i] < sums->i32()[i - 1];
  }
  check_outcome(call, varlen_id, bad);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size) {
  static const bool reported = [] {
    std::atexit([] { std::fprintf(stderr, "fuzz_sequence_indices: %ld calls, %ld refused\n", calls, refused); });
    return true;
  }();
  (void)reported;
  FuzzedDataProvider in(input, size);
  if (in.ConsumeBool())
    fuzz_paged(in);
  else
    fuzz_varlen(in);
  return 0;
}
