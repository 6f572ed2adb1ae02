// KV cache (contiguous and paged), fused RoPE and the varlen layout (issue 24) against the fp64
// reference: outputs, the cache after the call, garbage in unused slots, and refused values.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/spec_text.h"
#include "attn/validate.h"
#include "cache_layout.h"
#include "kernel_test_support.h"
#include "low_precision.h"
#include "sequence_reference.h"
#include "sequence_specs.h"

namespace {

using namespace attnc::test;
namespace ref = attnc::reference;

const float nan_value = std::numeric_limits<float>::quiet_NaN();

// What the kernel's storage makes of a value: the value rounded to the spec's dtype.
template <class T>
T stored(const attn::Spec &s, T x) {
  return s.dtype == attn::DType::f32 ? x : static_cast<T>(round_to(s.dtype, static_cast<float>(x)));
}

Tensor normal(std::vector<int64_t> shape, std::mt19937 &rng) {
  Tensor t(std::move(shape), false, nan_value);
  t.fill_normal(rng);
  return t;
}

Tensor filled(std::vector<int64_t> shape, float value) {
  Tensor t(std::move(shape), false, value);
  t.fill(value);
  return t;
}

IndexTensor indices(const std::vector<int32_t> &values) {
  IndexTensor t({static_cast<int64_t>(values.size())}, false, -1);
  for (size_t n = 0; n < values.size(); ++n) t.logical(static_cast<int64_t>(n)) = values[n];
  return t;
}

ref::RopeOptions rope_of(const attn::Spec &s) {
  return {s.rope, s.rope_theta, s.rope_dim};
}

// The reference's options for a spec; alibi reads the call's alibi_slopes.
ref::Options options_of(const attn::Spec &s, const Call &call) {
  ref::Options o;
  o.scale = scale_of(s);
  o.mask = s.mask;
  o.mask_block = s.mask_block;
  o.softcap = s.has_softcap ? s.softcap : 0.0;
  o.alibi = s.alibi;
  if (s.alibi) o.inputs.alibi_slopes = call.tensors.at("alibi_slopes").view();
  return o;
}

// Rows [first, first + count) of a row-major tensor whose rows hold `width` elements.
template <class T>
std::vector<T> rows(const Tensor &t, int64_t first, int64_t count, int64_t width) {
  std::vector<T> out(static_cast<size_t>(count * width));
  for (int64_t n = 0; n < count * width; ++n)
    out[static_cast<size_t>(n)] = static_cast<T>(t.logical(first * width + n));
  return out;
}

// Rotates every head vector (width head_dim) of rows [0, rows) at position first_position + row.
template <class T>
void rotate_rows(std::vector<T> &x, int heads, int head_dim, int64_t first_position,
                 const ref::RopeOptions &rope) {
  const size_t row = static_cast<size_t>(heads) * head_dim;
  for (size_t r = 0; r * row < x.size(); ++r)
    for (int h = 0; h < heads; ++h)
      ref::rope_rotate(x.data() + r * row + static_cast<size_t>(h) * head_dim, head_dim,
                       first_position + static_cast<int64_t>(r), rope);
}

// What the kernel should give: out and lse, exact and naive, in call order.
struct Want {
  std::vector<double> out, lse;
  std::vector<float> naive_out, naive_lse;
};

// Appends one sequence's attention (q, k, v row-major; already rotated) to want.
void add_sequence(Want &want, const attn::Spec &s, const Call &call, const std::vector<double> &q,
                  const std::vector<double> &k, const std::vector<double> &v, const std::vector<float> &qf,
                  const std::vector<float> &kf, const std::vector<float> &vf, int seq_q, int seq_k) {
  const ref::Options o = options_of(s, call);
  const size_t out_n = size_t(seq_q) * s.heads * s.head_dim_v, lse_n = size_t(seq_q) * s.heads;
  const size_t o0 = want.out.size(), l0 = want.lse.size();
  want.out.resize(o0 + out_n);
  want.naive_out.resize(o0 + out_n);
  want.lse.resize(l0 + lse_n);
  want.naive_lse.resize(l0 + lse_n);
  ref::attend_sequence<double>(q, k, v, seq_q, seq_k, s.heads, s.kv_heads, s.head_dim, s.head_dim_v, o,
                               want.out.data() + o0, want.lse.data() + l0);
  ref::attend_sequence<float>(qf, kf, vf, seq_q, seq_k, s.heads, s.kv_heads, s.head_dim, s.head_dim_v, o,
                              want.naive_out.data() + o0, want.naive_lse.data() + l0);
}

// The project's pass rule: max |got - exact| <= 2 max |naive - exact| + 1e-5, -inf where the
// reference has it, no NaN.
void check_close(const Tensor &got, const std::vector<double> &exact, const std::vector<float> &naive,
                 const char *what) {
  REQUIRE(static_cast<size_t>(got.elements()) == exact.size());
  const NonfiniteComparison c =
      compare_nonfinite([&](int64_t n) { return double(got.logical(n)); }, exact, naive);
  int64_t nans = 0;
  for (int64_t n = 0; n < got.elements(); ++n) nans += std::isnan(got.logical(n));
  CAPTURE(what);
  CAPTURE(c);
  CHECK(nans == 0);
  CHECK(c.pass());
}

// out (against the naive result rounded to the dtype, as issue 20's rule) and lse.
void check_out(const attn::Spec &s, const Call &call, Want want) {
  for (float &x : want.naive_out) x = stored(s, x);
  check_close(call.tensors.at("out"), want.out, want.naive_out, "out");
  if (s.lse) check_close(call.tensors.at("lse"), want.lse, want.naive_lse, "lse");
}

bool same_bits(const Tensor &a, const Tensor &b) {
  if (a.elements() != b.elements()) return false;
  for (int64_t n = 0; n < a.elements(); ++n) {
    const float x = a.logical(n), y = b.logical(n);
    if (std::memcmp(&x, &y, sizeof x) != 0) return false;
  }
  return true;
}

// The tensors a spec stores in its dtype (issue 24's names included).
bool stored_in_dtype(const std::string &name) {
  for (const char *n : {"q", "k", "v", "k_new", "v_new", "k_cache", "v_cache", "out"})
    if (name == n) return true;
  return false;
}

// Runs the kernel in the spec's dtype: f32 calls as they are; f16 / bf16 ones with their storage
// tensors rounded in place first (what the reference then reads), passed as 16-bit copies, and
// widened back into `call` after the run (out, and the cache the kernel wrote).
attn_status run_in_dtype(const attn::Spec &s, const attn_kernel *kernel, Call &call) {
  if (s.dtype == attn::DType::f32) return call.run(kernel);
  Call bits;
  bits.bits_dtype = runtime_dtype(s.dtype);
  bits.index_tensors = call.index_tensors;
  for (auto &[name, t] : call.tensors) {
    if (!stored_in_dtype(name)) {
      bits.tensors.emplace(name, t);
      continue;
    }
    BitsTensor b(t.shape(), false, 0);
    for (int64_t n = 0; n < t.elements(); ++n) {
      t.logical(n) = round_to(s.dtype, t.logical(n));
      b.logical(n) = to_bits(s.dtype, t.logical(n));
    }
    bits.bits_tensors.emplace(name, std::move(b));
  }
  const attn_status status = bits.run(kernel);
  for (auto &[name, b] : bits.bits_tensors) {
    Tensor &t = call.tensors.at(name);
    for (int64_t n = 0; n < t.elements(); ++n) t.logical(n) = from_bits(s.dtype, b.logical(n));
  }
  for (auto &[name, t] : bits.tensors) call.tensors.at(name) = t;
  return status;
}

// A KV cache call: the layout of its slots (where each (sequence, position) lives), and its tensors.
struct CacheCase : CacheLayout {
  attn::Spec spec;
  Call call;
};

// Random q, k_new, v_new; cache slots below each sequence's length normal, every other slot NaN
// (garbage that must never reach out); paged: pages handed out in a shuffled order.
CacheCase make_cache_case(const attn::Spec &s, int batch, int seq_q, std::vector<int32_t> cached,
                          std::mt19937 &rng) {
  CacheCase c;
  static_cast<CacheLayout &>(c) = make_cache_layout(s, batch, seq_q, cached, rng);
  c.spec = s;
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  const int64_t outer = c.outer(), slots = c.slots();
  c.call.tensors.emplace("q", normal({batch, seq_q, h, d}, rng));
  c.call.tensors.emplace("k_new", normal({batch, seq_q, kvh, d}, rng));
  c.call.tensors.emplace("v_new", normal({batch, seq_q, kvh, dv}, rng));
  Tensor k_cache = filled({outer, slots, kvh, d}, nan_value),
         v_cache = filled({outer, slots, kvh, dv}, nan_value);
  std::normal_distribution<float> dist;
  for (int b = 0; b < batch; ++b)
    for (int64_t p = 0; p < cached[size_t(b)]; ++p) {
      const int64_t slot = c.slot(b, p);
      for (int64_t e = 0; e < kvh * d; ++e) k_cache.logical(slot * kvh * d + e) = dist(rng);
      for (int64_t e = 0; e < kvh * dv; ++e) v_cache.logical(slot * kvh * dv + e) = dist(rng);
    }
  c.call.tensors.emplace("k_cache", std::move(k_cache));
  c.call.tensors.emplace("v_cache", std::move(v_cache));
  c.call.index_tensors.emplace("cache_seqlens", indices(cached));
  if (s.kv_cache == attn::KvCache::paged) c.call.index_tensors.emplace("block_table", c.block_table());
  if (s.alibi) {
    Tensor slopes({h}, false, nan_value);
    for (int64_t n = 0; n < h; ++n) slopes.logical(n) = 0.05f + 0.2f * static_cast<float>(n);
    c.call.tensors.emplace("alibi_slopes", std::move(slopes));
  }
  c.call.tensors.emplace("out", filled({batch, seq_q, h, dv}, output_sentinel));
  if (s.lse) c.call.tensors.emplace("lse", filled({batch, seq_q, h}, output_sentinel));
  return c;
}

// Runs a cache case and checks out, lse and the cache after the call.
void check_cache_case(CacheCase &c) {
  const attn::Spec &s = c.spec;
  const attn_kernel *kernel = find_kernel(s);
  REQUIRE(kernel != nullptr);
  Tensor k_before = c.call.tensors.at("k_cache"), v_before = c.call.tensors.at("v_cache");
  for (int64_t n = 0; n < k_before.elements(); ++n) k_before.logical(n) = stored(s, k_before.logical(n));
  for (int64_t n = 0; n < v_before.elements(); ++n) v_before.logical(n) = stored(s, v_before.logical(n));
  const attn_status status = run_in_dtype(s, kernel, c.call);
  INFO(last_error());
  REQUIRE(status == ATTN_OK);
  // Low precision: the cache holds the fp32 rotation rounded to the dtype (half an ulp: 2^-8 of
  // the value for bf16, 2^-11 for f16).
  const double cache_relative = s.dtype == attn::DType::bf16  ? 1.0 / 256
                                : s.dtype == attn::DType::f16 ? 1.0 / 2048
                                                              : 0.0;
  const int64_t kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  const Tensor &k_after = c.call.tensors.at("k_cache"), &v_after = c.call.tensors.at("v_cache");
  const Tensor &k_new = c.call.tensors.at("k_new"), &v_new = c.call.tensors.at("v_new");
  Want want;
  std::vector<bool> written(size_t(k_before.elements() / (kvh * d)), false);
  double cache_error = 0;
  int64_t v_mismatches = 0;
  for (int b = 0; b < c.batch; ++b) {
    const int cached = c.cached[size_t(b)], keys = cached + c.seq_q;
    // The new keys rotated at their positions, then every cached key in position order.
    std::vector<double> new_k = rows<double>(k_new, int64_t{b} * c.seq_q, c.seq_q, kvh * d);
    std::vector<float> new_kf = rows<float>(k_new, int64_t{b} * c.seq_q, c.seq_q, kvh * d);
    rotate_rows(new_k, s.kv_heads, s.head_dim, cached, rope_of(s));
    rotate_rows(new_kf, s.kv_heads, s.head_dim, cached, rope_of(s));
    std::vector<double> k, v;
    std::vector<float> kf, vf;
    for (int64_t p = 0; p < keys; ++p) {
      const int64_t slot = c.slot(b, p);
      for (int64_t e = 0; e < kvh * d; ++e) {
        const bool fresh = p >= cached;
        const double want_k =
            fresh ? new_k[size_t((p - cached) * kvh * d + e)] : k_before.logical(slot * kvh * d + e);
        k.push_back(stored(s, want_k));
        kf.push_back(fresh ? stored(s, new_kf[size_t((p - cached) * kvh * d + e)])
                           : k_before.logical(slot * kvh * d + e));
        if (fresh)
          cache_error = std::max(cache_error, std::abs(k_after.logical(slot * kvh * d + e) - want_k) -
                                                  cache_relative * std::abs(want_k));
      }
      for (int64_t e = 0; e < kvh * dv; ++e) {
        const float value = p >= cached ? v_new.logical((int64_t{b} * c.seq_q + p - cached) * kvh * dv + e)
                                        : v_before.logical(slot * kvh * dv + e);
        v.push_back(value);
        vf.push_back(value);
        if (p >= cached && v_after.logical(slot * kvh * dv + e) != value) ++v_mismatches;
      }
      if (p >= cached) written[size_t(slot)] = true;
    }
    std::vector<double> q =
        rows<double>(c.call.tensors.at("q"), int64_t{b} * c.seq_q, c.seq_q, int64_t{s.heads} * d);
    std::vector<float> qf =
        rows<float>(c.call.tensors.at("q"), int64_t{b} * c.seq_q, c.seq_q, int64_t{s.heads} * d);
    rotate_rows(q, s.heads, s.head_dim, cached, rope_of(s));
    rotate_rows(qf, s.heads, s.head_dim, cached, rope_of(s));
    add_sequence(want, s, c.call, q, k, v, qf, kf, vf, c.seq_q, keys);
  }
  // The new slots hold the rotated k_new (fp32 rotation) and v_new as given; every other slot is
  // bit for bit what it was, garbage included.
  CHECK(cache_error <= 1e-5);
  CHECK(v_mismatches == 0);
  int64_t untouched_changed = 0;
  for (size_t slot = 0; slot < written.size(); ++slot) {
    if (written[slot]) continue;
    for (int64_t e = 0; e < kvh * d; ++e) {
      const float x = k_after.logical(int64_t(slot) * kvh * d + e),
                  y = k_before.logical(int64_t(slot) * kvh * d + e);
      untouched_changed += std::memcmp(&x, &y, sizeof x) != 0;
    }
    for (int64_t e = 0; e < kvh * dv; ++e) {
      const float x = v_after.logical(int64_t(slot) * kvh * dv + e),
                  y = v_before.logical(int64_t(slot) * kvh * dv + e);
      untouched_changed += std::memcmp(&x, &y, sizeof x) != 0;
    }
  }
  CHECK(untouched_changed == 0);
  check_out(s, c.call, want);
}

// Whether the linked library has the spec's kernel: GPU variants (SEQUENCE_F32_ONLY, the OpenCL
// build of this suite) take dtype=f32 only.
bool linked(const attn::Spec &s) {
#ifdef SEQUENCE_F32_ONLY
  return s.dtype == attn::DType::f32;
#else
  (void)s;
  return true;
#endif
}

struct CacheShape {
  int batch, seq_q;
  std::vector<int32_t> cached;
};
// Decode (Sq 1) and chunked prefill (Sq > 1), odd lengths, an empty cache, lengths that differ
// across the batch, spanning several pages.
const CacheShape cache_shapes[] = {
    {1, 1, {0}}, {3, 1, {7, 0, 13}}, {2, 5, {9, 3}}, {2, 3, {0, 17}}, {1, 16, {5}}};

TEST_CASE("contiguous and paged caches with rope against the fp64 reference") {
  for (const char *text :
       {cache_neox_spec, paged_interleaved_spec, paged_window_spec, paged_bf16_spec, cache_f16_spec}) {
    const attn::Spec spec = attn::resolve(parse(text));
    if (!linked(spec)) continue;
    for (const CacheShape &shape : cache_shapes) {
      CAPTURE(text);
      CAPTURE(shape.batch);
      CAPTURE(shape.seq_q);
      std::mt19937 rng(static_cast<unsigned>(shape.seq_q * 97 + shape.batch));
      CacheCase c = make_cache_case(spec, shape.batch, shape.seq_q, shape.cached, rng);
      check_cache_case(c);
    }
  }
}

// A refused call leaves out and both caches exactly as they were.
void check_refused(CacheCase &c, const char *why) {
  CAPTURE(why);
  const Tensor k_before = c.call.tensors.at("k_cache"), v_before = c.call.tensors.at("v_cache");
  const attn_status status = c.call.run(find_kernel(c.spec));
  CAPTURE(last_error());
  CHECK(status == ATTN_ERR_INVALID_VALUE);
  CHECK(same_bits(c.call.tensors.at("k_cache"), k_before));
  CHECK(same_bits(c.call.tensors.at("v_cache"), v_before));
  CHECK(c.call.tensors.at("out").all_padding());
}

TEST_CASE("bad cache_seqlens and block_table values are refused before anything is written") {
  std::mt19937 rng(7);
  const attn::Spec contiguous = attn::resolve(parse(cache_neox_spec));
  {
    CacheCase c = make_cache_case(contiguous, 2, 2, {3, 5}, rng);
    c.call.index_tensors.at("cache_seqlens").logical(1) = -1;
    check_refused(c, "cache_seqlens < 0");
  }
  {
    CacheCase c = make_cache_case(contiguous, 2, 2, {3, 5}, rng);
    c.call.index_tensors.at("cache_seqlens").logical(1) = c.smax - 1;  // + Sq beyond Smax
    check_refused(c, "cache_seqlens + Sq > Smax");
  }
  const attn::Spec paged = attn::resolve(parse(paged_interleaved_spec));
  {
    CacheCase c = make_cache_case(paged, 2, 3, {4, 6}, rng);
    c.call.index_tensors.at("cache_seqlens").logical(1) = c.max_pages * paged.page_size - 2;
    check_refused(c, "cache_seqlens + Sq > max_pages * P");
  }
  {
    CacheCase c = make_cache_case(paged, 2, 3, {4, 6}, rng);
    c.call.index_tensors.at("block_table").logical(int64_t{1} * c.max_pages + 1) = c.pages;
    check_refused(c, "block_table entry = num_pages");
  }
  {
    CacheCase c = make_cache_case(paged, 2, 3, {4, 6}, rng);
    c.call.index_tensors.at("block_table").logical(0) = -1;
    check_refused(c, "block_table entry < 0");
  }
  {
    // Entries past the pages a sequence uses are never read: garbage there is fine.
    CacheCase c = make_cache_case(paged, 2, 3, {4, 6}, rng);
    c.call.index_tensors.at("block_table").logical(c.max_pages - 1) = -99;
    check_cache_case(c);
  }
}

TEST_CASE("an in-out cache that overlaps itself is refused like an output") {
  std::mt19937 rng(8);
  const attn::Spec s = attn::resolve(parse(cache_neox_spec));
  CacheCase c = make_cache_case(s, 2, 1, {3, 4}, rng);
  const Tensor &dense = c.call.tensors.at("k_cache");
  const std::vector<int64_t> shape = dense.shape();
  // Both sequences' caches at the same address: the batch dim's stride is 0.
  Tensor shared(shape, {0, shape[2] * shape[3], shape[3], 1}, nan_value);
  shared.fill(0.5f);
  c.call.tensors.at("k_cache") = shared;
  const attn_status status = c.call.run(find_kernel(s));
  CAPTURE(last_error());
  CHECK(status == ATTN_ERR_STRIDE);
  CHECK(last_error().find("k_cache") != std::string::npos);
  CHECK(c.call.tensors.at("out").all_padding());
}

// Sequences of (Sq, Sk): empty ones, queries without keys, one token, odd lengths, more queries
// than keys (bottom-right: the first rows keep no key).
struct Lengths {
  int seq_q, seq_k;
};
const Lengths varlen_lengths[] = {{3, 5}, {0, 0}, {1, 1}, {7, 7}, {4, 2}, {2, 0}, {0, 3}, {5, 11}};

struct VarlenCall {
  Call call;
  std::vector<int32_t> cu_q{0}, cu_k{0};
};

VarlenCall make_varlen(const attn::Spec &s, std::mt19937 &rng) {
  VarlenCall v;
  for (const Lengths &l : varlen_lengths) {
    v.cu_q.push_back(v.cu_q.back() + l.seq_q);
    v.cu_k.push_back(v.cu_k.back() + l.seq_k);
  }
  v.call.tensors.emplace("q", normal({v.cu_q.back(), s.heads, s.head_dim}, rng));
  v.call.tensors.emplace("k", normal({v.cu_k.back(), s.kv_heads, s.head_dim}, rng));
  v.call.tensors.emplace("v", normal({v.cu_k.back(), s.kv_heads, s.head_dim_v}, rng));
  v.call.index_tensors.emplace("cu_seqlens_q", indices(v.cu_q));
  v.call.index_tensors.emplace("cu_seqlens_k", indices(v.cu_k));
  v.call.tensors.emplace("out", filled({v.cu_q.back(), s.heads, s.head_dim_v}, output_sentinel));
  if (s.lse) v.call.tensors.emplace("lse", filled({v.cu_q.back(), s.heads}, output_sentinel));
  return v;
}

void check_varlen(const char *text) {
  const attn::Spec s = attn::resolve(parse(text));
  if (!linked(s)) return;
  const attn_kernel *kernel = find_kernel(s);
  REQUIRE(kernel != nullptr);
  std::mt19937 rng(11);
  VarlenCall v = make_varlen(s, rng);
  const attn_status status = run_in_dtype(s, kernel, v.call);
  INFO(last_error());
  REQUIRE(status == ATTN_OK);
  Want want;
  const int64_t qw = int64_t{s.heads} * s.head_dim, kw = int64_t{s.kv_heads} * s.head_dim,
                vw = int64_t{s.kv_heads} * s.head_dim_v;
  for (size_t b = 0; b + 1 < v.cu_q.size(); ++b) {
    const int sq = v.cu_q[b + 1] - v.cu_q[b], sk = v.cu_k[b + 1] - v.cu_k[b];
    std::vector<double> q = rows<double>(v.call.tensors.at("q"), v.cu_q[b], sq, qw);
    std::vector<double> k = rows<double>(v.call.tensors.at("k"), v.cu_k[b], sk, kw);
    std::vector<double> vv = rows<double>(v.call.tensors.at("v"), v.cu_k[b], sk, vw);
    std::vector<float> qf = rows<float>(v.call.tensors.at("q"), v.cu_q[b], sq, qw);
    std::vector<float> kf = rows<float>(v.call.tensors.at("k"), v.cu_k[b], sk, kw);
    std::vector<float> vf = rows<float>(v.call.tensors.at("v"), v.cu_k[b], sk, vw);
    // Without a cache: query i at Sk - Sq + i, key j at j.
    rotate_rows(q, s.heads, s.head_dim, sk - sq, rope_of(s));
    rotate_rows(qf, s.heads, s.head_dim, sk - sq, rope_of(s));
    rotate_rows(k, s.kv_heads, s.head_dim, 0, rope_of(s));
    rotate_rows(kf, s.kv_heads, s.head_dim, 0, rope_of(s));
    add_sequence(want, s, v.call, q, k, vv, qf, kf, vf, sq, sk);
  }
  check_out(s, v.call, want);
}

TEST_CASE("varlen batches with empty, one-token and odd sequences against the fp64 reference") {
  check_varlen(varlen_spec);
  check_varlen(varlen_bf16_spec);
}

TEST_CASE("bad cu_seqlens are refused and leave out untouched") {
  const attn::Spec s = attn::resolve(parse(varlen_spec));
  std::mt19937 rng(12);
  struct Bad {
    const char *name;
    int index;
    int32_t delta;
  };
  for (const Bad &bad : {Bad{"cu_seqlens_q", 3, 10}, Bad{"cu_seqlens_k", 8, -1}, Bad{"cu_seqlens_k", 0, 1},
                         Bad{"cu_seqlens_q", 8, 1}}) {
    CAPTURE(bad.name);
    CAPTURE(bad.index);
    VarlenCall v = make_varlen(s, rng);
    v.call.index_tensors.at(bad.name).logical(bad.index) += bad.delta;
    const attn_status status = v.call.run(find_kernel(s));
    CAPTURE(last_error());
    CHECK(status == ATTN_ERR_INVALID_VALUE);
    CHECK(v.call.tensors.at("out").all_padding());
    CHECK(v.call.tensors.at("lse").all_padding());
  }
}

TEST_CASE("rope without a cache rotates q and k at their bottom-right positions") {
  // Queries against keys up to 2100: the split-keys core (one query), the whole-row core, and the
  // block core past whole_row_max_keys; neox's halves of 32 and 16 elements are whole vectors.
  for (const char *text : {dense_rope_spec, dense_neox_spec, dense_partial_neox_spec}) {
    CAPTURE(text);
    const attn::Spec s = attn::resolve(parse(text));
    const attn_kernel *kernel = find_kernel(s);
    REQUIRE(kernel != nullptr);
    for (const Lengths &l :
         {Lengths{5, 9}, Lengths{9, 9}, Lengths{1, 33}, Lengths{67, 131}, Lengths{37, 2100}}) {
      CAPTURE(l.seq_q);
      CAPTURE(l.seq_k);
      std::mt19937 rng(static_cast<unsigned>(l.seq_q * 13 + l.seq_k));
      const int batch = 2;
      Call call;
      call.tensors.emplace("q", normal({batch, l.seq_q, s.heads, s.head_dim}, rng));
      call.tensors.emplace("k", normal({batch, l.seq_k, s.kv_heads, s.head_dim}, rng));
      call.tensors.emplace("v", normal({batch, l.seq_k, s.kv_heads, s.head_dim_v}, rng));
      call.tensors.emplace("out", filled({batch, l.seq_q, s.heads, s.head_dim_v}, output_sentinel));
      REQUIRE(call.run(kernel) == ATTN_OK);
      Want want;
      const int64_t qw = int64_t{s.heads} * s.head_dim, kw = int64_t{s.kv_heads} * s.head_dim;
      for (int b = 0; b < batch; ++b) {
        std::vector<double> q = rows<double>(call.tensors.at("q"), int64_t{b} * l.seq_q, l.seq_q, qw);
        std::vector<double> k = rows<double>(call.tensors.at("k"), int64_t{b} * l.seq_k, l.seq_k, kw);
        std::vector<double> v = rows<double>(call.tensors.at("v"), int64_t{b} * l.seq_k, l.seq_k, kw);
        std::vector<float> qf = rows<float>(call.tensors.at("q"), int64_t{b} * l.seq_q, l.seq_q, qw);
        std::vector<float> kf = rows<float>(call.tensors.at("k"), int64_t{b} * l.seq_k, l.seq_k, kw);
        std::vector<float> vf = rows<float>(call.tensors.at("v"), int64_t{b} * l.seq_k, l.seq_k, kw);
        rotate_rows(q, s.heads, s.head_dim, l.seq_k - l.seq_q, rope_of(s));
        rotate_rows(qf, s.heads, s.head_dim, l.seq_k - l.seq_q, rope_of(s));
        rotate_rows(k, s.kv_heads, s.head_dim, 0, rope_of(s));
        rotate_rows(kf, s.kv_heads, s.head_dim, 0, rope_of(s));
        add_sequence(want, s, call, q, k, v, qf, kf, vf, l.seq_q, l.seq_k);
      }
      check_close(call.tensors.at("out"), want.out, want.naive_out, "out");
    }
  }
}

TEST_CASE("specs: rope, kv_cache and varlen validation messages") {
  auto message = [](const char *text) { return attn::parse_spec(text).message; };
  CHECK(message("heads=2 head_dim=16 rope=neox rope_dim=7").find("rope_dim (7) must be even") !=
        std::string::npos);
  CHECK(message("heads=2 head_dim=16 rope=neox rope_dim=18").find("at most head_dim (16)") !=
        std::string::npos);
  CHECK(message("d_model=32 heads=2 form=block kv_cache=contiguous").find("needs form=core") !=
        std::string::npos);
  CHECK(message("heads=2 head_dim=16 layout=varlen mask=padding").find("does not take mask term padding") !=
        std::string::npos);
  CHECK(message("heads=2 head_dim=16 layout=varlen kv_cache=contiguous").find("do not combine") !=
        std::string::npos);
  CHECK(message("heads=2 head_dim=16 kv_cache=paged(0)").find("paged(16)") != std::string::npos);
  CHECK(message("heads=2 head_dim=16 rope_dim=8").find("need rope=") != std::string::npos);
  // The text form round-trips, and the new keys are part of the kernel id.
  for (const char *text :
       {cache_neox_spec, paged_interleaved_spec, paged_window_spec, varlen_spec, dense_rope_spec}) {
    const attn::ParseResult parsed = attn::parse_spec(text);
    REQUIRE(parsed.ok);
    const attn::ParseResult again = attn::parse_spec(attn::to_string(parsed.spec));
    CAPTURE(attn::to_string(parsed.spec));
    REQUIRE(again.ok);
    CHECK(attn::to_string(again.spec) == attn::to_string(parsed.spec));
  }
  constexpr attn::Spec dsl = attn::attention()
                                 .with_heads(4)
                                 .with_kv_heads(2)
                                 .with_head_dim(16)
                                 .causal()
                                 .with_kv_cache(attn::KvCache::contiguous)
                                 .with_rope(attn::Rope::neox, 0.0f, 8)
                                 .with_lse();
  static_assert(attn::check_spec(dsl).ok());
  CHECK(attn::to_string(dsl) == attn::to_string(parse(cache_neox_spec)));
}

}  // namespace
