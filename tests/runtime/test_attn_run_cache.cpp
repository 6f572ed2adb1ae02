// test_attn_run_cache.cpp: attn-run on a generated KV cache kernel (issue 24): k_cache and v_cache
// given with --input are written back with --output after the call, against the fp64 reference.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attn/mask.h"
#include "attn_run_workspace.h"
#include "npy.h"
#include "npy_files.h"
#include "sequence_reference.h"

namespace {

// The library's kernel: heads=2 head_dim=16 mask=causal kv_cache=contiguous rope=neox.
constexpr const char *kernel = "attn_core_h2_kv2_d16_f32_causal_kvc_ropen16";
constexpr int batch = 2, seq_q = 2, smax = 8, heads = 2, head_dim = 16;
const int32_t cached[batch] = {3, 5};

using attnc::test::array_of;
using attnc::test::values_of;

// The library at CACHE_LIB.
struct Workspace : attnc::test::AttnRunWorkspace {
  Workspace() : AttnRunWorkspace("attnc_attn_run_cache_test", ATTN_RUN_PATH, CACHE_LIB) {}
};

}  // namespace

TEST_CASE("attn-run writes a KV cache kernel's in-out k_cache and v_cache back") {
  Workspace ws;
  std::string listing;
  REQUIRE(ws.run("--list", &listing) == 0);
  CAPTURE(listing);
  CHECK(listing.find("k_cache f32 [B, Smax, 2, 16] (in-out)") != std::string::npos);

  std::mt19937 rng(24);
  std::normal_distribution<float> normal;
  auto draw = [&](size_t n) {
    std::vector<float> x(n);
    for (float &e : x) e = normal(rng);
    return x;
  };
  const size_t row = size_t(heads) * head_dim;
  const std::vector<float> q = draw(batch * seq_q * row), k_new = draw(batch * seq_q * row),
                           v_new = draw(batch * seq_q * row), k_cache = draw(batch * smax * row),
                           v_cache = draw(batch * smax * row);
  ws.save("q.npy", array_of(ATTN_F32, {batch, seq_q, heads, head_dim}, q));
  ws.save("k_new.npy", array_of(ATTN_F32, {batch, seq_q, heads, head_dim}, k_new));
  ws.save("v_new.npy", array_of(ATTN_F32, {batch, seq_q, heads, head_dim}, v_new));
  ws.save("k_cache.npy", array_of(ATTN_F32, {batch, smax, heads, head_dim}, k_cache));
  ws.save("v_cache.npy", array_of(ATTN_F32, {batch, smax, heads, head_dim}, v_cache));
  ws.save("lens.npy", array_of(ATTN_I32, {batch}, std::vector<int32_t>(cached, cached + batch)));
  std::string err;
  const int code = ws.run(
      std::string("--kernel ") + kernel + " --input q=" + ws.file("q.npy") +
          " --input k_new=" + ws.file("k_new.npy") + " --input v_new=" + ws.file("v_new.npy") +
          " --input k_cache=" + ws.file("k_cache.npy") + " --input v_cache=" + ws.file("v_cache.npy") +
          " --input cache_seqlens=" + ws.file("lens.npy") + " --output out=" + ws.file("out.npy") +
          " --output k_cache=" + ws.file("k_after.npy") + " --output v_cache=" + ws.file("v_after.npy"),
      &err);
  CAPTURE(err);
  REQUIRE(code == 0);
  const std::vector<float> out = values_of<float>(ws.load("out.npy")),
                           k_after = values_of<float>(ws.load("k_after.npy")),
                           v_after = values_of<float>(ws.load("v_after.npy"));
  REQUIRE(k_after.size() == k_cache.size());

  namespace ref = attnc::reference;
  const ref::RopeOptions rope{attn::Rope::neox, 10000.0f, head_dim};
  ref::Options options;
  options.scale = ref::default_scale(head_dim);
  options.mask = attn::causal();
  double out_error = 0, naive_error = 0, cache_error = 0;
  int64_t changed = 0;
  for (int b = 0; b < batch; ++b) {
    const int keys = cached[b] + seq_q;
    std::vector<double> qd, kd, vd;
    std::vector<float> qf, kf, vf;
    for (int p = 0; p < keys; ++p)
      for (size_t e = 0; e < row; ++e) {
        const bool fresh = p >= cached[b];
        const size_t slot = (size_t(b) * smax + p) * row + e,
                     token = (size_t(b) * seq_q + p - cached[b]) * row + e;
        kd.push_back(fresh ? k_new[token] : k_cache[slot]);
        vd.push_back(fresh ? v_new[token] : v_cache[slot]);
      }
    kf.assign(kd.begin(), kd.end());
    vf.assign(vd.begin(), vd.end());
    for (int p = cached[b]; p < keys; ++p)
      for (int h = 0; h < heads; ++h) {
        ref::rope_rotate(kd.data() + size_t(p) * row + size_t(h) * head_dim, head_dim, p, rope);
        ref::rope_rotate(kf.data() + size_t(p) * row + size_t(h) * head_dim, head_dim, p, rope);
      }
    for (int i = 0; i < seq_q; ++i)
      for (size_t e = 0; e < row; ++e) {
        qd.push_back(q[(size_t(b) * seq_q + i) * row + e]);
        qf.push_back(q[(size_t(b) * seq_q + i) * row + e]);
      }
    for (int i = 0; i < seq_q; ++i)
      for (int h = 0; h < heads; ++h) {
        ref::rope_rotate(qd.data() + size_t(i) * row + size_t(h) * head_dim, head_dim, cached[b] + i, rope);
        ref::rope_rotate(qf.data() + size_t(i) * row + size_t(h) * head_dim, head_dim, cached[b] + i, rope);
      }
    std::vector<double> exact(size_t(seq_q) * row);
    std::vector<float> naive(size_t(seq_q) * row);
    ref::attend_sequence<double>(qd, kd, vd, seq_q, keys, heads, heads, head_dim, head_dim, options,
                                 exact.data(), nullptr);
    ref::attend_sequence<float>(qf, kf, vf, seq_q, keys, heads, heads, head_dim, head_dim, options,
                                naive.data(), nullptr);
    for (size_t n = 0; n < exact.size(); ++n) {
      out_error = std::max(out_error, std::abs(out[size_t(b) * seq_q * row + n] - exact[n]));
      naive_error = std::max(naive_error, std::abs(naive[n] - exact[n]));
    }
    // The cache after the call: new slots rotated k_new and v_new, every other slot as given.
    for (int p = 0; p < smax; ++p)
      for (size_t e = 0; e < row; ++e) {
        const size_t slot = (size_t(b) * smax + p) * row + e;
        if (p >= cached[b] && p < keys) {
          cache_error = std::max(cache_error, std::abs(k_after[slot] - kd[size_t(p) * row + e]));
          changed += v_after[slot] != static_cast<float>(vd[size_t(p) * row + e]);
        } else {
          changed += std::memcmp(&k_after[slot], &k_cache[slot], sizeof(float)) != 0;
          changed += std::memcmp(&v_after[slot], &v_cache[slot], sizeof(float)) != 0;
        }
      }
  }
  CAPTURE(out_error);
  CAPTURE(naive_error);
  CHECK(out_error <= 2 * naive_error + 1e-5);
  CHECK(cache_error <= 1e-5);
  CHECK(changed == 0);
}
