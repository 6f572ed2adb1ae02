// test_attn_run_kv_quant.cpp: attn-run on the quantized KV cache kernels (issue 37): int8 codes ('|i1')
// with their f32 scales, and E4M3 bytes ('|u1') with scalar scales, read from and written back to .npy.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attn/mask.h"
#include "attn_run_workspace.h"
#include "kv_codes.h"
#include "npy.h"
#include "npy_files.h"
#include "sequence_reference.h"

namespace {

// The library's kernels: heads=2 head_dim=16 mask=causal kv_cache=contiguous kv_dtype=int8|fp8_e4m3.
constexpr const char *int8_kernel = "attn_core_h2_kv2_d16_f32_causal_kvc_kvi8";
constexpr const char *fp8_kernel = "attn_core_h2_kv2_d16_f32_causal_kvc_kvfp8";
constexpr int batch = 2, seq_q = 2, smax = 7, heads = 2, head_dim = 16;
constexpr size_t row = size_t(heads) * head_dim;
const int32_t cached[batch] = {3, 5};
constexpr float fp8_scale = 0.015625f;

using attnc::test::array_of;
using attnc::test::values_of;

// The library at CACHE_LIB.
struct Workspace : attnc::test::AttnRunWorkspace {
  Workspace() : AttnRunWorkspace("attnc_attn_run_kv_quant_test", ATTN_RUN_PATH, CACHE_LIB) {}
};

// One call's outcome against the reference: out on the decoded cache, and the cache itself.
struct Outcome {
  double out_error = 0, naive_error = 0;
  int64_t wrong_codes = 0, changed = 0;
};

// decoded(b, p, e): the stored cache's value; fresh(b, p, e) whether the call wrote the element
// right (codes against the independent quantizer); untouched(b, p, e) whether an old slot is intact.
template <class Decoded, class Fresh, class Untouched>
Outcome check(const std::vector<float> &q, const std::vector<float> &out, Decoded k_at, Decoded v_at,
              Fresh fresh, Untouched untouched) {
  namespace ref = attnc::reference;
  ref::Options options;
  options.scale = ref::default_scale(head_dim);
  options.mask = attn::causal();
  Outcome o;
  for (int b = 0; b < batch; ++b) {
    const int keys = cached[b] + seq_q;
    std::vector<double> qd(q.begin() + ptrdiff_t(b * seq_q * row),
                           q.begin() + ptrdiff_t((b + 1) * seq_q * row)),
        kd, vd;
    for (int p = 0; p < keys; ++p)
      for (size_t e = 0; e < row; ++e) {
        kd.push_back(k_at(b, p, e));
        vd.push_back(v_at(b, p, e));
      }
    const std::vector<float> qf(qd.begin(), qd.end()), kf(kd.begin(), kd.end()), vf(vd.begin(), vd.end());
    std::vector<double> exact(size_t(seq_q) * row);
    std::vector<float> naive(size_t(seq_q) * row);
    ref::attend_sequence<double>(qd, kd, vd, seq_q, keys, heads, heads, head_dim, head_dim, options,
                                 exact.data(), nullptr);
    ref::attend_sequence<float>(qf, kf, vf, seq_q, keys, heads, heads, head_dim, head_dim, options,
                                naive.data(), nullptr);
    for (size_t n = 0; n < exact.size(); ++n) {
      o.out_error = std::max(o.out_error, std::abs(out[size_t(b) * seq_q * row + n] - exact[n]));
      o.naive_error = std::max(o.naive_error, std::abs(naive[n] - exact[n]));
    }
    for (int p = 0; p < smax; ++p)
      for (size_t e = 0; e < row; ++e) {
        if (p >= cached[b] && p < keys)
          o.wrong_codes += !fresh(b, p, e);
        else
          o.changed += !untouched(b, p, e);
      }
  }
  return o;
}

std::string call_args(const Workspace &ws, const char *kernel, const std::string &scale_inputs,
                      const std::string &scale_outputs) {
  return std::string("--kernel ") + kernel + " --input q=" + ws.file("q.npy") +
         " --input k_new=" + ws.file("k_new.npy") + " --input v_new=" + ws.file("v_new.npy") +
         " --input k_cache=" + ws.file("k_cache.npy") + " --input v_cache=" + ws.file("v_cache.npy") +
         scale_inputs + " --input cache_seqlens=" + ws.file("lens.npy") +
         " --output out=" + ws.file("out.npy") + " --output k_cache=" + ws.file("k_after.npy") +
         " --output v_cache=" + ws.file("v_after.npy") + scale_outputs;
}

struct Inputs {
  std::vector<float> q, k_new, v_new;
};

Inputs save_inputs(const Workspace &ws) {
  std::mt19937 rng(37);
  std::normal_distribution<float> normal;
  auto draw = [&](size_t n) {
    std::vector<float> x(n);
    for (float &e : x) e = normal(rng);
    return x;
  };
  Inputs in{draw(batch * seq_q * row), draw(batch * seq_q * row), draw(batch * seq_q * row)};
  ws.save("q.npy", array_of(ATTN_F32, {batch, seq_q, heads, head_dim}, in.q));
  ws.save("k_new.npy", array_of(ATTN_F32, {batch, seq_q, heads, head_dim}, in.k_new));
  ws.save("v_new.npy", array_of(ATTN_F32, {batch, seq_q, heads, head_dim}, in.v_new));
  ws.save("lens.npy", array_of(ATTN_I32, {batch}, std::vector<int32_t>(cached, cached + batch)));
  return in;
}

// Random codes in every slot (int8 -127..127, or finite E4M3 bytes).
std::vector<uint8_t> random_codes(bool int8, std::mt19937 &rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> codes(size_t(batch) * smax * row);
  for (uint8_t &c : codes) {
    do c = static_cast<uint8_t>(byte(rng));
    while (int8 ? c == 0x80 : (c & 0x7F) == 0x7F);
  }
  return codes;
}

}  // namespace

TEST_CASE("attn-run lists and runs an int8 cache kernel: codes and scales back as .npy int8 and f32") {
  Workspace ws;
  std::string listing;
  REQUIRE(ws.run("--list", &listing) == 0);
  CAPTURE(listing);
  CHECK(listing.find("k_cache i8 [B, Smax, 2, 16] (in-out)") != std::string::npos);
  CHECK(listing.find("k_scale f32 [B, Smax, 2] (in-out)") != std::string::npos);
  const Inputs in = save_inputs(ws);
  std::mt19937 rng(8);
  const std::vector<uint8_t> k_codes = random_codes(true, rng), v_codes = random_codes(true, rng);
  std::uniform_real_distribution<float> scale(0.005f, 0.03f);
  std::vector<float> k_scales(size_t(batch) * smax * heads), v_scales(k_scales.size());
  for (float &s : k_scales) s = scale(rng);
  for (float &s : v_scales) s = scale(rng);
  ws.save("k_cache.npy", array_of(ATTN_I8, {batch, smax, heads, head_dim}, k_codes));
  ws.save("v_cache.npy", array_of(ATTN_I8, {batch, smax, heads, head_dim}, v_codes));
  ws.save("k_scale.npy", array_of(ATTN_F32, {batch, smax, heads}, k_scales));
  ws.save("v_scale.npy", array_of(ATTN_F32, {batch, smax, heads}, v_scales));
  std::string err;
  const int code = ws.run(
      call_args(
          ws, int8_kernel,
          " --input k_scale=" + ws.file("k_scale.npy") + " --input v_scale=" + ws.file("v_scale.npy"),
          " --output k_scale=" + ws.file("ks_after.npy") + " --output v_scale=" + ws.file("vs_after.npy")),
      &err);
  CAPTURE(err);
  REQUIRE(code == 0);
  const attn::npy::Array k_after = ws.load("k_after.npy");
  CHECK(k_after.dtype == ATTN_I8);
  const std::vector<int8_t> kc = values_of<int8_t>(k_after), vc = values_of<int8_t>(ws.load("v_after.npy"));
  const std::vector<float> ks = values_of<float>(ws.load("ks_after.npy")),
                           vs = values_of<float>(ws.load("vs_after.npy")),
                           out = values_of<float>(ws.load("out.npy"));
  REQUIRE(kc.size() == k_codes.size());
  REQUIRE(ks.size() == k_scales.size());
  auto at = [](const std::vector<int8_t> &codes, const std::vector<float> &scales) {
    return [&codes, &scales](int b, int p, size_t e) {
      const size_t slot = size_t(b) * smax + p;
      return double(codes[slot * row + e]) * scales[slot * heads + e / head_dim];
    };
  };
  // The new tokens' codes and scales are the independent quantizer's (no rope: x / scale as given).
  auto fresh = [&](int b, int p, size_t e) {
    const size_t token = (size_t(b) * seq_q + p - cached[b]) * row + (e / head_dim) * head_dim;
    const size_t slot = size_t(b) * smax + p;
    bool ok = true;
    for (const auto &[x, codes, scales] :
         {std::tuple{&in.k_new, &kc, &ks}, std::tuple{&in.v_new, &vc, &vs}}) {
      const attnc::test::Int8Head want = attnc::test::int8_quantized(x->data() + token, head_dim);
      ok &= (*codes)[slot * row + e] == want.codes[e % head_dim] &&
            (*scales)[slot * heads + e / head_dim] == want.scale;
    }
    return ok;
  };
  auto untouched = [&](int b, int p, size_t e) {
    const size_t slot = size_t(b) * smax + p;
    return uint8_t(kc[slot * row + e]) == k_codes[slot * row + e] &&
           uint8_t(vc[slot * row + e]) == v_codes[slot * row + e] &&
           ks[slot * heads + e / head_dim] == k_scales[slot * heads + e / head_dim] &&
           vs[slot * heads + e / head_dim] == v_scales[slot * heads + e / head_dim];
  };
  const Outcome o = check(in.q, out, at(kc, ks), at(vc, vs), fresh, untouched);
  CAPTURE(o.out_error);
  CAPTURE(o.naive_error);
  CHECK(o.out_error <= 2 * o.naive_error + 1e-5);
  CHECK(o.wrong_codes == 0);
  CHECK(o.changed == 0);
}

TEST_CASE("attn-run runs an fp8 cache kernel: E4M3 bytes back as .npy uint8, scales given as [1] arrays") {
  Workspace ws;
  const Inputs in = save_inputs(ws);
  std::mt19937 rng(9);
  const std::vector<uint8_t> k_codes = random_codes(false, rng), v_codes = random_codes(false, rng);
  ws.save("k_cache.npy", array_of(ATTN_U8, {batch, smax, heads, head_dim}, k_codes));
  ws.save("v_cache.npy", array_of(ATTN_U8, {batch, smax, heads, head_dim}, v_codes));
  ws.save("scale.npy", array_of(ATTN_F32, {1}, std::vector<float>{fp8_scale}));
  std::string err;
  const int code = ws.run(
      call_args(ws, fp8_kernel,
                " --input k_scale=" + ws.file("scale.npy") + " --input v_scale=" + ws.file("scale.npy"), ""),
      &err);
  CAPTURE(err);
  REQUIRE(code == 0);
  const std::vector<uint8_t> kc = values_of<uint8_t>(ws.load("k_after.npy")),
                             vc = values_of<uint8_t>(ws.load("v_after.npy"));
  const std::vector<float> out = values_of<float>(ws.load("out.npy"));
  REQUIRE(kc.size() == k_codes.size());
  auto at = [](const std::vector<uint8_t> &codes) {
    return [&codes](int b, int p, size_t e) {
      return attnc::test::e4m3_value(codes[(size_t(b) * smax + p) * row + e]) * fp8_scale;
    };
  };
  auto fresh = [&](int b, int p, size_t e) {
    const size_t token = (size_t(b) * seq_q + p - cached[b]) * row + e,
                 slot = (size_t(b) * smax + p) * row + e;
    return kc[slot] == attnc::test::e4m3_nearest(in.k_new[token] / fp8_scale) &&
           vc[slot] == attnc::test::e4m3_nearest(in.v_new[token] / fp8_scale);
  };
  auto untouched = [&](int b, int p, size_t e) {
    const size_t slot = (size_t(b) * smax + p) * row + e;
    return kc[slot] == k_codes[slot] && vc[slot] == v_codes[slot];
  };
  const Outcome o = check(in.q, out, at(kc), at(vc), fresh, untouched);
  CAPTURE(o.out_error);
  CAPTURE(o.naive_error);
  CHECK(o.out_error <= 2 * o.naive_error + 1e-5);
  CHECK(o.wrong_codes == 0);
  CHECK(o.changed == 0);
}
