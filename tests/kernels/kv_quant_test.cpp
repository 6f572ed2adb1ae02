// Quantized KV caches (issue 37: kv_dtype=int8 and fp8_e4m3): out against the fp64 reference on the
// cache as the kernel stored it, the appended codes and scales against an independent quantizer,
// garbage in unused and masked slots, NaN from kept keys, and untouched slots.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "attn/kernel_id.h"
#include "attn/spec_text.h"
#include "attn/validate.h"
#include "cache_layout.h"
#include "kernel_test_support.h"
#include "kv_codes.h"
#include "kv_quant_specs.h"
#include "low_precision.h"
#include "sequence_reference.h"

namespace {

using namespace attnc::test;
namespace ref = attnc::reference;

const float nan_value = std::numeric_limits<float>::quiet_NaN();

// How many of sequence 0's first new key's elements make_case plants (fp8 edge cases).
constexpr int64_t planted_count = 10;

bool is_int8(const attn::Spec &s) {
  return s.kv_dtype == attn::KvDType::int8;
}

// What a stored tensor holds after the spec's dtype rounds it.
float stored(const attn::Spec &s, float x) {
  return s.dtype == attn::DType::f32 ? x : round_to(s.dtype, x);
}

// Where garbage goes besides the slots past each sequence: none, the kept slots' NaN (propagates),
// or the slots below `masked_below` keys before each sequence's first new token (masked by the window).
enum class Poison { none, kept_nan, masked_garbage };

// One call on a quantized cache; k/v codes as bytes (int8: two's complement), scales f32.
struct QuantCase : CacheLayout {
  attn::Spec spec;
  Call call;
  ByteTensor &codes(const char *name) {
    return is_int8(spec) ? call.int8_tensors.at(name) : call.byte_tensors.at(name);
  }
  // A cached key's or value's decoded value: code * scale.
  double value(const char *cache, const char *scale, int64_t slot, int64_t element, int64_t width) {
    const uint8_t byte = codes(cache).logical(slot * width + element);
    if (is_int8(spec)) {
      const int64_t heads = spec.kv_heads;
      return double(static_cast<int8_t>(byte)) *
             call.tensors.at(scale).logical(slot * heads + element / (width / heads));
    }
    return e4m3_value(byte) * double(call.scalars.at(scale));
  }
};

// A random old code, and the garbage an unused slot holds.
uint8_t random_code(const attn::Spec &s, std::mt19937 &rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  for (;;) {
    const uint8_t c = static_cast<uint8_t>(byte(rng));
    if (is_int8(s) ? c != 0x80 : (c & 0x7F) != 0x7F) return c;  // -128 is outside int8's range; no NaNs
  }
}

QuantCase make_case(const attn::Spec &s, int batch, int seq_q, std::vector<int32_t> cached, Poison poison,
                    int masked_below, std::mt19937 &rng) {
  QuantCase c;
  static_cast<CacheLayout &>(c) = make_cache_layout(s, batch, seq_q, cached, rng);
  c.spec = s;
  const int64_t h = s.heads, kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  const int64_t outer = c.outer(), slots = c.slots();
  auto normal = [&](std::vector<int64_t> shape) {
    Tensor t(std::move(shape), false, nan_value);
    t.fill_normal(rng);
    for (int64_t n = 0; n < t.elements(); ++n) t.logical(n) = stored(s, t.logical(n));
    return t;
  };
  c.call.tensors.emplace("q", normal({batch, seq_q, h, d}));
  c.call.tensors.emplace("k_new", normal({batch, seq_q, kvh, d}));
  c.call.tensors.emplace("v_new", normal({batch, seq_q, kvh, dv}));
  // Every slot garbage first (random codes; int8: NaN scales; fp8: NaN codes), then real old tokens.
  std::map<std::string, ByteTensor> &codes = is_int8(s) ? c.call.int8_tensors : c.call.byte_tensors;
  for (const auto &[name, width] : {std::pair{"k_cache", d}, std::pair{"v_cache", dv}}) {
    ByteTensor t({outer, slots, kvh, width}, false, 0x7F);
    for (int64_t n = 0; n < t.elements(); ++n) t.logical(n) = is_int8(s) ? random_code(s, rng) : 0xFF;
    codes.emplace(name, std::move(t));
  }
  if (is_int8(s)) {
    c.call.tensors.emplace("k_scale", Tensor({outer, slots, kvh}, false, nan_value));
    c.call.tensors.emplace("v_scale", Tensor({outer, slots, kvh}, false, nan_value));
    c.call.tensors.at("k_scale").fill(nan_value);
    c.call.tensors.at("v_scale").fill(nan_value);
  } else {
    c.call.scalars["k_scale"] = 0.0078125f;  // 2^-7: x / scale exact, so planted ties stay ties
    c.call.scalars["v_scale"] = 0.0123f;
  }
  std::uniform_real_distribution<float> scale_of_token(0.002f, 0.03f);
  for (int b = 0; b < batch; ++b)
    for (int64_t p = 0; p < cached[size_t(b)]; ++p) {
      if (poison == Poison::masked_garbage && p < cached[size_t(b)] - masked_below) continue;
      const int64_t slot = c.slot(b, p);
      for (const auto &[name, width] : {std::pair{"k_cache", d}, std::pair{"v_cache", dv}}) {
        for (int64_t e = 0; e < kvh * width; ++e)
          codes.at(name).logical(slot * kvh * width + e) = random_code(s, rng);
      }
      if (is_int8(s))
        for (int64_t g = 0; g < kvh; ++g) {
          c.call.tensors.at("k_scale").logical(slot * kvh + g) = scale_of_token(rng);
          c.call.tensors.at("v_scale").logical(slot * kvh + g) = scale_of_token(rng);
        }
    }
  if (poison == Poison::kept_nan) {
    // The last old key of sequence 0, KV head 0: NaN (a NaN scale, or a NaN code).
    const int64_t slot = c.slot(0, cached[0] - 1);
    if (is_int8(s))
      c.call.tensors.at("k_scale").logical(slot * kvh) = nan_value;
    else
      codes.at("k_cache").logical(slot * kvh * d + 1) = 0x7F;
  }
  if (!is_int8(s)) {
    // Planted E4M3 edge cases in sequence 0's first new key (x / 2^-7 exact): ties to even, a
    // subnormal tie, saturation from above 448 and from infinity, zeros.
    const float planted[] = {1.0625f,    -1.1875f, 2.5f / 512,
                             0.5f / 512, 460.0f,   -1e30f,
                             0.0f,       -0.0f,    std::numeric_limits<float>::infinity(),
                             3.0f / 1024};
    Tensor &k_new = c.call.tensors.at("k_new");
    static_assert(std::size(planted) == planted_count);
    for (size_t n = 0; n < std::size(planted) && int64_t(n) < d; ++n)
      k_new.logical(int64_t(n)) = stored(s, planted[n] * 0.0078125f);
  }
  c.call.index_tensors.emplace("cache_seqlens", IndexTensor({batch}, false, -1));
  for (int b = 0; b < batch; ++b) c.call.index_tensors.at("cache_seqlens").logical(b) = cached[size_t(b)];
  if (s.kv_cache == attn::KvCache::paged) c.call.index_tensors.emplace("block_table", c.block_table());
  c.call.tensors.emplace("out", Tensor({batch, seq_q, h, dv}, false, output_sentinel));
  c.call.tensors.at("out").fill(output_sentinel);
  if (s.lse) {
    c.call.tensors.emplace("lse", Tensor({batch, seq_q, h}, false, output_sentinel));
    c.call.tensors.at("lse").fill(output_sentinel);
  }
  return c;
}

// Runs the call in the spec's dtype: bf16 / f16 tensors as 16-bit copies, out widened back.
attn_status run(QuantCase &c) {
  const attn::Spec &s = c.spec;
  if (s.dtype == attn::DType::f32) return c.call.run(find_kernel(s));
  Call bits = c.call;
  bits.bits_dtype = runtime_dtype(s.dtype);
  for (const char *name : {"q", "k_new", "v_new", "out"}) {
    const Tensor &t = c.call.tensors.at(name);
    BitsTensor b(t.shape(), false, 0);
    for (int64_t n = 0; n < t.elements(); ++n) b.logical(n) = to_bits(s.dtype, t.logical(n));
    bits.tensors.erase(name);
    bits.bits_tensors.emplace(name, std::move(b));
  }
  const attn_status status = bits.run(find_kernel(s));
  c.call.int8_tensors = bits.int8_tensors;
  c.call.byte_tensors = bits.byte_tensors;
  for (const char *name : {"k_scale", "v_scale", "lse"})
    if (bits.tensors.count(name)) c.call.tensors.at(name) = bits.tensors.at(name);
  Tensor &out = c.call.tensors.at("out");
  for (int64_t n = 0; n < out.elements(); ++n)
    out.logical(n) = from_bits(s.dtype, bits.bits_tensors.at("out").logical(n));
  return status;
}

// Rows [first, first + count) of `width` elements each, rotated (rope) per head at first_position + row.
std::vector<float> rotated_rows(const attn::Spec &s, const Tensor &t, int64_t first, int64_t count, int heads,
                                int64_t first_position) {
  const int64_t width = int64_t{heads} * s.head_dim;
  std::vector<float> x(size_t(count * width));
  for (int64_t n = 0; n < count * width; ++n) x[size_t(n)] = t.logical(first * width + n);
  const ref::RopeOptions rope{s.rope, s.rope_theta, s.rope_dim};
  if (s.rope != attn::Rope::none)
    for (int64_t r = 0; r < count; ++r)
      for (int h = 0; h < heads; ++h)
        ref::rope_rotate(x.data() + size_t(r * width + int64_t{h} * s.head_dim), s.head_dim,
                         first_position + r, rope);
  return x;
}

// Appended codes against the independent quantizer: equal, or (fp32 rounding across a tie) one
// code apart; counts of each, and int8 scales off by more than an fp32 rounding.
struct CodeCheck {
  int64_t elements = 0, one_apart = 0, far = 0, scales_off = 0;
  int64_t planted_wrong = 0;  // fp8's planted edge cases (exact x / scale): must match exactly
};

void check_appended(QuantCase &c, const char *cache, const char *scale, const std::vector<float> &x, int b,
                    int64_t width, CodeCheck &check) {
  const attn::Spec &s = c.spec;
  const int64_t kvh = s.kv_heads;
  for (int64_t t = 0; t < c.seq_q; ++t) {
    const int64_t slot = c.slot(b, c.cached[size_t(b)] + t);
    for (int64_t g = 0; g < kvh; ++g) {
      const float *head = x.data() + size_t((t * kvh + g) * width);
      std::vector<int> want(static_cast<size_t>(width)), got(static_cast<size_t>(width));
      if (is_int8(s)) {
        const Int8Head q = int8_quantized(head, int(width));
        const float got_scale = c.call.tensors.at(scale).logical(slot * kvh + g);
        check.scales_off += !(std::fabs(got_scale - q.scale) <= 1e-6f * q.scale);
        for (int64_t e = 0; e < width; ++e) want[size_t(e)] = q.codes[size_t(e)];
      } else {
        for (int64_t e = 0; e < width; ++e)
          want[size_t(e)] = e4m3_nearest(head[e] / c.call.scalars.at(scale));
      }
      for (int64_t e = 0; e < width; ++e) {
        const uint8_t byte = c.codes(cache).logical((slot * kvh + g) * width + e);
        got[size_t(e)] = is_int8(s) ? int(static_cast<int8_t>(byte)) : int(byte);
        // E4M3 neighbours: same sign, magnitudes one code apart.
        const int distance = is_int8(s) ? std::abs(got[size_t(e)] - want[size_t(e)])
                             : ((got[size_t(e)] ^ want[size_t(e)]) & 0x80)
                                 ? 99
                                 : std::abs((got[size_t(e)] & 0x7F) - (want[size_t(e)] & 0x7F));
        check.planted_wrong += !is_int8(s) && b == 0 && t == 0 && g == 0 && e < planted_count &&
                               std::string(cache) == "k_cache" && distance != 0;
        check.one_apart += distance == 1;
        check.far += distance > 1;
        ++check.elements;
      }
    }
  }
}

// Runs the case; checks the appended codes and scales, the slots it must not touch, and out / lse
// against the fp64 reference on the stored cache (NaN exactly where the reference has NaN).
void check_case(QuantCase &c) {
  const attn::Spec &s = c.spec;
  REQUIRE(find_kernel(s) != nullptr);
  const QuantCase before = c;
  const attn_status status = run(c);
  INFO(last_error());
  REQUIRE(status == ATTN_OK);
  const int64_t kvh = s.kv_heads, d = s.head_dim, dv = s.head_dim_v;
  CodeCheck codes;
  std::vector<bool> written(size_t(c.codes("k_cache").elements() / (kvh * d)), false);
  std::vector<double> exact_out, exact_lse;
  std::vector<float> naive_out, naive_lse;
  for (int b = 0; b < c.batch; ++b) {
    const int cached = c.cached[size_t(b)], keys = cached + c.seq_q;
    const std::vector<float> k_new =
        rotated_rows(s, c.call.tensors.at("k_new"), int64_t{b} * c.seq_q, c.seq_q, s.kv_heads, cached);
    std::vector<float> v_new(size_t(c.seq_q * kvh * dv));
    for (size_t n = 0; n < v_new.size(); ++n)
      v_new[n] = c.call.tensors.at("v_new").logical(int64_t{b} * c.seq_q * kvh * dv + int64_t(n));
    check_appended(c, "k_cache", "k_scale", k_new, b, d, codes);
    check_appended(c, "v_cache", "v_scale", v_new, b, dv, codes);
    std::vector<double> k, v;
    for (int64_t p = 0; p < keys; ++p) {
      const int64_t slot = c.slot(b, p);
      if (p >= cached) written[size_t(slot)] = true;
      for (int64_t e = 0; e < kvh * d; ++e) k.push_back(c.value("k_cache", "k_scale", slot, e, kvh * d));
      for (int64_t e = 0; e < kvh * dv; ++e) v.push_back(c.value("v_cache", "v_scale", slot, e, kvh * dv));
    }
    const std::vector<float> qf =
        rotated_rows(s, c.call.tensors.at("q"), int64_t{b} * c.seq_q, c.seq_q, s.heads, cached);
    std::vector<double> q(qf.begin(), qf.end());
    const std::vector<float> kf(k.begin(), k.end()), vf(v.begin(), v.end());
    ref::Options o;
    o.scale = scale_of(s);
    o.mask = s.mask;
    const size_t out_n = size_t(c.seq_q) * s.heads * dv, lse_n = size_t(c.seq_q) * s.heads;
    const size_t o0 = exact_out.size(), l0 = exact_lse.size();
    exact_out.resize(o0 + out_n);
    naive_out.resize(o0 + out_n);
    exact_lse.resize(l0 + lse_n);
    naive_lse.resize(l0 + lse_n);
    ref::attend_sequence<double>(q, k, v, c.seq_q, keys, s.heads, s.kv_heads, d, dv, o, exact_out.data() + o0,
                                 exact_lse.data() + l0);
    ref::attend_sequence<float>(qf, kf, vf, c.seq_q, keys, s.heads, s.kv_heads, d, dv, o,
                                naive_out.data() + o0, naive_lse.data() + l0);
  }
  CAPTURE(codes.elements);
  CAPTURE(codes.one_apart);
  CHECK(codes.far == 0);
  CHECK(codes.one_apart * 200 <= codes.elements);  // at most 0.5%
  CHECK(codes.scales_off == 0);
  CHECK(codes.planted_wrong == 0);
  // Every slot the call did not append to is byte for byte what it was, garbage included.
  int64_t changed = 0;
  for (const char *name : {"k_cache", "v_cache"}) {
    const ByteTensor &now = c.codes(name), &was = const_cast<QuantCase &>(before).codes(name);
    const int64_t width = now.elements() / int64_t(written.size());
    for (int64_t n = 0; n < now.elements(); ++n)
      changed += !written[size_t(n / width)] && now.logical(n) != was.logical(n);
  }
  if (is_int8(s))
    for (const char *name : {"k_scale", "v_scale"})
      for (int64_t n = 0; n < c.call.tensors.at(name).elements(); ++n) {
        const float x = c.call.tensors.at(name).logical(n), y = before.call.tensors.at(name).logical(n);
        changed += !written[size_t(n / kvh)] && std::memcmp(&x, &y, sizeof x) != 0;
      }
  CHECK(changed == 0);
  for (float &x : naive_out) x = stored(s, x);
  const Tensor &out = c.call.tensors.at("out");
  const NonfiniteComparison out_check =
      compare_nonfinite([&](int64_t n) { return double(out.logical(n)); }, exact_out, naive_out);
  CAPTURE(out_check);
  CHECK(out_check.pass());
  if (s.lse) {
    const Tensor &lse = c.call.tensors.at("lse");
    const NonfiniteComparison lse_check =
        compare_nonfinite([&](int64_t n) { return double(lse.logical(n)); }, exact_lse, naive_lse);
    CAPTURE(lse_check);
    CHECK(lse_check.pass());
  }
}

int64_t nan_count(const Tensor &t) {
  int64_t nans = 0;
  for (int64_t n = 0; n < t.elements(); ++n) nans += std::isnan(t.logical(n));
  return nans;
}

// Whether the library has the spec's kernel: the OpenCL and AArch64 builds (KV_QUANT_SUBSET) link
// a share of kv_quant_specs; the x86 build all of them (a missing one fails the test).
bool linked(const attn::Spec &s) {
#ifdef KV_QUANT_SUBSET
  const attn_kernel *kernel = nullptr;
  return attn_find_kernel(attn::kernel_id(s).c_str(), &kernel) == ATTN_OK;
#else
  (void)s;
  return true;
#endif
}

struct Shape {
  int batch, seq_q;
  std::vector<int32_t> cached;
};
// Decode (Sq 1: the split-keys core) and chunked prefill, odd lengths, an empty cache, ragged
// batches, several pages; decode over two 256-key chunks, the second partial.
const Shape shapes[] = {{1, 1, {0}},  {3, 1, {7, 0, 13}}, {2, 5, {9, 3}},
                        {1, 1, {70}}, {2, 3, {11, 17}},   {2, 1, {300, 41}}};

TEST_CASE("quantized caches against the fp64 reference on the stored cache, codes against a quantizer") {
  for (const char *text : kv_quant_specs) {
    const attn::Spec spec = attn::resolve(parse(text));
    if (!linked(spec)) continue;
    for (const Shape &shape : shapes) {
      const std::string spec_text = text;
      CAPTURE(spec_text);
      CAPTURE(shape.batch);
      CAPTURE(shape.seq_q);
      std::mt19937 rng(static_cast<unsigned>(shape.seq_q * 131 + shape.batch));
      QuantCase c = make_case(spec, shape.batch, shape.seq_q, shape.cached, Poison::none, 0, rng);
      check_case(c);
    }
  }
}

TEST_CASE("NaN in a kept cached key reaches the outputs it feeds; masked garbage never does") {
  for (const char *text : kv_quant_specs) {
    const attn::Spec spec = attn::resolve(parse(text));
    if (!linked(spec)) continue;
    const std::string spec_text = text;
      CAPTURE(spec_text);
    std::mt19937 rng(11);
    {
      QuantCase c = make_case(spec, 2, 2, {9, 4}, Poison::kept_nan, 0, rng);
      check_case(c);
      // The reference has NaN in sequence 0's rows that attend to the poisoned key: the check
      // above matched them; make sure there were some.
      CHECK(nan_count(c.call.tensors.at("out")) > 0);
    }
    if (std::string(text).find("window(") != std::string::npos) {
      // Keys more than kv_quant_window before the first new token are outside every row's window.
      QuantCase c = make_case(spec, 2, 3, {20, 13}, Poison::masked_garbage, kv_quant_window, rng);
      check_case(c);
      CHECK(nan_count(c.call.tensors.at("out")) == 0);  // the garbage (NaN scales or codes) stayed out
    }
  }
}

}  // namespace
